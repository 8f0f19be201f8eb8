#!/usr/bin/env python3
# SPDX-License-Identifier: LGPL-3.0-or-later
"""layout.py: check the source layout rules (README "Source code layout").

1. No include circles anywhere in src/ (quoted includes between files).
2. In src/modules/overlay only sock.c and curve.c (and libzmqutil) touch
   ZeroMQ: no other file includes zmq.h or czmq.h.
3. The protocol core (every overlay file but module.c, sock.*, curve.*)
   reads no wall clock, sleeps not, and touches no socket or file.
4. The overlay's parts include only the headers of parts below them
   (overlay.h's layering), so calls go downward.
5. No two functions of the overlay module or of the broker share a name.
6. The simulator (src/sim) includes only the core's public headers
   (ovcore.h and the io, wire format, event and settings headers).

Prints one line per violation and exits 1 if there is any.
"""
import os
import re
import sys

top = sys.argv[1] if len(sys.argv) > 1 else "."
src = os.path.join(top, "src")
problems = []

INCLUDE = re.compile(r'^\s*#\s*include\s+[<"]([^>"]+)[>"]', re.M)


def sources(root, exts=(".c", ".h")):
    for d, _, files in os.walk(root):
        for f in files:
            if f.endswith(exts):
                yield os.path.join(d, f)


def text(path):
    with open(path, encoding="utf-8", errors="replace") as f:
        return f.read()


def strip_comments(s):
    s = re.sub(r"/\*.*?\*/", " ", s, flags=re.S)
    s = re.sub(r"//[^\n]*", " ", s)
    return re.sub(r'"(\\.|[^"\\])*"', '""', s)


# 1. include graph over files in src (resolved like the build: relative to
# the including file, then to the top of the tree)
graph = {}
for path in sources(src):
    deps = []
    for inc in INCLUDE.findall(text(path)):
        for cand in (os.path.join(os.path.dirname(path), inc),
                     os.path.join(top, inc)):
            if os.path.isfile(cand):
                deps.append(os.path.normpath(cand))
                break
    graph[os.path.normpath(path)] = deps

state = {}


def visit(node, stack):
    state[node] = 1
    stack.append(node)
    for dep in graph.get(node, []):
        if state.get(dep) == 1:
            cycle = stack[stack.index(dep):] + [dep]
            problems.append("include circle: " + " -> ".join(
                os.path.relpath(c, top) for c in cycle))
        elif dep not in state:
            visit(dep, stack)
    stack.pop()
    state[node] = 2


for node in sorted(graph):
    if node not in state:
        visit(node, [])

# 2-4. the overlay module
ovl = os.path.join(src, "modules", "overlay")
transport = {"sock.c", "sock.h", "curve.c", "curve.h"}
# module-side (files, libsodium), beside module.c
glue = {"module.c", "evkey.c", "evkey.h"}
layers = [
    ["overlay", "ovcore"], ["moved"], ["hello"], ["live", "status"],
    ["heal", "evglue", "health"], ["fence"], ["tracker"], ["dedup"],
    ["ovsign"],
    ["route"], ["trace"], ["peer"],
    ["timer", "frame", "body", "ovconf", "io", "fencemsg", "treecast"],
    ["envelope", "events", "evrepair", "evroot", "evsign", "evdeliver", "wire"],
    ["evlayer_int", "evstore"], ["ovlog"],
]
level = {part: i for i, group in enumerate(layers) for part in group}
forbidden = re.compile(r"(?<![\w>.])(gettimeofday|time|clock_gettime|sleep|usleep|"
                       r"nanosleep|socket|connect|bind|open|fopen|read|write|"
                       r"monotime_now|zmq_\w+|zloop_\w+|zsys_\w+)\s*\(")

for path in sorted(sources(ovl)):
    rel = os.path.relpath(path, ovl)
    name = os.path.basename(path)
    if rel.startswith("test" + os.sep):
        continue
    body = text(path)
    incs = INCLUDE.findall(body)
    if name not in transport and any(i in ("zmq.h", "czmq.h") for i in incs):
        problems.append(f"overlay/{rel}: includes ZeroMQ (only sock.c and "
                        "curve.c may)")
    if name in transport or name in glue:
        continue
    for m in forbidden.finditer(strip_comments(body)):
        problems.append(f"overlay/{rel}: the protocol core calls {m.group(1)}()"
                        " (it must go through struct ovl_io)")
    part = os.path.splitext(name)[0]
    if part not in level:
        problems.append(f"overlay/{rel}: not in the layering of overlay.h")
        continue
    for inc in incs:
        dep = os.path.splitext(os.path.basename(inc))[0]
        # overlay.h is the hub every part includes for the types
        if os.path.dirname(inc) or dep in (part, "overlay") or dep not in level:
            continue
        if level[dep] < level[part] and not (part == "overlay" or
                                             name.endswith(".h")):
            problems.append(f"overlay/{rel}: includes {inc}, a part above it")

# 5. function names, per component
DEF = re.compile(r"^(?:static\s+)?(?:inline\s+)?(?:const\s+)?"
                 r"(?:struct\s+\w+|unsigned\s+\w+|\w+)[\s\*]+(\w+)\s*\([^;]*$",
                 re.M)
for comp in (ovl, os.path.join(src, "broker")):
    seen = {}
    for path in sorted(sources(comp, (".c",))):
        if os.sep + "test" + os.sep in path:
            continue
        for name in DEF.findall(strip_comments(text(path))):
            if name in ("if", "while", "for", "switch", "return", "sizeof"):
                continue
            if name in seen and seen[name] != path:
                problems.append(f"function {name} is defined in both "
                                f"{os.path.relpath(seen[name], top)} and "
                                f"{os.path.relpath(path, top)}")
            seen.setdefault(name, path)

# 6. the simulator reads the core through its public headers only
core_public = {"ovcore.h", "io.h", "envelope.h", "body.h", "events.h",
               "frame.h", "ovconf.h"}
for path in sorted(sources(os.path.join(src, "sim"))):
    for inc in INCLUDE.findall(text(path)):
        if (inc.startswith("src/modules/overlay/")
                and os.path.basename(inc) not in core_public):
            problems.append(f"{os.path.relpath(path, top)}: includes {inc}, "
                            "a header private to the overlay core")

for p in problems:
    print(p)
sys.exit(1 if problems else 0)
