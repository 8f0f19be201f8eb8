#!/bin/sh
# SPDX-License-Identifier: LGPL-3.0-or-later
#
# spdx-add.sh: give every source file its licence line.
#
#   etc/spdx-add.sh [-C DIR] [--check] [PATH...]
#
# Every source file of the tree carries, as its first line (after the
# "#!" line of a script), the SPDX identifier of the project's licence:
#
#   /* SPDX-License-Identifier: LGPL-3.0-or-later */   C sources and headers
#   # SPDX-License-Identifier: LGPL-3.0-or-later       shell, Python, sharness
#                                                      tests, Makefile.am
#   dnl SPDX-License-Identifier: LGPL-3.0-or-later     configure.ac
#
# Without --check the line is added to each file that lacks it; a file that
# has it (in its first two lines) is left alone, so running the script
# twice changes nothing.  With --check nothing is written: the files that
# lack the line are listed, and the exit status is 1 if there is any.
#
# The files are those git knows in the tree (tracked, or new and not
# ignored) when the tree is the top of a git work tree, or else (a release
# tarball) those find sees, build products left out.  PATHs (relative to the top of the tree)
# narrow the search; the default is src, t, etc, .ci and the top-level
# build files.  -C DIR works on the tree at DIR instead of this script's.
# Data files (TOML, man pages, .in templates) have no comment syntax in
# common and are not touched.

set -eu

LINE="SPDX-License-Identifier: LGPL-3.0-or-later"
top=$(cd "$(dirname "$0")/.." && pwd)
check=false

usage () {
    echo "usage: $0 [-C DIR] [--check] [PATH...]" >&2
    exit 2
}

while test $# -gt 0; do
    case $1 in
    --check) check=true; shift ;;
    -C) test $# -ge 2 || usage; top=$2; shift 2 ;;
    -h|--help) awk 'NR > 3 && !/^#/ { exit } NR > 3 { sub (/^# ?/, ""); print }' "$0"
        exit 0 ;;
    -*) usage ;;
    *) break ;;
    esac
done
test $# -gt 0 || set -- src t etc .ci Makefile.am configure.ac autogen.sh
cd "$top" || exit 2

# The candidate files under the PATHs, one a line.
list_files () {
    if test "$(git rev-parse --show-toplevel 2>/dev/null)" = "$(pwd -P)"; then
        git ls-files --cached --others --exclude-standard -- "$@"
    else
        for p in "$@"; do
            test -e "$p" || continue
            find "$p" \( -name .git -o -name .deps -o -name .libs \
                -o -name 'trash directory.*' -o -name autom4te.cache \
                -o -name __pycache__ -o -name 'fuzz-*' \
                -o -name sim-results \) -prune -o -type f -print
        done
    fi
}

# How the licence line is written in FILE: "c", "dnl", "hash" (after a
# "#!" line if there is one), or "" for a file that is not source.
style_of () {
    case $1 in
    *.c|*.h) echo c; return ;;
    configure.ac) echo dnl; return ;;
    Makefile.am|*/Makefile.am|*.py|*.sh) echo hash; return ;;
    esac
    # Other scripts (sharness tests, .ci/run, batch scripts) are known by
    # their "#!" line; this also leaves out the unit-test programs that
    # the build names *.t under src/.
    if test "$(head -c 2 "$1" 2>/dev/null)" = "#!"; then
        echo hash
    fi
}

has_line () {
    head -n 2 "$1" | grep -q "$LINE"
}

# Write FILE again with the licence line in its place; the file keeps its
# inode, so its mode and owner stay as they were.
add_line () {
    tmp="$1.spdx.$$"
    case $2 in
    c) { echo "/* $LINE */"; cat "$1"; } >"$tmp" ;;
    dnl) { echo "dnl $LINE"; cat "$1"; } >"$tmp" ;;
    hash) awk -v line="# $LINE" '
        NR == 1 && /^#!/ { print; print line; next }
        NR == 1 { print line }
        { print }' "$1" >"$tmp" ;;
    esac
    cat "$tmp" >"$1"
    rm -f "$tmp"
}

missing=0
list_files "$@" | sort -u | {
    while IFS= read -r f; do
        test -f "$f" || continue
        style=$(style_of "$f")
        test -n "$style" || continue
        has_line "$f" && continue
        missing=$((missing + 1))
        if $check; then
            echo "$f: no '$LINE' line"
        else
            add_line "$f" "$style"
            echo "$f"
        fi
    done
    if $check && test $missing -gt 0; then
        echo "$missing file(s) lack the licence line; run etc/spdx-add.sh" >&2
        exit 1
    fi
    exit 0
}
