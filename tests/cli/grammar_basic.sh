#!/bin/bash
# `sonde grammar`: the paper's worked example end to end, the binary file
# round trip, stats --json, cycles, SVG charts, and bad input.
set -u
pass=0
fail=0
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
ok() { pass=$((pass + 1)); }
bad() { fail=$((fail + 1)); echo "FAIL: $*" >&2; }
expect() { # name expected actual
  if [ "$2" == "$3" ]; then ok; else bad "$1: expected [$2] got [$3]"; fi
}
# run CMD...: sets out, err, rc
run() {
  "$@" >"$T/out" 2>"$T/err"
  rc=$?
  out=$(cat "$T/out")
  err=$(cat "$T/err")
}

echo "c a b c a b c a b c a b c a d" >"$T/w.txt"
run "$SONDE" grammar compress --algo sequitur "$T/w.txt"
expect "sequitur example" "S -> A A B d
A -> C C
B -> c a
C -> B b" "$out"
run "$SONDE" grammar compress --loop-header a --verify "$T/w.txt"
expect "cyclitur example" "S -> c A^4 B
A -> a b c  # cycle
B -> a d  # cycle" "$out"
expect "verify message" "sonde: verified: 15 symbols expand back exactly; properties hold" "$err"
run "$SONDE" grammar stats --json --loop-header a "$T/w.txt"
expect "stats json" '{"input":"'"$T"'/w.txt","algo":"cyclitur","symbols":15,"distinct_symbols":4,"rules":3,"size":11,"comp":0.733333333,"cycles":6,"distinct_cycles":3,"loop_header":"0xf0000001","loop_header_name":"a","binary_bytes":79' "${out%%,\"rows\"*}"
python3 -c 'import json,sys; d=json.loads(sys.argv[1]); assert all(k in d for k in ("symbols","rules","size","comp","cycles"))' "$out" && ok || bad "stats json keys"

run "$SONDE" grammar stats --compare --json --loop-header a "$T/w.txt"
expect "compare json" '{"input":"'"$T"'/w.txt","symbols":15,"sequitur":{"rules":4,"size":14,"comp":0.933333333,"smaller_than_sequitur_pct":0.000},"resequitur":{"rules":3,"size":10,"comp":0.666666667,"smaller_than_sequitur_pct":28.571},"cyclitur":{"rules":3,"size":11,"comp":0.733333333,"smaller_than_sequitur_pct":21.429}}' "$(echo "$out" | sed 's/,"seconds":[0-9.]*//g')"

# binary round trip: compress -> file -> expand == input; stats on the file
run "$SONDE" grammar compress --loop-header a --format binary -o "$T/w.sgr" "$T/w.txt"
expect "binary rc" 0 "$rc"
expect "magic" "SONDEGRM" "$(head -c 8 "$T/w.sgr")"
run "$SONDE" grammar expand --names "$T/w.sgr"
expect "expand of a binary grammar keeps ids" "0xf0000000" "$(echo "$out" | head -1)"
run "$SONDE" grammar expand --names --loop-header a "$T/w.txt"
expect "expand names" "c a b c a b c a b c a b c a d" "$(echo $out)"
printf '1 2 3 1 2 3 1 2 4\n' >"$T/n.txt"
"$SONDE" grammar compress --format binary --loop-header 1 -o "$T/n.sgr" "$T/n.txt"
run "$SONDE" grammar expand "$T/n.sgr"
expect "expand binary" "0x00000001 0x00000002 0x00000003 0x00000001 0x00000002 0x00000003 0x00000001 0x00000002 0x00000004" "$(echo $out)"
run "$SONDE" grammar stats --json "$T/n.sgr"
expect "stats of grammar file" '{"input":"'"$T"'/n.sgr","algo":"cyclitur","symbols":9,"distinct_symbols":4,"rules":4,"size":12,"comp":1.33333333,"cycles":3,"distinct_cycles":2,"loop_header":"0x00000001","loop_header_name":"0x00000001","binary_bytes":56}' "$out"
gzip -c "$T/n.txt" >"$T/n.txt.gz"
run "$SONDE" grammar stats --json --loop-header 1 "$T/n.txt.gz"
expect "gzip input" 9 "$(echo "$out" | python3 -c 'import json,sys; print(json.load(sys.stdin)["symbols"])')"

# cycles: counts, rare cycles, positions of one, diff with another trace
run "$SONDE" grammar cycles --loop-header a --cycle 1 "$T/w.txt"
expect "cycles header" "$T/w.txt: 15 symbols, 6 cycles, 3 distinct" "$(echo "$out" | head -1)"
expect "cycles top" "    1          4   66.667        3          1  #1 A, 3 symbols from a" "$(echo "$out" | sed -n 3p)"
expect "rare line" "rare cycles (at most 1 occurrence): 2" "$(echo "$out" | grep '^rare')"
expect "positions" "  cycle 1 at symbol 1
  cycle 2 at symbol 4
  cycle 3 at symbol 7
  cycle 4 at symbol 10" "$(echo "$out" | grep '^  cycle ')"
