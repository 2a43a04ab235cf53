// A stand-in for cordon-resolver in resolver_process_test.cc, started the same way. It waits
// for the test's datagram on the sandbox socket (fd 3) and answers it with what it was given
// (its arguments, the size of its environment, its open descriptors); then it sends reports a
// subverted resolver could send on the channel (fd 4), waits for the broker's reply to its
// first question, tells the test what came (a second datagram), and exits with status 3.
#include <fcntl.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <string>

extern char** environ;

namespace {

constexpr int kSandbox = 3;
constexpr int kChannel = 4;

void Report(const std::string& bytes) {
  (void)::send(kChannel, bytes.data(), bytes.size(), MSG_NOSIGNAL);
}

}  // namespace

int main(int argc, char** argv) {
  char hello[64];
  sockaddr_storage test{};
  socklen_t len = sizeof test;
  if (::recvfrom(kSandbox, hello, sizeof hello, 0, reinterpret_cast<sockaddr*>(&test), &len) <= 0) {
    return 1;
  }
  std::string given;
  for (int i = 1; i < argc; ++i) given += std::string(i > 1 ? " " : "") + argv[i];
  int env = 0;
  while (environ[env] != nullptr) ++env;
  given += "|" + std::to_string(env) + "|";
  for (int fd = 0; fd < 64; ++fd) {
    if (::fcntl(fd, F_GETFD) >= 0) given += (given.back() == '|' ? "" : " ") + std::to_string(fd);
  }
  (void)::sendto(kSandbox, given.data(), given.size(), 0, reinterpret_cast<sockaddr*>(&test), len);

  // A question for an allowed name, and one for a name the rules do not allow.
  Report(R"({"query":{"tag":7,"name":"pkg.test","type":1,"class":1}})");
  Report(R"({"query":{"tag":8,"name":"evil.test","type":1,"class":1}})");
  // An allowed name asked both ways (A, AAAA), and one asked for A alone: what the host's DNS
  // says of them decides whether a parent proxy may be asked for them by name.
  Report(R"({"query":{"tag":9,"name":"a.allowed.test","type":1,"class":1}})");
  Report(R"({"query":{"tag":10,"name":"a.allowed.test","type":28,"class":1}})");
  Report(R"({"query":{"tag":11,"name":"b.allowed.test","type":1,"class":1}})");
  // Two names under one tag (the broker's own query ids tell their replies apart), and a name
  // that is no canonical host name (never asked, so never "without an answer").
  Report(R"({"query":{"tag":12,"name":"c.allowed.test","type":1,"class":1}})");
  Report(R"({"query":{"tag":12,"name":"d.allowed.test","type":1,"class":1}})");
  Report(R"({"query":{"tag":12,"name":"c.allowed.test","type":28,"class":1}})");
  Report(R"({"query":{"tag":12,"name":"d.allowed.test","type":28,"class":1}})");
  Report(R"({"query":{"tag":13,"name":"E.allowed.test","type":1,"class":1}})");
  Report(R"({"query":{"tag":14,"name":"E.allowed.test","type":28,"class":1}})");
  // An allowed name's address; a name the rules do not allow.
  Report(R"({"handed_out":{"address":"192.0.2.7","name":"pkg.test"}})");
  Report(R"({"handed_out":{"address":"192.0.2.8","name":"evil.test"}})");
  // A refusal the rules contradict, and a true one; a withheld address that is public, and an
  // internal one.
  Report(R"({"refused":{"name":"pkg.test"}})");
  Report(R"({"refused":{"name":"other.test"}})");
  Report(R"({"withheld":{"name":"pkg.test","address":"192.0.2.9"}})");
  Report(R"({"withheld":{"name":"pkg.test","address":"127.0.0.1"}})");
  // The proxy's: a connect the broker decides (whatever address it names), a refusal the rules
  // contradict and a true one, and one whose detail is no host (not believed).
  Report(R"({"connect":{"tag":5,"address":"203.0.113.9","port":80,"name":"evil.test"}})");
  Report(R"({"proxy_refused":{"host":"pkg.test","port":80,"why":"name","detail":""}})");
  Report(R"({"proxy_refused":{"host":"other.test","port":81,"why":"name","detail":""}})");
  Report(R"({"proxy_refused":{"host":"pkg.test","port":82,"why":"server_name",)"
         R"("detail":"a\nb"}})");
  // The text of a denial, which is the broker's to write; bytes that are no report; one
  // longer than any report.
  Report(R"({"denial":{"kind":"dns","target":"x","layer":"network","rule":"r","fix":"f"}})");
  Report("not a report");
  Report(std::string(8000, ' '));

  // The broker's reply to tag 7 (the names it could not ask are answered at once, empty).
  unsigned char reply[4200];
  ssize_t n = 0;
  for (int i = 0; i < 32; ++i) {
    n = ::recv(kChannel, reply, sizeof reply, 0);
    if (n < 3 || reply[0] != 'D' || ((reply[1] << 8) | reply[2]) == 7) break;
  }
  // 'D', the tag, the reply.
  const std::string heard =
      n >= 3 && reply[0] == 'D'
          ? "reply " + std::to_string((reply[1] << 8) | reply[2]) + " " + std::to_string(n - 1)
          : "no reply";
  (void)::sendto(kSandbox, heard.data(), heard.size(), 0, reinterpret_cast<sockaddr*>(&test), len);
  return 3;
}
