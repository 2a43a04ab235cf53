// The run server's pure parts and its socket checks: /proc status parsing, the trust rule,
// the request's encoding and every malformed form of it, over a real socket pair.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <csignal>
#include <cstring>
#include <filesystem>
#include <thread>
#include <vector>

#include "core/unique_fd.h"
#include "server/admission.h"
#include "server/client.h"
#include "server/context.h"
#include "server/paths.h"
#include "server/peer.h"
#include "server/wire.h"

namespace cordon::server {
namespace {

constexpr const char* kStatus =
    "Name:\tsleep\nUid:\t1000\t1000\t1000\t1000\nNSpid:\t4242\t2\nNoNewPrivs:\t1\n"
    "Seccomp:\t2\nSeccomp_filters:\t3\n";

TEST(ParseStatus, ReadsTheFieldsTheTrustRuleNeeds) {
  Result<Confinement> c = ParseStatus(kStatus);
  ASSERT_TRUE(c.has_value()) << c.error().message;
  EXPECT_EQ(c->uid, 1000u);
  EXPECT_TRUE(c->no_new_privs);
  EXPECT_EQ(c->seccomp_filters, 3);
  EXPECT_EQ(c->pid_namespace_depth, 2);
}

TEST(ParseStatus, AMissingFieldIsNamed) {
  Result<Confinement> c = ParseStatus("Uid:\t0\t0\t0\t0\nNSpid:\t1\nNoNewPrivs:\t0\n");
  ASSERT_FALSE(c.has_value());
  EXPECT_NE(c.error().message.find("Seccomp_filters"), std::string::npos);
}

TEST(Mismatch, TheSameContextIsTrustedAndEveryExtraConfinementIsNot) {
  const Confinement own{1000, false, 0, 1};
  EXPECT_EQ(Mismatch(own, own), "");
  EXPECT_NE(Mismatch(own, Confinement{1001, false, 0, 1}), "");
  EXPECT_NE(Mismatch(own, Confinement{1000, true, 0, 1}), "");
  EXPECT_NE(Mismatch(own, Confinement{1000, false, 1, 1}), "");
  EXPECT_NE(Mismatch(own, Confinement{1000, false, 0, 2}), "");
  // A server that is itself confined trusts a client confined as much, not more.
  const Confinement boxed{1000, true, 2, 1};
  EXPECT_EQ(Mismatch(boxed, Confinement{1000, true, 2, 1}), "");
  EXPECT_NE(Mismatch(boxed, Confinement{1000, true, 3, 1}), "");
}

TEST(PeerCheck, AProcessTrustsItsOwnSocketPeer) {
  int fds[2];
  ASSERT_EQ(::socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, fds), 0);
  EXPECT_TRUE(CheckPeer(*OwnConfinement(), fds[0]).has_value());
  ::close(fds[0]);
  ::close(fds[1]);
}

// The peer read with its context at connection time stands for the sender only when the
// sender is that same live process: this process is both ends of a socketpair; a child is not.
TEST(PeerCheck, OnlyTheSameLiveProcessStandsForThePeer) {
  int fds[2];
  ASSERT_EQ(::socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, fds), 0);
  core::UniqueFd a(fds[0]);
  core::UniqueFd b(fds[1]);
  Result<Peer> peer = PeerWithContext(a.get());
  ASSERT_TRUE(peer.has_value()) << peer.error().message;
  EXPECT_EQ(peer->confinement.pid, ::getpid());
  EXPECT_TRUE(peer->confinement.context.known);
  core::UniqueFd self(static_cast<int>(::syscall(SYS_pidfd_open, ::getpid(), 0)));
  ASSERT_TRUE(self.valid());
  EXPECT_TRUE(SameLiveProcess(*peer, self.get()));

  const pid_t child = ::fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    ::pause();
    ::_exit(0);
  }
  core::UniqueFd other(static_cast<int>(::syscall(SYS_pidfd_open, child, 0)));
  const bool same_as_child = other.valid() && SameLiveProcess(*peer, other.get());
  ::kill(child, SIGKILL);
  ::waitpid(child, nullptr, 0);
  EXPECT_TRUE(other.valid());
  EXPECT_FALSE(same_as_child);
}

