#include "linux/loopback.h"

#include <arpa/inet.h>
#include <net/if.h>
#include <netinet/in.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cstring>

namespace cordon::linux_native {

StepResult BringUpLoopback() {
  int fd = ::socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return StepFailed(Step::kLoopback);
  ifreq request;
  std::memset(&request, 0, sizeof request);
  std::memcpy(request.ifr_name, "lo", 3);
  StepResult result = StepOk();
  if (::ioctl(fd, SIOCGIFFLAGS, &request) != 0) {
    result = StepFailed(Step::kLoopback);
  } else {
    request.ifr_flags = static_cast<short>(request.ifr_flags | IFF_UP | IFF_RUNNING);
    if (::ioctl(fd, SIOCSIFFLAGS, &request) != 0) result = StepFailed(Step::kLoopback);
  }
  ::close(fd);
  return result;
}

StepResult AddIpv4Address() {
  int fd = ::socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return StepFailed(Step::kLoopback, 1);
  ifreq request;
  std::memset(&request, 0, sizeof request);
  std::memcpy(request.ifr_name, "lo:1", 5);  // an alias of lo, which is up
  sockaddr_in address;
  std::memset(&address, 0, sizeof address);
  address.sin_family = AF_INET;
  address.sin_addr.s_addr = htonl(0x7f000002);
  std::memcpy(&request.ifr_addr, &address, sizeof address);
  const StepResult result =
      ::ioctl(fd, SIOCSIFADDR, &request) == 0 ? StepOk() : StepFailed(Step::kLoopback, 1);
  ::close(fd);
  return result;
}

}  // namespace cordon::linux_native
