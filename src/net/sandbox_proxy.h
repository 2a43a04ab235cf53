// Where a network-by-domain sandbox's proxy listens (src/resolver/proxy_service.h), and the
// environment that points the command's programs at it (plan/environment.h).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace cordon::net {

// The sandbox's 127.0.0.1:1023: below 1024, where no command of the sandbox can bind (it holds
// no capability there), so it is never a port one of its own servers wants.
inline constexpr std::uint16_t kProxyPort = 1023;

// "NAME=value": http_proxy, https_proxy (an HTTP proxy; HTTPS through CONNECT), all_proxy (SOCKS5
// with names resolved by the proxy), each in lower and upper case, and no_proxy for the
// sandbox's own loopback.
inline std::vector<std::string> ProxyEnvironment() {
  const std::string http = "http://127.0.0.1:" + std::to_string(kProxyPort);
  const std::string socks = "socks5h://127.0.0.1:" + std::to_string(kProxyPort);
  const std::string local = "localhost,127.0.0.1,::1";
  return {"http_proxy=" + http, "HTTP_PROXY=" + http, "https_proxy=" + http, "HTTPS_PROXY=" + http,
          "all_proxy=" + socks, "ALL_PROXY=" + socks, "no_proxy=" + local,   "NO_PROXY=" + local};
}

}  // namespace cordon::net
