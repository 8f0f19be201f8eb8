/* SPDX-License-Identifier: LGPL-3.0-or-later */
/* overlay_dot.c: "bgn overlay-status --dot", the live graph in Graphviz
 * DOT (see overlay_dot.h).
 *
 * The graph is computed here from the topology and size (libbgn) and the
 * down ranks, not asked from the brokers: every broker knows the same
 * graph, and only the failures differ.  With --all the down ranks are
 * those any broker reports (the status-all summary), and the brokers
 * that did not answer are greyed.
 */
#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <jansson.h>

#include "src/common/libutil/idset.h"
#include "src/common/libbgn/bgn.h"
#include "overlay_dot.h"

#define PROG "overlay-status"

int overlay_dot_print (json_t *root, json_t *all)
{
    const char *topo = NULL, *state = "?";
    int size = 0;
    struct bgn_topo *t;
    idset_t *down = idset_create (0), *missing = idset_create (0);
    json_t *v, *p, *subs = json_array ();
    size_t i, j;
    uint32_t *nb = NULL;
    int maxdeg;

    json_unpack (root, "{s?s s?i s?s}", "topology", &topo, "size", &size,
                 "state", &state);
    if (!topo || size <= 0 || !(t = bgn_topo_create (topo, size))) {
        fprintf (stderr, "bgn %s: --dot: cannot build topology '%s' of size "
                 "%d\n", PROG, topo ? topo : "?", size);
        idset_destroy (&down);
        idset_destroy (&missing);
        json_decref (subs);
        return -1;
    }
    /* the down ranks: the one broker's, or (--all) as any broker sees
     * them, with the brokers that did not answer greyed */
    json_array_foreach (json_object_get (root, "down_ranks"), j, v)
        idset_set (down, (unsigned)json_integer_value (v));
    if (all) {
        idset_t *any = idset_decode (json_string_value (json_object_get
                                     (all, "down_any")) ?: "", NULL, 0);
        idset_t *miss = idset_decode (json_string_value (json_object_get
                                      (all, "missing")) ?: "", NULL, 0);
        for (int r = any ? idset_first (any) : -1; r >= 0;
             r = idset_next (any, r))
            idset_set (down, (unsigned)r);
        for (int r = miss ? idset_first (miss) : -1; r >= 0;
             r = idset_next (miss, r))
            if (!idset_test (down, (unsigned)r))
                idset_set (missing, (unsigned)r);
        idset_destroy (&any);
        idset_destroy (&miss);
    }
    /* substitute links: the asked broker's (the summary lists only
     * problems, not every broker's peers) */
    {
        int r = (int)json_integer_value (json_object_get (root, "rank"));
        json_array_foreach (json_object_get (root, "peers"), j, p) {
            if (json_is_true (json_object_get (p, "substitute"))) {
                int pr = (int)json_integer_value (json_object_get (p, "rank"));
                int a = r < pr ? r : pr, b = r < pr ? pr : r;
                if (a >= 0 && b < size && a != b)
                    json_array_append_new (subs, json_pack ("[i,i]", a, b));
            }
        }
    }

    printf ("graph overlay {\n");
    printf ("  label=\"bgn overlay: %s, size %d, topology %s%s\\n"
            "red: down; dotted: links to down ranks; blue dashed: "
            "substitute links\";\n", state, size, bgn_topo_name (t),
            all ? " (all brokers' views)" : "");
    printf ("  labelloc=t;\n");
    /* a graph: ranks in order round a circle (pinned positions, so the
     * 2^k chords show); a tree: left to dot's hierarchical layout */
    bool ring = !bgn_topo_is_tree (t);
    double radius = size * 0.16 > 2.0 ? size * 0.16 : 2.0;
    if (ring)
        printf ("  layout=neato;\n");
    printf ("  node [shape=circle, fixedsize=true, width=0.45, style=filled, "
            "fillcolor=palegreen, fontname=Helvetica, fontsize=11];\n");
    printf ("  edge [color=gray40];\n");
    for (int r = 0; r < size; r++) {
        char pos[64] = "";
        if (ring) {
            double a = M_PI / 2 - 2 * M_PI * r / size;
            snprintf (pos, sizeof (pos), "pos=\"%.3f,%.3f!\"",
                      radius * cos (a), radius * sin (a));
        }
        if (idset_test (down, r))
            printf ("  %d [fillcolor=tomato, style=\"filled,dashed\", "
                    "color=red, penwidth=2, tooltip=\"down\"%s%s];\n", r,
                    ring ? ", " : "", pos);
        else if (idset_test (missing, r))
            printf ("  %d [fillcolor=lightgray, style=\"filled,dotted\", "
                    "tooltip=\"no answer\"%s%s];\n", r, ring ? ", " : "",
                    pos);
        else if (ring)
            printf ("  %d [%s];\n", r, pos);
        else
            printf ("  %d;\n", r);
    }
    maxdeg = bgn_topo_max_degree (t);
    if (maxdeg < 1)
        maxdeg = 1;
    nb = calloc (maxdeg + 1, sizeof (*nb));
    for (int r = 0; r < size && nb; r++) {
        int n = bgn_topo_neighbours (t, r, nb, maxdeg + 1);
        for (int k = 0; k < n; k++) {
            if ((int)nb[k] <= r)
                continue;
            if (idset_test (down, r) || idset_test (down, nb[k]))
                printf ("  %d -- %u [style=dotted, color=gray75];\n", r,
                        (unsigned)nb[k]);
            else
                printf ("  %d -- %u;\n", r, (unsigned)nb[k]);
        }
    }
    json_array_foreach (subs, i, v) {
        int a = (int)json_integer_value (json_array_get (v, 0));
        int b = (int)json_integer_value (json_array_get (v, 1));
        printf ("  %d -- %d [style=dashed, color=blue, penwidth=2, "
                "tooltip=\"substitute\"];\n", a, b);
    }
    printf ("}\n");
    free (nb);
    json_decref (subs);
    idset_destroy (&down);
    idset_destroy (&missing);
    bgn_topo_destroy (&t);
    return 0;
}
