// The sandbox's DNS clients over TCP (RFC 7766): the listening socket the command's process
// bound to 127.0.0.1:53, and its connections, each message framed by a two-byte length. A
// program asks over TCP after a truncated answer (one larger than its UDP buffer).
//
// At most kMaxConnections at once (past it the oldest is closed), each holding at most one
// message being read and kMaxQueued bytes of answers not yet taken; a connection that sends
// something no DNS message is (shorter than a header) is closed.
//
// Not thread-safe; part of the resolver's DnsService.
#pragma once

#include <poll.h>

#include <cstdint>
#include <functional>
#include <map>
#include <span>
#include <vector>

#include "core/unique_fd.h"

namespace cordon::resolver {

class StreamClients {
 public:
  static constexpr std::size_t kMaxConnections = 16;
  static constexpr std::size_t kMaxQueued = 256 * 1024;

  // `listener`: listening; invalid: none (every call is then a no-op).
  explicit StreamClients(core::UniqueFd listener);

  // Which connection a message came on: the answer goes back there if it is still open.
  struct Ref {
    int fd = -1;
    std::uint64_t serial = 0;
    bool valid() const { return fd >= 0; }
  };
  using OnMessage = std::function<void(std::span<const std::uint8_t> message, Ref from)>;

  // Closes the connections done with, then adds the sockets to poll, and for what.
  void AppendPollSet(std::vector<pollfd>& out);
  // Handles `fd`'s readiness (the listener or a connection): accepts, reads each whole message
  // to `on_message`, writes what is queued.
  void OnReady(int fd, short revents, const OnMessage& on_message);
  // Queues `message`, framed, on `to` when that connection is still open.
  void Send(Ref to, std::span<const std::uint8_t> message);

 private:
  struct Connection {
    core::UniqueFd fd;
    std::uint64_t serial = 0;
    std::vector<std::uint8_t> in;
    std::vector<std::uint8_t> out;
    bool done = false;  // closed by the next AppendPollSet (never while a message is handled)
  };
  void Accept();
  // false: the connection is done with (closed by the client, an error, a bad message).
  bool Read(Connection& connection, const OnMessage& on_message);
  bool Flush(Connection& connection);

  core::UniqueFd listener_;
  std::uint64_t next_serial_ = 1;
  std::map<int, Connection> connections_;  // by descriptor
};

}  // namespace cordon::resolver
