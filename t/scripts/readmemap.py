#!/usr/bin/env python3
# SPDX-License-Identifier: LGPL-3.0-or-later
"""readmemap.py README [FILE...]: the README's "Source code layout" names
every folder and file under src/.

The files are the arguments, or one a line on standard input (git ls-files
src); only those under src/ are looked at.  The map is the README section
"## Source code layout", up to the next "## " heading; a name is any word
of a `code span` in it.  Then:

- a folder is named by a word ending in "/" that is its path, or the end
  of its path ("libmsg/fuzz/", "test/"); every folder under src/ must be;
- a file is named by its file name or the end of its path
  ("broker/hosts.c"), and its folder must be named too.  A header X.h
  goes with its X.c.  Files under a folder "test" or "fuzz" go with
  their folder (the map says what those hold once, for all);
- a C file (.c, .h) the map names but no folder holds is stale.

Prints one line per problem and exits 1 if there is any.
"""
import os
import re
import sys

WHOLE = ("test", "fuzz")     # folders whose files go with the folder


def map_words(readme):
    text = open(readme, encoding="utf-8").read()
    m = re.search(r"^## Source code layout\n(.*?)(?=^## |\Z)", text,
                  re.M | re.S)
    if not m:
        sys.exit(f"{readme}: no '## Source code layout' section")
    words = set()
    for span in re.findall(r"`([^`]+)`", m.group(1)):
        for w in re.split(r"[\s,]+", span):
            w = w.strip("()")
            if w:
                words.add(w)
    return words


def named(path, words, folder):
    """Is 'path' (a file, or with folder=True a folder) one of the words,
    or the end of one of them?"""
    for w in words:
        if folder != w.endswith("/"):
            continue
        w = w.rstrip("/")
        if path == w or path.endswith("/" + w):
            return True
    return False


def folders_of(path):
    parts = path.split("/")[:-1]
    return ["/".join(parts[:i]) for i in range(2, len(parts) + 1)]


def problems(words, files):
    out = []
    files = sorted(f for f in files if f.startswith("src/"))
    present = set(files)
    folders = sorted({d for f in files for d in folders_of(f)})
    for d in folders:
        if not named(d, words, True):
            out.append(f"{d}/: a folder the README map does not name")
    for f in files:
        d = os.path.dirname(f)
        if os.path.basename(d) in WHOLE:
            continue
        if named(f, words, False):
            continue
        stem, ext = os.path.splitext(f)
        if ext == ".h" and stem + ".c" in present and named(stem + ".c",
                                                           words, False):
            continue
        out.append(f"{f}: a file the README map does not name")
    basenames = {os.path.basename(f) for f in files}
    for w in sorted(words):
        if re.fullmatch(r"[\w./-]+\.[ch]", w) and not w.startswith("t/") \
           and os.path.basename(w) not in basenames:
            out.append(f"README map names {w}, which is not under src/")
    return out


def main():
    if len(sys.argv) < 2:
        sys.exit("usage: readmemap.py README [FILE...]")
    words = map_words(sys.argv[1])
    files = sys.argv[2:] or [l.strip() for l in sys.stdin if l.strip()]
    out = problems(words, files)
    for line in out:
        print(line)
    sys.exit(1 if out else 0)


if __name__ == "__main__":
    main()
