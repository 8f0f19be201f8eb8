#!/usr/bin/env python3
# SPDX-License-Identifier: LGPL-3.0-or-later
"""mandefaults.py MANPAGE DEFAULTS.json: the defaults bgn.toml(5) states
agree with what the code applies ('bgn config dump --defaults').

Every key is documented in its table's section as
    .BR key " (TYPE, default VALUE)"
or  .BR key " (TYPE, default " \\(dqVALUE\\(dq )
Each documented default must equal the code's, every key the code has
must be documented, and "default absent" keys must be absent.  Prints
one line per key checked; exit 1 on the first disagreement."""
import json
import re
import sys


def unescape(s):
    return s.replace('\\(dq', '"').replace('\\-', '-').replace('\\e', '\\')


def main():
    man = open(sys.argv[1]).read().split('\n')
    code = json.load(open(sys.argv[2]))
    table = None
    documented = {}
    for line in man:
        m = re.match(r'^\.SH "\[(\w+)\] TABLE"', line)
        if m:
            table = m.group(1)
            continue
        if line.startswith('.SH'):
            table = None
        m = re.match(r'^\.BR (\w+) " \((\w[\w ]*), default (.*)$', line)
        if not m or not table:
            continue
        key, kind, rest = m.groups()
        rest = unescape(rest)
        q = re.match(r'^" "(.*)" \)$', rest)
        if q:
            value = q.group(1)
        else:
            value = rest.rstrip(')"').strip()
        documented['%s.%s' % (table, key)] = (kind, value)
    errors = 0
    for tname, t in code.items():
        for key, v in t.items():
            name = '%s.%s' % (tname, key)
            if name not in documented:
                print('not documented: %s (default %r)' % (name, v))
                errors += 1
                continue
            kind, doc = documented.pop(name)
            if isinstance(v, bool):
                want = 'true' if v else 'false'
            elif isinstance(v, int):
                want = str(v)
            elif isinstance(v, (list, dict)):
                want = json.dumps(v)
            else:
                want = v
            if doc != want:
                print('disagree: %s: bgn.toml(5) says %r, the code %r'
                      % (name, doc, want))
                errors += 1
            else:
                print('ok %s = %s' % (name, want))
    for name, (kind, doc) in documented.items():
        if doc == 'absent':
            print('ok %s absent' % name)
        else:
            print('documented but not in the code: %s' % name)
            errors += 1
    sys.exit(1 if errors else 0)


main()
