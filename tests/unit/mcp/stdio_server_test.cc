// The stdio transport end to end over pipes: framing, EOF shutdown, a vanished client.
#include "mcp/stdio_server.h"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <nlohmann/json.hpp>
#include <string>
#include <thread>

#include "fake_runner.h"

namespace cordon::mcp {
namespace {

using nlohmann::json;

struct Pipe {
  int read = -1;
  int write = -1;
  Pipe() {
    int fds[2];
    EXPECT_EQ(::pipe2(fds, O_CLOEXEC), 0);
    read = fds[0];
    write = fds[1];
  }
  ~Pipe() {
    if (read >= 0) ::close(read);
    if (write >= 0) ::close(write);
  }
  void CloseWrite() {
    ::close(write);
    write = -1;
  }
  void CloseRead() {
    ::close(read);
    read = -1;
  }
};

void WriteAll(int fd, std::string_view data) {
  while (!data.empty()) {
    ssize_t n = ::write(fd, data.data(), data.size());
    if (n <= 0) return;
    data.remove_prefix(static_cast<std::size_t>(n));
  }
}

std::string ReadAll(int fd) {
  std::string out;
  char buf[4096];
  ssize_t n;
  while ((n = ::read(fd, buf, sizeof buf)) > 0) out.append(buf, static_cast<std::size_t>(n));
  return out;
}

std::vector<json> Lines(const std::string& text) {
  std::vector<json> out;
  std::size_t start = 0;
  while (start < text.size()) {
    std::size_t end = text.find('\n', start);
    if (end == std::string::npos) end = text.size();
    out.push_back(json::parse(text.substr(start, end - start)));
    start = end + 1;
  }
  return out;
}

constexpr const char* kInit =
    R"({"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"1"}}})"
    "\n";

TEST(StdioServer, AnswersLineByLineAndReturnsCleanlyAtEof) {
  testing::FakeRunner runner;
  Pipe in, out;
  std::string received;
  std::thread client([&] {
    WriteAll(in.write, kInit);
    WriteAll(
        in.write,
        R"({"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"run_command","arguments":{"command":"echo hi"}}})"
        "\r\n");
    // Closing stdin cancels what still runs: read both answers first.
    char buf[4096];
    ssize_t n;
    while (std::count(received.begin(), received.end(), '\n') < 2 &&
           (n = ::read(out.read, buf, sizeof buf)) > 0) {
      received.append(buf, static_cast<std::size_t>(n));
    }
    in.CloseWrite();
  });
  ServerOptions options;
  options.structured_output = true;
  StdioResult result = ServeStdio(runner, options, in.read, out.write);
  client.join();
  EXPECT_TRUE(result.clean);
  std::vector<json> lines = Lines(received);
  ASSERT_EQ(lines.size(), 2u);
  EXPECT_EQ(lines[0]["id"], 0);
  EXPECT_EQ(lines[1]["result"]["structuredContent"]["exit_code"], 0);
}

TEST(StdioServer, EofCancelsCommandsStillRunning) {
  testing::FakeRunner runner;
  Pipe in, out;
  std::thread client([&] {
    WriteAll(in.write, kInit);
    WriteAll(
        in.write,
        R"({"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"run_command","arguments":{"command":"wait-cancel"}}})"
        "\n");
    runner.WaitForCalls(1, std::chrono::seconds(5));
    in.CloseWrite();
  });
  StdioResult result = ServeStdio(runner, ServerOptions{}, in.read, out.write);
  client.join();
  EXPECT_TRUE(result.clean);
  ASSERT_EQ(runner.calls().size(), 1u);
  EXPECT_TRUE(runner.calls()[0].saw_cancel);
}

TEST(StdioServer, AnOversizedLineIsRefusedAndTheNextLineServed) {
  testing::FakeRunner runner;
  Pipe in, out;
  std::thread client([&] {
    WriteAll(in.write, std::string(300000, 'x') + "\n");
    WriteAll(in.write, R"({"jsonrpc":"2.0","id":9,"method":"ping"})"
                       "\n");
    in.CloseWrite();
  });
  // The output is small; the pipe buffer holds it until the server returns.
  ServeStdio(runner, ServerOptions{}, in.read, out.write, /*max_line_bytes=*/65536);
  client.join();
  out.CloseWrite();
  std::vector<json> lines = Lines(ReadAll(out.read));
  ASSERT_EQ(lines.size(), 2u);
  EXPECT_EQ(lines[0]["error"]["code"], -32600);
  EXPECT_TRUE(lines[0]["id"].is_null());
  EXPECT_EQ(lines[1]["id"], 9);
}

TEST(StdioServer, AClientThatStopsReadingDoesNotCrashTheServer) {
  testing::FakeRunner runner;
  Pipe in, out;
  out.CloseRead();  // every write now fails with EPIPE (SIGPIPE is ignored by ServeStdio)
  std::thread client([&] {
    WriteAll(in.write, kInit);
    WriteAll(
        in.write,
        R"({"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"run_command","arguments":{"command":"print 3"}}})"
        "\n");
    runner.WaitForCalls(1, std::chrono::seconds(5));
    in.CloseWrite();
  });
  StdioResult result = ServeStdio(runner, ServerOptions{}, in.read, out.write);
  client.join();
  EXPECT_TRUE(result.clean);
}

}  // namespace
}  // namespace cordon::mcp
