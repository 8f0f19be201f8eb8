#!/usr/bin/env python3
# SPDX-License-Identifier: LGPL-3.0-or-later
# compare.py: check bgn-config's JSON for a TOML file against tomllib.
#
# Usage: compare.py FILE.toml FILE.json
# Exits 0 when they agree, 1 (printing the first difference) when not,
# 77 when this Python has no tomllib.  bgn's conventions are applied to
# tomllib's side: NaN and infinities are the strings "nan", "inf", "-inf";
# date-times are RFC 3339 strings, compared by value after parsing (with
# fractional seconds truncated to microseconds, as tomllib does).
import datetime
import json
import math
import re
import sys

try:
    import tomllib
except ImportError:
    sys.exit(77)

DT = re.compile(
    r"^(\d{4})-(\d{2})-(\d{2})T(\d{2}):(\d{2}):(\d{2})(?:\.(\d+))?"
    r"(Z|[+-]\d{2}:\d{2})?$")
DATE = re.compile(r"^(\d{4})-(\d{2})-(\d{2})$")
TIME = re.compile(r"^(\d{2}):(\d{2}):(\d{2})(?:\.(\d+))?$")


def micros(frac):
    return int((frac or "0").ljust(6, "0")[:6])


def tz(off):
    if off is None:
        return None
    if off == "Z":
        return datetime.timezone.utc
    sign = -1 if off[0] == "-" else 1
    delta = datetime.timedelta(hours=int(off[1:3]), minutes=int(off[4:6]))
    return datetime.timezone(sign * delta)


def parse_temporal(s, want):
    if isinstance(want, datetime.datetime):
        m = DT.match(s)
        if not m:
            return None
        g = m.groups()
        return datetime.datetime(int(g[0]), int(g[1]), int(g[2]), int(g[3]),
                                 int(g[4]), int(g[5]), micros(g[6]),
                                 tzinfo=tz(g[7]))
    if isinstance(want, datetime.date):
        m = DATE.match(s)
        return datetime.date(*map(int, m.groups())) if m else None
    m = TIME.match(s)
    if not m:
        return None
    g = m.groups()
    return datetime.time(int(g[0]), int(g[1]), int(g[2]), micros(g[3]))


def same(want, got, path):
    if isinstance(want, dict):
        if not isinstance(got, dict):
            return f"{path}: expected a table, got {got!r}"
        if set(want) != set(got):
            return (f"{path}: keys differ: tomllib {sorted(want)!r} "
                    f"vs {sorted(got)!r}")
        for k in want:
            err = same(want[k], got[k], f"{path}.{k!r}")
            if err:
                return err
        return None
    if isinstance(want, list):
        if not isinstance(got, list) or len(want) != len(got):
            return f"{path}: expected array {want!r}, got {got!r}"
        for i, (w, g) in enumerate(zip(want, got)):
            err = same(w, g, f"{path}[{i}]")
            if err:
                return err
        return None
    if isinstance(want, bool):
        ok = isinstance(got, bool) and want == got
    elif isinstance(want, int):
        ok = type(got) is int and want == got
    elif isinstance(want, float):
        if math.isnan(want):
            ok = got == "nan"
        elif math.isinf(want):
            ok = got == ("inf" if want > 0 else "-inf")
        else:
            ok = (type(got) is float and want == got
                  and math.copysign(1, want) == math.copysign(1, got))
    elif isinstance(want, str):
        ok = isinstance(got, str) and want == got
    elif isinstance(want, (datetime.datetime, datetime.date, datetime.time)):
        val = parse_temporal(got, want) if isinstance(got, str) else None
        ok = (val is not None and val == want
              and getattr(val, "utcoffset", lambda: None)()
              == getattr(want, "utcoffset", lambda: None)())
    else:
        return f"{path}: unexpected tomllib type {type(want)}"
    return None if ok else f"{path}: tomllib {want!r}, bgn-config {got!r}"


def main():
    if len(sys.argv) != 3:
        print("usage: compare.py FILE.toml FILE.json", file=sys.stderr)
        return 2
    with open(sys.argv[1], "rb") as f:
        want = tomllib.load(f)
    with open(sys.argv[2]) as f:
        got = json.load(f)
    err = same(want, got, "root")
    if err:
        print(f"{sys.argv[1]}: {err}")
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