Context SampleContext() {
  Context c;
  c.known = true;
  c.root = {8, 2};
  for (std::size_t i = 0; i < c.namespaces.size(); ++i) c.namespaces[i] = {4, 40 + i};
  c.credentials = "Uid:\t1000\t1000\t1000\t1000\nGroups:\t24 27\n";
  c.restrictions = "NoNewPrivs:\t0\nSeccomp:\t0\nSeccomp_filters:\t0\n";
  c.scheduling = "nice 0 rt_priority 0 policy 0 ioprio 4 oom_score_adj 0\n";
  c.umask = "Umask:\t0022\n";
  c.affinity = "Cpus_allowed_list:\t0-1\n";
  c.cgroup = "0::/user.slice/a.scope\n";
  c.limits = "Max open files            1024                 524288               files\n";
  c.lsm = "unconfined\n";
  return c;
}

// Each part of the context that a served command would take from the server instead of its
// caller makes the caller's commands its own to run.
TEST(ContextMismatch, EveryPartOfTheContextCounts) {
  const Context own = SampleContext();
  EXPECT_EQ(ContextMismatch(own, own), "");
  auto differs = [&](auto change, std::string_view words) {
    Context other = own;
    change(other);
    const std::string why = ContextMismatch(own, other);
    EXPECT_NE(why.find(words), std::string::npos) << why << " (expected " << words << ")";
  };
  differs([](Context& c) { c.namespaces[0].ino = 99; }, "another mount namespace");
  differs([](Context& c) { c.namespaces[1].ino = 99; }, "another network namespace");
  differs([](Context& c) { c.namespaces[2].dev = 5; }, "another user namespace");
  differs([](Context& c) { c.namespaces[7].ino = 99; }, "another time namespace");
  differs([](Context& c) { c.root.ino = 3; }, "another root");
  differs([](Context& c) { c.credentials = "Uid:\t1000\t1000\t1000\t1000\nGroups:\t24\n"; },
          "group ids");
  differs([](Context& c) { c.cgroup = "0::/user.slice/b.scope\n"; }, "another cgroup");
  differs([](Context& c) { c.limits += "Max processes 10 10 processes\n"; }, "resource limits");
  differs([](Context& c) { c.lsm = "confined-profile (enforce)\n"; }, "security label");
  differs([](Context& c) { c.umask = "Umask:\t0077\n"; }, "umask");
  differs([](Context& c) { c.affinity = "Cpus_allowed_list:\t0\n"; }, "affinity");
  differs([](Context& c) { c.restrictions = "NoNewPrivs:\t1\n"; }, "no_new_privs, seccomp");
  differs([](Context& c) { c.scheduling = "nice 19 rt_priority 0 policy 0"; }, "scheduling");
  differs([](Context& c) { c.known = false; }, "not readable");
}

// This process, read as itself and through a pidfd of itself, has one context; a child that
// lowered a resource limit does not share it.
TEST(ContextMismatch, ReadThroughProcIsTheSameForTheSameProcessAndNotForAChildWithOtherLimits) {
  Result<Confinement> self = OwnConfinement();
  ASSERT_TRUE(self.has_value());
  ASSERT_TRUE(self->context.known);
  EXPECT_EQ(ContextMismatch(self->context, self->context), "");
  core::UniqueFd own_pidfd(static_cast<int>(::syscall(SYS_pidfd_open, ::getpid(), 0)));
  ASSERT_TRUE(own_pidfd.valid());
  Result<Confinement> through = ConfinementOf(own_pidfd.get(), false, /*context=*/true);
  ASSERT_TRUE(through.has_value());
  EXPECT_EQ(ContextMismatch(self->context, through->context), "");

  rlimit files{};
  ASSERT_EQ(::getrlimit(RLIMIT_NOFILE, &files), 0);
  ASSERT_GT(files.rlim_cur, 3u);
  int ready[2];
  ASSERT_EQ(::pipe2(ready, O_CLOEXEC), 0);
  const pid_t child = ::fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    files.rlim_cur -= 1;  // lowering the soft limit is always allowed
    if (::setrlimit(RLIMIT_NOFILE, &files) != 0) ::_exit(1);
    (void)!::write(ready[1], "x", 1);
    ::pause();
    ::_exit(0);
  }
  ::close(ready[1]);
  char byte = 0;
  const bool limited = ::read(ready[0], &byte, 1) == 1;
  ::close(ready[0]);
  core::UniqueFd child_pidfd(static_cast<int>(::syscall(SYS_pidfd_open, child, 0)));
  Result<Confinement> other = child_pidfd.valid()
                                  ? ConfinementOf(child_pidfd.get(), false, /*context=*/true)
                                  : Fail(ErrorCode::kSystem, "pidfd_open");
  ::kill(child, SIGKILL);
  ::waitpid(child, nullptr, 0);
  ASSERT_TRUE(limited);
  ASSERT_TRUE(other.has_value()) << other.error().message;
  EXPECT_EQ(ContextMismatch(self->context, other->context), "it runs with other resource limits");
}

