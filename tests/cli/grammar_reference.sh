#!/bin/bash
# Sequitur's grammar size against the reference Sequitur (Nevill-Manning's
# C++, github.com/craignm/sequitur at b6afb6e, built with its Makefile under
# /tmp; its code is not in Sonde) on fixed inputs, and the debug check mode
# (SONDE_GRAMMAR_CHECK: digram uniqueness, rule utility and reference counts
# on the live grammar during compression) on real traces.
#
# Inputs:
#  - the first 1,000,000 instructions of bench_cpu on cm3 (`sonde run
#    --max-cycles 15560000 --trace-pc` of build/firmware/bench_cpu.elf, cut to
#    1,000,000 symbols), stored as a grammar file, tests/grammar/data/
#    bench_cpu_1m.grammar (Cyclitur, written by Sonde);
#  - the real CC2650 FrankenTrace trace (40,901 instructions).
# Reference figures, Size(G) = rules + symbols in all bodies, from:
#   sonde grammar expand INPUT | python3 -c 'import sys
#   for l in sys.stdin: print(int(l, 16))' > w.dec
#   ./sequitur -d -p -q < w.dec | awk -F'->' 'NF>1{n++; m+=split($2,a," ")} END{print n+m}'
# gave 5,680 and 5,682 in two runs on bench_cpu_1m (the reference hashes
# pointers, so its choices vary slightly) and 9,984 on the CC2650 trace.
# Before the fix in expand() (src/grammar/build.c, check_expanded), Sonde gave
# 5,975 (+5.2%) on bench_cpu_1m and 35,392 (+12.6%) on 10 M symbols.
set -u
pass=0
fail=0
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
ok() { pass=$((pass + 1)); }
bad() { fail=$((fail + 1)); echo "FAIL: $*" >&2; }
expect() { if [ "$2" == "$3" ]; then ok; else bad "$1: expected [$2] got [$3]"; fi; }
num() { sed -n "s/.*\"$1\":\([0-9]*\).*/\1/p" "$2"; }

"$SONDE" grammar expand "$SONDE_SRC/tests/grammar/data/bench_cpu_1m.grammar" >"$T/b.txt" || bad "expand rc"
expect "fixed input" "24eea967e1b2e4c9447534e600a914a0" "$(md5sum <"$T/b.txt" | cut -d' ' -f1)"
"$SONDE" grammar stats --json --algo sequitur --verify "$T/b.txt" >"$T/b.json" 2>"$T/b.err" || bad "stats rc"
expect "verified" "sonde: verified: 1000000 symbols expand back exactly; properties hold" "$(cat "$T/b.err")"
expect "sequitur size (bench_cpu 1M)" 5676 "$(num size "$T/b.json")"
[ "$(num size "$T/b.json")" -le 5680 ] && ok || bad "larger than the reference's 5680"
for a in sequitur resequitur; do
  SONDE_GRAMMAR_CHECK=997 "$SONDE" grammar stats --json --algo $a "$T/b.txt" >"$T/c.json" 2>"$T/c.err" ||
    bad "check mode $a (bench_cpu 1M): $(cat "$T/c.err")"
  expect "check mode $a keeps the result" "$(num size "$T/c.json")" \
    "$("$SONDE" grammar stats --json --algo $a "$T/b.txt" | sed -n 's/.*"size":\([0-9]*\).*/\1/p')"
done

TR="$SONDE_TESTDATA/frankentrace-cc2650/blink_if_see.pc_trace.csv.gz"
if [ -f "$SONDE_SRC/tests/data/frankentrace-cc2650/blink_if_see.pc_trace.csv.gz" ]; then
  TR="$SONDE_SRC/tests/data/frankentrace-cc2650/blink_if_see.pc_trace.csv.gz"
fi
if [ ! -f "$TR" ]; then
  bad "missing test data $TR"
else
  "$SONDE" grammar stats --json --algo sequitur "$TR" >"$T/r.json" || bad "cc2650 rc"
  expect "sequitur size (cc2650)" 9984 "$(num size "$T/r.json")"
  for a in sequitur resequitur; do
    SONDE_GRAMMAR_CHECK=13 "$SONDE" grammar stats --json --algo $a "$TR" >/dev/null 2>"$T/c.err" ||
      bad "check mode $a (cc2650): $(cat "$T/c.err")"
  done
  # the first 3,000 instructions with a check after every symbol
  "$SONDE" grammar expand "$TR" | head -3000 >"$T/r3k.txt"
  SONDE_GRAMMAR_CHECK=1 "$SONDE" grammar stats --json --algo sequitur "$T/r3k.txt" >/dev/null 2>"$T/c.err" ||
    bad "check mode every symbol (cc2650): $(cat "$T/c.err")"
fi
echo "$pass passed, $fail failed"
[ "$fail" -eq 0 ]
