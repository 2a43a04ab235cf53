// Output sinks: a command's stdout and stderr going straight to descriptors of the caller
// (`cordon run` passes its own), spliced where the descriptor takes it, read and written where
// it does not; when the sink's reader is gone, the command's pipe closes as the caller's own
// descriptor would.
#include "exec/pass_through.h"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <thread>

#include "core/unique_fd.h"
#include "exec/supervisor.h"
#include "run_helpers.h"

namespace cordon::exec {
namespace {

using testing::MakePlan;
using testing::SpawnAndSupervise;

struct Pipe {
  core::UniqueFd read;
  core::UniqueFd write;
};

Pipe MakePipe() {
  int fds[2];
  EXPECT_EQ(::pipe2(fds, O_CLOEXEC), 0);
  return Pipe{core::UniqueFd(fds[0]), core::UniqueFd(fds[1])};
}

// Everything that arrives on `fd` until EOF, read on a thread of its own (the sink is a pipe
// that would fill up and hold the supervisor otherwise).
class Collector {
 public:
  explicit Collector(core::UniqueFd fd)
      : fd_(std::move(fd)), thread_([this] {
          char buffer[65536];
          for (;;) {
            const ssize_t n = ::read(fd_.get(), buffer, sizeof buffer);
            if (n <= 0) break;
            text_.append(buffer, static_cast<std::size_t>(n));
          }
        }) {}
  std::string Finish() {
    thread_.join();
    return text_;
  }

