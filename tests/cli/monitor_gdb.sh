#!/bin/bash
# `sonde monitor pc|break --link gdb:...` against `sonde run --gdb` (the VM's
# GDB server) in another process: halting-mode PC polling and FPB
# breakpoints through the GDB remote protocol; then the server runs the
# firmware to its end once the monitor detaches.
set -u
pass=0 fail=0
T=$(mktemp -d)
pids=()
cleanup() { for p in "${pids[@]}"; do kill "$p" 2>/dev/null; done; wait 2>/dev/null; rm -rf "$T"; }
trap cleanup EXIT
ok() { pass=$((pass + 1)); }
bad() { echo "FAIL: $*" >&2; fail=$((fail + 1)); }
check_eq() { if [ "$1" == "$2" ]; then ok; else bad "$3: got [$1] want [$2]"; fi; }
FW="$SONDE_BUILD/firmware/mon_bench.elf"
[ -f "$FW" ] || { echo "missing $FW" >&2; exit 1; }
free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }
# one server per session: after the monitor detaches the server runs the
# firmware to its end and exits
# port 0: the server picks a free port and says which (no race with another
# test for a port); a log per server, so an earlier server's line never counts
nserve=0
serve() {
  nserve=$((nserve + 1))
  "$SONDE" run --gdb 0 "$FW" > "$T/run.out" 2> "$T/run.$nserve.err" &
  pid=$!
  pids+=($pid)
  port=
  for i in $(seq 100); do
    port=$(sed -n 's/.*listening on 127\.0\.0\.1:\([0-9][0-9]*\).*/\1/p' "$T/run.$nserve.err" 2>/dev/null)
    [ -n "$port" ] && break
    sleep 0.1
  done
}

serve
out=$("$SONDE" monitor break -e "$FW" --link "gdb:127.0.0.1:$port" --at div32 --max-ms 500 --format csv)
check_eq $? 0 "break over gdb"
n=$(echo "$out" | grep -c ',div32,')
[ "$n" -ge 3 ] && ok || bad "break events: $n"
wait "$pid"; check_eq $? 0 "the server ran the firmware to its exit after the detach"

serve
out=$("$SONDE" monitor pc -e "$FW" --link "gdb:127.0.0.1:$port" --max-ms 1500 --json)
check_eq $? 0 "pc over gdb"
echo "$out" | python3 -c 'import json,sys; d=json.load(sys.stdin); sys.exit(0 if d["polls"] >= 3 and d["changes"] >= 2 and d["link"].startswith("gdb:") else 1)' \
  && ok || bad "pc json: $out"
wait "$pid"; check_eq $? 0 "exit after the second detach"

echo "$pass passed, $fail failed"
[ "$fail" -eq 0 ]
