#include "linux/resolver_socket.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include "core/fd_passing.h"

namespace cordon::linux_native {

StepResult SendResolverSocket(int broker_fd) {
  const int fd = ::socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return StepFailed(Step::kResolverSocket);
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_port = htons(53);
  address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  if (::bind(fd, reinterpret_cast<const sockaddr*>(&address), sizeof address) != 0) {
    const StepResult failed = StepFailed(Step::kResolverSocket, 0);
    ::close(fd);
    return failed;
  }
  const int err = broker_fd < 0 ? EBADF : core::SendFd(broker_fd, fd);
  ::close(fd);
  return err == 0 ? StepOk() : StepResult{Step::kResolverSocket, err, 1};
}

}  // namespace cordon::linux_native
