#!/usr/bin/env bash
# `sonde mtb decode` on the MTB dumps that test_mtb_decode wrote from the VM
# (fixture mtb_dumps: buffer, base, POSITION, MASTER, and the PC of the store
# that stopped the MTB): text, json and csv agree with each other and end in
# mtb_disable; bad inputs give exit 1 and say what is wrong.
set -u
pass=0 fail=0
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
ok() { pass=$((pass + 1)); }
bad() { fail=$((fail + 1)); echo "FAIL: $*"; }
D="$SONDE_BUILD/mtb_dumps"
FW="$SONDE_BUILD/firmware"
[ -f "$D/mtb_m33.bin" ] || { echo "FAIL: no dumps in $D (test_mtb_decode writes them)"; exit 1; }
read -r B P M E < "$D/mtb_m33.regs"
dec() { "$SONDE" mtb decode -e "$FW/mtb_m33.elf" --raw "$D/mtb_m33.bin" --base "$B" "$@"; }

dec --position "$P" --master "$M" >"$tmp/t" 2>"$tmp/e"; rc=$?
[ $rc -eq 0 ] && head -1 "$tmp/t" | grep -q "^92 packets, 453 instructions, 6 exception entries, 6 returns, 0 tail-chains, 0 inconsistent" \
  && ok || bad "text: exit $rc: $(head -1 "$tmp/t") $(cat "$tmp/e")"
[ ! -s "$tmp/e" ] && ok || bad "text: stderr: $(cat "$tmp/e")"
tail -1 "$tmp/t" | grep -q "branch .* main+0x[0-9a-f]* (.*mtb_trace.c:[0-9]*) -> 0x[0-9a-f]* mtb_disable (.*mtb.c:[0-9]*)" \
  && ok || bad "text: last line: $(tail -1 "$tmp/t")"
grep -q "exception entry from .* -> 0x[0-9a-f]* SysTick_Handler" "$tmp/t" && ok || bad "no SysTick entry"
grep -q "exception return at .*SysTick_Handler+0x[0-9a-f]* (.*) (EXC_RETURN 0xf" "$tmp/t" && ok || bad "no SysTick return"
grep -q "PendSV_Handler" "$tmp/t" && ok || bad "no PendSV"
grep -q "trace session starts" "$tmp/t" && ok || bad "no S-bit session start"

# json: every instruction, newest last, ending at the stopping store (--end-pc)
dec --position "$P" --master "$M" --end-pc "$E" --instructions --format json >"$tmp/j"; rc=$?
n=$(grep -c '"kind":"instruction"' "$tmp/j")
[ $rc -eq 0 ] && [ "$n" -eq 456 ] && ok || bad "json: exit $rc, $n instructions"
last=$(tail -1 "$tmp/j")
[ "$last" = "$(tail -1 "$tmp/j" | grep "\"kind\":\"instruction\",\"packet\":91,\"pc\":$((E)),\"function\":\"mtb_disable\"")" ] \
  && ok || bad "json last: $last"
if command -v python3 >/dev/null; then
  python3 - "$tmp/j" <<'PY' && ok || bad "json lines do not parse or lack fields"
import json, sys
for line in open(sys.argv[1]):
    o = json.loads(line)
    for k in ("kind", "pc", "function", "file", "line"):
        assert k in o, (k, line)
    assert o["kind"] in ("instruction", "branch", "exception", "session", "gap"), line
PY
fi
# --limit: the newest 5 instructions
dec --position "$P" --master "$M" --end-pc "$E" --instructions --limit 5 --format csv >"$tmp/c"
[ "$(grep -c '^instruction,' "$tmp/c")" -eq 5 ] && head -1 "$tmp/c" | grep -q '^kind,event,packet,pc,function,file,line' \
  && ok || bad "csv --limit 5: $(cat "$tmp/c")"
# POSITION as the absolute address of the write pointer: same result
dec --position "$(printf '0x%x' $((B + (P & ~7))))" --master "$M" >"$tmp/t2"
cmp -s "$tmp/t" "$tmp/t2" && ok || bad "absolute POSITION differs"

# wrapped buffer
read -r B2 P2 M2 E2 < "$D/mtb_wrap_long.regs"
"$SONDE" mtb decode -e "$FW/mtb_wrap_long.elf" --raw "$D/mtb_wrap_long.bin" --position "$P2" --master "$M2" >"$tmp/w"; rc=$?
[ $rc -eq 0 ] && head -1 "$tmp/w" | grep -q "^64 packets (buffer wrapped)" && ok || bad "wrap: $(head -1 "$tmp/w")"

