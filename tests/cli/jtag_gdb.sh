#!/bin/bash
# gdb-multiarch through real OpenOCD's GDB server, attached to `sonde run
# --jtag` (issue 16): reset halt, break, continue, next, finish, step, a
# watchpoint (DWT), variables, and the firmware's exit code (42, written by
# gdb into stop_request), as cli_gdb_batch does against Sonde's own server.
set -u
FW=$SONDE_BUILD/firmware/jtag_demo_m3.elf
SRC=$SONDE_SRC/firmware/jtag/jtag_demo.c
pass=0 fail=0
ok() { pass=$((pass + 1)); }
bad() { echo "FAIL: $*"; fail=$((fail + 1)); }
for t in gdb-multiarch openocd python3; do
  command -v $t >/dev/null || { echo "FAIL: $t not installed (scripts/install-deps)"; exit 1; }
done
[ -f "$FW" ] || { echo "FAIL: $FW missing (build the firmware)"; exit 1; }
TMP=$(mktemp -d)
SRV= OCD=
cleanup() {
  [ -n "$OCD" ] && kill "$OCD" 2>/dev/null
  [ -n "$SRV" ] && kill "$SRV" 2>/dev/null
  wait 2>/dev/null
  rm -rf "$TMP"
}
trap cleanup EXIT
free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }

timeout 120 "$SONDE" run -m cm3 --jtag 0 "$FW" > "$TMP/srv.out" 2> "$TMP/srv.err" &
SRV=$!
PORT=
for _ in $(seq 100); do
  PORT=$(sed -n 's/^sonde: jtag server (OpenOCD remote_bitbang) listening on 127\.0\.0\.1:\([0-9]*\)$/\1/p' "$TMP/srv.err")
  [ -n "$PORT" ] && break
  sleep 0.05
done
[ -n "$PORT" ] || { echo "FAIL: server did not start: $(cat "$TMP/srv.err")"; exit 1; }
GDBPORT=$(free_port)
SONDE_JTAG_PORT=$PORT timeout 100 openocd -l "$TMP/ocd.log" \
  -c "gdb_port $GDBPORT; telnet_port disabled; tcl_port disabled" \
  -f "$SONDE_SRC/scripts/openocd/sonde-vm.cfg" 2> /dev/null &
OCD=$!
for _ in $(seq 200); do
  grep -q "Listening on port $GDBPORT for gdb connections" "$TMP/ocd.log" 2>/dev/null && break
  sleep 0.05
done

timeout 60 gdb-multiarch -batch -nx -ex 'set pagination off' -ex 'set confirm off' \
  -ex "target extended-remote 127.0.0.1:$GDBPORT" -ex 'monitor reset halt' \
  -ex 'break tick' -ex 'continue' -ex 'print n' -ex 'next' -ex 'print counter' \
  -ex 'finish' -ex 'step' -ex 'step' -ex 'print n' -ex 'delete' \
  -ex 'watch watched' -ex 'continue' -ex 'print counter' \
  -ex 'delete' -ex 'set var stop_request = 42' -ex 'continue' \
  -ex 'print op' -ex 'print ((unsigned *)arg)[1]' -ex 'monitor shutdown' \
  "$FW" > "$TMP/gdb.out" 2>&1
wait "$OCD"; OCD=
wait "$SRV"; rc=$?; SRV=
if [ $rc -eq 42 ]; then ok; else bad "sonde exit $rc, expected 42 (the firmware's exit code)"; fi
expect() { # expect FILE LINE...
  local f=$1; shift
  for l in "$@"; do
    if grep -qxF -- "$l" "$f"; then ok; else bad "missing line: $l"; fi
  done
}
expect "$TMP/gdb.out" \
  "Breakpoint 1, tick (n=1) at $SRC:14" \
  '$1 = 1' \
  '$2 = 1' \
  "main () at $SRC:22" \
  "Breakpoint 1, tick (n=2) at $SRC:14" \
  '$3 = 2' \
  'Hardware watchpoint 2: watched' \
  'Old value = 0' 'New value = 1' \
  '$4 = 256' \
  'Program received signal SIGTRAP, Trace/breakpoint trap.' \
  '$5 = 32' \
  '$6 = 42'
expect "$TMP/ocd.log" \
  'Info : JTAG tap: sonde.cpu tap/device found: 0x4ba00477 (mfg: 0x23b (ARM Ltd), part: 0xba00, ver: 0x4)' \
  'Info : [sonde.cpu] Cortex-M3 r2p1 processor detected' \
  'Info : [sonde.cpu] target has 6 breakpoints, 4 watchpoints'
if [ $fail -ne 0 ]; then
  echo "--- gdb output:"; cat "$TMP/gdb.out"; echo "--- openocd log:"; cat "$TMP/ocd.log"
  echo "--- sonde:"; cat "$TMP/srv.err"
fi
echo "jtag_gdb: $pass passed, $fail failed"
[ $fail -eq 0 ]
