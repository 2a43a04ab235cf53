#include "escape_server.h"

#include <cstdlib>
#include <memory>

#include "support/run_server.h"

namespace cordon::escape_test {
namespace {

std::unique_ptr<test_support::RunServer> g_server;  // test-only: one per test process

}  // namespace

bool ServedRuns() {
  const char* value = std::getenv("CORDON_ESCAPE_SERVED");
  return value != nullptr && std::string(value) == "1";
}

std::filesystem::path RunServerRuntime(const std::filesystem::path& dir, const std::string& cordon,
                                       std::string* why_not) {
  if (!g_server) {
    g_server = test_support::RunServer::Start(
        cordon, dir,
        {"PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin",
         "HOME=" + dir.string(), "LANG=C.UTF-8"},
        why_not);
  }
  return g_server ? g_server->runtime() : std::filesystem::path();
}

int ServedCount() { return g_server ? g_server->Served() : 0; }

void StopRunServer() { g_server.reset(); }

}  // namespace cordon::escape_test
