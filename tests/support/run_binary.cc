#include "support/run_binary.h"

#include <fcntl.h>
#include <poll.h>
#include <sched.h>
#include <seccomp.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <stdexcept>

namespace cordon::test_support {

namespace {

// Built before fork; loaded in the child (seccomp_load also sets no_new_privs).
scmp_filter_ctx RefuseUserNamespacesFilter() {
  scmp_filter_ctx ctx = seccomp_init(SCMP_ACT_ALLOW);
  if (ctx == nullptr) throw std::runtime_error("seccomp_init failed");
  const scmp_datum_t flag = CLONE_NEWUSER;
  if (seccomp_rule_add(ctx, SCMP_ACT_ERRNO(EPERM), SCMP_SYS(unshare), 1,
                       SCMP_A0(SCMP_CMP_MASKED_EQ, flag, flag)) != 0 ||
      seccomp_rule_add(ctx, SCMP_ACT_ERRNO(EPERM), SCMP_SYS(clone), 1,
                       SCMP_A0(SCMP_CMP_MASKED_EQ, flag, flag)) != 0 ||
      seccomp_rule_add(ctx, SCMP_ACT_ERRNO(ENOSYS), SCMP_SYS(clone3), 0) != 0) {
    seccomp_release(ctx);
    throw std::runtime_error("seccomp_rule_add failed");
  }
  return ctx;
}

}  // namespace

Outcome RunBinary(const Invocation& inv) {
  scmp_filter_ctx filter = inv.refuse_user_namespaces ? RefuseUserNamespacesFilter() : nullptr;
  int out_pipe[2], err_pipe[2], in_pipe[2];
  if (pipe2(out_pipe, O_CLOEXEC) || pipe2(err_pipe, O_CLOEXEC) || pipe2(in_pipe, O_CLOEXEC)) {
    throw std::runtime_error("pipe2 failed");
  }
  std::vector<char*> argv, envp;
  for (const auto& a : inv.argv) argv.push_back(const_cast<char*>(a.c_str()));
  argv.push_back(nullptr);
  for (const auto& e : inv.env) envp.push_back(const_cast<char*>(e.c_str()));
  envp.push_back(nullptr);

  pid_t pid = fork();
  if (pid == 0) {
    dup2(in_pipe[0], 0);
    dup2(out_pipe[1], 1);
    dup2(err_pipe[1], 2);
    if (!inv.cwd.empty() && chdir(inv.cwd.c_str()) != 0) _exit(127);
    if (filter != nullptr && seccomp_load(filter) != 0) _exit(127);
    execve(argv[0], argv.data(), envp.data());
    _exit(127);
  }
  if (filter != nullptr) seccomp_release(filter);
  close(in_pipe[0]);
  close(out_pipe[1]);
  close(err_pipe[1]);
  if (!inv.stdin_data.empty()) {
    (void)!write(in_pipe[1], inv.stdin_data.data(), inv.stdin_data.size());
  }
  close(in_pipe[1]);

  Outcome outcome;
  pollfd fds[2] = {{out_pipe[0], POLLIN, 0}, {err_pipe[0], POLLIN, 0}};
  std::string* sinks[2] = {&outcome.out, &outcome.err};
  int open_fds = 2;
  char buffer[65536];
  while (open_fds > 0) {
    if (poll(fds, 2, -1) < 0) continue;
    for (int i = 0; i < 2; ++i) {
      if (fds[i].fd < 0 || !(fds[i].revents & (POLLIN | POLLHUP | POLLERR))) continue;
      ssize_t n = read(fds[i].fd, buffer, sizeof buffer);
      if (n > 0) {
        sinks[i]->append(buffer, static_cast<size_t>(n));
      } else {
        close(fds[i].fd);
        fds[i].fd = -1;
        --open_fds;
      }
    }
  }
  int status = 0;
  waitpid(pid, &status, 0);
  outcome.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  return outcome;
}

}  // namespace cordon::test_support