echo "c a b c a b c a x a d a d" >"$T/w2.txt"
run "$SONDE" grammar cycles --loop-header a --diff "$T/w2.txt" --json "$T/w.txt"
expect "diff json" '{"only_here":[],"only_there":[{"rank":4,"count":1,"label":"#4 B, 2 symbols from a"}],"common":3}' "$(echo "$out" | sed 's/.*"diff"://; s/}$//')"
run "$SONDE" grammar cycles --loop-header a --svg-pie "$T/pie.svg" --svg-time "$T/time.svg" --cycle 2 "$T/w.txt"
expect "svg rc" 0 "$rc"
for s in pie time; do
  if xmllint --noout "$T/$s.svg" 2>>"$T/xml"; then ok; else bad "$s.svg not well-formed: $(cat "$T/xml")"; fi
done
if command -v chromium >/dev/null; then
  timeout 60 chromium --headless --no-sandbox --disable-gpu --screenshot="$T/pie.png" \
    --window-size=900,360 "file://$T/pie.svg" >/dev/null 2>&1
  if [ -s "$T/pie.png" ]; then ok; else bad "chromium did not render pie.svg"; fi
fi

# bad input
: >"$T/empty.txt"
run "$SONDE" grammar compress "$T/empty.txt"
expect "empty" "1|sonde: $T/empty.txt: no symbols in the input" "$rc|$err"
run "$SONDE" grammar compress "$T/nope.txt"
expect "missing file" "1|sonde: $T/nope.txt: No such file or directory" "$rc|$err"
run "$SONDE" grammar compress --loop-header 0x1234 "$T/n.txt"
expect "loop header absent" "1|sonde: $T/n.txt: loop header '0x1234' (0x00001234) never occurs in the trace" "$rc|$err"
run "$SONDE" grammar compress --loop-header nosuch "$T/n.txt"
expect "loop header name" "1|sonde: loop header 'nosuch': not a number, a name in '$T/n.txt' (give -e ELF for symbols)" "$rc|$err"
printf 'ts,val,valid\n1,0x10,true\n2,0x1x,true\n' >"$T/bad.csv"
run "$SONDE" grammar stats "$T/bad.csv"
expect "malformed csv" "1|sonde: $T/bad.csv:3: PC '0x1x' is not a 32-bit number" "$rc|$err"
echo 7 >"$T/one.txt"
run "$SONDE" grammar stats --json --algo sequitur "$T/one.txt"
expect "one symbol" '"size":2' "$(echo "$out" | grep -o '"size":[0-9]*')"
run "$SONDE" grammar compress --algo lzw "$T/n.txt"
expect "bad algo" "2" "$rc"
run "$SONDE" grammar frobnicate "$T/n.txt"
expect "bad subcommand" "2" "$rc"
run "$SONDE" grammar cycles --algo sequitur "$T/n.txt"
expect "cycles need cyclitur" "1|sonde: $T/n.txt: cycles need a cyclitur grammar (a loop header)" "$rc|$err"
printf 'SONDEGRM\x01\x00' >"$T/trunc.sgr"
run "$SONDE" grammar stats "$T/trunc.sgr"
expect "truncated grammar" "1|sonde: $T/trunc.sgr: offset 10: file ends inside the header" "$rc|$err"
run "$SONDE" grammar stats --verify "$T/w.sgr"
expect "verify grammar file" "sonde: verified: the grammar has the properties of cyclitur" "$err"
run "$SONDE" grammar --help
if echo "$out" | grep -q "^  cycles " && echo "$out" | grep -q -- "--loop-header"; then ok; else bad "help"; fi
# every long option of --help is documented in docs/cli.md's grammar section
sec=$(sed -n '/^## `sonde grammar`/,/^## /p' "$SONDE_SRC/docs/cli.md")
for opt in $(echo "$out" | grep -o -- '--[a-z][a-z-]*' | sort -u); do
  [ "$opt" == "--help" ] && continue
  if echo "$sec" | grep -q -- "$opt"; then ok; else bad "option $opt missing from docs/cli.md"; fi
done

# an option of another subcommand is refused, not ignored (issue 21)
printf '1\n2\n3\n1\n2\n3\n' > "$T/ignored.txt"
for a in "compress --compare" "stats --format binary" "compress --names" "stats --cycle 1" \
         "stats --rare 0.5" "expand --max-list 3" "compress --diff x" "stats --svg-pie x.svg" \
         "stats --svg-time x.svg"; do
  "$SONDE" grammar $a "$T/ignored.txt" >/dev/null 2>"$T/ign.err"; rc=$?
  if [ $rc -eq 2 ] && grep -q "is for 'grammar" "$T/ign.err"; then ok; else bad "grammar $a: exit $rc"; fi
done

echo "$pass passed, $fail failed"
[ "$fail" -eq 0 ]
