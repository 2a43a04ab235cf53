#include "support/host_listener.h"

#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include <algorithm>
#include <cstddef>
#include <cstring>
#include <utility>

namespace cordon::test_support {

HostListener HostListener::Tcp() {
  HostListener l(::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0), SOCK_STREAM);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t len = sizeof addr;
  EXPECT_EQ(::bind(l.fd_.get(), reinterpret_cast<sockaddr*>(&addr), sizeof addr), 0);
  EXPECT_EQ(::listen(l.fd_.get(), 8), 0);
  EXPECT_EQ(::getsockname(l.fd_.get(), reinterpret_cast<sockaddr*>(&addr), &len), 0);
  l.port_ = ntohs(addr.sin_port);
  l.address_ = std::to_string(l.port_);
  return l;
}

HostListener HostListener::Abstract(const std::string& name) {
  HostListener l(::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0), SOCK_STREAM);
  sockaddr_un addr{};
  addr.sun_family = AF_UNIX;
  const std::size_t size = std::min(name.size(), sizeof addr.sun_path - 1);
  std::memcpy(addr.sun_path + 1, name.data(), size);
  const auto len = static_cast<socklen_t>(offsetof(sockaddr_un, sun_path) + 1 + size);
  EXPECT_EQ(::bind(l.fd_.get(), reinterpret_cast<sockaddr*>(&addr), len), 0) << name;
  EXPECT_EQ(::listen(l.fd_.get(), 8), 0);
  l.address_ = name;
  return l;
}

HostListener HostListener::Pathname(const std::string& path, int type) {
  HostListener l(::socket(AF_UNIX, type | SOCK_CLOEXEC | SOCK_NONBLOCK, 0), type);
  sockaddr_un addr{};
  addr.sun_family = AF_UNIX;
  std::memcpy(addr.sun_path, path.data(), std::min(path.size(), sizeof addr.sun_path - 1));
  EXPECT_EQ(::bind(l.fd_.get(), reinterpret_cast<sockaddr*>(&addr), sizeof addr), 0) << path;
  if (type == SOCK_STREAM) {
    EXPECT_EQ(::listen(l.fd_.get(), 8), 0);
  }
  ::chmod(path.c_str(), 0777);
  l.address_ = path;
  l.unlink_ = path;
  return l;
}

HostListener::HostListener(int fd, int type) : fd_(fd), type_(type) { EXPECT_TRUE(fd_.valid()); }

HostListener::HostListener(HostListener&& other) noexcept
    : fd_(std::move(other.fd_)),
      type_(other.type_),
      port_(other.port_),
      address_(std::move(other.address_)),
      unlink_(std::exchange(other.unlink_, {})) {}

HostListener& HostListener::operator=(HostListener&& other) noexcept {
  if (this != &other) {
    if (!unlink_.empty()) ::unlink(unlink_.c_str());
    fd_ = std::move(other.fd_);
    type_ = other.type_;
    port_ = other.port_;
    address_ = std::move(other.address_);
    unlink_ = std::exchange(other.unlink_, {});
  }
  return *this;
}

HostListener::~HostListener() {
  if (!unlink_.empty()) ::unlink(unlink_.c_str());
}

bool HostListener::Reached() const {
  if (type_ == SOCK_STREAM) {
    return core::UniqueFd(::accept4(fd_.get(), nullptr, nullptr, SOCK_CLOEXEC)).valid();
  }
  char byte = 0;
  return ::recv(fd_.get(), &byte, 1, MSG_DONTWAIT) >= 0;
}

}  // namespace cordon::test_support
