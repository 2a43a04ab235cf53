#!/usr/bin/env bash
# Fails when code shared by every platform includes a Linux-only system header, or calls a
# Linux-only function (pipe2, close_range, prctl, pidfd syscalls, ...), outside an
# `#if defined(__linux__)` (or `#ifdef __linux__`) block, so the macOS build stays possible in
# principle (docs/decisions/0020). Comments and string literals are not searched. Linux-only directories (src/linux, src/zygote, src/bwrap) and
# the Linux-only files CMake builds only on Linux are not checked.
#
#   scripts/check_portable_includes.sh [SOURCE_ROOT]    (ctest: portable_includes)
set -euo pipefail
root=${1:-$(cd "$(dirname "$0")/.." && pwd)}
cd "$root"

shared=(include src/core src/config src/policy src/report src/plan src/session src/exec src/cli
  src/mcp src/seatbelt src/capi src/worktree src/limits)
# Built only on Linux (src/exec/CMakeLists.txt): they may include what they need.
linux_only_files=(src/exec/connect_broker.cc src/exec/outside_connect.cc src/exec/outside_socket.cc src/exec/parent_tunnel.cc src/exec/abstract_owner.cc src/exec/write_observer.cc
  src/exec/write_observer.h src/exec/notified_task.cc src/exec/resolver_process.cc
  src/exec/upstream_dns.cc)
# Headers that exist only on Linux (or mean something else elsewhere).
linux_calls='(^|[^A-Za-z0-9_.>])(pipe2|accept4|close_range|getrandom|memfd_create|eventfd|epoll_[a-z]+|signalfd|timerfd_[a-z]+|prctl|unshare|setns|pivot_root|mount_setattr)[ \t]*\(|(^|[^A-Za-z0-9_])(O_PATH|O_TMPFILE|F_SETPIPE_SZ|SYS_[a-z_0-9]+|CLOSE_RANGE_[A-Z]+)([^A-Za-z0-9_]|$)'
linux_headers='<(linux/[^>]*|asm/[^>]*|sys/(epoll|prctl|signalfd|eventfd|timerfd|inotify|fanotify|syscall|statfs|vfs|sysmacros|capability|fsuid|personality|sendfile|sysinfo|mount)\.h|seccomp\.h|mntent\.h)>'

failed=0
while IFS= read -r file; do
  skip=0
  for only in "${linux_only_files[@]}"; do [ "$file" = "$only" ] && skip=1; done
  [ "$skip" -eq 1 ] && continue
  # A stack of the enclosing conditionals: 1 where the branch we are in is "Linux only".
  awk -v file="$file" -v pattern="$linux_headers" -v calls="$linux_calls" '
    function guarded(  i) { for (i = 1; i <= depth; ++i) if (linux[i]) return 1; return 0 }
    /^[ \t]*#[ \t]*if/ {
      ++depth
      not = ($0 ~ /!/ || $0 ~ /^[ \t]*#[ \t]*ifndef/)
      linux[depth] = ($0 ~ /__linux__/ && !not)
      negated[depth] = ($0 ~ /__linux__/ && not)
      next
    }
    /^[ \t]*#[ \t]*elif/ { linux[depth] = ($0 ~ /__linux__/ && $0 !~ /!/); negated[depth] = 0; next }
    /^[ \t]*#[ \t]*else/ { linux[depth] = negated[depth]; negated[depth] = 0; next }
    /^[ \t]*#[ \t]*endif/ { if (depth > 0) --depth; next }
    /^[ \t]*#[ \t]*include[ \t]*</ {
      if (match($0, pattern) && !guarded()) {
        printf "%s:%d: Linux-only header outside #if defined(__linux__): %s\n", file, NR, $0
        bad = 1
      }
      next
    }
    {
      code = $0
      gsub(/"([^"\\]|\\.)*"/, "\"\"", code)  # string literals
      sub(/\/\/.*/, "", code)                   # line comments
      gsub(/\/\*([^*]|\*[^\/])*(\*\/|$)/, "", code)  # block comments opened on this line
      if (code ~ /^[ \t]*\*/) code = ""          # inside a block comment
      if (match(code, calls) && !guarded()) {
        printf "%s:%d: Linux-only call outside #if defined(__linux__): %s\n", file, NR, $0
        bad = 1
      }
    }
    END { exit bad }
  ' "$file" || failed=1
done < <(find "${shared[@]}" -type f \( -name '*.cc' -o -name '*.h' \) | sort)

if [ "$failed" -ne 0 ]; then
  echo "check_portable_includes: guard these includes and calls with" \
    "#if defined(__linux__), or move the code to a Linux-only file" >&2
  exit 1
fi
echo "check_portable_includes: shared code uses no Linux-only header or call unguarded"