# tail-chaining: PendSV after SysTick without going back to the thread
read -r B3 P3 M3 E3 < "$D/mtb_chain_m33.regs"
"$SONDE" mtb decode -e "$FW/mtb_chain_m33.elf" --raw "$D/mtb_chain_m33.bin" --position "$P3" --master "$M3" --format json >"$tmp/ch"
grep -q '"kind":"exception","event":"tail-chain",.*"function":"SysTick_Handler".*"dst_function":"PendSV_Handler"' "$tmp/ch" \
  && ok || bad "no tail-chain SysTick -> PendSV"

# bad input
dec --position 0x1000 --master "$M" >/dev/null 2>"$tmp/e"; rc=$?
[ $rc -eq 1 ] && grep -q "POSITION 0x00001000: its POINTER 0x00001000 is outside the 4096-byte MTB buffer" "$tmp/e" \
  && ok || bad "position outside: exit $rc: $(cat "$tmp/e")"
head -c 100 "$D/mtb_m33.bin" >"$tmp/t.bin"
"$SONDE" mtb decode -e "$FW/mtb_m33.elf" --raw "$tmp/t.bin" --position "$P" --master "$M" >/dev/null 2>"$tmp/e"; rc=$?
[ $rc -eq 1 ] && grep -q "t.bin: MTB buffer is 100 bytes, not a whole number of 8-byte packets" "$tmp/e" \
  && ok || bad "truncated 100: exit $rc: $(cat "$tmp/e")"
head -c 2048 "$D/mtb_m33.bin" >"$tmp/t.bin"
"$SONDE" mtb decode -e "$FW/mtb_m33.elf" --raw "$tmp/t.bin" --position "$P" --master "$M" >/dev/null 2>"$tmp/e"; rc=$?
[ $rc -eq 1 ] && grep -q "MTB buffer is 2048 bytes but MASTER 0x00000008 (MASK 8) describes a 4096-byte circle: truncated" "$tmp/e" \
  && ok || bad "truncated 2048: exit $rc: $(cat "$tmp/e")"
"$SONDE" mtb decode -e "$FW/mtb_m0p.elf" --raw "$D/mtb_m33.bin" --position "$P" --master "$M" >/dev/null 2>"$tmp/e"; rc=$?
[ $rc -eq 1 ] && grep -q "mtb_m0p.elf: .* of the 92 packets of .* are inconsistent with its code .*wrong ELF" "$tmp/e" \
  && ok || bad "wrong ELF: exit $rc: $(cat "$tmp/e")"
if command -v arm-none-eabi-gcc >/dev/null; then
  printf 'void _start(void){for(;;);}\n' >"$tmp/w.c"
  arm-none-eabi-gcc -mthumb -mcpu=cortex-m33 -nostdlib -Ttext=0x08000000 -o "$tmp/w.elf" "$tmp/w.c"
  "$SONDE" mtb decode -e "$tmp/w.elf" --raw "$D/mtb_m33.bin" --position "$P" --master "$M" >/dev/null 2>"$tmp/e"; rc=$?
  [ $rc -eq 1 ] && grep -q "only 0 of the 172 code addresses in the 92 packets .* are in its code: wrong ELF" "$tmp/e" \
    && ok || bad "ELF elsewhere: exit $rc: $(cat "$tmp/e")"
fi
"$SONDE" mtb decode -e "$FW/mtb_m33.elf" --raw "$tmp/none.bin" --position 0 >/dev/null 2>"$tmp/e"; rc=$?
[ $rc -eq 1 ] && grep -q "none.bin: No such file" "$tmp/e" && ok || bad "missing file: exit $rc: $(cat "$tmp/e")"
dec --position zz >/dev/null 2>"$tmp/e"; rc=$?
[ $rc -eq 2 ] && grep -q "position 'zz' is not a hexadecimal" "$tmp/e" && ok || bad "bad hex: exit $rc"
"$SONDE" mtb decode -e "$FW/mtb_m33.elf" --position 0 >/dev/null 2>"$tmp/e"; rc=$?
[ $rc -eq 2 ] && grep -q "missing <bundle> or --raw" "$tmp/e" && ok || bad "missing raw: exit $rc"
# a corrupted packet in the middle: a warning naming it, the rest decodes
cp "$D/mtb_m33.bin" "$tmp/c.bin"
printf '\x00\x00\x00\x00' | dd of="$tmp/c.bin" bs=1 seek=$((8 * 40)) conv=notrunc 2>/dev/null
"$SONDE" mtb decode -e "$FW/mtb_m33.elf" --raw "$tmp/c.bin" --position "$P" --master "$M" >"$tmp/t" 2>"$tmp/e"; rc=$?
[ $rc -eq 0 ] && grep -q "c.bin: packet 40 (offset 0x140): inconsistent" "$tmp/e" && grep -q "#40 *--- gap" "$tmp/t" \
  && ok || bad "corrupted packet: exit $rc: $(cat "$tmp/e")"

