#!/usr/bin/env python3
"""Real OpenOCD against `sonde run --jtag` (issue 16): DWT_PCSR reads per
second through OpenOCD's Tcl RPC port (`mdw 0xE000101C` in a loop), with the
core running and halted, and `load_image` of a 64 KiB image; and the share
of that time spent on the VM's side of the socket (sonde's `--stats` line
"jtag seconds ... in the protocol": decoding the bits, the DP/AP accesses and
answering), measured in the same run. Each phase is its own session; a
session that only attaches gives the attach cost, subtracted from the others.

  bench/jtag_bench.py SONDE FIRMWARE.elf [READS]      (make bench_jtag)
Prints figures, never fails on time."""
import os
import re
import signal
import socket
import subprocess
import sys
import tempfile
import time

SONDE, FW = sys.argv[1], sys.argv[2]
READS = int(sys.argv[3]) if len(sys.argv) > 3 else 1000
CFG = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "scripts", "openocd",
                   "sonde-vm.cfg")


def free_port():
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    p = s.getsockname()[1]
    s.close()
    return p


def rpc(s, cmd):
    s.sendall(cmd.encode() + b"\x1a")
    buf = b""
    while not buf.endswith(b"\x1a"):
        buf += s.recv(65536)
    return buf[:-1].decode()


def session(phase, tmp):
    err = open(os.path.join(tmp, "sonde.err"), "w+")
    srv = subprocess.Popen([SONDE, "run", "-m", "cm4f", "--stats", "--jtag", "0", FW],
                           stdout=subprocess.DEVNULL, stderr=err)
    port = None
    for _ in range(200):
        err.seek(0)
        m = re.search(r"listening on 127\.0\.0\.1:(\d+)", err.read())
        if m:
            port = int(m.group(1))
            break
        time.sleep(0.02)
    tcl = free_port()
    ocd = subprocess.Popen(["openocd", "-c", "gdb_port disabled; telnet_port disabled; "
                            "tcl_port %d" % tcl, "-f", CFG], env=dict(os.environ,
                           SONDE_JTAG_PORT=str(port)), stdout=subprocess.DEVNULL,
                           stderr=subprocess.DEVNULL)
    s = None
    for _ in range(200):
        try:
            s = socket.create_connection(("127.0.0.1", tcl))
            break
        except OSError:
            time.sleep(0.05)
    rpc(s, "sonde.cpu curstate")  # attached and examined
    seconds, what = phase(s)
    try:
        rpc(s, "shutdown")
    except OSError:
        pass
    ocd.wait(timeout=20)
    srv.send_signal(signal.SIGTERM)
    srv.wait(timeout=20)
    err.seek(0)
    text = err.read()
    m = re.search(r"jtag seconds\s+([0-9.]+) in the protocol \(([0-9.]+) decoding\)", text)
    prot = (float(m.group(1)), float(m.group(2)))
    m = re.search(r"jtag bytes\s+(\d+) in (\d+) batches", text)
    return seconds, prot, int(m.group(1)), int(m.group(2)), what


def attach_only(s):
    return 0.0, "attach"


def pcsr(halted):
    def run(s):
        if halted:
            rpc(s, "halt")
        t0 = time.perf_counter()
        for _ in range(READS):
            rpc(s, "capture {mdw 0xE000101C}")
        return time.perf_counter() - t0, "%d x mdw DWT_PCSR, core %s" % (
            READS, "halted" if halted else "running")
    return run


def load(tmp):
    img = os.path.join(tmp, "img.bin")
    with open(img, "wb") as f:
        f.write(os.urandom(65536))

    def run(s):
        rpc(s, "halt")
        t0 = time.perf_counter()
        out = rpc(s, "capture {load_image %s 0x20010000 bin}" % img)
        dt = time.perf_counter() - t0
        assert "65536 bytes written" in out, out
        return dt, "load_image 64 KiB"
    return run


def main():
    with tempfile.TemporaryDirectory() as tmp:
        base = session(attach_only, tmp)
        print("attach: sonde's side %.3f s in the protocol (%.3f decoding), %d bytes in %d batches "
              "(%.0f bytes/batch)" % (base[1][0], base[1][1], base[2], base[3],
                                      base[2] / max(base[3], 1)))
        for ph in (pcsr(False), pcsr(True), load(tmp)):
            sec, prot, nbytes, batches, what = session(ph, tmp)
            wall = max(prot[0] - base[1][0], 0.0)
            dec = max(prot[1] - base[1][1], 0.0)
            rate = READS / sec if "mdw" in what else 65536 / 1024 / sec
            unit = "reads/s" if "mdw" in what else "KiB/s"
            print("%-36s %7.3f s %8.1f %-7s VM side: %.3f s = %4.1f %% (decoding "
                  "%.3f s = %4.1f %%; %d bytes, %d batches)" % (what, sec, rate, unit, wall,
                                               100 * wall / sec, dec, 100 * dec / sec,
                                               nbytes - base[2], batches - base[3]))


main()
