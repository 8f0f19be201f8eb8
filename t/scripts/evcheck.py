#!/usr/bin/env python3
# SPDX-License-Identifier: LGPL-3.0-or-later
"""evcheck.py: check what `bgn event sub` (plain output) printed on brokers.

Each FILE holds one subscriber's lines:
    seq=12 topic=storm.x from=3 {"p":3,"i":7}
    lost events 13..20 (no broker still had them)

Checks, for every file: seqs strictly increase; a seq follows the one
before it, or a lost notice covers exactly the gap; with --start S the
first seq (or lost range) is S; with --no-lost there is no lost notice;
with --count TOPIC=N exactly N events of TOPIC.  Across files: one seq is
one event everywhere (same topic, publisher and payload), one event
(topic and payload, which the tests make unique) has one seq everywhere,
and with --same-last every file ends at the same seq.  Prints one line
per problem and exits 1 if there is any.
"""
import argparse
import re
import sys

EVENT = re.compile(r'^seq=(\d+) topic=(\S+) from=(\d+) (.*)$')
LOST = re.compile(r'^lost events (\d+)\.\.(\d+) ')


def read(path, args, problems):
    events = {}
    counts = {}
    expect = None
    first = None
    last = None
    with open(path) as f:
        for n, line in enumerate(f, 1):
            line = line.rstrip('\n')
            m = EVENT.match(line)
            lost = LOST.match(line)
            if m:
                lo = hi = int(m.group(1))
            elif lost:
                lo, hi = int(lost.group(1)), int(lost.group(2))
                if args.no_lost:
                    problems.append(f'{path}:{n}: {line}')
            else:
                problems.append(f'{path}:{n}: not an event line: {line!r}')
                continue
            if first is None:
                first = lo
                if args.start is not None and lo != args.start:
                    problems.append(f'{path}: starts at {lo}, '
                                    f'not {args.start}')
            elif lo != expect:
                what = 'duplicate or out of order' if lo < expect else 'gap'
                problems.append(f'{path}:{n}: seq {lo} after {expect - 1} '
                                f'({what})')
            expect = hi + 1
            last = hi
            if m:
                key = (m.group(2), m.group(3), m.group(4))
                events[lo] = key
                counts[m.group(2)] = counts.get(m.group(2), 0) + 1
    return events, counts, last


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument('--start', type=int)
    ap.add_argument('--no-lost', action='store_true')
    ap.add_argument('--same-last', action='store_true')
    ap.add_argument('--count', action='append', default=[],
                    metavar='TOPIC=N')
    ap.add_argument('files', nargs='+')
    args = ap.parse_args()
    problems = []
    by_seq = {}
    by_event = {}
    lasts = {}
    for path in args.files:
        events, counts, last = read(path, args, problems)
        lasts[path] = last
        for spec in args.count:
            topic, want = spec.split('=')
            if counts.get(topic, 0) != int(want):
                problems.append(f'{path}: {counts.get(topic, 0)} {topic} '
                                f'events, want {want}')
        for seq, key in events.items():
            other = by_seq.setdefault(seq, (key, path))
            if other[0] != key:
                problems.append(f'seq {seq} is {key} in {path} but '
                                f'{other[0]} in {other[1]}')
            ev = (key[0], key[2])
            prev = by_event.setdefault(ev, (seq, path))
            if prev[0] != seq:
                problems.append(f'{ev} is seq {seq} in {path} but seq '
                                f'{prev[0]} in {prev[1]}')
    if args.same_last and len(set(lasts.values())) > 1:
        problems.append('files end at different seqs: ' +
                        ', '.join(f'{p}={s}' for p, s in lasts.items()))
    for p in problems[:20]:
        print(p)
    if len(problems) > 20:
        print(f'... {len(problems) - 20} more')
    n = sum(len(v) for v in [by_seq])
    if not problems:
        print(f'{len(args.files)} files agree on {n} seqs')
    return 1 if problems else 0


if __name__ == '__main__':
    sys.exit(main())
