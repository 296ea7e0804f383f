# Shared by the CLI test scripts that start servers: source it after `set -u`.
#   . "$(dirname "$0")/lib.sh"
# It sets pass/fail counters, a temporary directory T removed at exit with
# every server started (pids), and ok/bad/check_eq to count results.
pass=0 fail=0
T=$(mktemp -d)
pids=()
cleanup() { for p in "${pids[@]}"; do kill "$p" 2>/dev/null; done; wait 2>/dev/null; rm -rf "$T"; }
trap cleanup EXIT
ok() { pass=$((pass + 1)); }
bad() { echo "FAIL: $*" >&2; fail=$((fail + 1)); }
check_eq() { if [ "$1" == "$2" ]; then ok; else bad "$3: got [$1] want [$2]"; fi; }
free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }

# serve RUN-ARGS...: `$SONDE run RUN-ARGS` in the background, given port 0 in
# its --gdb/--jtag option so that it picks a free port and says which (no race
# with another test for a port). Waits up to 10 s for its "listening on" line
# and sets `port` (empty if it never came) and `pid`. Each server has its own
# log, $T/run.N.log (stdout and stderr), so an earlier server's line never
# counts.
nserve=0
serve() {
  nserve=$((nserve + 1))
  "$SONDE" run "$@" >"$T/run.$nserve.log" 2>&1 &
  pid=$!
  pids+=($pid)
  port=
  for _ in $(seq 100); do
    port=$(sed -n 's/.*listening on 127\.0\.0\.1:\([0-9][0-9]*\).*/\1/p' "$T/run.$nserve.log" 2>/dev/null)
    [ -n "$port" ] && break
    sleep 0.1
  done
  [ -n "$port" ] || bad "sonde run $*: no 'listening on' line in 10 s: $(head -c 300 "$T/run.$nserve.log")"
}