# post-mortem bundles the fault handler wrote (test_mtb_decode: <fw>.smtb)
for fw in mtb_fault_m33 mtb_fault_m0plus; do
  "$SONDE" mtb decode -e "$FW/$fw.elf" "$D/$fw.smtb" --limit 3 >"$tmp/f" 2>"$tmp/e"; rc=$?
  [ $rc -eq 0 ] && grep -q "^fault: exception 3 (HardFault) at 0x[0-9a-f]* culprit (.*mtb_fault.c:[0-9]*)  ldr" "$tmp/f" \
    && ok || bad "$fw bundle: exit $rc: $(cat "$tmp/f" "$tmp/e")"
  "$SONDE" mtb decode -e "$FW/$fw.elf" "$D/$fw.smtb" --format json | tail -1 | grep -q '^{"kind":"fault","pc":[0-9]*,"function":"culprit"' \
    && ok || bad "$fw bundle json"
done
grep -q "CFSR 0x00008200 HFSR 0x40000000: PRECISERR BFARVALID FORCED; MMFAR 0x00000000 BFAR 0xcffffff0" \
  <("$SONDE" mtb decode -e "$FW/mtb_fault_m33.elf" "$D/mtb_fault_m33.smtb") && ok || bad "CFSR words"
# demos: the PC is outside the firmware; the culprit is the branch that went there
for d in wild:dispatch smash:smash; do
  for core in m33 m0plus; do
    fw=mtb_${d%%:*}_$core
    "$SONDE" mtb decode -e "$FW/$fw.elf" "$D/$fw.smtb" --limit 2 >"$tmp/f" 2>"$tmp/e"; rc=$?
    [ $rc -eq 0 ] && grep -q "^fault: exception 3 (HardFault) at 0x1fff0000 (not in the firmware)" "$tmp/f" \
      && grep -q "^  jumped there from 0x[0-9a-f]* ${d#*:}+0x[0-9a-f]* (.*mtb_fault.c:[0-9]*) (packet #[0-9]*)" "$tmp/f" \
      && ok || bad "demo $fw: exit $rc: $(cat "$tmp/f" "$tmp/e")"
  done
done
cp "$D/mtb_fault_m33.smtb" "$tmp/b.smtb"
printf '\x55' | dd of="$tmp/b.smtb" bs=1 seek=300 conv=notrunc 2>/dev/null
"$SONDE" mtb decode -e "$FW/mtb_fault_m33.elf" "$tmp/b.smtb" >/dev/null 2>"$tmp/e"; rc=$?
[ $rc -eq 1 ] && grep -q "b.smtb: offset 1216: CRC-32 0x[0-9a-f]* does not match the contents" "$tmp/e" \
  && ok || bad "corrupt bundle: exit $rc: $(cat "$tmp/e")"
head -c 1000 "$D/mtb_fault_m33.smtb" >"$tmp/b.smtb"
"$SONDE" mtb decode -e "$FW/mtb_fault_m33.elf" "$tmp/b.smtb" >/dev/null 2>"$tmp/e"; rc=$?
[ $rc -eq 1 ] && grep -q "b.smtb: truncated: 1000 bytes of a 1220-byte bundle" "$tmp/e" \
  && ok || bad "truncated bundle: exit $rc: $(cat "$tmp/e")"
"$SONDE" mtb decode -e "$FW/mtb_fault_m33.elf" "$D/mtb_m33.bin" >/dev/null 2>"$tmp/e"; rc=$?
[ $rc -eq 1 ] && grep -q 'offset 0: not an MTB bundle (no "SMTB" magic)' "$tmp/e" && ok || bad "raw as bundle: exit $rc"
"$SONDE" mtb decode -e "$FW/mtb_fault_m33.elf" "$D/mtb_fault_m33.smtb" --raw x >/dev/null 2>"$tmp/e"; rc=$?
[ $rc -eq 2 ] && ok || bad "bundle + --raw: exit $rc"

echo "$pass passed, $fail failed"
[ $fail -eq 0 ]
