#!/usr/bin/env python3
# SPDX-License-Identifier: LGPL-3.0-or-later
"""rogue.py: a misbehaving overlay peer, for the attack tests (t1400).

It speaks the overlay's wire protocol (doc/overlay-protocol.md) from a
ZeroMQ DEALER socket, with pyzmq, and runs a list of steps against one
broker's overlay endpoint:

  rogue.py ENDPOINT [--server-key KEY] [--cert FILE] [--id ID]
           [--version N] STEP...

  --server-key KEY  the broker's CURVE public key (CURVE on)
  --cert FILE       our key pair: a czmq certificate (FILE and
                    FILE_secret), e.g. a broker's rundir/overlay.cert;
                    without it a fresh key pair
  --id ID           the routing id we announce (a rank's, say)
  --seed FILE       a broker's signing seed (its rundir/events.seed, 32
                    bytes): the rogue then holds that rank's signing key
                    too, signs its HELLO's live record with it (so that
                    brokers beyond its neighbour believe it rejoined),
                    and can sign requests (step "signed")
  --version N       speak overlay protocol version N (default: the
                    broker's, 3: one ZeroMQ frame per message, the
                    envelope then a length-prefixed frame list; 2: the
                    envelope and each body frame as separate parts)

Steps (each prints one line saying what came back, "-" for nothing):

  hello:RANK:INSTANCE[:INC[:SEQ]]
                              say HELLO as RANK (INC empty: the clock;
                              SEQ: the highest event seq it claims to
                              know); prints the answer's kind;
                              after an ACK, DATA and control steps speak
                              as RANK with the incarnations agreed
  request:TOPIC:NODEID:ROLES[:JSON]
                              a request as overlay DATA (route stack
                              [RANK], rolemask ROLES); prints
                              "errnum=N" of the response or "-"
  response:TOPIC:DEST[:JSON]  a response to a request nobody made, routed
                              to rank DEST
  fence:RANK:INC              a fence record (RANK down as INC) in a VIEW
  nak:INC                     a HELLO_NAK "fenced" naming incarnation INC of
                              the broker we talk to
  unfence:RANK:INC            a record "RANK alive as INC" in a VIEW
  event:SEQ                   an EVENT with sequence number SEQ
  evbatch:SRC:FIRST:N         a tree EVENT batch (the batch format of
                              src/common/libmsg/evbatch.h) of N events
                              "forged.I" numbered FIRST.., envelope
                              source SRC (0: posing as rank 0)
  sigflood:SRC:FIRST:RATE:SECS  tree EVENT batches of one event numbered
                              FIRST, flagged signed, all carrying the same
                              well-formed signature (made once with the
                              --seed key, of other bytes: not rank 0's), RATE a second for SECS
                              seconds, envelope source SRC; prints how
                              many went
  evsync:SRC:SEQ:GONE         an EVCTL SYNC {"k":1,"seq","gone"} with
                              envelope source SRC
  evctl:SRC:DEST:JSON         an EVCTL with envelope source SRC to rank
                              DEST, body JSON (e.g. a SEQ_REPORT,
                              {"k":5,"seq":N})
  source:RANK                 from now on, DATA claims to come from RANK
                              (envelope source and route stack)
  signed[:SKEW]               from now on, requests are signed end to end
                              with the --seed key (ovsign.h), stamped
                              SKEW seconds off the clock (default 0)
  again                       send the last request again, byte for byte
                              (a captured request played again)
  flap:RANK:SECS:MIN:MAX      fence RANK at the incarnation it last
                              heard for it (from the fence records the
                              broker sends it: batches, views) every
                              MIN-MAX seconds (random) for SECS seconds,
                              answering keepalives meanwhile, with a
                              digest that makes the broker send its
                              view; prints fences sent and incarnations
                              seen
  live:RANK:INC               a VIEW record "RANK alive as INC" signed
                              with the --seed key (valid only for the
                              seed's own rank)
  garbage:N                   N messages with broken envelopes
  withhold:SECONDS            stay live for a while (answer keepalives,
                              send our own) and pass nothing on: every
                              EVENT and EVCTL (and all else) is dropped,
                              as a tree parent that starves its subtree;
                              prints how many EVENT and EVCTL it dropped
  silent:SECONDS              say nothing for a while (stay connected)
  wait:SECONDS                read and drop for a while

Exit status 0 unless the socket could not be set up.
"""
import ctypes
import ctypes.util
import json
import os
import re
import struct
import sys
import time

