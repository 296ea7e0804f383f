#!/bin/bash
# `sonde itm` against tools we did not write: a generated ITM stream is
# turned into a UART waveform (1 Mbaud, 8 samples per bit, the layout
# `sigrok-cli -O binary` writes) and decoded (a) by `sonde itm --line`, which
# must give the same packets as the raw bytes, and (b) by sigrok-cli's uart +
# arm_itm decoders, whose values must match ours packet by packet. The same
# stream wrapped in TPIU frames (CoreSight formatter, built here) must decode
# identically with --tpiu.
set -u
pass=0 fail=0
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
ok() { pass=$((pass + 1)); }
bad() { echo "FAIL: $*" >&2; fail=$((fail + 1)); }

python3 - "$T" <<'EOP'
import struct, sys
d = sys.argv[1]
s = bytearray(b'\x00' * 5 + b'\x80')
s += b'\x01H\x01i'
s += bytes([0x0b]) + struct.pack('<I', 0x12345678)
s += bytes([0xc0, 0x05])
for pc in (0x2680, 0x3086, 0x13de):
    s += bytes([0x17]) + struct.pack('<I', pc)
s += bytes([0x0e, 15, 0x10, 0x0e, 15, 0x20, 0x0e, 0, 0x30])
s += bytes([0x0e, 0x2f, 0x10])                      # IRQ 31 (exception 47) entered
s += bytes([0x0e, 0x2f, 0x21])                      # exception 0x12f (9-bit number) exited
s += bytes([0x05, 0x20, 0x05, 0x01])                # Cyc, CPI
for c in range(4):                                  # data trace, every comparator
    s += bytes([(8 + 2 * c) << 3 | 7]) + struct.pack('<I', 0x1000 + 2 * c)
    s += bytes([(9 + 2 * c) << 3 | 6]) + struct.pack('<H', 0x1240 + c)
    s += bytes([(17 + 2 * c) << 3 | 5, 0x30 + c])   # write, 1 byte
    s += bytes([(16 + 2 * c) << 3 | 6]) + struct.pack('<H', 0xbeef)  # read, 2 bytes
while len(s) % 14:
    s += b'\x10'                                    # LTS2 padding for whole TPIU frames
open(d + '/itm.bin', 'wb').write(s)
spb = 8
w = bytearray([1] * 64)
for b in s:
    for bit in [0] + [(b >> i) & 1 for i in range(8)] + [1]:
        w += bytes([bit]) * spb
