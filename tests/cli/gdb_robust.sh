#!/bin/bash
# The GDB server survives garbage, bad checksums, oversized packets, a client
# that disconnects mid-packet or stalls, and a second client; Ctrl-C stops a
# running target; no-ack mode; exact replies. A raw RSP client in Python.
set -u
FW=$SONDE_BUILD/firmware/run_forever.elf
[ -f "$FW" ] || { echo "FAIL: $FW missing (build the firmware)"; exit 1; }
TMP=$(mktemp -d)
trap 'kill $SRV 2>/dev/null; rm -rf "$TMP"' EXIT
timeout 60 "$SONDE" run --gdb 127.0.0.1:0 "$FW" 2> "$TMP/srv.err" &
SRV=$!
PORT=
for _ in $(seq 100); do
  PORT=$(sed -n 's/^sonde: gdb server listening on 127\.0\.0\.1:\([0-9]*\)$/\1/p' "$TMP/srv.err")
  [ -n "$PORT" ] && break
  sleep 0.05
done
[ -n "$PORT" ] || { echo "FAIL: server did not start"; cat "$TMP/srv.err"; exit 1; }
timeout 50 python3 - "$PORT" <<'PY'
import socket, sys, time
port = int(sys.argv[1])
passed = failed = 0
def check(cond, what):
    global passed, failed
    if cond: passed += 1
    else:
        failed += 1; print("FAIL:", what)
def conn():
    s = socket.create_connection(("127.0.0.1", port), timeout=10)
    return s
def pkt(body):
    return b"$" + body + b"#" + b"%02x" % (sum(body) & 0xff)
def recv_until(s, pred, t=5.0):
    buf = b""; end = time.time() + t
    s.settimeout(0.2)
    while time.time() < end and not pred(buf):
        try:
            d = s.recv(4096)
            if not d: break
            buf += d
        except socket.timeout:
            pass
    return buf
def reply(s, ack=True):
    b = recv_until(s, lambda b: b"#" in b and len(b) >= b.index(b"#") + 3)
    i = b.find(b"$"); j = b.find(b"#")
    if i < 0 or j < 0: return None
    body = b[i+1:j]
    check(b[j+1:j+3] == b"%02x" % (sum(body) & 0xff), "reply checksum")
    if ack: s.sendall(b"+")
    return body

s = conn()
s.sendall(b"hello\x00\xff garbage ##")
s.sendall(pkt(b"?"))
r = reply(s); check(r == b"T05thread:1;", "? after garbage: %r" % r)
s.sendall(b"$?#00")                      # bad checksum -> '-'
b = recv_until(s, lambda b: b"-" in b, 2); check(b"-" in b, "nak on bad checksum")
s.sendall(b"$" + b"A" * 20000 + b"#00")  # oversized -> dropped, '-'
b = recv_until(s, lambda b: b"-" in b, 2); check(b"-" in b, "nak on oversized packet")
s.sendall(pkt(b"m0,4")); r = reply(s); check(r is not None and len(r) == 8, "m0,4: %r" % r)
s.sendall(pkt(b"mF0000000,4")); r = reply(s); check(r == b"E01", "unmapped read: %r" % r)
s.sendall(pkt(b"p10")); r = reply(s); check(r == b"00000001", "xpsr T bit: %r" % r)
s.sendall(pkt(b"qXfer:features:read:target.xml:0,fff")); r = reply(s)
check(r is not None and r.startswith(b"l<?xml") and b"org.gnu.gdb.arm.m-profile" in r
      and b"vfp" not in r, "target.xml (cm3, no FPU)")
s.sendall(pkt(b"QStartNoAckMode")); r = reply(s); check(r == b"OK", "no-ack")
s.sendall(pkt(b"qRcmd," + b"help".hex().encode()))
r = recv_until(s, lambda b: b"$OK#" in b)
check(b"$OK#" in r and b"$O" in r, "monitor help")
# a second client while one is attached waits (backlog) and does not disturb
s2 = conn()
s.sendall(pkt(b"c"))                      # run ...
time.sleep(0.3)
s.sendall(b"\x03")                        # ... and interrupt
r = recv_until(s, lambda b: b"#" in b)
check(r.startswith(b"$T02thread:1;"), "Ctrl-C stop reply: %r" % r)
s.sendall(pkt(b"qRcmd," + b"stats".hex().encode()))
r = recv_until(s, lambda b: b"$OK#" in b)
check(b"$OK#" in r and bytes.fromhex(r[r.find(b"$O")+2:r.find(b"#")].decode()).startswith(b"cycles "),
      "monitor stats after Ctrl-C")
s.sendall(b"$m0,4")                        # disconnect in the middle of a packet
s.close()
# the waiting second client is served now
s2.sendall(pkt(b"?")); r = reply(s2); check(r is not None and r.startswith(b"T"), "second client: %r" % r)
s2.sendall(b"$m0")                         # stall inside a packet: dropped after 5 s
t0 = time.time()
b = recv_until(s2, lambda b: False, 8)
check(time.time() - t0 < 7.5, "stalled client dropped")
s3 = conn()
s3.sendall(pkt(b"g")); r = reply(s3); check(r is not None and len(r) == 23 * 8, "g: %d chars" % len(r or b""))
s3.sendall(pkt(b"k"))
time.sleep(0.2)
print("%d passed, %d failed" % (passed, failed))
sys.exit(1 if failed else 0)
PY
prc=$?
wait $SRV; rc=$?
if [ $rc -ne 1 ]; then echo "FAIL: sonde exit $rc after kill (expected 1)"; exit 1; fi
exit $prc
