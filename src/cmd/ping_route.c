/* SPDX-License-Identifier: LGPL-3.0-or-later */
/* ping_route.c: rebuild a ping's path from overlay traces (see
 * ping_route.h).
 *
 * Each armed trace is a streaming overlay.trace RPC to one broker,
 * lasting ROUTE_TRACE_SECONDS (the overlay ends it with ENODATA; a trace
 * we stop reading is dropped at our end).  Records are kept only when
 * they are a request on the ping's topic from the origin toward the
 * destination.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <jansson.h>

#include "src/common/libbgn/bgn.h"
#include "src/common/libutil/monotime.h"
#include "ping_route.h"

#define ROUTE_TRACE_SECONDS 1.5
#define ROUTE_GRACE 0.3          /* wait this long for late trace records */

struct step {
    int rank;                    /* the broker that saw the request */
    int peer;                    /* the one it came from */
    int hops;
};

struct route_probe {
    bgn_t *h;
    const char *prog;
    uint32_t origin;
    uint32_t size;
    struct bgn_topo *topo;
    bgn_rpc_t *rpcs[ROUTE_MAX_TRACED];
    uint32_t traced[ROUTE_MAX_TRACED];
    int ntraced;
    uint32_t dest;
};

struct route_probe *route_probe_create (bgn_t *h, const char *prog)
{
    struct route_probe *p = calloc (1, sizeof (*p));
    bgn_rpc_t *rpc = NULL;
    const char *rsp, *topo;
    json_t *o = NULL;
    int rank, size;

    if (!p)
        return NULL;
    p->h = h;
    p->prog = prog;
    if (!(rpc = bgn_rpc (h, "broker.info", NODEID_ANY, NULL, 0))
        || bgn_rpc_get (rpc, &rsp) < 0 || !(o = json_loads (rsp, 0, NULL))
        || json_unpack (o, "{s:i s:i s:s}", "rank", &rank, "size", &size,
                        "topology", &topo) < 0
        || !(p->topo = bgn_topo_create (topo, (uint32_t)size))) {
        fprintf (stderr, "bgn %s: --route: cannot learn the topology from "
                 "broker.info\n", prog);
        json_decref (o);
        bgn_rpc_destroy (&rpc);
        free (p);
        return NULL;
    }
    p->origin = (uint32_t)rank;
    p->size = (uint32_t)size;
    json_decref (o);
    bgn_rpc_destroy (&rpc);
    return p;
}

static void end_traces (struct route_probe *p)
{
    for (int i = 0; i < p->ntraced; i++)
        bgn_rpc_destroy (&p->rpcs[i]);
    p->ntraced = 0;
}

void route_probe_destroy (struct route_probe **pp)
{
    if (pp && *pp) {
        end_traces (*pp);
        bgn_topo_destroy (&(*pp)->topo);
        free (*pp);
        *pp = NULL;
    }
}

/* Ranks on some failure-free shortest path origin -> dest, nearest to
 * the origin first (the origin included: its own arrival is not traced,
 * but it costs nothing to know), at most ROUTE_MAX_TRACED. */
static int candidates (struct route_probe *p, uint32_t dest, uint32_t *out)
{
    int total = bgn_topo_distance (p->topo, p->origin, dest), n = 0;

    for (int d = 1; d <= total && n < ROUTE_MAX_TRACED; d++) {
        for (uint32_t r = 0; r < p->size && n < ROUTE_MAX_TRACED; r++) {
            if (bgn_topo_distance (p->topo, p->origin, r) == d
                && bgn_topo_distance (p->topo, r, dest) == total - d)
                out[n++] = r;
        }
    }
    return n;
}

