#!/usr/bin/env bash
# Ctrl-C stops `sonde run` within a fraction of a second, whatever the run:
# stderr redirected (no progress bar), --max-cycles 0 (no limit), firmware that
# schedules no timed event (run_forever: a loop and nothing else), and with
# tracing on. The interrupted run reports where it stopped and exits 1.
set -u
fw=$SONDE_BUILD/firmware
pass=0 fail=0
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"; [ -n "${P:-}" ] && kill -9 "$P" 2>/dev/null' EXIT
ok() { pass=$((pass + 1)); }
bad() { fail=$((fail + 1)); echo "FAIL: $*"; }

interrupt() { # <description> <sonde run options...>
  local what=$1
  shift
  "$SONDE" run "$@" "$fw/run_forever.elf" >"$tmp/out" 2>"$tmp/err" &
  P=$!
  sleep 0.4
  kill -0 "$P" 2>/dev/null || { bad "$what: ended before the interrupt: $(cat "$tmp/err")"; P=; return; }
  local t0 t1 ms rc
  t0=$(date +%s%N)
  kill -INT "$P"
  # wait up to 2 s, in 10 ms steps
  for _ in $(seq 200); do kill -0 "$P" 2>/dev/null || break; sleep 0.01; done
  t1=$(date +%s%N)
  if kill -0 "$P" 2>/dev/null; then
    bad "$what: still running 2 s after SIGINT"
    kill -9 "$P"; wait "$P" 2>/dev/null; P=
    return
  fi
  wait "$P"; rc=$?; P=
  ms=$(((t1 - t0) / 1000000))
  echo "$what: stopped $ms ms after SIGINT (exit $rc)"
  [ "$ms" -lt 1000 ] && ok || bad "$what: took $ms ms"
  [ "$rc" -eq 1 ] && ok || bad "$what: exit $rc, want 1"
  grep -q "sonde: run: .*run_forever.elf: interrupted at pc 0x" "$tmp/err" && ok || bad "$what: message: $(cat "$tmp/err")"
}

interrupt "default limit"
interrupt "--max-cycles 0" --max-cycles 0
interrupt "--no-jit" --max-cycles 0 --no-jit
interrupt "--trace-pc" --max-cycles 0 --trace-pc "$tmp/t.pct"
# the trace written up to the interrupt is complete and readable
[ -s "$tmp/t.pct" ] && "$SONDE" grammar stats "$tmp/t.pct" >/dev/null 2>"$tmp/gerr" && ok || bad "PC trace after interrupt: $(cat "$tmp/gerr")"

echo "$pass passed, $fail failed"
[ $fail -eq 0 ]
