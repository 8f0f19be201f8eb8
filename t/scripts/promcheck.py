#!/usr/bin/env python3
# SPDX-License-Identifier: LGPL-3.0-or-later
"""promcheck.py FILE: check FILE is valid Prometheus text exposition
format (version 0.0.4) as node_exporter's textfile collector reads it,
then print every sample on one line, labels sorted:

    name{a="1",b="2"} value      (or "name value" without labels)

Checks: metric and label names, quoted label values with only \\\\, \\"
and \\n escapes, a float value, # HELP and # TYPE (counter or gauge)
before a family's samples, each family in one block, counters named
*_total, no sample twice.  Exit 1 with a message naming the line."""
import re
import sys

NAME = r'[a-zA-Z_:][a-zA-Z0-9_:]*'
LABEL = r'[a-zA-Z_][a-zA-Z0-9_]*'
VALUE = r'"(?:[^"\\\n]|\\[\\"n])*"'
SAMPLE = re.compile(r'^(%s)(?:\{((?:%s=%s)(?:,%s=%s)*)?\})? (\S+)$'
                    % (NAME, LABEL, VALUE, LABEL, VALUE))
PAIR = re.compile(r'(%s)=(%s)' % (LABEL, VALUE))


def fail(n, line, why):
    sys.exit("promcheck: line %d: %s: %r" % (n, why, line))


def main():
    types, helps, done, seen = {}, set(), set(), set()
    current = None
    out = []
    for n, line in enumerate(open(sys.argv[1]), 1):
        line = line.rstrip('\n')
        if not line:
            continue
        if line.startswith('#'):
            m = re.match(r'^# (HELP|TYPE) (%s) (.+)$' % NAME, line)
            if not m:
                fail(n, line, "a comment that is not HELP or TYPE")
            kind, name, rest = m.groups()
            if name in done:
                fail(n, line, "family %s appears twice" % name)
            if current and current != name:
                done.add(current)
            current = name
            if kind == 'TYPE':
                if rest not in ('counter', 'gauge'):
                    fail(n, line, "type is not counter or gauge")
                if rest == 'counter' and not name.endswith('_total'):
                    fail(n, line, "a counter not named *_total")
                types[name] = rest
            else:
                helps.add(name)
            continue
        m = SAMPLE.match(line)
        if not m:
            fail(n, line, "not a sample")
        name, labels, value = m.groups()
        if name not in types or name not in helps:
            fail(n, line, "sample before its HELP and TYPE")
        if name != current:
            fail(n, line, "sample outside its family's block")
        try:
            float(value)
        except ValueError:
            fail(n, line, "value is not a number")
        pairs = sorted(PAIR.findall(labels or ''))
        key = (name, tuple(pairs))
        if key in seen:
            fail(n, line, "the same sample twice")
        seen.add(key)
        if pairs:
            name += '{%s}' % ','.join('%s=%s' % p for p in pairs)
        out.append('%s %s' % (name, value))
    if not out:
        sys.exit("promcheck: no samples")
    print('\n'.join(out))


main()