 private:
  core::UniqueFd fd_;
  std::string text_;
  std::thread thread_;
};

RunResult MustRunShell(const std::string& text, const SuperviseOptions& options) {
  Result<RunResult> result = SpawnAndSupervise(MakePlan({"/bin/sh", "-c", text}), options);
  EXPECT_TRUE(result.has_value()) << (result ? "" : result.error().message);
  return result ? *result : RunResult{};
}

std::string Expected(int lines) {
  std::ostringstream out;
  for (int i = 1; i <= lines; ++i) out << i << '\n';
  return out.str();
}

std::string ReadFile(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

TEST(PassThrough, SplicesFromAPipeIntoAPipe) {
  Pipe source = MakePipe();
  Pipe sink = MakePipe();
  ASSERT_EQ(::write(source.write.get(), "hello", 5), 5);
  PassThrough through(sink.write.get());
  const PassThrough::Outcome moved = through.Splice(source.read.get());
  ASSERT_EQ(moved.status, PassThrough::Status::kMoved);
  EXPECT_EQ(moved.bytes, 5u);
  char buffer[8] = {};
  EXPECT_EQ(::read(sink.read.get(), buffer, sizeof buffer), 5);
  EXPECT_EQ(std::string(buffer, 5), "hello");
  source.write.Reset();
  EXPECT_EQ(through.Splice(source.read.get()).status, PassThrough::Status::kEof);
}

// A pipe sink grows to the command pipe's 1 MiB at the first splice (fewer wake-ups of the
// supervisor and the reader); a larger one is left alone, and a file sink is no pipe to grow.
TEST(PassThrough, APipeSinkGrowsToAMegabyteAndNeverShrinks) {
  Pipe source = MakePipe();
  Pipe sink = MakePipe();
  ASSERT_EQ(::fcntl(sink.write.get(), F_GETPIPE_SZ), 65536);
  ASSERT_EQ(::write(source.write.get(), "x", 1), 1);
  PassThrough through(sink.write.get());
  ASSERT_EQ(through.Splice(source.read.get()).status, PassThrough::Status::kMoved);
  EXPECT_EQ(::fcntl(sink.write.get(), F_GETPIPE_SZ), 1 << 20);

  Pipe big = MakePipe();
  if (::fcntl(big.write.get(), F_SETPIPE_SZ, 2 << 20) == 2 << 20) {  // above pipe-max-size: root
    ASSERT_EQ(::write(source.write.get(), "y", 1), 1);
    PassThrough into_big(big.write.get());
    ASSERT_EQ(into_big.Splice(source.read.get()).status, PassThrough::Status::kMoved);
    EXPECT_EQ(::fcntl(big.write.get(), F_GETPIPE_SZ), 2 << 20);
  }
}

// The kernel refuses to splice into a file opened with O_APPEND: the caller is told to read
// and write instead, and nothing was taken from the source.
TEST(PassThrough, AnAppendOnlyFileIsUnsupportedAndKeepsTheBytes) {
  const std::filesystem::path path =
      std::filesystem::temp_directory_path() / ("cordon-append-" + std::to_string(::getpid()));
  core::UniqueFd file(
      ::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_APPEND | O_CLOEXEC, 0600));
  ASSERT_TRUE(file.valid());
  Pipe source = MakePipe();
  ASSERT_EQ(::write(source.write.get(), "kept", 4), 4);
  PassThrough through(file.get());
  EXPECT_EQ(through.Splice(source.read.get()).status, PassThrough::Status::kUnsupported);
  char buffer[8] = {};
  EXPECT_EQ(::read(source.read.get(), buffer, sizeof buffer), 4);
  EXPECT_TRUE(through.Write("kept"));
  EXPECT_EQ(ReadFile(path), "kept");
  std::filesystem::remove(path);
}

TEST(PassThrough, ASinkWithoutReaderIsBroken) {
  ::signal(SIGPIPE, SIG_IGN);
  Pipe source = MakePipe();
  Pipe sink = MakePipe();
  sink.read.Reset();
  ASSERT_EQ(::write(source.write.get(), "lost", 4), 4);
  PassThrough through(sink.write.get());
  EXPECT_EQ(through.Splice(source.read.get()).status, PassThrough::Status::kSinkBroken);
  EXPECT_FALSE(through.Write("lost"));
}

// Through the supervisor: with capture off, both streams arrive whole at their sinks (1 MB on
// stdout, more than a pipe holds), counted in the result, none of it kept.
TEST(SuperviseSinks, UncapturedOutputArrivesWholeAtPipeSinks) {
  Pipe out = MakePipe();
  Pipe err = MakePipe();
  SuperviseOptions options;
  options.capture_output = false;
  options.sinks = {out.write.get(), err.write.get()};
  bool callback_called = false;
  options.on_output = [&](OutputStream, std::string_view) { callback_called = true; };
  Collector out_text(std::move(out.read));
  Collector err_text(std::move(err.read));
  RunResult result = MustRunShell("seq 1 150000; echo oops >&2", options);
  out.write.Reset();
  err.write.Reset();
  const std::string expected = Expected(150000);
  EXPECT_EQ(result.status, RunStatus::kExited);
  EXPECT_EQ(out_text.Finish(), expected);
  EXPECT_EQ(err_text.Finish(), "oops\n");
  EXPECT_EQ(result.stdout_data.total_bytes, expected.size());
  EXPECT_EQ(result.stderr_data.total_bytes, 5u);
  EXPECT_EQ(result.stdout_data.data, "");
  EXPECT_FALSE(callback_called);  // a stream with a sink does not also go to the callback
}

// A sink the kernel cannot splice into (O_APPEND) still gets every byte, read and written.
TEST(SuperviseSinks, AnAppendOnlyFileSinkGetsEveryByte) {
  const std::filesystem::path path =
      std::filesystem::temp_directory_path() / ("cordon-sink-" + std::to_string(::getpid()));
  core::UniqueFd file(
      ::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_APPEND | O_CLOEXEC, 0600));
  ASSERT_TRUE(file.valid());
  SuperviseOptions options;
  options.capture_output = false;
  options.sinks = {file.get(), -1};
  std::string err;
  options.on_output = [&](OutputStream, std::string_view data) { err.append(data); };
  RunResult result = MustRunShell("seq 1 100000; echo oops >&2", options);
  EXPECT_EQ(result.status, RunStatus::kExited);
  EXPECT_EQ(ReadFile(path), Expected(100000));
  EXPECT_EQ(err, "oops\n");  // the stream without a sink still goes to the callback
  EXPECT_EQ(result.stdout_data.total_bytes, Expected(100000).size());
  std::filesystem::remove(path);
}

// With capture on, a sink gets the bytes and the result keeps them too (cut to the cap).
TEST(SuperviseSinks, CapturedOutputIsKeptAndAlsoWrittenToTheSink) {
  Pipe out = MakePipe();
  SuperviseOptions options;
  options.output_cap = 16;
  options.sinks = {out.write.get(), -1};
  Collector out_text(std::move(out.read));
  RunResult result = MustRunShell("seq 1 1000", options);
  out.write.Reset();
  EXPECT_EQ(out_text.Finish(), Expected(1000));
  EXPECT_TRUE(result.stdout_data.data.starts_with("1\n2\n3\n"));
  EXPECT_GT(result.stdout_data.truncated_bytes, 0u);
}

// The sink's reader goes away (`cordon run … | head -1` once head exits): the command's pipe
// closes too, and a command that goes on writing ends by SIGPIPE at once, as it would writing
// to the caller's descriptor itself (`yes | head`), instead of running into its timeout.
TEST(SuperviseSinks, ASinkWhoseReaderIsGoneEndsAWritingCommandBySigpipe) {
  ::signal(SIGPIPE, SIG_IGN);
  Pipe out = MakePipe();
  out.read.Reset();
  SuperviseOptions options;
  options.capture_output = false;
  options.sinks = {out.write.get(), -1};
  options.timeout = std::chrono::seconds(30);
  RunResult result = MustRunShell("yes", options);
  // SIGPIPE where the command has its default action (the sandbox resets it: the e2e tests
  // see 141); here it inherits this test's SIG_IGN, so its write fails with EPIPE instead.
  // Either way it ends at once; before, it wrote on until its timeout.
  EXPECT_NE(result.status, RunStatus::kTimedOut);
  const bool piped = (result.status == RunStatus::kSignaled && result.signal == SIGPIPE) ||
                     (result.status == RunStatus::kExited && result.exit_code != 0);
  EXPECT_TRUE(piped) << static_cast<int>(result.status) << " " << result.exit_code;
  // Twin: a command that stops writing before the reader left is not touched.
  Pipe read_all = MakePipe();
  Collector text(std::move(read_all.read));
  options.sinks = {read_all.write.get(), -1};
  RunResult whole = MustRunShell("seq 1 200000", options);
  read_all.write.Reset();
  EXPECT_EQ(whole.status, RunStatus::kExited);
  EXPECT_EQ(whole.exit_code, 0);
  EXPECT_EQ(text.Finish(), Expected(200000));
}

}  // namespace
}  // namespace cordon::exec