Invocation SampleInvocation() {
  return Invocation{"/w/sub", {"cordon", "run", "--", "echo", "a b"}, {"A=b", "HOME=/h"}};
}

// XDG_RUNTIME_DIR names the socket's directory only when it is this user's own directory that
// no one else may write (`su` keeps another user's), or when it does not exist (then no server
// is there); anything else means /tmp/cordon-<uid>. The kernel's check is cordon's own.
TEST(ServerPaths, OnlyARuntimeDirectoryOfOurOwnIsUsed) {
  char pattern[] = "/tmp/cordon-paths.XXXXXX";
  ASSERT_NE(::mkdtemp(pattern), nullptr);
  const std::filesystem::path base = pattern;
  const std::string fallback = "/tmp/cordon-" + std::to_string(::geteuid());
  const std::filesystem::path ours = base / "ours";
  std::filesystem::create_directory(ours);
  ::chmod(ours.c_str(), 0700);
  EXPECT_EQ(DefaultServerPaths(ours.string()).directory, ours / "cordon");
  EXPECT_EQ(DefaultServerPaths((base / "absent").string()).directory, base / "absent/cordon");
  const std::filesystem::path open = base / "open";
  std::filesystem::create_directory(open);
  ::chmod(open.c_str(), 0777);
  EXPECT_EQ(DefaultServerPaths(open.string()).directory, fallback);
  const std::filesystem::path link = base / "link";
  std::filesystem::create_directory_symlink(ours, link);
  EXPECT_EQ(DefaultServerPaths(link.string()).directory, fallback);
  EXPECT_EQ(DefaultServerPaths("relative").directory, fallback);
  EXPECT_EQ(DefaultServerPaths(std::nullopt).directory, fallback);
  EXPECT_EQ(CheckKernelNamesPeers().has_value(), true);  // Linux 6.5 or later here
  std::filesystem::remove_all(base);
}

TEST(Wire, AnInvocationSurvivesTheRoundTrip) {
  const Invocation sample = SampleInvocation();
  const std::string body = EncodeInvocation(sample);
  EXPECT_EQ(body.substr(0, 9), std::string("/w/sub\0"
                                           "5\0",
                                           9));
  Result<Invocation> back = DecodeInvocation(body);
  ASSERT_TRUE(back.has_value()) << back.error().message;
  EXPECT_EQ(back->cwd, sample.cwd);
  EXPECT_EQ(back->argv, sample.argv);
  EXPECT_EQ(back->env, sample.env);
  // Empty arguments and no environment at all are still what was sent.
  const Invocation sparse{"/", {"cordon", "", "run"}, {}};
  Result<Invocation> sparse_back = DecodeInvocation(EncodeInvocation(sparse));
  ASSERT_TRUE(sparse_back.has_value()) << sparse_back.error().message;
  EXPECT_EQ(sparse_back->argv, sparse.argv);
  EXPECT_TRUE(sparse_back->env.empty());
}