import zmq

ENV_FMT = "!BBBBBBHIIQQ"   # magic ver kind ttl hops flags rsvd src dst inc inc
# keep in step with ENV_VERSION in src/modules/overlay/envelope.h
ENV_MAGIC, ENV_VERSION = 0xb6, 3
KINDS = {1: "DATA", 2: "HELLO", 3: "HELLO_ACK", 4: "HELLO_NAK",
         5: "KEEPALIVE", 6: "GOODBYE", 7: "REPORT", 8: "BATCH", 9: "EVENT",
         10: "EVCTL", 11: "LINK", 12: "VIEW"}
KIND = {v: k for k, v in KINDS.items()}
MSG_MAGIC = 0x8e
REQUEST, RESPONSE, EVENT = 1, 2, 4
F_TOPIC, F_PAYLOAD, F_ROUTE = 1, 2, 8
NODEID_ANY = 0xffffffff


def envelope(kind, src, dst, sinc, rinc, ttl=16, flags=0,
             version=ENV_VERSION):
    return struct.pack(ENV_FMT, ENV_MAGIC, version, KIND[kind], ttl, 0,
                       flags, 0, src, dst, sinc, rinc)


def pack(env, frames):
    """Version 3's one frame: the envelope, a u32 count, then each frame
    as a u32 length and its bytes (network order)."""
    out = [env, struct.pack("!I", len(frames))]
    for f in frames:
        out += [struct.pack("!I", len(f)), f]
    return b"".join(out)


def unpack(frame):
    """The envelope and frame list of a version-3 frame, or None."""
    if len(frame) < 36:
        return None
    count, pos, frames = struct.unpack_from("!I", frame, 32)[0], 36, []
    for _ in range(count):
        if pos + 4 > len(frame):
            return None
        size = struct.unpack_from("!I", frame, pos)[0]
        pos += 4
        if pos + size > len(frame):
            return None
        frames.append(frame[pos:pos + size])
        pos += size
    return (frame[:32], frames) if pos == len(frame) else None


def decode_env(frame):
    if len(frame) != 32:
        return None
    f = struct.unpack(ENV_FMT, frame)
    return {"kind": KINDS.get(f[2], str(f[2])), "src": f[7], "dst": f[8],
            "sinc": f[9], "rinc": f[10], "version": f[1], "flags": f[5]}


def broker_msg(mtype, topic, payload, route, roles=0, aux1=0, aux2=1):
    """Frames of a Flux-style broker message (src/common/libmsg)."""
    flags, frames = F_TOPIC, []
    if route is not None:
        flags |= F_ROUTE
        frames += [r.encode() for r in route] + [b""]
    frames.append(topic.encode())
    if payload is not None:
        flags |= F_PAYLOAD
        frames.append(payload.encode())
    frames.append(struct.pack("!BBBBIIII", MSG_MAGIC, 1, mtype, flags, 0,
                              roles, aux1, aux2))
    return frames


def load_cert(path):
    keys = {}
    for name in (path, path + "_secret"):
        with open(name) as f:
            for m in re.finditer(r'(public|secret)-key\s*=\s*"([^"]{40})"',
                                 f.read()):
                keys[m.group(1)] = m.group(2)
    return keys["public"].encode(), keys["secret"].encode()


