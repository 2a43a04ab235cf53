# Sourced by the benchmarks that time served runs: a run server of their own, in its own
# runtime directory under ROOT, stopped at the exit (with whatever else EXTRA_TRAP says).
# Usage: start_run_server ROOT CORDON [EXTRA_TRAP]
start_run_server() {
  export XDG_RUNTIME_DIR=$1/runtime
  mkdir -p "$XDG_RUNTIME_DIR"
  chmod 700 "$XDG_RUNTIME_DIR"
  "$2" serve --idle-timeout 600 >"$1/serve.log" 2>&1 &
  server=$!
  # shellcheck disable=SC2064 # the server's pid and the extra command are fixed now
  trap "kill $server 2>/dev/null; ${3:-true}" EXIT
  sleep 0.5
}
