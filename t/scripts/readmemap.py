#!/usr/bin/env python3
# SPDX-License-Identifier: LGPL-3.0-or-later
"""readmemap.py README [FILE...]: the README's "Source code layout" names
every folder and file of the tree.

The files are the arguments, or one a line on standard input (git ls-files
--cached --others --exclude-standard, from the top of the tree).  The map
is the README section "## Source code layout", up to the next "## "
heading; a name is any word of a `code span` in it.  Then:

- a folder is named by a word ending in "/" that is its path, or the end
  of its path ("libmsg/fuzz/", "test/", "t/"); every folder must be, the
  top-level ones (".ci/", "doc/", "src/", "t/" ...) included;
- a file is named by its file name or the end of its path
  ("broker/hosts.c", "README.md"), and its folder must be named too.  A
  header X.h goes with its X.c.  Files under a folder "test" or "fuzz",
  and the data of the folders in DATA (TOML cases, figures, benchmark
  tables), go with their folder: the map says what those hold once;
- a name of the map that looks like a file (a known ending) or a folder
  and is nowhere in the tree is stale;
- an identifier the map names (a word of a code span in C's form with an
  underscore in it: a function, a type, a key, a variable) must stand as
  a word in some file of the tree under src/ or etc/ (read next to the
  README; not checked where none is there): a walk-through must not
  name a function that was renamed.

Prints one line per problem and exits 1 if there is any.
"""
import os
import re
import sys

WHOLE = ("test", "fuzz")     # folders whose files go with the folder
DATA = ("t/toml/valid", "t/toml/invalid", "t/toml/schema",
        "doc/img", "doc/bench-data")
# endings of the words that are taken for file names (so a stale one is
# caught); other words with a dot ("bgn.so", "bgn.rpc") are left alone
FILELIKE = r"[\w./-]+\.(c|h|t|py|sh|md|toml|in|am|ac|[1-8])"


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


def matches(path, word):
    """Is 'path' the word (without its trailing "/"), or its end?"""
    w = word.rstrip("/")
    return path == w or path.endswith("/" + w)


def named(path, words, folder):
    """Is 'path' (a file, or with folder=True a folder) one of the words,
    or the end of one of them?"""
    return any(folder == w.endswith("/") and matches(path, w)
               for w in words)


def folders_of(path):
    parts = path.split("/")[:-1]
    return ["/".join(parts[:i]) for i in range(1, len(parts) + 1)]


def goes_with_folder(d):
    return os.path.basename(d) in WHOLE or \
        any(d == p or d.startswith(p + "/") for p in DATA)


def problems(words, files):
    out = []
    files = sorted(set(files))
    present = set(files)
    folders = sorted({d for f in files for d in folders_of(f)})
    for d in folders:
        if not named(d, words, True):
            out.append(f"{d}/: a folder the README map does not name")
    for f in files:
        d = os.path.dirname(f)
        if goes_with_folder(d):
            continue
        if named(f, words, False):
            continue
        stem, ext = os.path.splitext(f)
        if ext == ".h" and stem + ".c" in present and named(stem + ".c",
                                                           words, False):
            continue
        out.append(f"{f}: a file the README map does not name")
    for w in sorted(words):
        if w.endswith("/"):
            if re.fullmatch(r"[\w./-]+/", w) and \
               not any(matches(d, w) for d in folders):
                out.append(f"README map names {w}, a folder not in the tree")
        elif re.fullmatch(FILELIKE, w) and \
                not any(matches(f, w) for f in files):
            out.append(f"README map names {w}, which is not in the tree")
    return out


IDENT = r"[A-Za-z_][A-Za-z0-9_]*_[A-Za-z0-9_]*"
CODE_DIRS = ("src/", "etc/")


def stale_identifiers(words, files, top):
    """The identifiers of the map no file under CODE_DIRS holds."""
    idents = {w for w in words if re.fullmatch(IDENT, w)}
    if not idents:
        return []
    text = []
    for f in files:
        if f.startswith(CODE_DIRS):
            try:
                with open(os.path.join(top, f), encoding="utf-8",
                          errors="replace") as fh:
                    text.append(fh.read())
            except OSError:
                continue
    if not text:
        return []   # no code next to this README (a copy elsewhere)
    found = set(re.findall(r"\b" + IDENT + r"\b", "\n".join(text)))
    return [f"README map names `{w}`, which no file under src/ or etc/ "
            f"holds (renamed?)" for w in sorted(idents - found)]


def main():
    if len(sys.argv) < 2:
        sys.exit("usage: readmemap.py README [FILE...]")
    words = map_words(sys.argv[1])
    files = sys.argv[2:] or [l.strip() for l in sys.stdin if l.strip()]
    out = problems(words, files)
    out += stale_identifiers(words, files,
                             os.path.dirname(os.path.abspath(sys.argv[1])))
    for line in out:
        print(line)
    sys.exit(1 if out else 0)


if __name__ == "__main__":
    main()
