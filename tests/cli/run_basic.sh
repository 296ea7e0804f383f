#!/usr/bin/env bash
# `sonde run`: exit codes, output, statistics, help and bad input (docs/cli.md).
set -u
fw=$SONDE_BUILD/firmware
pass=0 fail=0
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
ok() { pass=$((pass + 1)); }
bad() { fail=$((fail + 1)); echo "FAIL: $*"; }
expect_rc() { # <want> <description> <command...>
  local want=$1 what=$2
  shift 2
  "$@" >"$tmp/out" 2>"$tmp/err"
  local rc=$?
  if [ $rc -eq "$want" ]; then ok; else bad "$what: exit $rc, want $want; stderr: $(head -c 400 "$tmp/err")"; fi
}
has() { # <file> <text> <description>
  if grep -qF -- "$2" "$1"; then ok; else bad "$3: '$2' not in $(head -c 400 "$1")"; fi
}

# the firmware's semihosting exit code and output
expect_rc 3 "hello exit code" "$SONDE" run "$fw/hello.elf"
has "$tmp/out" "hello from the virtual Cortex-M" "hello output"
# --stats and --json on stderr
expect_rc 3 "stats" "$SONDE" run --stats "$fw/hello.elf"
for k in instructions cycles "host seconds" MIPS; do has "$tmp/err" "$k" "--stats"; done
expect_rc 3 "json" "$SONDE" run --json "$fw/hello.elf"
for k in '"instructions": ' '"cycles": ' '"seconds": ' '"mips": ' '"stop": "exit"' '"exit_code": 3'; do
  has "$tmp/err" "$k" "--json"
done
[ "$(grep -c '^{.*}$' "$tmp/err")" = 1 ] && ok || bad "--json is not one JSON line"
# the block compiler (docs/vm.md): --no-jit and SONDE_JIT=0 turn it off, the results stay
blocks() { sed -n 's/^compiled blocks \([0-9]*\)$/\1/p' "$tmp/err"; }
strip() { sed -E 's/"seconds": [^,]*, "mips": [^,]*, //' "$tmp/err"; }
expect_rc 0 "demo, compiled" "$SONDE" run --stats "$fw/demo.elf"
n_on=$(blocks)
expect_rc 0 "demo, --no-jit" "$SONDE" run --stats --no-jit "$fw/demo.elf"
[ "$(blocks)" = 0 ] && ok || bad "--no-jit compiled $(blocks) blocks"
SONDE_JIT=0 "$SONDE" run --stats "$fw/demo.elf" >/dev/null 2>"$tmp/err"
[ "$(blocks)" = 0 ] && ok || bad "SONDE_JIT=0 compiled $(blocks) blocks"
if [ "$(uname -m)" = x86_64 ]; then
  [ "${n_on:-0}" -gt 0 ] && ok || bad "no block compiled on x86-64: '$n_on'"
