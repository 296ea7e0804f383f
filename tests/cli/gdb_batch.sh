#!/bin/bash
# `sonde run --gdb` driven by gdb-multiarch in batch mode (issue 3 item 6):
# load symbols, break at a function, step, read variables and registers, a
# watchpoint that triggers, a hardware breakpoint through the FPB, monitor
# commands, continue to the firmware's exit code. Exact expected lines.
set -u
FW=$SONDE_BUILD/firmware
pass=0 fail=0
ok() { pass=$((pass + 1)); }
bad() { echo "FAIL: $*"; fail=$((fail + 1)); }
command -v gdb-multiarch >/dev/null || { echo "FAIL: gdb-multiarch not installed"; exit 1; }
for f in gdb_demo_m3 gdb_demo_m4f; do
  [ -f "$FW/$f.elf" ] || { echo "FAIL: $FW/$f.elf missing (build the firmware)"; exit 1; }
done
TMP=$(mktemp -d)
trap 'kill $SRV 2>/dev/null; rm -rf "$TMP"' EXIT

# start_server MACHINE ELF: runs sonde in the background, sets SRV and PORT
start_server() {
  : > "$TMP/srv.err"
  timeout 60 "$SONDE" run -m "$1" --gdb 0 "$2" 2> "$TMP/srv.err" &
  SRV=$!
  PORT=
  for _ in $(seq 100); do
    PORT=$(sed -n 's/^sonde: gdb server listening on 127\.0\.0\.1:\([0-9]*\)$/\1/p' "$TMP/srv.err")
    [ -n "$PORT" ] && return 0
    sleep 0.05
  done
  bad "server did not start: $(cat "$TMP/srv.err")"
  return 1
}

expect() { # expect FILE LINE...
  local f=$1; shift
  for l in "$@"; do
    if grep -qxF -- "$l" "$f"; then ok; else bad "missing line: $l"; fi
  done
}

# ---- session 1: Cortex-M3 ------------------------------------------------
start_server cm3 "$FW/gdb_demo_m3.elf" || exit 1
timeout 40 gdb-multiarch -batch -nx -ex 'set pagination off' -ex 'set confirm off' \
  -ex "target remote 127.0.0.1:$PORT" \
  -ex 'break accumulate' -ex 'continue' -ex 'print n' \
  -ex 'next' -ex 'next' -ex 'step' -ex 'print x' -ex 'finish' \
  -ex 'print/x $pc == accumulate' -ex 'print $xpsr & 0x1ff' -ex 'print/x $msp == $sp' \
  -ex 'watch counter' -ex 'continue' -ex 'print counter' -ex 'delete' \
  -ex 'hbreak square' -ex 'continue' -ex 'print x' -ex 'print/x *(unsigned *)0xE0002000' \
  -ex 'monitor stats' -ex 'monitor pcsr' -ex 'delete' \
  -ex 'continue' "$FW/gdb_demo_m3.elf" > "$TMP/gdb1.out" 2>&1
wait $SRV; rc=$?
if [ $rc -eq 42 ]; then ok; else bad "session 1: sonde exit $rc, expected 42"; fi
expect "$TMP/gdb1.out" \
  'Breakpoint 1, accumulate (n=10) at '"$SONDE_SRC"'/firmware/gdb/gdb_demo.c:17' \
  '$1 = 10' \
  'square (x=1) at '"$SONDE_SRC"'/firmware/gdb/gdb_demo.c:12' \
  '$2 = 1' \
  'Value returned is $3 = 1' \
  '$5 = 0' \
  'Hardware watchpoint 2: counter' \
  'Old value = 0' 'New value = 1' \
  '$7 = 1' \
  'Breakpoint 3, square (x=2) at '"$SONDE_SRC"'/firmware/gdb/gdb_demo.c:12' \
  '$8 = 2' \
  '$9 = 0x261' \
  '[Inferior 1 (Remote target) exited with code 052]'
# FP_CTRL 0x261: ENABLE, NUM_CODE 6, NUM_LIT 2 (Cortex-M3 FPB, C1.11.3)
grep -q '^cycles [0-9]* instructions [0-9]* exceptions 0$' "$TMP/gdb1.out" && ok || bad "monitor stats"
grep -q '^\(DWT_PCSR = 0x[0-9a-f]*\|no DWT on this machine;\) ' "$TMP/gdb1.out" && ok || bad "monitor pcsr"
[ $fail -eq 0 ] || { echo "--- gdb output:"; cat "$TMP/gdb1.out"; }

# ---- session 2: Cortex-M4F: FP registers in the target description --------
start_server cm4f "$FW/gdb_demo_m4f.elf" || exit 1
timeout 40 gdb-multiarch -batch -nx -ex 'set pagination off' -ex 'set confirm off' \
  -ex "target remote 127.0.0.1:$PORT" \
  -ex 'set $s0 = 1.5' -ex 'print $s0' -ex 'print $d0 == 0 || $d0 != 0' \
  -ex 'print/x $fpscr' -ex 'set $r4 = 0x12345678' -ex 'print/x $r4' \
  -ex 'stepi' -ex 'print/x $r4' -ex 'kill' "$FW/gdb_demo_m4f.elf" > "$TMP/gdb2.out" 2>&1
wait $SRV; rc=$?
if [ $rc -eq 1 ]; then ok; else bad "session 2 (killed): sonde exit $rc, expected 1"; fi
expect "$TMP/gdb2.out" '$1 = 1.5' '$2 = 1' '$3 = 0x0' '$4 = 0x12345678' '$5 = 0x12345678'
[ $fail -eq 0 ] || { echo "--- gdb output:"; cat "$TMP/gdb2.out"; }

# ---- session 3: load (X/M writes to flash), compare-sections, detach -------
start_server cm4f "$FW/gdb_demo_m4f.elf" || exit 1
timeout 40 gdb-multiarch -batch -nx -ex 'set confirm off' \
  -ex "target remote 127.0.0.1:$PORT" -ex 'load' -ex 'compare-sections' \
  -ex 'print $pc == Reset_Handler' -ex 'detach' "$FW/gdb_demo_m4f.elf" > "$TMP/gdb3.out" 2>&1
wait $SRV; rc=$?
if [ $rc -eq 42 ]; then ok; else bad "session 3 (detached): sonde exit $rc, expected 42"; fi
expect "$TMP/gdb3.out" '$1 = 1' '[Inferior 1 (Remote target) detached]'
grep -q '^Section .text, range 0x[0-9a-f]* -- 0x[0-9a-f]*: matched\.$' "$TMP/gdb3.out" && ok || bad "compare-sections .text"
grep -q 'MIS-MATCHED' "$TMP/gdb3.out" && bad "compare-sections mismatch" || ok
[ $fail -eq 0 ] || { echo "--- gdb output:"; cat "$TMP/gdb3.out"; }

echo "$pass passed, $fail failed"
[ $fail -eq 0 ]