w += bytes([1] * 64)
open(d + '/uart.bin', 'wb').write(w)
# TPIU: full sync, then frames of an ID change to 1 (immediate) + 14 data bytes
t = bytearray(b'\xff\xff\xff\x7f')
for i in range(0, len(s), 14):
    chunk = s[i:i + 14]
    f = bytearray(16)
    f[0] = (1 << 1) | 1
    aux = 0
    for j, b in enumerate(chunk):
        pos = j + 1
        if pos % 2 == 0:
            f[pos] = b & 0xfe
            aux |= (b & 1) << (pos // 2)
        else:
            f[pos] = b
    f[15] = aux
    t += f
open(d + '/tpiu.bin', 'wb').write(t)
EOP

"$SONDE" itm --format json "$T/itm.bin" >"$T/raw.json" 2>/dev/null
"$SONDE" itm --format json --line uart:1000000 --sample-rate 8M "$T/uart.bin" >"$T/line.json" 2>"$T/err"
if cmp -s "$T/raw.json" "$T/line.json"; then ok; else bad "--line uart differs from raw"; cat "$T/err" >&2; fi
"$SONDE" itm --format json --tpiu "$T/tpiu.bin" >"$T/tpiu.json" 2>"$T/err"
if cmp -s "$T/raw.json" "$T/tpiu.json"; then ok; else bad "--tpiu differs from raw"; diff "$T/raw.json" "$T/tpiu.json" | head >&2; fi
"$SONDE" itm --format json --tpiu=1 "$T/tpiu.bin" >"$T/tpiu1.json" 2>/dev/null
cmp -s "$T/raw.json" "$T/tpiu1.json" && ok || bad "--tpiu=1"

if ! command -v sigrok-cli >/dev/null; then
  bad "sigrok-cli not installed (scripts/install-deps)"
else
  timeout 120 sigrok-cli -I binary:numchannels=1:samplerate=8000000 -i "$T/uart.bin" \
    -P uart:rx=0:baudrate=1000000,arm_itm -A arm_itm >"$T/sr.txt" 2>&1
  python3 - "$T/raw.json" "$T/sr.txt" <<'EOP' && ok || bad "sigrok arm_itm comparison"
import json, re, sys
ours, theirs = [], []
for line in open(sys.argv[1]):
    p = json.loads(line)
    t = p["type"]
    if t == "sw" and p["port"] != 0:
        ours.append(("sw", p["port"], p["value"]))
    elif t == "lts":  # sigrok prints the running (absolute) timestamp
        ours.append(("lts", p["ts"]))
    elif t == "pc":
        ours.append(("pc", p["pc"]))
    elif t == "exc":
        ours.append(("exc", p["event"], p["exc"]))
    elif t == "evcnt":
        ours.append(("evcnt", p["counters"]))
    elif t == "dt_pc":
        ours.append(("dt_pc", p["comp"], p["pc"]))
    elif t == "dt_addr":
        ours.append(("dt_addr", p["comp"], p["value"]))
    elif t == "dt_data":
        ours.append(("dt_data", p["comp"], p["rw"], p["value"]))
for line in open(sys.argv[2]):
    line = line.strip()
    m = re.match(r"arm_itm-1: (\d+): 0x([0-9a-f]+)$", line)
    if m:
        theirs.append(("sw", int(m.group(1)), int(m.group(2), 16))); continue
    m = re.match(r"arm_itm-1: Timestamp: (\d+)", line)
    if m:
        theirs.append(("lts", int(m.group(1)))); continue
    m = re.match(r"arm_itm-1: PC: 0x([0-9a-f]+)", line)
    if m:
        theirs.append(("pc", int(m.group(1), 16))); continue
    m = re.match(r"arm_itm-1: (Enter|Exit|Resume): (Thread|SysTick|IRQ \d+)$", line)
    if m:
        ev = {"Enter": "enter", "Exit": "exit", "Resume": "return"}[m.group(1)]
        n = m.group(2)
        num = 15 if n == "SysTick" else 0 if n.startswith("Thread") else int(n[4:]) + 16 if n.startswith("IRQ") else -1
        theirs.append(("exc", ev, num)); continue
    m = re.match(r"arm_itm-1: DWT events: (.*)$", line)
    if m:
        theirs.append(("evcnt", ",".join(x.lower() for x in m.group(1).split()))); continue
    m = re.match(r"arm_itm-1: Watchpoint (\d): PC 0x([0-9a-f]+)", line)
    if m:
        theirs.append(("dt_pc", int(m.group(1)), int(m.group(2), 16))); continue
    m = re.match(r"arm_itm-1: Watchpoint (\d): address 0x\?\?\?\?([0-9a-f]+)", line)
    if m:
        theirs.append(("dt_addr", int(m.group(1)), int(m.group(2), 16))); continue
    m = re.match(r"arm_itm-1: Watchpoint (\d): (Read|Write) data 0x([0-9a-f]+)", line)
    if m:
        theirs.append(("dt_data", int(m.group(1)), m.group(2)[0].lower(), int(m.group(3), 16))); continue
if ours != theirs:
    print("ours:  ", ours, file=sys.stderr)
    print("sigrok:", theirs, file=sys.stderr)
    open(sys.argv[2]).read() and print(open(sys.argv[2]).read()[:3000], file=sys.stderr)
    sys.exit(1)
print("sigrok arm_itm agrees on %d packets" % len(ours))
EOP
fi

echo "$pass passed, $fail failed"
[ "$fail" == 0 ]
