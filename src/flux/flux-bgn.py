# SPDX-License-Identifier: LGPL-3.0-or-later
##############################################################
# flux-bgn: bgn's binomial-graph overlay, beside Flux's TBON.
#
# A flux subcommand (flux bgn ...).  Every request goes to the local
# broker's bgn module; requests for another rank travel over the BGN
# (bgn.rpc), not over the TBON, so they reach brokers the TBON has cut
# off.  Every request has a deadline (-t, 10 s by default).
##############################################################

import argparse
import errno
import json
import os
import signal
import sys
import time

import flux
import flux.hostlist
from flux.idset import IDset


def die(msg, code=1):
    print(f"flux-bgn: {msg}", file=sys.stderr)
    sys.exit(code)


def target_rank(h, arg):
    """A rank, or the name of the host its broker runs on."""
    size = int(h.attr_get("size"))
    try:
        rank = int(arg)
    except ValueError:
        hosts = flux.hostlist.Hostlist(h.attr_get("hostlist"))
        matches = [i for i in range(len(hosts)) if hosts[i] == arg]
        if not matches:
            die(f"{arg}: not a rank or a host of this instance")
        rank = matches[0]
    if rank < 0 or rank >= size:
        die(f"{arg}: no such rank (size {size})")
    return rank


def call(h, rank, topic, payload, timeout, streaming=False):
    """One request to rank's broker over the BGN (locally for our rank)."""
    flags = flux.constants.FLUX_RPC_STREAMING if streaming else 0
    here = h.get_rank()
    if rank is None or rank == here:
        return h.rpc(topic, payload, flags=flags)
    inner = {"rank": rank, "topic": topic, "payload": payload}
    return h.rpc("bgn.rpc", inner, flags=flags)


def get(fut, timeout):
    try:
        return fut.wait_for(timeout).get()
    except OSError as e:
        if e.errno == errno.ETIMEDOUT:
            die(f"no answer within {timeout:g}s")
        die(e.strerror or str(e))


def flux_lost(h):
    """Ranks Flux's TBON no longer has online (None if unknown)."""
    try:
        rsp = h.rpc("groups.get", {"name": "broker.online"}, 0).wait_for(3).get()
        online = IDset(rsp["members"])
    except OSError:
        return None
    size = int(h.attr_get("size"))
    return [r for r in range(size) if not online.test(r)]


def bgn_is_overlay(h):
    """True where bgn is the broker's overlay (a patched flux-broker)."""
    try:
        return bool(h.attr_get("broker.overlay-module"))
    except OSError:
        return False


def hostname(h, rank):
    try:
        hosts = flux.hostlist.Hostlist(h.attr_get("hostlist"))
        return hosts[rank]
    except Exception:
        return "?"


def idset_str(ranks):
    return str(IDset(",".join(str(r) for r in ranks))) if ranks else "none"


def cmd_overlay_status(h, args):
    deadline = time.monotonic() + args.timeout
    rank = target_rank(h, args.rank) if args.rank is not None else None
    while True:
        st = get(call(h, rank, "bgn.status", {}, args.timeout), args.timeout)
        if not args.wait or st.get("state") == args.wait:
            break
        if time.monotonic() >= deadline:
            die(f"state is {st.get('state')}, not {args.wait}, after {args.timeout:g}s")
        time.sleep(0.1)
    down = st.get("down_ranks", [])
    down_ranks = [d["rank"] if isinstance(d, dict) else d for d in down]
    lost = flux_lost(h)
    cutoff = [r for r in lost if r not in down_ranks] if lost is not None else None
    if args.json:
        st["flux_lost"] = lost
        st["cut_off_from_tbon"] = cutoff
        print(json.dumps(st))
        return
    print(
        f"bgn {st.get('state')}: size {st.get('size')}, topology "
        f"{st.get('topology')}, diameter {st.get('diameter')} (rank "
        f"{st.get('rank')}, {hostname(h, st.get('rank', 0))})"
    )
    hosts = ",".join(hostname(h, r) for r in down_ranks)
    print(f"down: {idset_str(down_ranks)}" + (f" ({hosts})" if down_ranks else ""))
    if lost is not None and bgn_is_overlay(h):
        # no TBON here: Flux's view is bgn's own, told through overlay.*
        print(f"offline to Flux: {idset_str(lost)}")
    elif lost is not None:
        print(f"lost to Flux's TBON: {idset_str(lost)}")
        print(f"cut off from the TBON, reached over the BGN: {idset_str(cutoff)}")
    peers = st.get("peers", [])
    print(f"{len(peers)} peers:")
    print(f"  {'RANK':>6} {'HOST':<12} {'STATE':<10} {'RTT':>9} {'TX':>8} {'RX':>8}")
    for p in peers:
        rtt = p.get("rtt_us")
        rtt = f"{rtt / 1000:.2f}ms" if rtt else "-"
        print(
            f"  {p['rank']:>6} {p.get('hostname', '?'):<12} {p['state']:<10} "
            f"{rtt:>9} {p.get('tx_msgs', 0):>8} {p.get('rx_msgs', 0):>8}"
        )


