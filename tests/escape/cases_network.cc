// Network with `network: deny`: TCP and UDP to host listeners on 127.0.0.1 and on a
// non-loopback address of the host, a pathname unix socket of the host outside the workspace
// (outside /run, and in /run), an abstract unix socket of the host. Judged by the host
// listener: a connection in its backlog or a datagram in its queue.
#include <unistd.h>

#include <chrono>
#include <sstream>
#include <string>

#include "escape_cases.h"

namespace cordon::escape_test {
namespace {

std::function<bool(const Fixture&)> Got(std::string name) {
  return [name](const Fixture& f) { return Received(f, name); };
}

// The late listener (escape_attack late-listener) marks a connection once it accepts it, which
// may be after the attack's connect returned and the run ended (the connection waited in its
// backlog). When the attack says it connected ("ok"), the listener is given a few seconds to
// mark it; otherwise the marker is judged at once.
bool Accepted(const Fixture& f, const std::string& marker) {
  bool connected = false;
  std::istringstream lines(f.output);
  for (std::string line; std::getline(lines, line);) connected = connected || line == "ok";
  const auto until = std::chrono::steady_clock::now() + std::chrono::seconds(connected ? 5 : 0);
  for (;;) {
    if (Exists(marker)) return true;
    if (std::chrono::steady_clock::now() >= until) return false;
    ::usleep(20 * 1000);
  }
}

void TcpLoopback(Fixture& f) {
  const int port = ListenTcp(f, "127.0.0.1", "l");
  if (port == 0) f.not_applicable = "cannot listen on 127.0.0.1";
  f.vars["PORT"] = std::to_string(port);
}

void UdpLoopback(Fixture& f) {
  const int port = ListenUdp(f, "127.0.0.1", "l");
  if (port == 0) f.not_applicable = "cannot bind UDP on 127.0.0.1";
  f.vars["PORT"] = std::to_string(port);
}

void TcpHost(Fixture& f) {
  const std::string address = HostAddress();
  if (address.empty()) {
    f.not_applicable = "this host has no non-loopback IPv4 address";
    return;
  }
  f.vars["ADDR"] = address;
  f.vars["PORT"] = std::to_string(ListenTcp(f, address, "l"));
}

void UdpHost(Fixture& f) {
  const std::string address = HostAddress();
  if (address.empty()) {
    f.not_applicable = "this host has no non-loopback IPv4 address";
    return;
  }
  f.vars["ADDR"] = address;
  f.vars["PORT"] = std::to_string(ListenUdp(f, address, "l"));
}

void UnixOutside(Fixture& f) {
  const auto path = f.out / "host.sock";
  if (!ListenUnix(f, path.string(), false, "l")) f.not_applicable = "cannot bind " + path.string();
  f.vars["SOCK"] = path.string();
}

void UnixInRun(Fixture& f) {
  const std::string path = "/run/cordon-escape-" + f.token + ".sock";
  if (::access("/run", W_OK) != 0 || !ListenUnix(f, path, false, "l")) {
    f.not_applicable = "/run is not writable by this user";
    return;
  }
  f.vars["SOCK"] = path;
  f.teardown.push_back([path] { ::unlink(path.c_str()); });
}

void Abstract(Fixture& f) {
  const std::string name = "cordon-escape-" + f.token;
  if (!ListenUnix(f, name, true, "l")) f.not_applicable = "cannot bind an abstract socket";
  f.vars["SOCK"] = name;
}

}  // namespace

std::vector<Case> NetworkCases() {
  std::vector<Case> cases;
  auto add = [&](std::string name, std::string script, std::function<void(Fixture&)> setup) {
    Case c;
    c.category = "network";
    c.name = std::move(name);
    c.script = std::move(script);
    c.setup = std::move(setup);
    c.landed = Got("l");
    cases.push_back(std::move(c));
    return &cases.back();
  };
  add("tcp-host-loopback", "@BIN@ tcp 127.0.0.1 @PORT@ @TOKEN@", TcpLoopback);
  add("tcp-host-address", "@BIN@ tcp @ADDR@ @PORT@ @TOKEN@", TcpHost);
  add("udp-host-loopback", "@BIN@ udp 127.0.0.1 @PORT@ @TOKEN@", UdpLoopback);
  add("udp-host-address", "@BIN@ udp @ADDR@ @PORT@ @TOKEN@", UdpHost);
  add("tcp-host-loopback-read-only-mode", "@BIN@ tcp 127.0.0.1 @PORT@ @TOKEN@", TcpLoopback)->mode =
      SandboxMode::kReadOnly;
  add("unix-socket-outside-workspace", "@BIN@ unix @SOCK@ @TOKEN@", UnixOutside);
  add("unix-socket-in-run", "@BIN@ unix @SOCK@ @TOKEN@", UnixInRun);
  add("abstract-unix-socket", "@BIN@ abstract @SOCK@ @TOKEN@", Abstract);
  // A host socket that appears after cordon planned the sandbox (a service started during the
  // run): masks computed from /proc/net/unix at planning time do not cover it.
  Case* late =
      add("unix-socket-created-during-run", "sleep 1.5; @BIN@ unix @SOCK@ @TOKEN@", [](Fixture& f) {
        const auto path = f.out / "late.sock";
        f.vars["SOCK"] = path.string();
        StartHostHelper(f, {"late-listener", path.string(), "500"});
      });
  late->landed = [](const Fixture& f) {
    return Accepted(f, (f.out / "late.sock.accepted").string());
  };
  late = add("unix-socket-in-run-created-during-run-with-network-allow",
             "sleep 1.5; @BIN@ unix @SOCK@ @TOKEN@", [](Fixture& f) {
               const std::string path = "/run/cordon-escape-" + f.token + "-late.sock";
               if (::access("/run", W_OK) != 0) {
                 f.not_applicable = "/run is not writable by this user";
                 return;
               }
               f.vars["SOCK"] = path;
               StartHostHelper(f, {"late-listener", path, "500"});
               f.teardown.push_back([path] {
                 ::unlink(path.c_str());
                 ::unlink((path + ".accepted").c_str());
               });
             });
  late->network = NetworkPolicy::kAllow;
  late->landed = [](const Fixture& f) { return Accepted(f, f.vars.at("SOCK") + ".accepted"); };
  // With network allowed, TCP/UDP and abstract sockets are reachable by design (the user
  // allowed the network); the host's /run (docker.sock, D-Bus, agents) is local IPC, not
  // network, and stays out of reach.
  add("unix-socket-in-run-with-network-allow", "@BIN@ unix @SOCK@ @TOKEN@", UnixInRun)->network =
      NetworkPolicy::kAllow;
  return cases;
}

}  // namespace cordon::escape_test
