#!/usr/bin/env python3
"""A small client of OpenOCD's Tcl RPC port (OpenOCD manual, "Tcl RPC server":
a command, then 0x1a; the answer, then 0x1a) for the JTAG tests.

  ocd_rpc.py PORT CMD...      run each CMD through `capture`, print its output
                              (one block per command, "> CMD" first)
  ocd_rpc.py PORT --wait-halt run `poll` until the target is halted (10 s)

Exit status 1 when the connection fails or an answer is missing (timeout)."""
import socket
import sys
import time

END = b"\x1a"


def connect(port, tries=100):
    for _ in range(tries):
        try:
            s = socket.create_connection(("127.0.0.1", port), timeout=20)
            return s
        except OSError:
            time.sleep(0.1)
    sys.exit("ocd_rpc: cannot connect to 127.0.0.1:%d" % port)


def rpc(s, cmd):
    s.sendall(cmd.encode() + END)
    buf = b""
    while not buf.endswith(END):
        chunk = s.recv(65536)
        if not chunk:
            sys.exit("ocd_rpc: connection closed during: " + cmd)
        buf += chunk
    return buf[:-1].decode(errors="replace")


def capture(s, cmd):
    return rpc(s, "capture {%s}" % cmd)


def main():
    port = int(sys.argv[1])
    s = connect(port)
    args = sys.argv[2:]
    if args and args[0] == "--wait-halt":
        t0 = time.time()
        while time.time() - t0 < 10:
            if rpc(s, "sonde.cpu curstate").strip() == "halted":
                print("halted")
                return
            time.sleep(0.05)
        sys.exit("ocd_rpc: target not halted after 10 s")
    for cmd in args:
        print("> " + cmd)
        out = capture(s, cmd)
        print(out.rstrip("\n"))
    sys.stdout.flush()


if __name__ == "__main__":
    main()
