// The resolver's DNS clients over TCP on real loopback sockets: messages framed by their
// length, whole however they arrive; the limits on connections and on what a client leaves
// unread; a frame no DNS message fits closes its connection. Each refused case has its twin.
#include "resolver/stream_clients.h"

#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <functional>
#include <string>
#include <vector>

namespace cordon::resolver {
namespace {

using core::UniqueFd;

class StreamClientsTest : public ::testing::Test {
 protected:
  // `send_buffer`: the accepted connections' SO_SNDBUF (inherited from the listener); 0: the
  // system's.
  void Start(int send_buffer = 0) {
    UniqueFd listener(::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0));
    if (send_buffer > 0) {
      ASSERT_EQ(
          ::setsockopt(listener.get(), SOL_SOCKET, SO_SNDBUF, &send_buffer, sizeof send_buffer), 0);
    }
    address_.sin_family = AF_INET;
    address_.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    ASSERT_EQ(::bind(listener.get(), reinterpret_cast<sockaddr*>(&address_), sizeof address_), 0);
    ASSERT_EQ(::listen(listener.get(), 32), 0);
    socklen_t len = sizeof address_;
    ASSERT_EQ(::getsockname(listener.get(), reinterpret_cast<sockaddr*>(&address_), &len), 0);
    clients_ = std::make_unique<StreamClients>(std::move(listener));
  }

  UniqueFd Connect(int receive_buffer = 0) {
    UniqueFd fd(::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0));
    if (receive_buffer > 0) {
      EXPECT_EQ(
          ::setsockopt(fd.get(), SOL_SOCKET, SO_RCVBUF, &receive_buffer, sizeof receive_buffer), 0);
    }
    EXPECT_EQ(::connect(fd.get(), reinterpret_cast<sockaddr*>(&address_), sizeof address_), 0);
    return fd;
  }

  // One round of the resolver's loop.
  void Round(int timeout_ms = 20) {
    std::vector<pollfd> fds;
    clients_->AppendPollSet(fds);
    (void)::poll(fds.data(), fds.size(), timeout_ms);
    for (const pollfd& p : fds) {
      if (p.revents == 0) continue;
      clients_->OnReady(p.fd, p.revents,
                        [this](std::span<const std::uint8_t> m, StreamClients::Ref from) {
                          messages_.emplace_back(m.begin(), m.end());
                          from_.push_back(from);
                        });
    }
  }

  // The descriptors the service polls besides its listener (its open connections).
  std::size_t Open() {
    std::vector<pollfd> fds;
    clients_->AppendPollSet(fds);
    return fds.size() - 1;
  }

  static std::string Framed(const std::string& message) {
    return std::string{static_cast<char>(message.size() >> 8),
                       static_cast<char>(message.size() & 0xff)} +
           message;
  }

  // Whether `fd` reads its end within `rounds` rounds (what it had before is dropped).
  bool Closed(const UniqueFd& fd, int rounds = 50) {
    for (int i = 0; i < rounds; ++i) {
      Round(10);
      char buffer[65536];
      const ssize_t n = ::recv(fd.get(), buffer, sizeof buffer, MSG_DONTWAIT);
      if (n == 0 || (n < 0 && errno == ECONNRESET)) return true;
    }
    return false;
  }

  sockaddr_in address_{};
  std::unique_ptr<StreamClients> clients_;
  std::vector<std::vector<std::uint8_t>> messages_;
  std::vector<StreamClients::Ref> from_;
};

TEST_F(StreamClientsTest, AMessageIsWholeHoweverItArrives) {
  Start();
  UniqueFd client = Connect();
  const std::string message(12, 'q');
  const std::string framed = Framed(message) + Framed(message + "r");
  for (const char byte : framed) {
    ASSERT_EQ(::send(client.get(), &byte, 1, 0), 1);
    Round(5);
  }
  for (int i = 0; i < 20 && messages_.size() < 2; ++i) Round();
  ASSERT_EQ(messages_.size(), 2u);
  EXPECT_EQ(std::string(messages_[0].begin(), messages_[0].end()), message);
  EXPECT_EQ(std::string(messages_[1].begin(), messages_[1].end()), message + "r");
  // The answer goes back framed, on that connection.
  const std::vector<std::uint8_t> answer(13, 7);
  clients_->Send(from_[0], answer);
  char buffer[64];
  ASSERT_EQ(::recv(client.get(), buffer, sizeof buffer, 0), 15);
  EXPECT_EQ(buffer[1], 13);
}

TEST_F(StreamClientsTest, AFrameNoDnsMessageFitsClosesItsConnection) {
  Start();
  UniqueFd client = Connect();
  // Its twin is a 12-byte message, taken above.
  ASSERT_EQ(::send(client.get(), Framed(std::string(11, 'q')).data(), 13, 0), 13);
  EXPECT_TRUE(Closed(client));
  EXPECT_TRUE(messages_.empty());
}

TEST_F(StreamClientsTest, PastTheLimitTheOldestConnectionIsClosed) {
  Start();
  std::vector<UniqueFd> clients;
  for (std::size_t i = 0; i < StreamClients::kMaxConnections; ++i) {
    clients.push_back(Connect());
    Round();
  }
  EXPECT_EQ(Open(), StreamClients::kMaxConnections);
  clients.push_back(Connect());
  for (int i = 0; i < 5; ++i) Round();
  EXPECT_EQ(Open(), StreamClients::kMaxConnections);
  EXPECT_TRUE(Closed(clients.front()));
  // The newest (and the second oldest) are still served.
  for (const UniqueFd* c : {&clients.back(), &clients[1]}) {
    ASSERT_EQ(::send(c->get(), Framed(std::string(12, 'q')).data(), 14, 0), 14);
  }
  for (int i = 0; i < 20 && messages_.size() < 2; ++i) Round();
  EXPECT_EQ(messages_.size(), 2u);
}

TEST_F(StreamClientsTest, AClientThatTakesNoAnswersIsLetGo) {
  // Small kernel buffers on both sides, so that what the client leaves unread queues here.
  Start(/*send_buffer=*/4096);
  UniqueFd reader = Connect(/*receive_buffer=*/4096);
  UniqueFd idle = Connect(/*receive_buffer=*/4096);
  ASSERT_EQ(::send(reader.get(), Framed(std::string(12, 'a')).data(), 14, 0), 14);
  ASSERT_EQ(::send(idle.get(), Framed(std::string(12, 'b')).data(), 14, 0), 14);
  for (int i = 0; i < 20 && messages_.size() < 2; ++i) Round();
  ASSERT_EQ(messages_.size(), 2u);
  const StreamClients::Ref idle_ref = messages_[0][0] == 'b' ? from_[0] : from_[1];
  const StreamClients::Ref reader_ref = messages_[0][0] == 'b' ? from_[1] : from_[0];
  const std::vector<std::uint8_t> answer(60000, 1);
  std::size_t sent = 0;
  for (; sent < 64 && Open() == 2; ++sent) {
    clients_->Send(idle_ref, answer);
    Round(0);
  }
  EXPECT_LT(sent, 64u) << "a client that reads nothing is kept";
  EXPECT_GE(sent * answer.size(), StreamClients::kMaxQueued) << "let go before its queue filled";
  EXPECT_EQ(Open(), 1u);
  // Its twin, which reads, gets its answer.
  clients_->Send(reader_ref, std::vector<std::uint8_t>(12, 2));
  char buffer[64];
  EXPECT_EQ(::recv(reader.get(), buffer, sizeof buffer, 0), 14);
}

}  // namespace
}  // namespace cordon::resolver