def cmd_ping(h, args):
    rank = target_rank(h, args.target)
    sent = received = 0
    times = []
    for i in range(args.count):
        t0 = time.monotonic()
        sent += 1
        try:
            rsp = call(h, rank, "bgn.ping", {"seq": i}, args.timeout)
            rsp = rsp.wait_for(args.timeout).get()
        except OSError as e:
            print(f"rank {rank}: {e.strerror}", file=sys.stderr)
            continue
        ms = (time.monotonic() - t0) * 1000
        received += 1
        times.append(ms)
        print(f"reply from rank {rank} ({hostname(h, rank)}): seq={i} "
              f"hops={rsp.get('hops', 0)} time={ms:.3f} ms")
        if i + 1 < args.count:
            time.sleep(args.interval)
    if received < sent:
        die(f"{sent - received} of {sent} pings to rank {rank} unanswered")


def stream(fut, timeout):
    """The answers of a streaming request, each within timeout, until
    the service ends the stream (ENODATA)."""
    while True:
        try:
            rsp = fut.wait_for(timeout).get_str()
        except OSError as e:
            if e.errno == errno.ENODATA:
                return
            if e.errno == errno.ETIMEDOUT:
                die(f"no answer within {timeout:g}s")
            die(e.strerror or str(e))
        yield rsp
        fut.reset()


def json_object_arg(text):
    """A JSON object given on the command line ({} if none)."""
    if not text:
        return {}
    try:
        payload = json.loads(text)
    except ValueError as e:
        die(f"payload is not JSON: {e}")
    if not isinstance(payload, dict):
        die("payload must be a JSON object")
    return payload


def cmd_rpc(h, args):
    payload = json_object_arg(args.payload)
    rank = target_rank(h, args.rank) if args.rank is not None else None
    fut = call(h, rank, args.topic, payload, args.timeout, args.streaming)
    if not args.streaming:
        print(json.dumps(get(fut, args.timeout)))
        return
    for rsp in stream(fut, args.timeout):
        print(rsp)


def cmd_dmesg(h, args):
    rank = target_rank(h, args.rank) if args.rank is not None else None
    fut = call(h, rank, "log.dmesg", {"follow": False, "nobacklog": False},
               args.timeout, streaming=True)
    for line in stream(fut, args.timeout):
        print(line.rstrip("\n"))


# What a Flux handle's pending stream fails with when its connection to
# the broker ends (the broker exited, was killed or restarted).
BROKER_GONE = (errno.ECONNRESET, errno.EPIPE, errno.ENOTCONN)


