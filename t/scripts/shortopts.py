#!/usr/bin/env python3
# SPDX-License-Identifier: LGPL-3.0-or-later
"""shortopts.py HELPFILE...: one meaning per short option.

Each file is a command's --help text.  Lines "  -x, --long..." pair a
short option with its long name; a short option must have the same long
name in every command.  Prints the table; exit 1 on a clash."""
import re
import sys

seen = {}
bad = 0
for path in sys.argv[1:]:
    for line in open(path):
        m = re.match(r'^\s+-([A-Za-z0-9]), --([a-z][a-z0-9-]*)', line)
        if not m:
            continue
        short, long_ = m.groups()
        if short in seen and seen[short][0] != long_:
            print('clash: -%s is --%s in %s but --%s in %s'
                  % (short, long_, path, seen[short][0], seen[short][1]))
            bad = 1
        seen.setdefault(short, (long_, path))
for short in sorted(seen):
    print('-%s --%s' % (short, seen[short][0]))
sys.exit(bad)
