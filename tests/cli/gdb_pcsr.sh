#!/bin/bash
# `monitor pcsr` and `monitor sample` of `sonde run --gdb`, driven by
# gdb-multiarch, against the ground-truth PC trace of `sonde run --trace-pc`
# (docs/vm.md "Which PC a sample carries"): every sampled cycle shows the
# instruction occupying it, `sleep` in a sleep, and in an exception entry,
# return or tail-chain the last instruction before it; DWT_PCSR reads
# 0xffffffff while gdb holds the core halted (ARMv7-M C1.8.2).
set -u
FW=$SONDE_BUILD/firmware/dbg_pcat.elf
MACHINE=$SONDE_SRC/tests/dbg/pcat.machine
pass=0 fail=0
ok() { pass=$((pass + 1)); }
bad() { echo "FAIL: $*"; fail=$((fail + 1)); }
command -v gdb-multiarch >/dev/null || { echo "FAIL: gdb-multiarch not installed"; exit 1; }
[ -f "$FW" ] || { echo "FAIL: $FW missing (build the firmware)"; exit 1; }
TMP=$(mktemp -d)
SRV=
trap '[ -n "$SRV" ] && kill $SRV 2>/dev/null; rm -rf "$TMP"' EXIT

# ground truth: one row per cycle
"$SONDE" run -m "$MACHINE" --trace-pc "$TMP/gt.csv" --trace-format csv "$FW" && ok ||
  bad "sonde run --trace-pc"

: > "$TMP/srv.err"
timeout 120 "$SONDE" run -m "$MACHINE" --gdb 0 "$FW" 2> "$TMP/srv.err" &
SRV=$!
PORT=
for _ in $(seq 100); do
  PORT=$(sed -n 's/^sonde: gdb server listening on 127\.0\.0\.1:\([0-9]*\)$/\1/p' "$TMP/srv.err")
  [ -n "$PORT" ] && break
  sleep 0.05
done
[ -n "$PORT" ] || { bad "server did not start: $(cat "$TMP/srv.err")"; exit 1; }
timeout 100 gdb-multiarch -batch -nx -ex 'set pagination off' -ex 'set confirm off' \
  -ex "target remote 127.0.0.1:$PORT" \
  -ex 'monitor pcsr' -ex 'monitor sample 1000 37' -ex 'monitor pcsr' \
  -ex 'monitor sample 1000 31' -ex 'kill' "$FW" > "$TMP/gdb.out" 2>&1
wait $SRV
SRV=

# halted: all ones, twice
n=$(grep -c '^DWT_PCSR = 0xffffffff (core pc 0x[0-9a-f]*, cycle [0-9]*; halted: PCSR reads all ones in Debug state, see sample)$' "$TMP/gdb.out")
[ "$n" = 2 ] && ok || bad "monitor pcsr while halted: $n lines"
grep '^cycle [0-9]* \(pcsr 0x[0-9a-f]*\|sleep\)$' "$TMP/gdb.out" > "$TMP/samples.txt"
n=$(wc -l < "$TMP/samples.txt")
[ "$n" = 2000 ] && ok || bad "monitor sample: $n lines, expected 2000"
# every sample against the trace: rows are `cycle,pc` with pc 0x%08x, sleep,
# exc_entry:N, exc_return:N, tail_chain:N or halted
awk -F'[ ,]' '
  NR == FNR { if (FNR > 1) { v[$1] = $2; if ($2 ~ /^0x/) last[$1] = $2; else last[$1] = prevpc;
              if ($2 ~ /^0x/) prevpc = $2 } next }
  { t = $2; want = (v[t] ~ /^0x/) ? "pcsr " v[t] : (v[t] == "sleep") ? "sleep" : "pcsr " last[t]
    got = ($3 == "sleep") ? "sleep" : "pcsr " $4
    n++; if (got != want) { bad++; if (bad < 5) print "cycle " t ": got " got ", want " want " (" v[t] ")" }
    k = (v[t] ~ /^0x/) ? "insn" : (v[t] == "sleep") ? "sleep" : "exc"; kind[k]++ }
  END { printf "%d samples, %d wrong; in instructions %d, asleep %d, in exception spans %d\n",
               n, bad, kind["insn"], kind["sleep"], kind["exc"]
        exit (bad > 0 || kind["sleep"] == 0 || kind["exc"] == 0) }' \
  "$TMP/gt.csv" "$TMP/samples.txt" && ok || bad "samples differ from the PC trace"
# cycles: 37, 74, ..., 37000, then every 31 from where the core stopped
awk '{ t = $2; if (NR == 1) ok = t == 37; else if (NR <= 1000) ok = ok && t - p == 37;
       else if (NR == 1001) ok = ok && t - p > 31 && t - p < 62; else ok = ok && t - p == 31; p = t }
     END { exit !ok }' "$TMP/samples.txt" && ok || bad "sample cycles"
[ $fail -eq 0 ] || { echo "--- gdb output:"; head -20 "$TMP/gdb.out"; }
echo "gdb_pcsr: $pass passed, $fail failed"
[ $fail -eq 0 ]