def cmd_event(h, args):
    if args.action == "pub":
        if not args.args or len(args.args) > 2:
            die("usage: flux bgn event pub TOPIC [JSON]")
        payload = json_object_arg(args.args[1] if len(args.args) > 1 else None)
        rsp = get(h.rpc("bgn.event-pub", {"topic": args.args[0],
                                          "payload": payload}), args.timeout)
        print(rsp.get("seq", ""))
        return
    fut = h.rpc("bgn.event-sub", {"topics": args.args},
                flags=flux.constants.FLUX_RPC_STREAMING)
    n = 0
    while args.count == 0 or n < args.count:
        try:
            ev = fut.wait_for(args.timeout if args.timeout > 0 else -1).get()
        except OSError as e:
            if e.errno == errno.ETIMEDOUT:
                die(f"no event within {args.timeout:g}s ({n} received)")
            if e.errno in BROKER_GONE:
                die(f"broker at {os.environ.get('FLUX_URI', 'its URI')} "
                    f"went away after {n} events")
            die(e.strerror or str(e))
        fut.reset()
        if ev["topic"] == "event.lost":
            print(f"{ev['seq']} event.lost {ev.get('payload', '')}", flush=True)
        elif args.json:
            print(json.dumps(ev), flush=True)
        else:
            print(f"{ev['seq']} {ev['topic']} {ev.get('payload', '')}", flush=True)
        n += 1


def main():
    p = argparse.ArgumentParser(
        prog="flux bgn",
        description="bgn's binomial-graph overlay beside Flux's TBON: "
        "status, and requests carried over the BGN to any live broker",
    )
    common = argparse.ArgumentParser(add_help=False)
    common.add_argument("-t", "--timeout", type=float, default=10.0,
                        help="seconds to wait for an answer (default 10)")
    sub = p.add_subparsers(dest="cmd", required=True)

    s = sub.add_parser("overlay-status", parents=[common], help="the BGN as a broker sees it")
    s.add_argument("-r", "--rank", help="ask this rank's (or host's) module")
    s.add_argument("--json", action="store_true", help="print JSON")
    s.add_argument("--wait", metavar="STATE", help="wait until STATE (e.g. full)")
    s.set_defaults(fn=cmd_overlay_status)

    s = sub.add_parser("ping", parents=[common], help="ping a rank or host over the BGN")
    s.add_argument("target", metavar="RANK|HOST")
    s.add_argument("-c", "--count", type=int, default=1,
                   help="send N pings (default 1)")
    s.add_argument("-i", "--interval", type=float, default=0.2,
                   help="seconds between pings (default 0.2)")
    s.set_defaults(fn=cmd_ping)

    s = sub.add_parser("rpc", parents=[common], help="any request to a rank's broker, over the BGN")
    s.add_argument("-r", "--rank", help="rank or host (default: this broker)")
    s.add_argument("-s", "--streaming", action="store_true",
                   help="a streaming request: print answers until ENODATA")
    s.add_argument("topic")
    s.add_argument("payload", nargs="?", help="a JSON object")
    s.set_defaults(fn=cmd_rpc)

    s = sub.add_parser("event", help="bgn's sequenced events: pub or sub")
    evsub = s.add_subparsers(dest="action", required=True)
    e = evsub.add_parser("pub", parents=[common], help="publish one event")
    e.add_argument("args", nargs="+", metavar="TOPIC [JSON]")
    e.set_defaults(fn=cmd_event)
    e = evsub.add_parser("sub", parents=[common],
                         help="print events whose topic starts with PREFIX "
                         "(-t: seconds to wait for each event, 0 for ever)")
    e.add_argument("args", nargs="*", metavar="PREFIX")
    e.add_argument("-c", "--count", type=int, default=0,
                   help="stop after N events")
    e.add_argument("--json", action="store_true", help="print JSON")
    e.set_defaults(fn=cmd_event)

    s = sub.add_parser("dmesg", parents=[common], help="a broker's log ring, over the BGN")
    s.add_argument("-r", "--rank", help="rank or host (default: this broker)")
    s.set_defaults(fn=cmd_dmesg)

    args = p.parse_args()
    signal.signal(signal.SIGPIPE, signal.SIG_DFL)  # flux bgn ... | head
    try:
        h = flux.Flux()
    except OSError as e:
        die(f"cannot reach a Flux broker: {e.strerror or e} (run it inside "
            "an instance: flux start, flux alloc, or set FLUX_URI)")
    try:
        args.fn(h, args)
    except OSError as e:
        die(e.strerror or str(e))
    except KeyboardInterrupt:
        sys.exit(130)


if __name__ == "__main__":
    main()
