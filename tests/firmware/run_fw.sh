#!/usr/bin/env bash
# Run one firmware test program on the VM and compare its semihosting output
# and exit status with the same program built for the host.
# usage: run_fw.sh <sonde> <machine> <firmware.elf> <host-executable>
set -u
sonde=$1 machine=$2 elf=$3 host=$4
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
"$host" >"$tmp/expected"
"$sonde" run --machine "$machine" --max-cycles 200M "$elf" >"$tmp/actual" 2>"$tmp/stderr"
rc=$?
if [ $rc -ne 0 ]; then
  echo "FAIL: sonde run exited $rc"
  cat "$tmp/stderr"
  diff "$tmp/expected" "$tmp/actual" | head -20
  echo "0 passed, 1 failed"
  exit 1
fi
if ! diff -u "$tmp/expected" "$tmp/actual" >"$tmp/diff"; then
  echo "FAIL: output differs from the host build"
  head -40 "$tmp/diff"
  echo "0 passed, 1 failed"
  exit 1
fi
echo "1 passed, 0 failed"
