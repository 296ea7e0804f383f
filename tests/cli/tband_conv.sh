#!/bin/bash
# sonde tband conv: the real trace to Perfetto, checked with protoc against our
# subset .proto (no unknown fields) and semantically (tracks defined before
# use, every slice closed); Chrome JSON; --serve.
set -u
pass=0 fail=0
ok() { pass=$((pass + 1)); }
bad() { echo "FAIL: $*" >&2; fail=$((fail + 1)); }
T="$SONDE_TESTDATA/tonbandgeraet/posix_freertos.log.hex"
[ -f "$T" ] || { echo "missing test data $T" >&2; exit 1; }
command -v protoc >/dev/null || { echo "protoc missing (scripts/install-deps installs protobuf-compiler)" >&2; exit 1; }
W=$(mktemp -d)
trap 'rm -rf "$W"; [ -n "${SRV:-}" ] && kill $SRV 2>/dev/null' EXIT
PROTO="$SONDE_SRC/tests/export/perfetto_subset.proto"

# semantic check of `protoc --decode` text: prints problems, exits 1 on any
check_trace() {
  awk '
    /^  track_descriptor \{/ { ctx = "td"; next }
    /^  track_event \{/ { ctx = "te"; type = ""; uuid = ""; next }
    ctx == "td" && /^    uuid: / { if ($2 in defined) { print "track " $2 " defined twice"; err = 1 } defined[$2] = 1; ntracks++ }
    ctx == "td" && /^    parent_uuid: / { if (!($2 in defined)) { print "parent " $2 " used before definition"; err = 1 } }
    ctx == "te" && /^    type: / { type = $2 }
    ctx == "te" && /^    track_uuid: / { uuid = $2 }
    /^  \}/ {
      if (ctx == "te") {
        nev++
        if (!(uuid in defined)) { print "event on undefined track " uuid; err = 1 }
        if (type == "TYPE_SLICE_BEGIN") { open[uuid]++; nbeg++ }
        if (type == "TYPE_SLICE_END") { open[uuid]--; if (open[uuid] < 0) { print "end without begin on " uuid; err = 1 } }
      }
      ctx = ""
    }
    /^ *[0-9]+: / { print "unknown field: " $0; err = 1 }
    END {
      for (u in open) if (open[u] != 0) { print "slice left open on track " u; err = 1 }
      printf "tracks=%d events=%d slices=%d\n", ntracks, nev, nbeg
      exit err
    }'
}

"$SONDE" tband conv --mode freertos -o "$W/t.perfetto-trace" "$T" 2>"$W/err"; rc=$?
[ $rc -eq 0 ] && ok || bad "conv exit $rc: $(cat "$W/err")"
grep -q "3231 frames, 3203 events, 855 task switches, 0 errors, 0 dropped" "$W/err" && ok || bad "summary: $(cat "$W/err")"
protoc --decode=perfetto.protos.Trace -I "$(dirname "$PROTO")" "$PROTO" <"$W/t.perfetto-trace" >"$W/t.txt" 2>"$W/perr"; rc=$?
[ $rc -eq 0 ] && ok || bad "protoc: $(cat "$W/perr")"
check_trace <"$W/t.txt" >"$W/sem" && ok || bad "semantics: $(head -5 "$W/sem")"
cat "$W/sem"
# 855 switches -> 855 "Running" slices on task tracks plus 855 "Running"
# states on the tasks' state tracks
n=$(grep -c 'name: "Running"' "$W/t.txt")
[ "$n" -eq 1710 ] && ok || bad "expected 2 x 855 Running slices, got $n"
for name in '"Core 0"' '"Tasks"' '"mytask1"' '"IDLE"' '"Tmr Svc"' '"MyEvts"' '"MyVals"' '"mymutex1 (mutex)"' '"Running task"' '"IDLE priority"'; do
  grep -q "$name" "$W/t.txt" && ok || bad "missing track $name"
done

# bare-metal mode: no task tracks, still well-formed
"$SONDE" tband conv --mode bare-metal -o "$W/b.perfetto-trace" "$T" 2>/dev/null && ok || bad "bare-metal conv"
protoc --decode=perfetto.protos.Trace -I "$(dirname "$PROTO")" "$PROTO" <"$W/b.perfetto-trace" | check_trace >/dev/null && ok || bad "bare-metal semantics"
grep -q '"Tasks"' <(protoc --decode=perfetto.protos.Trace -I "$(dirname "$PROTO")" "$PROTO" <"$W/b.perfetto-trace") && bad "bare-metal has task tracks" || ok

# Chrome JSON
"$SONDE" tband conv --mode freertos --format chrome-json -o "$W/t.json" "$T" 2>/dev/null && ok || bad "chrome-json"
head -c 16 "$W/t.json" | grep -q '{"traceEvents":' && ok || bad "json head"
tail -c 40 "$W/t.json" | grep -q '"displayTimeUnit":"ns"}' && ok || bad "json tail"
b=$(grep -c '"ph":"B"' "$W/t.json"); e=$(grep -c '"ph":"E"' "$W/t.json")
[ "$b" -eq "$e" ] && [ "$b" -gt 855 ] && ok || bad "json B=$b E=$e"
if command -v python3 >/dev/null; then
  python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); assert len(d["traceEvents"]) > 3000' "$W/t.json" && ok || bad "json does not parse"
