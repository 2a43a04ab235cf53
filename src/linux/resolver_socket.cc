#include "linux/resolver_socket.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include "core/fd_passing.h"
#include "net/sandbox_proxy.h"

namespace cordon::linux_native {

namespace {

// Binds a socket of `type` to 127.0.0.1:`port` (a TCP one listening) and sends it on
// `broker_fd`.
StepResult SendBound(int broker_fd, int type, std::uint16_t port) {
  const int fd = ::socket(AF_INET, type | SOCK_CLOEXEC, 0);
  if (fd < 0) return StepFailed(Step::kResolverSocket);
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_port = htons(port);
  address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  if (::bind(fd, reinterpret_cast<const sockaddr*>(&address), sizeof address) != 0 ||
      (type == SOCK_STREAM && ::listen(fd, 64) != 0)) {
    const StepResult failed = StepFailed(Step::kResolverSocket, 0);
    ::close(fd);
    return failed;
  }
  const int err = broker_fd < 0 ? EBADF : core::SendFd(broker_fd, fd);
  ::close(fd);
  return err == 0 ? StepOk() : StepResult{Step::kResolverSocket, err, 1};
}

}  // namespace

StepResult SendResolverSockets(int broker_fd) {
  const StepResult datagram = SendBound(broker_fd, SOCK_DGRAM, 53);
  if (datagram.failed()) return datagram;
  const StepResult stream = SendBound(broker_fd, SOCK_STREAM, 53);
  if (stream.failed()) return stream;
  return SendBound(broker_fd, SOCK_STREAM, net::kProxyPort);
}

}  // namespace cordon::linux_native