TEST(Wire, MalformedInvocationsAreRefusedNamingTheProblem) {
  auto message = [](std::string_view body) {
    Result<Invocation> r = DecodeInvocation(body);
    return r.has_value() ? std::string("accepted") : r.error().message;
  };
  EXPECT_NE(message(std::string("/w\0"
                                "1\0cordon",
                                11))
                .find("NUL"),
            std::string::npos);
  EXPECT_NE(message(std::string("/w\0"
                                "1\0",
                                5))
                .find("no working directory"),
            std::string::npos);
  EXPECT_NE(message(std::string("/w\0"
                                "3\0a\0b\0",
                                9))
                .find("argument count"),
            std::string::npos);
  EXPECT_NE(message(std::string("/w\0"
                                "x\0a\0",
                                7))
                .find("argument count"),
            std::string::npos);
  EXPECT_NE(message(std::string("/w\0"
                                "0\0a\0",
                                7))
                .find("argument count"),
            std::string::npos);
  EXPECT_NE(message(std::string("w\0"
                                "1\0a\0",
                                6))
                .find("absolute"),
            std::string::npos);
}

class WireSocket : public ::testing::Test {
 protected:
  WireSocket() {
    int fds[2];
    EXPECT_EQ(::socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, fds), 0);
    client_ = core::UniqueFd(fds[0]);
    server_ = core::UniqueFd(fds[1]);
    EXPECT_TRUE(PassSenderPidfd(server_.get()).has_value());
  }
  core::UniqueFd client_;
  core::UniqueFd server_;
};

// What `cordon run` sends (the front builds the same bytes): its four descriptors, then the
// body; the kernel names the sender.
TEST_F(WireSocket, AnInvocationArrivesNamingItsSender) {
  core::UniqueFd here(::open(".", O_PATH | O_DIRECTORY | O_CLOEXEC));
  ASSERT_TRUE(here.valid());
  ASSERT_TRUE(SendInvocation(client_.get(), SampleInvocation(),
                             {STDIN_FILENO, STDOUT_FILENO, STDERR_FILENO, here.get()})
                  .has_value());
  Result<ReceivedRequest> got = ReceiveRequest(server_.get());
  ASSERT_TRUE(got.has_value()) << got.error().message;
  EXPECT_TRUE(got->sender.valid());
  EXPECT_TRUE(CheckProcess(*OwnConfinement(), got->sender.get()).has_value());
  EXPECT_EQ(got->invocation.argv, SampleInvocation().argv);
  EXPECT_EQ(got->invocation.env, SampleInvocation().env);
  EXPECT_EQ(got->fds.size(), 4u);
}

// One protocol: the JSON request form (a whole configuration sent by the client, before the
// full client sent what the front sends) is refused, not served.
TEST_F(WireSocket, TheOldJsonRequestFormIsRefused) {
  const std::string body = R"({"config":"{}","workspace":"/w","argv":["true"]})";
  const std::uint32_t header[2] = {kMagic, static_cast<std::uint32_t>(body.size())};
  ASSERT_EQ(::send(client_.get(), header, sizeof header, 0), static_cast<ssize_t>(sizeof header));
  ASSERT_EQ(::send(client_.get(), body.data(), body.size(), 0), static_cast<ssize_t>(body.size()));
  Result<ReceivedRequest> got = ReceiveRequest(server_.get());
  ASSERT_FALSE(got.has_value());
  EXPECT_NE(got.error().message.find("bad header"), std::string::npos) << got.error().message;
}

TEST_F(WireSocket, ABadHeaderAnOversizedBodyAndACutBodyAreRefused) {
  const std::uint32_t bad[2] = {0xdeadbeef, 10};
  ASSERT_EQ(::send(client_.get(), bad, sizeof bad, 0), static_cast<ssize_t>(sizeof bad));
  Result<ReceivedRequest> got = ReceiveRequest(server_.get());
  ASSERT_FALSE(got.has_value());
  EXPECT_NE(got.error().message.find("bad header"), std::string::npos);

  const std::uint32_t huge[2] = {kInvocationMagic, kMaxBodyBytes + 1};
  ASSERT_EQ(::send(client_.get(), huge, sizeof huge, 0), static_cast<ssize_t>(sizeof huge));
  got = ReceiveRequest(server_.get());
  ASSERT_FALSE(got.has_value());
  EXPECT_NE(got.error().message.find("accepted"), std::string::npos);

  const std::uint32_t cut[2] = {kInvocationMagic, 100};
  ASSERT_EQ(::send(client_.get(), cut, sizeof cut, 0), static_cast<ssize_t>(sizeof cut));
  ASSERT_EQ(::send(client_.get(), "{}", 2, 0), 2);
  ::shutdown(client_.get(), SHUT_WR);
  got = ReceiveRequest(server_.get());
  ASSERT_FALSE(got.has_value());
  EXPECT_NE(got.error().message.find("closed inside"), std::string::npos);
}

