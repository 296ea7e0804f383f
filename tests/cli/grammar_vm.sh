#!/bin/bash
# `sonde grammar` on PC traces of the virtual Cortex-M (issue 6: "VM traces of
# the demo firmware of 1 M instructions and more"): bench_cpu's main loop for
# 2 M cycles (about 1.3 M instructions) and the demo firmware to its end,
# read through src/trace (Sonde's binary PC trace format). Checked: the
# expansion equals the trace and the properties hold (--verify), the loop
# header found automatically with the ELF is in main, and Cyclitur's grammar
# is at least 12% smaller than Sequitur's (reference 001 reports 12-42%).
set -u
pass=0
fail=0
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
ok() { pass=$((pass + 1)); }
bad() { fail=$((fail + 1)); echo "FAIL: $*" >&2; }
FW="$SONDE_BUILD/firmware"
if [ ! -f "$FW/bench_cpu.elf" ] || [ ! -f "$FW/demo.elf" ]; then
  echo "missing $FW/bench_cpu.elf or demo.elf (build with SONDE_FIRMWARE=ON)" >&2
  echo "0 passed, 1 failed"
  exit 1
fi
"$SONDE" run --max-cycles 2000000 --trace-pc "$T/b.pct" "$FW/bench_cpu.elf" >/dev/null 2>&1
"$SONDE" run --trace-pc "$T/d.pct" "$FW/demo.elf" >/dev/null 2>&1 || bad "demo run"
for t in b:bench_cpu d:demo; do
  f=${t%%:*}
  elf="$FW/${t#*:}.elf"
  "$SONDE" grammar stats --json --verify -e "$elf" "$T/$f.pct" >"$T/$f.cyc.json" 2>"$T/$f.err" || bad "$f cyclitur: $(cat "$T/$f.err")"
  grep -q "expand back exactly; properties hold" "$T/$f.err" && ok || bad "$f verify"
  "$SONDE" grammar stats --json --algo sequitur "$T/$f.pct" >"$T/$f.seq.json" || bad "$f sequitur"
  r=$(python3 - "$T/$f.cyc.json" "$T/$f.seq.json" "$f" <<'PY'
import json, sys
c = json.load(open(sys.argv[1])); s = json.load(open(sys.argv[2]))
gain = 100.0 * (1 - c["size"] / s["size"])
print("%s: %d symbols, loop header %s, %d cycles, Size %d vs sequitur %d (%.1f%% smaller)" % (
    sys.argv[3], c["symbols"], c["loop_header_name"], c["cycles"], c["size"], s["size"], gain), file=sys.stderr)
ok = c["loop_header_name"].startswith("main+") and gain >= 12.0 and c["symbols"] == s["symbols"]
ok = ok and (sys.argv[3] != "b" or c["symbols"] >= 1000000)
print("ok" if ok else "bad")
PY
)
  [ "$r" == ok ] && ok || bad "$f figures"
done
echo "$pass passed, $fail failed"
[ "$fail" -eq 0 ]
