#!/usr/bin/env python3
# SPDX-License-Identifier: LGPL-3.0-or-later
"""bfs.py: hop distances in a bgn topology, computed independently of libbgn.

Usage: bfs.py TOPOLOGY SIZE SOURCE
Prints one line "RANK DISTANCE" for every rank (-1 if unreachable).
Topologies: bgn, bgn:R, kary:K, binomial -- built from their definitions
(see bgn-overlay(7)), so tests can check the overlay's hop counts against
an oracle that shares no code with it.
"""
import sys
from collections import deque


def edges(topo, n):
    adj = [set() for _ in range(n)]

    def link(a, b):
        if a != b:
            adj[a].add(b)
            adj[b].add(a)

    if topo == "bgn" or topo.startswith("bgn:"):
        radix = 2 if topo == "bgn" else int(topo.split(":")[1])
        for i in range(n):
            p = 1
            while p < n:
                for j in range(1, radix):
                    link(i, (i + j * p) % n)
                    link(i, (i - j * p) % n)
                p *= radix
    elif topo.startswith("kary:"):
        k = int(topo.split(":")[1])
        for r in range(1, n):
            link(r, (r - 1) // k)
    elif topo == "binomial":
        for r in range(1, n):
            link(r, r & (r - 1))
    else:
        raise SystemExit("bfs.py: unknown topology " + topo)
    return adj


def main():
    topo, n, src = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
    adj = edges(topo, n)
    dist = [-1] * n
    dist[src] = 0
    q = deque([src])
    while q:
        u = q.popleft()
        for v in adj[u]:
            if dist[v] < 0:
                dist[v] = dist[u] + 1
                q.append(v)
    for r in range(n):
        print(r, dist[r])


main()