class Signer:
    """Ed25519 with the system's libsodium (ctypes: no Python package)."""

    def __init__(self, seed_path):
        name = ctypes.util.find_library("sodium") or "libsodium.so.23"
        self.lib = ctypes.CDLL(name)
        if self.lib.sodium_init() < 0:
            raise SystemExit("rogue: libsodium did not start")
        with open(seed_path, "rb") as f:
            seed = f.read(32)
        self.pk = ctypes.create_string_buffer(32)
        self.sk = ctypes.create_string_buffer(64)
        self.lib.crypto_sign_seed_keypair(self.pk, self.sk, seed)

    def sign(self, data):
        sig = ctypes.create_string_buffer(64)
        self.lib.crypto_sign_detached(sig, None, data,
                                      ctypes.c_ulonglong(len(data)), self.sk)
        return sig.raw


class Rogue:
    def __init__(self, endpoint, server_key, cert, ident,
                 version=ENV_VERSION):
        self.version = version
        self.ctx = zmq.Context()
        self.sock = self.ctx.socket(zmq.DEALER)
        self.sock.setsockopt(zmq.LINGER, 0)
        # a broker that went away must not hang the rogue (and the test)
        self.sock.setsockopt(zmq.SNDTIMEO, 3000)
        if ident:
            self.sock.setsockopt(zmq.ROUTING_ID, ident.encode())
        if server_key:
            pub, sec = load_cert(cert) if cert else zmq.curve_keypair()
            self.sock.curve_publickey = pub
            self.sock.curve_secretkey = sec
            self.sock.curve_serverkey = server_key.encode()
        self.sock.connect(endpoint)
        self.rank, self.inc, self.peer_inc, self.peer = 0, 1, 0, 0
        self.claim = None   # source:RANK
        self.signer = None  # --seed
        self.signing, self.skew = False, 0.0
        self.instance, self.last = "", None

    def send(self, env, body=()):
        if self.version == 2:
            env = env[:1] + bytes([2]) + env[2:]
            self.sock.send_multipart([env] + list(body))
        else:
            self.sock.send(pack(env, list(body)))

    def recv(self, timeout, want=None):
        """Messages until timeout; the first whose kind is in want."""
        deadline = time.monotonic() + timeout
        while True:
            left = deadline - time.monotonic()
            if left <= 0 or not self.sock.poll(int(left * 1000)):
                return None
            parts = self.sock.recv_multipart()
            got = unpack(parts[0]) if len(parts) == 1 else None
            if got:
                parts = [got[0]] + got[1]
            env = decode_env(parts[0]) if parts else None
            if env and (want is None or env["kind"] in want):
                return env, parts[1:]

    def hello(self, rank, instance, inc=None, seq=None):
        self.rank = int(rank)
        self.inc = int(inc) if inc else int(time.time() * 1e6)
        self.instance = instance
        hello = {"version": self.version, "rank": self.rank,
                 "instance": instance, "incarnation": self.inc,
                 "hostname": "rogue", "topology": "bgn"}
        if seq:
            hello["seq"] = int(seq)
        if self.signer:
            hello["live"] = self.live_sig(self.rank, self.inc).hex()
        body = json.dumps(hello)
        self.send(envelope("HELLO", self.rank, 0, self.inc, 0),
                  [body.encode()])
        got = self.recv(3, ("HELLO_ACK", "HELLO_NAK"))
        if not got:
            return "-"
        env, body = got
        if env["kind"] == "HELLO_ACK":
            self.peer_inc = env["sinc"]
            self.peer = env["src"]
            return "HELLO_ACK"
        reason = json.loads(body[0]).get("reason", "?") if body else "?"
        return "HELLO_NAK " + reason

    def live_sig(self, rank, inc):
        text = "bgn-live %s %d %d" % (self.instance, int(rank), int(inc))
        return self.signer.sign(text.encode())

    def data(self, dest, frames, sign=False):
        if not (sign and self.signing and self.signer):
            env = envelope("DATA", self.origin(), dest, self.inc,
                           self.peer_inc)
            self.last = pack(env, frames) if self.version != 2 else None
            self.send(env, frames)
            return
        # signed end to end (ovsign.h): time, nonce, then the signature of
        # "bgn-req INSTANCE ORIGIN DEST " + time + nonce + packed frames
        env = envelope("DATA", self.origin(), dest, self.inc, self.peer_inc,
                       flags=0x10)
        packed = pack(env, frames)[32:]
        stamp = struct.pack("!QQ", int((time.time() + self.skew) * 1e6),
                            int.from_bytes(os.urandom(8), "big"))
        head = "bgn-req %s %d %d " % (self.instance, self.origin(), dest)
        sig = self.signer.sign(head.encode() + stamp + packed)
        self.last = env + packed + stamp + sig
        self.sock.send(self.last)

    def again(self):
        if self.last is None:
            return "nothing to send again"
        self.sock.send(self.last)
        got = self.recv(5, ("DATA",))
        if not got:
            return "-"
        return "errnum=%d" % struct.unpack("!BBBBIIII", got[1][-1])[6]

    def live(self, rank, inc):
        """A VIEW record "RANK alive as INC", signed with our key."""
        reason = b"rogue"
        body = (struct.pack("!BIH", 1, 0, 1) + bytes([len(reason)]) + reason
                + struct.pack("!IIQBB", 1, int(rank), int(inc), 2, 1)
                + self.live_sig(rank, inc))
        self.send(envelope("VIEW", self.rank, self.peer, self.inc,
                           self.peer_inc), [body])
        return "sent"


    def origin(self):
        return self.rank if self.claim is None else self.claim

    def request(self, topic, nodeid, roles, payload=None):
        nodeid = NODEID_ANY if nodeid == "any" else int(nodeid)
        self.data(nodeid if nodeid != NODEID_ANY else NODEID_ANY,
                  broker_msg(REQUEST, topic, payload, [str(self.origin())],
                             int(roles, 0), aux1=nodeid), sign=True)
        got = self.recv(5, ("DATA",))
        if not got:
            return "-"
        proto = got[1][-1]
        errnum = struct.unpack("!BBBBIIII", proto)[6]
        return "errnum=%d" % errnum

    def response(self, topic, dest, payload=None):
        self.data(int(dest), broker_msg(RESPONSE, topic, payload,
                                        [str(dest)]))
        return "sent"

    def flood(self, fenced, rank, inc):
        """One fence record (doc/overlay-protocol.md 3.4) in a VIEW, the
        kind any admitted peer may send: version 1, root 0, one reason,
        one record."""
        reason = b"rogue"
        body = (struct.pack("!BIH", 1, 0, 1) + bytes([len(reason)]) + reason
                + struct.pack("!IIQBB", 1, int(rank), int(inc),
                              1 if fenced else 0, 0))
        self.send(envelope("VIEW", self.rank, self.peer, self.inc,
                           self.peer_inc), [body])
        return "sent"

    @staticmethod
    def records(body):
        """(rank, inc, fenced) of a fence frame (fencemsg.h), [] if bad."""
        try:
            nreasons, off = struct.unpack_from("!H", body, 5)[0], 7
            for _ in range(nreasons):
                off += 1 + body[off]
            n, off, out = struct.unpack_from("!I", body, off)[0], off + 4, []
            for _ in range(n):
                rank, inc, flags = struct.unpack_from("!IQB", body, off)
                out.append((rank, inc, flags == 1))
                off += 14 + (64 if flags == 2 else 0)
            return out
        except (struct.error, IndexError):
            return []

    def flap(self, rank, secs, lo, hi):
        """Fence RANK again and again at the incarnation it was last seen
        live with, as issue 42's rogue did."""
        import random
        rank, end = int(rank), time.monotonic() + float(secs)
        inc, seen, sent, due = 0, set(), 0, time.monotonic()
        while time.monotonic() < end:
            got = self.recv(min(0.05, max(0.001, due - time.monotonic())))
            if got:
                env, body = got
                if env["kind"] == "KEEPALIVE":
                    # an echo, with a digest unlike the broker's: it
                    # sends its whole view after two of them
                    self.send(envelope("KEEPALIVE", self.rank, self.peer,
                                       self.inc, self.peer_inc, flags=1),
                              [os.urandom(8)])
                elif env["kind"] in ("VIEW", "BATCH", "REPORT") and body:
                    for r, i, fenced in self.records(body[0]):
                        if r == rank and not fenced and i > inc:
                            inc = i
                            seen.add(i)
            if inc and time.monotonic() >= due:
                self.flood(True, rank, inc)
                sent += 1
                due = time.monotonic() + random.uniform(float(lo), float(hi))
        return "fenced %d times, %d incarnations seen" % (sent, len(seen))

    def nak(self, inc):
        """A refusal nobody asked for: "your incarnation INC is fenced"."""
        body = json.dumps({"reason": "fenced: rejoin with a new incarnation",
                           "incarnation": int(inc)})
        self.send(envelope("HELLO_NAK", self.rank, self.peer, self.inc,
                           self.peer_inc), [body.encode()])
        return "sent"

    def event(self, seq):
        ev = broker_msg(EVENT, "rogue.event", "{}", None, 0, aux1=int(seq),
                        aux2=self.rank)
        self.send(envelope("EVENT", self.rank, self.peer, self.inc,
                           self.peer_inc), ev)
        return "sent"

    def evbatch(self, src, first, n):
        first, n = int(first), int(n)
        recs = b""
        for i in range(n):
            topic = ("forged.%d" % i).encode()
            payload = b"{}"
            recs += struct.pack("!IIIIIBBH", first + i, 0, 1, int(src),
                                len(payload), 0, len(topic), 0)
            recs += topic + payload
        batch = struct.pack("!BBHIIIQ", 0xeb, 1, n, first, first + n - 1, 0,
                            0) + recs
        self.send(envelope("EVENT", int(src), self.peer, self.inc,
                           self.peer_inc), [batch])
        return "sent"

    def sigflood(self, src, first, rate, secs):
        """The same signature on every batch: made once, so the flood
        costs the rogue nothing and each check costs the victim."""
        first, rate, secs = int(first), float(rate), float(secs)
        topic, payload = b"flood", b"{}"
        rec = struct.pack("!IIIIIBBH", first, 0, 1, int(src), len(payload),
                          0, len(topic), 0) + topic + payload
        # well-formed: a real Ed25519 signature (of something else), so
        # the victim's check runs to the end instead of refusing a
        # malformed one at once
        if self.signer:
            sig = self.signer.sign(b"bgn-rogue flood")
        else:
            sig = bytearray(os.urandom(64))
            sig[63] &= 0x0f     # S below 2^252: canonical, most likely
            sig = bytes(sig)
        batch = (struct.pack("!BBHIIIQ", 0xeb, 1, 1, first, first, 1, 0)
                 + rec + sig)
        frame = pack(envelope("EVENT", int(src), self.peer, self.inc,
                              self.peer_inc), [batch])
        sent, start = 0, time.monotonic()
        while True:
            now = time.monotonic() - start
            if now >= secs:
                break
            due = int(now * rate) + 1
            while sent < due:
                self.sock.send(frame)
                sent += 1
            time.sleep(0.002)
        return "sent %d" % sent

    def evsync(self, src, seq, gone):
        body = json.dumps({"k": 1, "seq": int(seq), "gone": int(gone),
                           "base": 0})
        self.send(envelope("EVCTL", int(src), self.peer, self.inc,
                           self.peer_inc), [body.encode()])
        return "sent"

    def evctl(self, src, dest, body):
        self.send(envelope("EVCTL", int(src), int(dest), self.inc,
                           self.peer_inc), [body.encode()])
        return "sent"

    def keepalive(self, echo, digest):
        self.send(envelope("KEEPALIVE", self.rank, self.peer, self.inc,
                           self.peer_inc, ttl=1, flags=echo), [digest])

    def withhold(self, secs):
        """Live but useless: keepalives answered (with the broker's own
        view digest, so that our views seem to agree) and sent every
        0.2 s; everything else read and dropped."""
        end = time.monotonic() + float(secs)
        digest, dropped, next_ka = b"\0" * 8, {"EVENT": 0, "EVCTL": 0}, 0.0
        while True:
            now = time.monotonic()
            if now >= end:
                break
            if now >= next_ka:
                self.keepalive(0, digest)
                next_ka = now + 0.2
            got = self.recv(min(0.05, end - now))
            if not got:
                continue
            env, body = got
            if env["kind"] == "KEEPALIVE" and body and len(body[0]) == 8:
                digest = bytes(body[0])
                if env["flags"] == 0:
                    self.keepalive(1, digest)
            elif env["kind"] in dropped:
                dropped[env["kind"]] += 1
        return "dropped %d EVENT %d EVCTL" % (dropped["EVENT"],
                                              dropped["EVCTL"])

    def garbage(self, n):
        for i in range(int(n)):
            self.sock.send_multipart([b"\x11" * (i % 40), b"junk"])
        return "sent %s" % n

    def run(self, step):
        name, _, rest = step.partition(":")
        # the last field may be JSON with colons of its own
        nfields = {"request": 4, "response": 3, "evctl": 3}.get(name, 3)
        args = rest.split(":", nfields - 1) if rest else []
        if name == "hello":
            return self.hello(*rest.split(":"))
        if name == "request":
            topic, nodeid, roles = args[:3]
            return self.request(topic, nodeid, roles,
                                args[3] if len(args) > 3 else None)
        if name == "response":
            return self.response(args[0], args[1],
                                 args[2] if len(args) > 2 else None)
        if name in ("fence", "unfence"):
            return self.flood(name == "fence", args[0], args[1])
        if name == "nak":
            return self.nak(args[0])
        if name == "event":
            return self.event(args[0])
        if name == "evbatch":
            return self.evbatch(*rest.split(":"))
        if name == "sigflood":
            return self.sigflood(*rest.split(":"))
        if name == "evsync":
            return self.evsync(*rest.split(":"))
        if name == "evctl":
            return self.evctl(*args)
        if name == "signed":
            self.signing = True
            self.skew = float(args[0]) if args else 0.0
            return "signing" if self.signer else "no --seed: not signing"
        if name == "again":
            return self.again()
        if name == "live":
            return self.live(args[0], args[1])
        if name == "flap":
            return self.flap(*rest.split(":"))
        if name == "source":
            self.claim = int(args[0])
            return "as %d" % self.claim
        if name == "garbage":
            return self.garbage(args[0])
        if name == "withhold":
            return self.withhold(args[0])
        if name == "silent":
            time.sleep(float(args[0]))
            return "slept"
        if name == "wait":
            self.recv(float(args[0]), ("nothing",))
            return "waited"
        raise SystemExit("rogue: unknown step " + step)


def main(argv):
    endpoint, server_key, cert, ident, steps = None, None, None, None, []
    seed = None
    version = ENV_VERSION
    it = iter(argv)
    for a in it:
        if a == "--server-key":
            server_key = next(it)
        elif a == "--cert":
            cert = next(it)
        elif a == "--id":
            ident = next(it)
        elif a == "--seed":
            seed = next(it)
        elif a == "--version":
            version = int(next(it))
        elif endpoint is None:
            endpoint = a
        else:
            steps.append(a)
    if not endpoint:
        print(__doc__, file=sys.stderr)
        return 1
    r = Rogue(endpoint, server_key, cert, ident, version)
    if seed:
        r.signer = Signer(seed)
    for step in steps:
        try:
            got = r.run(step)
        except zmq.Again:
            got = "broker gone"
        print("%s -> %s" % (step.split(":", 1)[0], got), flush=True)
    r.sock.close()
    r.ctx.term()
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
