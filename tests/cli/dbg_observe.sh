#!/bin/sh
# Observing must not change what the target does: the same firmware run with
# the ground-truth traces on (every instruction through the hooked executor)
# and off (the plain or MTB executor, which leave to service events at other
# instruction boundaries) must give the same SWO bytes, cycle, instruction
# and sleep counts (exec.c, vm_cpu_execute; dbg_mtb.c).
set -u
pass=0; fail=0
ok() { pass=$((pass + 1)); }
bad() { echo "FAIL: $*"; fail=$((fail + 1)); }
t=$(mktemp -d); trap 'rm -rf "$t"' EXIT
counts() { grep -o '"\(instructions\|cycles\|sleep_cycles\|exit_code\)": [0-9]*' "$1" | tr '\n' ' '; }

for spec in cc2650:dbg_pc1003 cc2650:dbg_ovf1003 cc2650:dbg_excdt cc2650:dbg_printf cm33:dbg_all \
            cm33:mtb_m33 cm0plus:mtb_m0p cm33:mtb_wrap; do
  m=${spec%%:*}; n=${spec#*:}
  fw="$SONDE_BUILD/firmware/$n.elf"
  [ -f "$fw" ] || { bad "missing $fw"; continue; }
  swo=""; [ "$m" = cm0plus ] || swo="--swo"
  if [ -n "$swo" ]; then
    "$SONDE" run -m "$m" --json --swo "$t/p.swo" "$fw" 2>"$t/p.json" >/dev/null
    "$SONDE" run -m "$m" --json --swo "$t/h.swo" --trace-pc "$t/pc.csv" --trace-format csv --trace-lsu "$t/lsu.csv" \
      "$fw" 2>"$t/h.json" >/dev/null
    cmp -s "$t/p.swo" "$t/h.swo" && ok || bad "$n: SWO bytes differ with the traces on"
    case $n in dbg_*) [ -s "$t/p.swo" ] && ok || bad "$n: no SWO output" ;; esac
  else
    "$SONDE" run -m "$m" --json "$fw" 2>"$t/p.json" >/dev/null
    "$SONDE" run -m "$m" --json --trace-pc "$t/pc.csv" --trace-format csv "$fw" 2>"$t/h.json" >/dev/null
  fi
  a=$(counts "$t/p.json"); b=$(counts "$t/h.json")
  [ -n "$a" ] && [ "$a" = "$b" ] && ok || bad "$n: counts differ: '$a' vs '$b'"
  # the ground truth ends at the reported cycle count
  last=$(tail -n 1 "$t/pc.csv" | cut -d, -f1)
  cy=$(grep -o '"cycles": [0-9]*' "$t/h.json" | cut -d' ' -f2)
  [ "$((last + 1))" = "$cy" ] && ok || bad "$n: --trace-pc ends at $last, cycles $cy"
done

echo "$pass passed, $fail failed"
[ "$fail" -eq 0 ]