int route_probe_arm (struct route_probe *p, const char *topic, uint32_t dest)
{
    uint32_t cand[ROUTE_MAX_TRACED];
    char payload[512];
    int n;

    end_traces (p);
    p->dest = dest == NODEID_ANY ? 0 : dest;
    if (p->dest >= p->size)
        return -1;
    n = candidates (p, p->dest, cand);
    snprintf (payload, sizeof (payload), "{\"types\":[\"request\"],"
              "\"topic\":\"%s\",\"duration\":%g}", topic,
              ROUTE_TRACE_SECONDS);
    for (int i = 0; i < n; i++) {
        bgn_rpc_t *rpc = bgn_rpc (p->h, "overlay.trace", cand[i], payload,
                                  MSGFLAG_STREAMING);
        if (!rpc)
            continue;
        p->rpcs[p->ntraced] = rpc;
        p->traced[p->ntraced++] = cand[i];
    }
    /* a trace is on once its broker said so */
    for (int i = 0; i < p->ntraced; i++) {
        if (bgn_rpc_get (p->rpcs[i], NULL) < 0) {
            bgn_rpc_destroy (&p->rpcs[i]);
            continue;
        }
        bgn_rpc_next (p->rpcs[i]);
    }
    return p->ntraced > 0 ? 0 : -1;
}

/* The next record of trace i, within 'wait' seconds: 1 and a step, 0 for
 * none (yet), -1 when that trace has ended. */
static int next_step (struct route_probe *p, int i, double wait,
                      struct step *s)
{
    const char *rsp, *dir;
    json_t *o;
    int src, dst, rc = 0;

    if (!p->rpcs[i])
        return -1;
    bgn_rpc_set_timeout (p->rpcs[i], wait);
    if (bgn_rpc_get (p->rpcs[i], &rsp) < 0) {
        if (errno != ETIMEDOUT)
            bgn_rpc_destroy (&p->rpcs[i]);
        return errno == ETIMEDOUT ? 0 : -1;
    }
    if ((o = rsp ? json_loads (rsp, 0, NULL) : NULL)
        && json_unpack (o, "{s:s s:i s:i s:i s:i}", "dir", &dir, "peer",
                        &s->peer, "hops", &s->hops, "source", &src, "dest",
                        &dst) == 0
        && !strcmp (dir, "rx") && (uint32_t)src == p->origin
        && (p->dest == 0 || (uint32_t)dst == p->dest)) {
        s->rank = (int)p->traced[i];
        rc = 1;
    }
    json_decref (o);
    bgn_rpc_next (p->rpcs[i]);
    return rc;
}

static void append (char *buf, size_t len, const char *fmt, int v)
{
    size_t used = strlen (buf);
    if (used < len)
        snprintf (buf + used, len - used, fmt, v);
}

void route_probe_result (struct route_probe *p, uint32_t dest, int hops,
                         char *buf, size_t len)
{
    struct step steps[ROUTE_MAX_TRACED * 2];
    int nsteps = 0, at = (int)p->origin;
    double deadline = monotime_now () + ROUTE_GRACE;

    /* gather until every hop is seen or the grace period is over */
    while (nsteps < hops && monotime_now () < deadline) {
        int got = 0;
        for (int i = 0; i < p->ntraced && nsteps < (int)(sizeof (steps)
                                                 / sizeof (steps[0])); i++) {
            struct step s;
            if (next_step (p, i, 0.01, &s) == 1) {
                steps[nsteps++] = s;
                got = 1;
            }
        }
        if (!got && monotime_now () >= deadline)
            break;
    }
    end_traces (p);
    /* walk from the origin: each step names the peer it came from */
    buf[0] = '\0';
    append (buf, len, "%d", at);
    for (int h = 1; h <= hops; h++) {
        int next = -1;
        for (int k = 0; k < nsteps; k++)
            if (steps[k].peer == at && steps[k].hops == h)
                next = steps[k].rank;
        /* an untraced broker in between: known as the peer of a later
         * step */
        for (int k = 0; next < 0 && k < nsteps; k++)
            if (steps[k].hops == h + 1 && h < hops)
                next = steps[k].peer;
        if (next < 0 && h == hops)
            next = (int)dest;
        if (next < 0) {
            append (buf, len, " -> ?", 0);
            at = -2;
            continue;
        }
        append (buf, len, " -> %d", next);
        at = next;
    }
}