// A body that trickles in is cut off at its deadline however often a byte comes; the twin:
// the same body sent whole is read.
TEST_F(WireSocket, ABodyThatTricklesInIsCutOffAtItsDeadline) {
  const std::string body = "0123456789";
  const std::uint32_t header[2] = {kInvocationMagic, static_cast<std::uint32_t>(body.size())};
  ASSERT_EQ(::send(client_.get(), header, sizeof header, 0), static_cast<ssize_t>(sizeof header));
  std::thread trickle([&] {
    for (char c : body) {
      std::this_thread::sleep_for(std::chrono::milliseconds(100));
      if (::send(client_.get(), &c, 1, MSG_NOSIGNAL) != 1) return;
    }
  });
  Result<ReceivedRequest> got = ReceiveRequest(server_.get(), std::chrono::milliseconds(300));
  trickle.join();
  ASSERT_FALSE(got.has_value());
  EXPECT_NE(got.error().message.find("came too slowly"), std::string::npos) << got.error().message;

  char rest[64];  // what trickled in after the cut
  while (::recv(server_.get(), rest, sizeof rest, MSG_DONTWAIT) > 0) {
  }
  ASSERT_TRUE(SendInvocation(client_.get(), SampleInvocation(),
                             {STDIN_FILENO, STDOUT_FILENO, STDERR_FILENO, STDIN_FILENO})
                  .has_value());
  got = ReceiveRequest(server_.get(), std::chrono::milliseconds(300));
  ASSERT_TRUE(got.has_value()) << got.error().message;
}

TEST_F(WireSocket, AReplySurvivesTheRoundTripAndACutOneIsRefused) {
  ASSERT_TRUE(SendReply(server_.get(), ReplyKind::kRan, 3, "out", "err").has_value());
  Result<Reply> reply = ReceiveReply(client_.get());
  ASSERT_TRUE(reply.has_value()) << reply.error().message;
  EXPECT_EQ(reply->exit_code, 3);
  EXPECT_EQ(reply->stdout_text, "out");
  EXPECT_EQ(reply->stderr_text, "err");
  ASSERT_EQ(::send(server_.get(), "x", 1, 0), 1);
  ::shutdown(server_.get(), SHUT_WR);
  EXPECT_FALSE(ReceiveReply(client_.get()).has_value());
}

}  // namespace
}  // namespace cordon::server

