#include "exec/upstream_dns.h"

#include <arpa/inet.h>
#include <fmt/format.h>
#include <netinet/in.h>

#include <cerrno>
#include <cstring>
#include <fstream>
#include <sstream>

#include "net/resolver_report.h"

namespace cordon::exec {
namespace {

constexpr std::size_t kMaxName = 253;
constexpr std::size_t kMaxLabel = 63;

bool HostNameByte(char c) {
  return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-' || c == '_';
}

void Put16(std::vector<std::uint8_t>& out, std::uint16_t value) {
  out.push_back(static_cast<std::uint8_t>(value >> 8));
  out.push_back(static_cast<std::uint8_t>(value & 0xff));
}

}  // namespace

std::vector<std::uint8_t> EncodeQuery(std::string_view name, std::uint16_t type,
                                      std::uint16_t qclass, std::uint16_t id) {
  if (name.empty() || name.size() > kMaxName) return {};
  std::vector<std::uint8_t> out;
  Put16(out, id);
  Put16(out, 0x0100);  // a standard query, recursion desired
  Put16(out, 1);       // one question
  Put16(out, 0);
  Put16(out, 0);
  Put16(out, 0);
  std::size_t start = 0;
  while (start <= name.size()) {
    const std::size_t dot = std::min(name.find('.', start), name.size());
    const std::string_view label = name.substr(start, dot - start);
    if (label.empty() || label.size() > kMaxLabel) return {};
    for (const char c : label) {
      if (!HostNameByte(c)) return {};
    }
    out.push_back(static_cast<std::uint8_t>(label.size()));
    out.insert(out.end(), label.begin(), label.end());
    start = dot + 1;
  }
  out.push_back(0);
  Put16(out, type);
  Put16(out, qclass);
  return out;
}

sockaddr_storage UpstreamDns::HostResolver() {
  sockaddr_storage out{};
  auto* in = reinterpret_cast<sockaddr_in*>(&out);
  in->sin_family = AF_INET;
  in->sin_port = htons(53);
  in->sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  std::ifstream file("/etc/resolv.conf");
  for (std::string line; std::getline(file, line);) {
    std::istringstream words(line);
    std::string key;
    std::string value;
    if (!(words >> key >> value) || key != "nameserver") continue;
    if (const std::size_t percent = value.find('%'); percent != std::string::npos) {
      value.resize(percent);  // a scope id: link-local resolvers are not followed
    }
    sockaddr_storage parsed{};
    auto* v4 = reinterpret_cast<sockaddr_in*>(&parsed);
    auto* v6 = reinterpret_cast<sockaddr_in6*>(&parsed);
    if (::inet_pton(AF_INET, value.c_str(), &v4->sin_addr) == 1) {
      v4->sin_family = AF_INET;
      v4->sin_port = htons(53);
      return parsed;
    }
    if (::inet_pton(AF_INET6, value.c_str(), &v6->sin6_addr) == 1) {
      v6->sin6_family = AF_INET6;
      v6->sin6_port = htons(53);
      return parsed;
    }
  }
  return out;
}

UpstreamDns::UpstreamDns(const sockaddr_storage& upstream) {
  const int family = upstream.ss_family;
  core::UniqueFd socket(::socket(family, SOCK_DGRAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0));
  const socklen_t len = family == AF_INET6 ? sizeof(sockaddr_in6) : sizeof(sockaddr_in);
  if (!socket) {
    problem_ = fmt::format("socket for the host's resolver failed: {}", std::strerror(errno));
  } else if (::connect(socket.get(), reinterpret_cast<const sockaddr*>(&upstream), len) != 0) {
    problem_ = fmt::format(
        "connect to the host's resolver (the first nameserver of /etc/resolv.conf) failed: {}",
        std::strerror(errno));
  } else {
    socket_ = std::move(socket);
  }
}

bool UpstreamDns::Ask(std::uint16_t tag, std::string_view name, std::uint16_t type,
                      std::uint16_t qclass) {
  if (!socket_) return false;
  // A random id for each query: one the host's other processes could guess would let them
  // spoof the reply (its source is checked by the connected socket).
  std::uint16_t id = 0;
  do {
    id = static_cast<std::uint16_t>(random_());
  } while (pending_.contains(id));
  const std::vector<std::uint8_t> query = EncodeQuery(name, type, qclass, id);
  if (query.empty() || ::send(socket_.get(), query.data(), query.size(), MSG_DONTWAIT) < 0) {
    return false;
  }
  if (pending_.size() >= kMaxPending) pending_.erase(pending_.begin());
  pending_[id] = tag;
  return true;
}

void UpstreamDns::OnReadable(
    const std::function<void(std::uint16_t tag, std::span<const std::uint8_t>)>& on_reply) {
  if (!socket_) return;
  std::uint8_t buffer[net::kMaxUpstreamReply];
  for (int round = 0; round < 64; ++round) {
    const ssize_t n = ::recv(socket_.get(), buffer, sizeof buffer, MSG_DONTWAIT);
    if (n < 0) return;  // EAGAIN: all read
    if (n < 12) continue;
    const auto id = static_cast<std::uint16_t>((buffer[0] << 8) | buffer[1]);
    const auto it = pending_.find(id);
    if (it == pending_.end()) continue;
    const std::uint16_t tag = it->second;
    pending_.erase(it);
    on_reply(tag, std::span<const std::uint8_t>(buffer, static_cast<std::size_t>(n)));
  }
}

}  // namespace cordon::exec
