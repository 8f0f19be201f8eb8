/* overlay_dot.c: "bgn overlay-status --dot", the live graph in Graphviz
 * DOT (see overlay_dot.h).
 *
 * The graph is computed here from the topology and size (libbgn) and the
 * down ranks of the status objects, not asked from the brokers: every
 * broker knows the same graph, and only the failures differ.
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
    json_t *objs, *o, *v, *p, *subs = json_array ();
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
    /* the views to draw from: every broker's (--all) or the one asked */
    if (all)
        objs = json_incref (json_object_get (all, "ranks"));
    else {
        objs = json_array ();
        json_array_append (objs, root);
    }
    json_array_foreach (objs, i, o) {
        json_array_foreach (json_object_get (o, "down_ranks"), j, v)
            idset_set (down, (unsigned)json_integer_value (v));
    }
    if (all)
        json_array_foreach (json_object_get (all, "missing"), i, v)
            if (!idset_test (down, (unsigned)json_integer_value (v)))
                idset_set (missing, (unsigned)json_integer_value (v));
    json_array_foreach (objs, i, o) {
        int r = (int)json_integer_value (json_object_get (o, "rank"));
        json_array_foreach (json_object_get (o, "peers"), j, p) {
            if (json_is_true (json_object_get (p, "substitute"))) {
                int pr = (int)json_integer_value (json_object_get (p, "rank"));
                int a = r < pr ? r : pr, b = r < pr ? pr : r;
                json_t *pair = json_pack ("[i,i]", a, b);
                bool dup = false;
                size_t k;
                json_t *q;
                json_array_foreach (subs, k, q)
                    if (json_equal (q, pair))
                        dup = true;
                if (!dup && a >= 0 && b < size && a != b)
                    json_array_append (subs, pair);
                json_decref (pair);
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
    json_decref (objs);
    json_decref (subs);
    idset_destroy (&down);
    idset_destroy (&missing);
    bgn_topo_destroy (&t);
    return 0;
}
