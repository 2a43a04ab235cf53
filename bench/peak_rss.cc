// cordon_peak_rss OUT CMD [ARG...]: runs CMD as a child of this small static program, writes
// the child's peak resident set in KiB (wait4's ru_maxrss) to the file OUT, and exits with the
// child's status (128 + signal when it was killed).
//
// Why the benchmarks do not take ru_maxrss from their own children: the kernel starts a
// process's peak count at execve with the resident set of the image it replaces, and a child
// of posix_spawn or fork replaces a copy of (or shares) the benchmark's image, about 4 MiB,
// which hides anything smaller. Here the replaced image is a fork of this program: the floor
// is its own few hundred KiB (startup_bench measures it as PeakRss/true_bare).
#include <stdio.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

int main(int argc, char** argv) {
  if (argc < 3) {
    fputs("usage: cordon_peak_rss OUT CMD [ARG...]\n", stderr);
    return 125;
  }
  const pid_t pid = fork();
  if (pid < 0) return 125;
  if (pid == 0) {
    execvp(argv[2], argv + 2);
    _exit(127);
  }
  int status = 0;
  struct rusage usage {};
  if (wait4(pid, &status, 0, &usage) != pid) return 125;
  FILE* out = fopen(argv[1], "w");
  if (out == nullptr) return 125;
  fprintf(out, "%ld\n", usage.ru_maxrss);
  if (fclose(out) != 0) return 125;
  return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}