namespace cordon::server {
namespace {

// The front's bytes, built by hand with any number of descriptors.
void SendRawInvocation(int socket, const std::vector<int>& fds) {
  const std::string body = EncodeInvocation(SampleInvocation());
  const RequestHeader header{kInvocationMagic, static_cast<std::uint32_t>(body.size())};
  alignas(cmsghdr) char control[CMSG_SPACE(4 * sizeof(int))] = {};
  iovec iov{const_cast<RequestHeader*>(&header), sizeof header};
  msghdr msg{};
  msg.msg_iov = &iov;
  msg.msg_iovlen = 1;
  if (!fds.empty()) {
    msg.msg_control = control;
    msg.msg_controllen = CMSG_SPACE(fds.size() * sizeof(int));
    cmsghdr* c = CMSG_FIRSTHDR(&msg);
    c->cmsg_level = SOL_SOCKET;
    c->cmsg_type = SCM_RIGHTS;
    c->cmsg_len = CMSG_LEN(fds.size() * sizeof(int));
    std::memcpy(CMSG_DATA(c), fds.data(), fds.size() * sizeof(int));
  }
  ASSERT_EQ(::sendmsg(socket, &msg, 0), static_cast<ssize_t>(sizeof header));
  ASSERT_EQ(::send(socket, body.data(), body.size(), 0), static_cast<ssize_t>(body.size()));
}

// stdin, stdout, stderr and the front's working directory (O_PATH).
TEST_F(WireSocket, AnInvocationArrivesWithItsFourDescriptors) {
  core::UniqueFd here(::open(".", O_PATH | O_DIRECTORY | O_CLOEXEC));
  ASSERT_TRUE(here.valid());
  SendRawInvocation(client_.get(), {STDIN_FILENO, STDOUT_FILENO, STDERR_FILENO, here.get()});
  Result<ReceivedRequest> got = ReceiveRequest(server_.get());
  ASSERT_TRUE(got.has_value()) << got.error().message;
  EXPECT_EQ(got->invocation.argv, SampleInvocation().argv);
  EXPECT_EQ(got->fds.size(), 4u);
  EXPECT_TRUE(got->sender.valid());
}

TEST_F(WireSocket, AnInvocationWithoutItsFourDescriptorsIsRefused) {
  SendRawInvocation(client_.get(), {STDIN_FILENO, STDOUT_FILENO, STDERR_FILENO});
  Result<ReceivedRequest> got = ReceiveRequest(server_.get());
  ASSERT_FALSE(got.has_value());
  EXPECT_NE(got.error().message.find("3 descriptors attached, 4 expected"), std::string::npos);
}

TEST_F(WireSocket, TheNewReplyKindsCarryTheirWait) {
  ASSERT_TRUE(SendReply(server_.get(), ReplyKind::kAccepted, 0, {}, {}, 31).has_value());
  Result<Reply> reply = ReceiveReply(client_.get());
  ASSERT_TRUE(reply.has_value()) << reply.error().message;
  EXPECT_EQ(reply->kind, ReplyKind::kAccepted);
  EXPECT_EQ(reply->wait_seconds, 31u);
  const std::uint32_t unknown[8] = {kMagic, 9, 0, 0, 0, 0, 0, 0};
  ASSERT_EQ(::send(server_.get(), unknown, sizeof unknown, 0),
            static_cast<ssize_t>(sizeof unknown));
  EXPECT_FALSE(ReceiveReply(client_.get()).has_value());
}

TEST(ClientWords, ARefusalIsPrintedWithOneCordonPrefix) {
  // The client prints "cordon: WARNING; running the command in this process instead": a
  // server's text without its final newline and without a prefix of its own (an earlier
  // version's "cordon: " would print "cordon: cordon: ...").
  EXPECT_EQ(RefusalWarning("the run server is at its limit of concurrent runs\n"),
            "the run server is at its limit of concurrent runs");
  EXPECT_EQ(RefusalWarning("cordon: the run server is at its limit of concurrent runs\n\n"),
            "the run server is at its limit of concurrent runs");
  EXPECT_EQ(RefusalWarning("the run server refused: cordon: x"),
            "the run server refused: cordon: x");  // only a leading prefix
  EXPECT_EQ(RefusalWarning(""), "");
}

TEST(Admission, ANewSessionWhileThereIsRoomOrAnIdleOneToReplace) {
  using std::chrono::milliseconds;
  const auto now = std::chrono::steady_clock::time_point{} + std::chrono::seconds(1000);
  // Room: always, busy or not.
  EXPECT_TRUE(AdmitsNewSession(0, 8, std::nullopt, 0, now));
  EXPECT_TRUE(AdmitsNewSession(7, 8, std::nullopt, 7, now));
  // Full and every kept session runs a command: none to drop; the client runs it one-shot.
  EXPECT_FALSE(AdmitsNewSession(8, 8, std::nullopt, 8, now));
  // Full, others running, and the idle one ended a command a moment ago (its agent sends the
  // next one at once): kept.
  EXPECT_FALSE(AdmitsNewSession(8, 8, now, 3, now));
  EXPECT_FALSE(AdmitsNewSession(8, 8, now - kIdleBeforeEviction + milliseconds(1), 3, now));
  // Idle long enough: replaced, as before.
  EXPECT_TRUE(AdmitsNewSession(8, 8, now - kIdleBeforeEviction, 3, now));
  EXPECT_TRUE(AdmitsNewSession(8, 8, now - milliseconds(3600000), 3, now));
  // Nothing running anywhere (one client at a time, each workspace once: a test suite, a
  // script): replaced at once; a new session costs only that client.
  EXPECT_TRUE(AdmitsNewSession(8, 8, now, 0, now));
}

}  // namespace
}  // namespace cordon::server