fi

# multi-core: the same file as core 0 and core 1
"$SONDE" tband conv --mode bare-metal --cores 2 -o "$W/m.perfetto-trace" "$T@0" "$T@1" 2>/dev/null && ok || bad "2 cores"
protoc --decode=perfetto.protos.Trace -I "$(dirname "$PROTO")" "$PROTO" <"$W/m.perfetto-trace" >"$W/m.txt"
grep -q '"Core 1"' "$W/m.txt" && ok || bad "core 1 track"
"$SONDE" tband conv --mode bare-metal --cores 1 -o "$W/x" "$T@1" 2>/dev/null; [ $? -eq 2 ] && ok || bad "core beyond --cores"
"$SONDE" tband conv -o "$W/x" "$T" 2>/dev/null; [ $? -eq 2 ] && ok || bad "--mode required"

# --serve: bind to 127.0.0.1 on a test port; clients that leave, send garbage
# or stall neither block the others nor count toward --serve-requests.
PORT=$((20000 + RANDOM % 20000))
"$SONDE" tband conv --mode freertos -o "$W/s.perfetto-trace" --serve --listen 127.0.0.1:$PORT --serve-requests 3 "$T" >"$W/serve.out" 2>/dev/null &
SRV=$!
for i in $(seq 50); do grep -q "ui.perfetto.dev" "$W/serve.out" 2>/dev/null && break; sleep 0.1; done
grep -q "https://ui.perfetto.dev/#!/?url=http://127.0.0.1:$PORT/s.perfetto-trace" "$W/serve.out" && ok || bad "serve URL: $(cat "$W/serve.out")"
# a client that connects and stalls (holds its connection open, sends nothing)
exec 4<>/dev/tcp/127.0.0.1/$PORT && ok || bad "connect (stalled client)"
# a client that connects and disconnects without a request; garbage; an empty line
exec 3<>/dev/tcp/127.0.0.1/$PORT && exec 3>&- && ok || bad "connect"
printf 'garbage\r\n\r\n' >/dev/tcp/127.0.0.1/$PORT 2>/dev/null && ok || bad "garbage"
printf '\r\n\r\n' >/dev/tcp/127.0.0.1/$PORT 2>/dev/null && ok || bad "empty request"
# three real requests are answered while the stalled client still holds its connection
if command -v curl >/dev/null; then
  curl -s -m 3 -D "$W/h" -o "$W/got" "http://127.0.0.1:$PORT/s.perfetto-trace" && cmp -s "$W/got" "$W/s.perfetto-trace" && ok || bad "GET content (behind a stalled client)"
  grep -qi "^access-control-allow-origin: https://ui.perfetto.dev" "$W/h" && ok || bad "CORS origin: $(grep -i access-control-allow-origin "$W/h")"
  grep -qi "access-control-allow-origin: \*" "$W/h" && bad "CORS allows any origin" || ok
  code=$(curl -s -m 3 -o /dev/null -w '%{http_code}' "http://127.0.0.1:$PORT/other")
  [ "$code" = 404 ] && ok || bad "404 expected, got $code"
  code=$(curl -s -m 3 -o /dev/null -w '%{http_code}' -X OPTIONS "http://127.0.0.1:$PORT/s.perfetto-trace")
  [ "$code" = 204 ] && ok || bad "OPTIONS: 204 expected, got $code"
else
  bad "curl missing"
fi
# the 3 well-formed requests end the server; the garbage ones did not count
for i in $(seq 50); do kill -0 $SRV 2>/dev/null || break; sleep 0.1; done
kill -0 $SRV 2>/dev/null && { bad "server still running after 3 requests"; kill $SRV; }
exec 4>&-
wait $SRV; rc=$?
[ $rc -eq 0 ] && ok || bad "server exit $rc"

# --listen is checked before the conversion: a typo fails at once, writing nothing
rm -f "$W/lg.perfetto-trace"
"$SONDE" tband conv --mode freertos -o "$W/lg.perfetto-trace" --serve --listen garbage "$T" 2>"$W/lg.err"
[ $? -eq 2 ] && [ ! -e "$W/lg.perfetto-trace" ] && grep -q "listen" "$W/lg.err" && ok || bad "--listen garbage: $(cat "$W/lg.err")"
"$SONDE" tband conv --mode freertos -o "$W/lg.perfetto-trace" --serve --listen 127.0.0.1:70000 "$T" 2>/dev/null; [ $? -eq 2 ] && ok || bad "--listen port 70000"
"$SONDE" tband conv --mode freertos -o "$W/lg.perfetto-trace" --listen 127.0.0.1:9001 "$T" 2>/dev/null; [ $? -eq 2 ] && ok || bad "--listen without --serve"
SRV=

echo "$pass passed, $fail failed"
[ $fail -eq 0 ]