fi
expect_rc 0 "demo json, compiled" "$SONDE" run --json "$fw/demo.elf"
strip >"$tmp/j_on"; cp "$tmp/out" "$tmp/o_on"
expect_rc 0 "demo json, --no-jit" "$SONDE" run --json --no-jit "$fw/demo.elf"
strip >"$tmp/j_off"
cmp -s "$tmp/j_on" "$tmp/j_off" && ok || bad "--json differs with --no-jit: $(cat "$tmp/j_on" "$tmp/j_off")"
cmp -s "$tmp/o_on" "$tmp/out" && ok || bad "UART output differs with --no-jit"
# an M0+ image on the cm0plus machine
expect_rc 0 "m0plus" "$SONDE" run --machine cm0plus "$fw/run_exit_m0plus.elf"
has "$tmp/out" "check cbf43926" "CRC-32 check value on M0+"
# the startup code's vector table: IRQn_Handler in slot 16 + n for IRQ 0..63
expect_rc 0 "vector table" "$SONDE" run "$fw/run_vectors.elf"
# runaway: the cycle limit, exit 1 with the PC
expect_rc 1 "cycle limit" "$SONDE" run --max-cycles 20000 "$fw/run_forever.elf"
has "$tmp/err" "cycle limit of 20000 cycles reached at pc 0x" "cycle limit message"
# lockup: exit 1 with the fault registers (BusFault on 0x30000004 inside HardFault)
expect_rc 1 "lockup" "$SONDE" run "$fw/run_lockup.elf"
has "$tmp/err" "locked up" "lockup message"
has "$tmp/err" "BFAR 0x30000004" "lockup BFAR"
# bad input: clear errors, exit 1, never a crash
expect_rc 1 "missing file" "$SONDE" run "$tmp/nonexistent.elf"
has "$tmp/err" "cannot open" "missing file message"
expect_rc 1 "host ELF" "$SONDE" run "$SONDE"
has "$tmp/err" "not a 32-bit ELF file" "host ELF message"
head -c 40 "$fw/hello.elf" >"$tmp/trunc.elf"
expect_rc 1 "truncated ELF" "$SONDE" run "$tmp/trunc.elf"
has "$tmp/err" "truncated ELF header" "truncated message"
printf 'hello' >"$tmp/text.elf"
expect_rc 1 "not ELF" "$SONDE" run "$tmp/text.elf"
has "$tmp/err" "not an ELF file" "not ELF message"
expect_rc 1 "binary outside memory" "$SONDE" run --binary --base 0x30000000 "$fw/hello.bin"
has "$tmp/err" "0x30000000 is outside every memory region" "binary range message"
expect_rc 1 "unknown machine" "$SONDE" run --machine nosuch "$fw/hello.elf"
has "$tmp/err" "unknown machine 'nosuch'" "machine message"
# a machine description file (docs/vm.md), and a broken one
printf 'machine mym3\ncore m3\nclock 48MHz\nnvic irqs=64 prio-bits=3\nmemory flash 0x00000000 512K access=rx\nmemory sram 0x20000000 128K access=rwx retain\n' >"$tmp/m.txt"
expect_rc 3 "machine file" "$SONDE" run --machine "$tmp/m.txt" "$fw/hello.elf"
has "$tmp/out" "hello from the virtual Cortex-M" "machine file output"
printf 'machine x\ncore m9\n' >"$tmp/bad.txt"
expect_rc 1 "bad machine file" "$SONDE" run --machine "$tmp/bad.txt" "$fw/hello.elf"
has "$tmp/err" "bad.txt:2: " "bad machine file message"
# a raw binary at its link address runs like the ELF
expect_rc 3 "binary" "$SONDE" run --binary --base 0 "$fw/hello.bin"
has "$tmp/out" "hello from the virtual Cortex-M" "binary output"
# a raw binary longer than the first read (64 KiB) is not taken for a broken ELF
{ cat "$fw/hello.bin"; head -c 100000 /dev/zero; } >"$tmp/big.bin"
expect_rc 3 "binary > 64 KiB" "$SONDE" run --binary --base 0 "$tmp/big.bin"
has "$tmp/out" "hello from the virtual Cortex-M" "binary > 64 KiB output"
# usage errors exit 2
expect_rc 2 "no firmware" "$SONDE" run
expect_rc 2 "bad trace format" "$SONDE" run --trace-pc "$tmp/t.bin" --trace-format xml "$fw/hello.elf"
# options that would be ignored are refused (issue 21)
expect_rc 2 "--trace-format without --trace-pc" "$SONDE" run --trace-format csv "$fw/hello.elf"
has "$tmp/err" "--trace-format needs --trace-pc" "--trace-format alone"
expect_rc 2 "--swo-seed alone" "$SONDE" run --swo-seed 3 "$fw/hello.elf"
has "$tmp/err" "--swo-seed needs --swo-bit-errors or --swo-jitter" "--swo-seed alone"
expect_rc 2 "base without binary" "$SONDE" run --base 0x100 "$fw/hello.elf"
# --help documents every option
expect_rc 0 "help" "$SONDE" run --help
for o in --machine --max-cycles --binary --base --uart --no-jit --trace-pc --trace-format --trace-lsu --stats --json; do
  has "$tmp/out" "$o" "--help"
done
echo "$pass passed, $fail failed"
[ $fail -eq 0 ]
