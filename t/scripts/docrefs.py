#!/usr/bin/env python3
# SPDX-License-Identifier: LGPL-3.0-or-later
"""docrefs.py TOP [FILE...]: no file of the tree points at a file the tree
does not have.

The files are the arguments, or one a line on standard input (git ls-files
--cached --others --exclude-standard, run in TOP), paths relative to TOP.
A reader who follows a pointer must find what it points at here, in the
repository, not in someone's notes.  Three rules:

- a relative Markdown link, [text](path), in README.md or a doc/*.md page
  names a file or folder of the tree (relative to the page's folder);
- a Markdown page named in README.md or under doc/ (man pages included:
  their "\\-" is read as "-") is a file of the tree;
- no file of the tree names a document kept outside it: design notes, a
  notes folder, a folder shared beside the repository, a layout note
  (OUTSIDE below; the patterns are spelled so that they do not name
  themselves).

Prints one line per problem, "FILE:LINE: ...", and exits 1 if any.
"""
import os
import re
import sys

OUTSIDE = [
    (re.compile(r"\bDESIGN[.]md\b", re.I), "design notes outside the tree"),
    (re.compile(r"(^|[\s(\"'`/])notes[/]"), "a notes folder outside the tree"),
    (re.compile(r"[.][.][/]shared\b"), "a folder beside the repository"),
    (re.compile(r"\boverlay[-]layout\b"), "a layout note outside the tree"),
]
LINK = re.compile(r"\]\(([^)\s]+)\)")
MDWORD = re.compile(r"[\w./-]*[\w-][.]md\b")


def is_doc(path):
    return path == "README.md" or path.startswith("doc/")


def text_of(top, path):
    try:
        with open(os.path.join(top, path), encoding="utf-8") as f:
            return f.read()
    except (UnicodeDecodeError, OSError):
        return None     # binary (figures) or gone: nothing to read


def problems(top, files):
    out = []
    present = set(files)
    folders = {os.path.dirname(f) for f in files}
    folders |= {"/".join(d.split("/")[:i]) for d in list(folders)
                for i in range(1, d.count("/") + 1)}
    basenames = {os.path.basename(f) for f in files}
    for path in sorted(files):
        text = text_of(top, path)
        if text is None:
            continue
        for n, line in enumerate(text.splitlines(), 1):
            for rx, what in OUTSIDE:
                if rx.search(line):
                    out.append(f"{path}:{n}: names {what}")
            if not is_doc(path):
                continue
            if path.endswith(".md"):
                for target in LINK.findall(line):
                    if re.match(r"[a-z]+:|#", target):
                        continue        # a URL or an anchor of the page
                    t = os.path.normpath(os.path.join(os.path.dirname(path),
                                                      target.split("#")[0]))
                    if t not in present and t not in folders:
                        out.append(f"{path}:{n}: links to {target}, which "
                                   "is not in the tree")
            words = re.sub(r"[a-z]+://\S+", "", line.replace("\\-", "-"))
            for word in MDWORD.findall(words):
                if os.path.basename(word) not in basenames:
                    out.append(f"{path}:{n}: names {word}, which is not "
                               "in the tree")
    return out


def main():
    if len(sys.argv) < 2:
        sys.exit("usage: docrefs.py TOP [FILE...]")
    top = sys.argv[1]
    files = sys.argv[2:] or [l.strip() for l in sys.stdin if l.strip()]
    out = problems(top, files)
    for line in out:
        print(line)
    sys.exit(1 if out else 0)


if __name__ == "__main__":
    main()
