#!/bin/bash
# `sonde grammar` on the real FrankenTrace CC2650 trace (tests/data),
# checked by an independent route: Python re-reads the gzip CSV with its own
# csv module (valid rows, consecutive equal PCs = one instruction), parses the
# printed grammars, expands them, compares with its own symbol list, recounts
# Size(G) = body elements + rules (reference 001 section 5.2) and re-checks
# digram uniqueness, rule utility and no consecutive repetition.
set -u
pass=0
fail=0
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
TR="$SONDE_TESTDATA/frankentrace-cc2650/blink_if_see.pc_trace.csv.gz"
ELF="$SONDE_TESTDATA/frankentrace-cc2650/blink_if_see.elf"
if [ ! -f "$TR" ] || [ ! -f "$ELF" ]; then
  echo "missing test data $TR (tests/data, see its README)" >&2
  echo "0 passed, 1 failed"
  exit 1
fi
ok() { pass=$((pass + 1)); }
bad() { fail=$((fail + 1)); echo "FAIL: $*" >&2; }
expect() { if [ "$2" == "$3" ]; then ok; else bad "$1: expected [$2] got [$3]"; fi; }

"$SONDE" grammar compress --algo sequitur "$TR" >"$T/seq.txt" || bad "sequitur rc"
"$SONDE" grammar compress --algo resequitur "$TR" >"$T/reseq.txt" || bad "resequitur rc"
"$SONDE" grammar compress -e "$ELF" --verify "$TR" >"$T/cyc-named.txt" 2>"$T/cyc.err" || bad "cyclitur rc"
# the loop header auto picks with the ELF (ResetISR+0x19c), numerically
"$SONDE" grammar compress --loop-header 0x319c "$TR" >"$T/cyc.txt" || bad "cyclitur 0x319c rc"
expect "named first rule" "S -> R1 R2 R3 R4 R5" "$(head -1 "$T/cyc-named.txt")"
expect "names from the ELF" "R1 -> start_trace+0x48 start_trace+0x4a" "$(sed -n 2p "$T/cyc-named.txt" | cut -d' ' -f1-4)"
"$SONDE" grammar compress --loop-header 0x2acc "$TR" >"$T/cyc2.txt" || bad "cyclitur runTask rc"
for a in sequitur resequitur; do
  "$SONDE" grammar stats --json --algo $a "$TR" >"$T/$a.json"
done
"$SONDE" grammar stats --json -e "$ELF" "$TR" >"$T/cyclitur.json"
expect "verify" "sonde: verified: 40901 symbols expand back exactly; properties hold" "$(cat "$T/cyc.err")"

python3 - "$TR" "$T" <<'PY' >"$T/py.out" 2>&1
import csv, gzip, json, sys
tr, d = sys.argv[1], sys.argv[2]
w, prev = [], None
with gzip.open(tr, "rt", newline="") as f:
    for row in csv.DictReader(f):
        if row["valid"] != "true":
            continue
        pc = int(row["val"], 16)
        if pc != prev:
            w.append(pc)
        prev = pc
def parse(path):
    rules = {}
    order = []
    for line in open(path):
        line = line.split("  #")[0].strip()
        head, body = line.split(" -> ")
        elems = []
        for tok in body.split():
            sym, _, cnt = tok.partition("^")
            elems.append((sym, int(cnt or 1)))
        rules[head] = elems
        order.append(head)
    return rules, order
def expand(rules, r, out):
    for sym, cnt in rules[r]:
        for _ in range(cnt):
            if sym in rules:
                expand(rules, sym, out)
            else:
                out.append(int(sym, 16))
sys.setrecursionlimit(100000)
res = {}
for name, algo in (("seq", "sequitur"), ("reseq", "resequitur"), ("cyc", "cyclitur"), ("cyc2", "cyclitur2")):
    rules, order = parse(f"{d}/{name}.txt")
    out = []
    expand(rules, "S", out)
    assert out == w, f"{algo}: expansion differs"
    size = sum(len(b) for b in rules.values()) + len(rules)
    # properties
    seen = {}
    refs = {r: 0 for r in rules}
    for r, body in rules.items():
        for i, (s, c) in enumerate(body):
            if s in rules:
                refs[s] += c
            if i + 1 < len(body):
                dg = (body[i], body[i + 1])
                if algo != "sequitur":
                    assert body[i][0] != body[i + 1][0], f"{algo}: repetition in {r}"
                if dg in seen:
                    r0, i0 = seen[dg]
                    assert algo == "sequitur" and r0 == r and i0 + 1 == i, f"{algo}: digram {dg} twice"
                else:
                    seen[dg] = (r, i)
    cycles = [r for r in rules if r != "S" and algo.startswith("cyclitur")]
    util_bad = [r for r in rules if r != "S" and refs[r] < 2 and not algo.startswith("cyclitur")]
    assert not util_bad, f"{algo}: rules used once {util_bad[:5]}"
    res[algo] = (len(rules), size)
    print(algo, len(w), len(rules), size)
PY
if [ $? -eq 0 ]; then ok; else bad "python check: $(cat "$T/py.out")"; fi
expect "independent recount" "sequitur 40901 1234 9984
resequitur 40901 1060 9247
cyclitur 40901 1064 9256
cyclitur2 40901 1091 9320" "$(cat "$T/py.out")"
j() { python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); print(" ".join(str(d.get(k)) for k in sys.argv[2:]))' "$@"; }
expect "sequitur stats" "40901 1234 9984 0.244101611" "$(j "$T/sequitur.json" symbols rules size comp)"
expect "resequitur stats" "40901 1060 9247 0.226082492" "$(j "$T/resequitur.json" symbols rules size comp)"
expect "cyclitur stats" "40901 1064 9256 0.226302535 5 ResetISR+0x19c 136063 1235 1591" \
  "$(j "$T/cyclitur.json" symbols rules size comp cycles loop_header_name rows invalid_rows gaps)"
# Cyclitur vs Sequitur: (9984 - 9256) / 9984 = 7.29% smaller on this trace
expect "improvement" "7.29" "$(python3 -c 'print("%.2f" % (100.0 * (9984 - 9256) / 9984))')"

# cycle analysis with ELF names, runTask as loop header
"$SONDE" grammar cycles -e "$ELF" --loop-header SchedulerBasicPrv___TaskBasic___runTask --json \
  --svg-pie "$T/pie.svg" --svg-time "$T/time.svg" --cycle 1 "$TR" >"$T/cycles.json"
expect "cycles json" "51 37 8 8" "$(python3 -c '
import json,sys; d=json.load(open(sys.argv[1]))
print(d["cycles"], d["distinct_cycles"], d["list"][0]["count"], len(d["positions"]))' "$T/cycles.json")"
for s in pie time; do xmllint --noout "$T/$s.svg" && ok || bad "$s.svg not well-formed"; done
echo "$pass passed, $fail failed"
[ "$fail" -eq 0 ]
