#!/usr/bin/env python3
# SPDX-License-Identifier: LGPL-3.0-or-later
"""clientid.py URI ID...: send broker.ping to the broker at URI from one
DEALER socket per routing id, and print what came back for each.

An ID is a string ("0", "99", "abc"), "default" (no id: libzmq makes a
binary one), or "hex:BYTES" (any bytes).  Prints one line per id:
"ID answered errnum=N" or "ID no answer".  The message format is the
one rogue.py writes (Flux-style frames, src/common/libmsg)."""
import importlib.util
import os
import struct
import sys

import zmq

spec = importlib.util.spec_from_file_location(
    "rogue", os.path.join(os.path.dirname(os.path.abspath(__file__)),
                          "rogue.py"))
rogue = importlib.util.module_from_spec(spec)
spec.loader.exec_module(rogue)


def ask(ctx, uri, ident):
    s = ctx.socket(zmq.DEALER)
    s.setsockopt(zmq.LINGER, 0)
    if ident.startswith("hex:"):
        s.setsockopt(zmq.ROUTING_ID, bytes.fromhex(ident[4:]))
    elif ident != "default":
        s.setsockopt(zmq.ROUTING_ID, ident.encode())
    s.connect(uri)
    s.send_multipart(rogue.broker_msg(rogue.REQUEST, "broker.ping", None,
                                      None, 0, aux1=0, aux2=7))
    got = "no answer"
    if s.poll(3000):
        proto = s.recv_multipart()[-1]
        errnum = struct.unpack("!BBBBIIII", proto)[6]
        got = "answered errnum=%d" % errnum
    s.close()
    return got


def main(argv):
    ctx = zmq.Context()
    for ident in argv[1:]:
        print("%s %s" % (ident, ask(ctx, argv[0], ident)), flush=True)
    ctx.term()
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
