/* SPDX-License-Identifier: LGPL-3.0-or-later */
/* scenario.c: built-in and TOML scenarios for the protocol simulator
 * (see scenario.h).
 *
 * Built-in scenarios are written as the same JSON a TOML file gives, so
 * there is one interpreter, and `bgn-sim --protocol --scenario NAME
 * --print-scenario` shows a built-in as a starting point for a file.
 */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "src/common/libutil/errbuf.h"
#include "src/common/libtoml/toml.h"
#include "src/common/libutil/fsd.h"
#include "src/common/libutil/idset.h"
#include "scenario.h"

#define BOOT_AT 0.0
#define FAULT_AT 5.0               /* faults after the boot settled */
#define SETTLE 25.0                /* then this long to converge */
#define SETTLE_CRASH 12.0          /* crashes: a peer timeout and more */

/* ---- values ------------------------------------------------------------ */

/* A time: a duration string ("250ms", "50us", "-2h") or a number of
 * seconds.  -1 on error. */
static int get_time (json_t *v, double *out)
{
    const char *s;
    double sign = 1, x;
    size_t len;

    if (json_is_number (v)) {
        *out = json_number_value (v);
        return 0;
    }
    if (!(s = json_string_value (v)))
        return -1;
    if (*s == '-') {
        sign = -1;
        s++;
    }
    len = strlen (s);
    if (len > 2 && !strcmp (s + len - 2, "us")) {
        char *end;
        x = strtod (s, &end);
        if (end != s + len - 2 || x < 0)
            return -1;
        *out = sign * x * 1e-6;
        return 0;
    }
    if (fsd_parse_duration (s, &x) < 0)
        return -1;
    *out = sign * x;
    return 0;
}

static int opt_time (json_t *o, const char *key, double def, double *out)
{
    json_t *v = json_object_get (o, key);

    *out = def;
    return v ? get_time (v, out) : 0;
}

static long opt_int (json_t *o, const char *key, long def)
{
    json_t *v = json_object_get (o, key);
    return json_is_integer (v) ? (long)json_integer_value (v) : def;
}

static double opt_num (json_t *o, const char *key, double def)
{
    json_t *v = json_object_get (o, key);
    return json_is_number (v) ? json_number_value (v) : def;
}

/* ---- built-in scenarios ----------------------------------------------- */

static long count_or (const struct scenario_opts *o, long def)
{
    return o->count >= 0 ? o->count : def;
}

static double duration_or (const struct scenario_opts *o, double def)
{
    return o->duration >= 0 ? o->duration : def;
}

static double rate_or (const struct scenario_opts *o, double def)
{
    return o->rate >= 0 ? o->rate : def;
}

/* A fault against a booted instance under light RPC load. */
static json_t *with_boot (const struct scenario_opts *o, double end,
                          json_t *fault)
{
    return json_pack ("{s:{s:I s:s s:I s:f} s:[{s:f s:s s:s}, o,"
                      " {s:f s:s s:f s:f}]}",
                      "sim", "size", (json_int_t)o->size,
                      "topology", o->topology, "seed", (json_int_t)o->seed,
                      "duration", end,
                      "event",
                      "at", BOOT_AT, "op", "boot", "window", "1s",
                      fault,
                      "at", 2.0, "op", "rpc", "rate", rate_or (o, 100),
                      "for", end - 2.0);
}

/* --hang-first: the ranks the scenario kills hang this long first. */
static void set_hang_first (json_t *sc, double t)
{
    size_t i;
    json_t *ev;

    json_array_foreach (json_object_get (sc, "event"), i, ev) {
        const char *op = json_string_value (json_object_get (ev, "op"));
        if (op && (!strcmp (op, "kill") || !strcmp (op, "rack")
                   || !strcmp (op, "churn")))
            json_object_set_new (ev, "hang_first", json_real (t));
    }
}

json_t *scenario_builtin (const char *name, const struct scenario_opts *o,
                          char *errbuf, size_t errlen)
{
    long k1000 = o->size / 16 < 1000 ? o->size / 16 : 1000;
    double t;
    json_t *sc = NULL;

    if (k1000 < 1)
        k1000 = 1;
    if (!strcmp (name, "boot")) {
        /* 1% never start: they are fenced ("never joined") after the join
         * timeout, here one peer timeout after the window */
        t = duration_or (o, 5.0);
        sc = json_pack ("{s:{s:I s:s s:I s:f} s:{s:f}"
                        " s:[{s:f s:s s:f s:f}]}",
                        "sim", "size", (json_int_t)o->size,
                        "topology", o->topology, "seed", (json_int_t)o->seed,
                        "duration", t + 10.0 + SETTLE_CRASH,
                        "overlay", "join_timeout", t + 10.0,
                        "event", "at", 0.0, "op", "boot", "window", t,
                        "never", 0.01);
    }
    else if (!strcmp (name, "kill") || !strcmp (name, "rack"))
        sc = with_boot (o, FAULT_AT + SETTLE_CRASH,
                        json_pack ("{s:f s:s s:I}", "at", FAULT_AT, "op",
                                   name[0] == 'k' ? "kill" : "rack", "count",
                                   (json_int_t)count_or (o, k1000)));
    else if (!strcmp (name, "hang")) {
        t = duration_or (o, 3.0);
        sc = with_boot (o, FAULT_AT + t + SETTLE,
                        json_pack ("{s:f s:s s:I s:f}", "at", FAULT_AT, "op",
                                   "hang", "count",
                                   (json_int_t)count_or (o, k1000), "for", t));
    }
    else if (!strcmp (name, "restart-root")) {
        t = duration_or (o, 2.0);
        sc = json_pack ("{s:{s:I s:s s:I s:f} s:[{s:f s:s s:s},"
                        " {s:f s:s s:f s:f s:i}, {s:f s:s s:s s:f}]}",
                        "sim", "size", (json_int_t)o->size,
                        "topology", o->topology, "seed", (json_int_t)o->seed,
                        "duration", FAULT_AT + t + SETTLE,
                        "event",
                        "at", 0.0, "op", "boot", "window", "1s",
                        "at", 2.0, "op", "publish", "rate", rate_or (o, 100),
                        "for", FAULT_AT + t + 5.0, "publishers", 4,
                        "at", FAULT_AT, "op", "restart", "ranks", "0",
                        "after", t);
    }
    else if (!strcmp (name, "partition")) {
        t = duration_or (o, 5.0);
        sc = with_boot (o, FAULT_AT + t + SETTLE,
                        json_pack ("{s:f s:s s:f}", "at", FAULT_AT, "op",
                                   "partition", "for", t));
    }
    else if (!strcmp (name, "churn")) {
        t = duration_or (o, 30.0);
        sc = with_boot (o, FAULT_AT + t + SETTLE,
                        json_pack ("{s:f s:s s:f s:I s:s}", "at", FAULT_AT,
                                   "op", "churn", "for", t, "max_down",
                                   (json_int_t)count_or (o, k1000 / 4 + 1),
                                   "every", "1s"));
    }
    else if (!strcmp (name, "skew"))
        sc = with_boot (o, FAULT_AT + SETTLE,
                        json_pack ("{s:f s:s s:I s:s s:s}", "at", FAULT_AT,
                                   "op", "restart", "count",
                                   (json_int_t)count_or (o, 3), "after",
                                   "500ms", "skew", "-2h"));
    else if (!strcmp (name, "events")) {
        t = duration_or (o, 20.0);
        sc = json_pack ("{s:{s:I s:s s:I s:f} s:[{s:f s:s s:s},"
                        " {s:f s:s s:f s:f s:i}, {s:f s:s s:f s:I s:s}]}",
                        "sim", "size", (json_int_t)o->size,
                        "topology", o->topology, "seed", (json_int_t)o->seed,
                        "duration", FAULT_AT + t + SETTLE,
                        "event",
                        "at", 0.0, "op", "boot", "window", "1s",
                        "at", 2.0, "op", "publish", "rate", rate_or (o, 200),
                        "for", FAULT_AT + t, "publishers", 4,
                        "at", FAULT_AT, "op", "churn", "for", t, "max_down",
                        (json_int_t)count_or (o, k1000 / 8 + 1), "every",
                        "1s");
    }
    else {
        errbuf_set (errbuf, errlen, "unknown scenario '%s' (built-in: boot, "
                    "kill, rack, hang, restart-root, partition, churn, skew, "
                    "events; or a TOML file)", name);
        errno = EINVAL;
        return NULL;
    }
    if (sc)
        json_object_set_new (sc, "name", json_string (name));
    if (sc && o->hang_first > 0)
        set_hang_first (sc, o->hang_first);
    return sc;
}

json_t *scenario_load (const char *path, const struct scenario_opts *o,
                       char *errbuf, size_t errlen)
{
    struct toml_error err = { 0 };
    json_t *sc = toml_parse_file (path, &err);
    json_t *sim;

    if (!sc) {
        if (err.line)
            errbuf_set (errbuf, errlen, "%s:%d:%d: %s", path, err.line, err.col,
                        err.msg);
        else
            errbuf_set (errbuf, errlen, "%s: %s", path, err.msg);
        return NULL;
    }
    if (!(sim = json_object_get (sc, "sim"))) {
        sim = json_object ();
        json_object_set_new (sc, "sim", sim);
    }
    if (!json_object_get (sim, "size"))
        json_object_set_new (sim, "size", json_integer (o->size));
    if (!json_object_get (sim, "topology"))
        json_object_set_new (sim, "topology", json_string (o->topology));
    if (!json_object_get (sim, "seed"))
        json_object_set_new (sim, "seed", json_integer ((json_int_t)o->seed));
    json_object_set_new (sc, "name", json_string (path));
    return sc;
}

/* ---- interpretation ------------------------------------------------------ */

/* Every key a table may hold, with its type: i integer, n number,
 * t time (a duration string or seconds), s string. */
struct key {
    const char *name;
    char type;
};

static const struct key sim_keys[] = { { "size", 'i' }, { "topology", 's' },
    { "seed", 'i' }, { "duration", 't' }, { "latency", 't' },
    { "jitter", 't' }, { "loss", 'n' }, { "hwm", 'i' }, { "notice", 't' },
    { "rpc_timeout", 't' }, { NULL, 0 } };
static const struct key overlay_keys[] = { { "keepalive_interval", 't' },
    { "peer_timeout", 't' }, { "event_buffer", 'i' },
    { "heal_threshold", 'i' }, { "backlog", 'i' }, { "ttl", 'i' },
    { "join_timeout", 't' }, { "fence_window", 't' }, { "retry_bytes", 'i' },
    { NULL, 0 } };

static bool has_type (json_t *v, char type)
{
    double x;

    switch (type) {
    case 'i': return json_is_integer (v);
    case 'n': return json_is_number (v);
    case 's': return json_is_string (v);
    case 't': return get_time (v, &x) == 0;
    }
    return false;
}

static const char *type_name (char type)
{
    switch (type) {
    case 'i': return "an integer";
    case 'n': return "a number";
    case 's': return "a string";
    }
    return "a duration (\"250ms\", \"2s\") or seconds";
}

/* Every key of o is known and of its type.  'what' names the table in
 * errors ("[sim]", "[[event]] 3"). */
static int check_keys (json_t *o, const char *what, const struct key *known,
                       char *errbuf, size_t errlen)
{
    const char *key;
    json_t *v;

    json_object_foreach (o, key, v) {
        const struct key *k = known;
        while (k->name && strcmp (k->name, key))
            k++;
        if (!k->name) {
            errbuf_set (errbuf, errlen, "%s: unknown key '%s'", what, key);
            errno = EINVAL;
            return -1;
        }
        if (!has_type (v, k->type)) {
            errbuf_set (errbuf, errlen, "%s: %s must be %s", what, key,
                        type_name (k->type));
            errno = EINVAL;
            return -1;
        }
    }
    return 0;
}

int scenario_params (json_t *sc, struct sim_params *p, char *errbuf,
                     size_t errlen)
{
    json_t *sim = json_object_get (sc, "sim");
    json_t *ovl = json_object_get (sc, "overlay");
    const char *topo = "bgn";

    static const struct key top_keys[] = { { "sim", 'o' },
        { "overlay", 'o' }, { "event", 'a' }, { "name", 's' }, { NULL, 0 } };
    const char *key;
    json_t *v;

    json_object_foreach (sc, key, v) {
        const struct key *k = top_keys;
        while (k->name && strcmp (k->name, key))
            k++;
        if (!k->name || (k->type == 'o' && !json_is_object (v))
            || (k->type == 'a' && !json_is_array (v))) {
            errbuf_set (errbuf, errlen, "'%s' is not a scenario table (only "
                        "[sim], [overlay] and [[event]])", key);
            errno = EINVAL;
            return -1;
        }
    }
    if (!json_is_object (sim)) {
        errbuf_set (errbuf, errlen, "[sim] must be a table");
        errno = EINVAL;
        return -1;
    }
    if (check_keys (sim, "[sim]", sim_keys, errbuf, errlen) < 0
        || (ovl && check_keys (ovl, "[overlay]", overlay_keys, errbuf,
                               errlen) < 0))
        return -1;
    json_unpack (sim, "{s?s}", "topology", &topo);
    snprintf (p->topology, sizeof (p->topology), "%s", topo);
    p->size = (uint32_t)opt_int (sim, "size", p->size);
    p->seed = (uint64_t)opt_int (sim, "seed", (long)p->seed);
    p->loss = opt_num (sim, "loss", p->loss);
    p->hwm = (int)opt_int (sim, "hwm", p->hwm);
    if (p->size < 1 || p->size > (1u << 22) || p->loss < 0 || p->loss >= 1
        || p->hwm < 1
        || opt_time (sim, "latency", p->latency, &p->latency) < 0
        || opt_time (sim, "jitter", p->jitter, &p->jitter) < 0
        || opt_time (sim, "notice", p->notice, &p->notice) < 0
        || opt_time (sim, "rpc_timeout", p->rpc_timeout, &p->rpc_timeout) < 0
        || p->latency <= 0 || p->jitter < 0 || p->notice < 0
        || p->rpc_timeout <= 0) {
        errbuf_set (errbuf, errlen, "[sim]: size 1..4194304, loss 0..1, hwm "
                    ">= 1, latency > 0, jitter >= 0, notice >= 0 and "
                    "rpc_timeout > 0");
        errno = EINVAL;
        return -1;
    }
    if (ovl) {
        struct ovl_config *c = &p->cfg;
        if (opt_time (ovl, "keepalive_interval", c->keepalive_interval,
                      &c->keepalive_interval) < 0
            || opt_time (ovl, "peer_timeout", c->peer_timeout,
                         &c->peer_timeout) < 0
            || opt_time (ovl, "join_timeout", c->join_timeout,
                         &c->join_timeout) < 0
            || opt_time (ovl, "fence_window", c->fence_window,
                         &c->fence_window) < 0
            || c->keepalive_interval <= 0
            || c->peer_timeout <= c->keepalive_interval
            || c->join_timeout < 0 || c->fence_window <= 0) {
            errbuf_set (errbuf, errlen,
                        "[overlay]: durations with peer_timeout "
                        "> keepalive_interval > 0, fence_window > 0, "
                        "join_timeout >= 0");
            errno = EINVAL;
            return -1;
        }
        c->event_buffer = (int)opt_int (ovl, "event_buffer", c->event_buffer);
        c->heal_threshold = (int)opt_int (ovl, "heal_threshold",
                                          c->heal_threshold);
        c->backlog_max = (int)opt_int (ovl, "backlog", c->backlog_max);
        c->ttl = (int)opt_int (ovl, "ttl", c->ttl);
        c->retry_bytes = opt_int (ovl, "retry_bytes", (long)c->retry_bytes);
        if (c->event_buffer < 16 || c->retry_bytes < 0) {
            errbuf_set (errbuf, errlen, "[overlay]: event_buffer >= 16, "
                        "retry_bytes >= 0");
            errno = EINVAL;
            return -1;
        }
    }
    return 0;
}

struct ctx {
    struct simnet *s;
    uint32_t n;
    uint64_t rng;
    struct scenario_plan *plan;
    char *errbuf;
    size_t errlen;
    uint8_t *hit;                 /* ranks a fault already took */
};

static uint64_t rnd (struct ctx *c)
{
    c->rng ^= c->rng >> 12;
    c->rng ^= c->rng << 25;
    c->rng ^= c->rng >> 27;
    return c->rng * 2685821657736338717ULL;
}

static double rnd_unit (struct ctx *c)
{
    return (double)(rnd (c) >> 11) / 9007199254740992.0;
}

static int fail (struct ctx *c, int i, const char *fmt, const char *what)
{
    char msg[256];

    snprintf (msg, sizeof (msg), fmt, what);
    return errbuf_fail (c->errbuf, c->errlen, EINVAL, "[[event]] %d: %s",
                        i + 1, msg);
}

/* The ranks an event names: "ranks" (an idset), or "count" random ranks
 * (never rank 0, and not one an earlier fault took), or for "rack" a run
 * of consecutive ones.  Returns how many, in out[], each marked taken
 * (later random picks and churn leave it alone). */
static int pick (struct ctx *c, json_t *ev, const char *op, uint32_t *out,
                 int i)
{
    const char *ranks = NULL;
    long count = opt_int (ev, "count", -1);
    int n = 0;

    json_unpack (ev, "{s?s}", "ranks", &ranks);
    if (ranks) {
        char err[128] = "";
        idset_t *set = idset_decode (ranks, err, sizeof (err));
        if (!set)
            return fail (c, i, "bad ranks: %s", err);
        for (int r = idset_first (set); r >= 0; r = idset_next (set, r))
            if ((uint32_t)r < c->n) {
                c->hit[r] = 1;
                out[n++] = (uint32_t)r;
            }
        idset_destroy (&set);
        return n;
    }
    if (count < 0)
        return fail (c, i, "%s needs count or ranks", op);
    if (count > (long)c->n - 1)
        count = (long)c->n - 1;
    if (!strcmp (op, "rack")) {
        uint32_t first = c->n > count + 1
                             ? 1 + (uint32_t)(rnd (c) % (c->n - count))
                             : 1;
        for (long k = 0; k < count; k++) {
            c->hit[first + k] = 1;
            out[n++] = first + (uint32_t)k;
        }
        return n;
    }
    for (long k = 0, tries = 0; k < count && tries < 100 * c->n; tries++) {
        uint32_t r = 1 + (uint32_t)(rnd (c) % (c->n - 1));
        if (c->hit[r])
            continue;
        c->hit[r] = 1;
        out[n++] = r;
        k++;
    }
    return n;
}

static void note_fault (struct ctx *c, double at, int hits)
{
    if (at < c->plan->fault_at)
        c->plan->fault_at = at;
    c->plan->failures += hits;
}

/* Kill rank r at t; with hang_first > 0 it stops reading that long
 * before: what its peers send it meanwhile waits unread and dies with it
 * (a relay that dies holding requests). */
static void kill_at (struct ctx *c, double t, uint32_t r, double hang_first)
{
    if (hang_first > 0)
        simnet_hang (c->s, t, r);
    simnet_crash (c->s, t + hang_first, r);
}

static int churn (struct ctx *c, json_t *ev, double at, int i)
{
    double length, every, hang_first;
    long max_down = opt_int (ev, "max_down", 1);
    uint8_t *down = calloc (c->n, 1);
    int ndown = 0, hits = 0;

    if (!down)
        return -1;
    if (opt_time (ev, "for", 10, &length) < 0
        || opt_time (ev, "every", 1, &every) < 0 || every <= 0
        || opt_time (ev, "hang_first", 0, &hang_first) < 0 || hang_first < 0
        || hang_first >= every) {
        free (down);
        return fail (c, i, "churn needs 'for' and 'every' durations, and "
                     "0 <= hang_first < every%s", "");
    }
    for (double t = at; t < at + length; t += every) {
        uint32_t r = 1 + (uint32_t)(rnd (c) % (c->n > 1 ? c->n - 1 : 1));
        if (c->n < 2)
            break;
        if (c->hit[r])
            continue;   /* another fault of the scenario has it */
        if (down[r]) {
            simnet_restart (c->s, t, r, 0);
            down[r] = 0;
            ndown--;
        }
        else if (ndown < max_down) {
            kill_at (c, t, r, hang_first);
            down[r] = 1;
            ndown++;
            hits++;
        }
    }
    /* everyone comes back at the end (after the last kill's hang) */
    for (uint32_t r = 1; r < c->n; r++)
        if (down[r])
            simnet_restart (c->s, at + length + hang_first, r, 0);
    free (down);
    note_fault (c, at, hits);
    return 0;
}

/* The keys each op takes (besides at and op). */
static const struct {
    const char *op;
    struct key keys[8];
} op_keys[] = {
    { "boot", { { "window", 't' }, { "never", 'n' } } },
    { "kill", { { "count", 'i' }, { "ranks", 's' }, { "hang_first", 't' } } },
    { "rack", { { "count", 'i' }, { "ranks", 's' }, { "hang_first", 't' } } },
    { "hang", { { "count", 'i' }, { "ranks", 's' }, { "for", 't' } } },
    { "restart", { { "count", 'i' }, { "ranks", 's' }, { "after", 't' },
                   { "skew", 't' } } },
    { "partition", { { "for", 't' }, { "split", 'i' } } },
    { "churn", { { "for", 't' }, { "max_down", 'i' }, { "every", 't' },
                 { "hang_first", 't' } } },
    { "rpc", { { "rate", 'n' }, { "for", 't' }, { "from", 's' },
               { "to", 's' }, { "name", 's' } } },
    { "publish", { { "rate", 'n' }, { "for", 't' }, { "publishers", 'i' },
                   { "from", 's' }, { "name", 's' } } },
};

static int check_event (struct ctx *c, json_t *ev, const char *op, int i)
{
    struct key keys[12] = { { "at", 't' }, { "op", 's' } };
    char what[32];

    for (size_t k = 0; k < sizeof (op_keys) / sizeof (op_keys[0]); k++) {
        if (strcmp (op_keys[k].op, op))
            continue;
        memcpy (keys + 2, op_keys[k].keys, sizeof (op_keys[k].keys));
        snprintf (what, sizeof (what), "[[event]] %d (%s)", i + 1, op);
        return check_keys (ev, what, keys, c->errbuf, c->errlen);
    }
    return fail (c, i, "unknown op '%s' (boot, kill, rack, hang, restart, "
                 "partition, churn, rpc, publish)", op);
}

/* The ranks an idset string under 'key' names, in *out (NULL and 0 if
 * the key is absent).  -1 on a bad set or an empty one. */
static int rank_list (struct ctx *c, json_t *ev, const char *key,
                      uint32_t **out, int *n, int i)
{
    const char *str = NULL;
    char err[128] = "";
    idset_t *set;

    *out = NULL;
    *n = 0;
    if (json_unpack (ev, "{s?s}", key, &str) < 0 || !str)
        return 0;
    if (!(set = idset_decode (str, err, sizeof (err))))
        return fail (c, i, "bad ranks: %s", err);
    if (!(*out = calloc (idset_count (set) + 1, sizeof (**out)))) {
        idset_destroy (&set);
        return -1;
    }
    for (int r = idset_first (set); r >= 0; r = idset_next (set, r))
        if ((uint32_t)r < c->n)
            (*out)[(*n)++] = (uint32_t)r;
    idset_destroy (&set);
    if (*n == 0) {
        free (*out);
        *out = NULL;
        return fail (c, i, "'%s' names no rank below the size", key);
    }
    return 0;
}

/* An rpc or publish event: a client load. */
static int load (struct ctx *c, json_t *ev, const char *op, double at, int i)
{
    struct scenario_plan *plan = c->plan;
    struct scenario_load *l = &plan->loads[plan->nloads];
    bool events = op[0] == 'p';
    double rate = opt_num (ev, "rate", 10), length;
    uint32_t *from = NULL, *to = NULL;
    int nfrom = 0, nto = 0, idx;
    const char *name = NULL, *fs = NULL, *ts = NULL;

    if (opt_time (ev, "for", 10, &length) < 0 || rate <= 0 || length <= 0)
        return fail (c, i, "%s: rate > 0 and a duration 'for' > 0", op);
    if (plan->nloads == SIM_LOADS_MAX)
        return fail (c, i, "more than %s rpc and publish loads", "64");
    if (rank_list (c, ev, "from", &from, &nfrom, i) < 0
        || rank_list (c, ev, "to", &to, &nto, i) < 0) {
        free (from);
        return -1;
    }
    idx = events ? simnet_event_load (c->s, at, length, rate,
                                      (int)opt_int (ev, "publishers", 1),
                                      from, nfrom)
                 : simnet_rpc_load (c->s, at, length, rate, from, nfrom, to,
                                    nto);
    free (from);
    free (to);
    if (idx < 0)
        return fail (c, i, "%s: cannot add the load", op);
    json_unpack (ev, "{s?s s?s s?s}", "name", &name, "from", &fs, "to", &ts);
    l->index = idx;
    l->events = events;
    l->at = at;
    l->length = length;
    l->rate = rate;
    if (name)
        snprintf (l->name, sizeof (l->name), "%s", name);
    else
        snprintf (l->name, sizeof (l->name), "%s %d", op, plan->nloads + 1);
    snprintf (l->from, sizeof (l->from), "%s", fs ? fs : "");
    snprintf (l->to, sizeof (l->to), "%s", ts ? ts : "");
    plan->nloads++;
    return 0;
}

static int apply_one (struct ctx *c, json_t *ev, int i, uint32_t *ranks)
{
    const char *op = NULL;
    double at, length, after, skew, hang_first;
    int n;

    if (!json_is_object (ev) || json_unpack (ev, "{s:s}", "op", &op) < 0
        || opt_time (ev, "at", 0, &at) < 0 || at < 0)
        return fail (c, i, "needs op and a time 'at'%s", "");
    if (check_event (c, ev, op, i) < 0)
        return -1;
    if (!strcmp (op, "boot")) {
        double window, never = opt_num (ev, "never", 0);
        if (opt_time (ev, "window", 0, &window) < 0 || never < 0
            || never >= 1)
            return fail (c, i, "boot: window is a duration, never 0..1%s", "");
        for (uint32_t r = 0; r < c->n; r++) {
            if (r > 0 && rnd_unit (c) < never)
                continue;   /* this one never starts */
            simnet_start (c->s, at + window * rnd_unit (c), r);
        }
        return 0;
    }
    if (!strcmp (op, "rpc") || !strcmp (op, "publish"))
        return load (c, ev, op, at, i);
    if (!strcmp (op, "partition")) {
        long split = opt_int (ev, "split", c->n / 2);
        if (opt_time (ev, "for", 5, &length) < 0 || split < 1
            || split >= (long)c->n)
            return fail (c, i, "partition: 'for' and 0 < split < size%s", "");
        simnet_partition (c->s, at, (uint32_t)split, true);
        simnet_partition (c->s, at + length, (uint32_t)split, false);
        note_fault (c, at, c->n - (uint32_t)split);
        return 0;
    }
    if (!strcmp (op, "churn"))
        return churn (c, ev, at, i);
    if (strcmp (op, "kill") && strcmp (op, "rack") && strcmp (op, "hang")
        && strcmp (op, "restart"))
        return fail (c, i, "unknown op '%s'", op);
    if ((n = pick (c, ev, op, ranks, i)) < 0)
        return -1;
    if (opt_time (ev, "for", 3, &length) < 0
        || opt_time (ev, "after", 0, &after) < 0
        || opt_time (ev, "skew", 0, &skew) < 0
        || opt_time (ev, "hang_first", 0, &hang_first) < 0 || hang_first < 0)
        return fail (c, i, "%s: bad duration", op);
    for (int k = 0; k < n; k++) {
        if (op[0] == 'h') {
            simnet_hang (c->s, at, ranks[k]);
            simnet_resume (c->s, at + length, ranks[k]);
        }
        else if (!strcmp (op, "restart")) {
            simnet_crash (c->s, at, ranks[k]);
            simnet_restart (c->s, at + after, ranks[k], skew);
        }
        else
            kill_at (c, at, ranks[k], hang_first);
    }
    note_fault (c, at, n);
    return 0;
}

int scenario_apply (json_t *sc, struct simnet *s, uint64_t seed,
                    struct scenario_plan *plan, char *errbuf, size_t errlen)
{
    json_t *events = json_object_get (sc, "event");
    json_t *sim = json_object_get (sc, "sim");
    const char *name = "scenario";
    struct ctx c = { .s = s, .plan = plan, .errbuf = errbuf,
                     .errlen = errlen };
    uint32_t *ranks;
    size_t i;
    json_t *ev;
    int rc = 0;

    json_unpack (sc, "{s?s}", "name", &name);
    memset (plan, 0, sizeof (*plan));
    snprintf (plan->name, sizeof (plan->name), "%s", name);
    plan->fault_at = INFINITY;
    c.n = (uint32_t)opt_int (sim, "size", 1);
    c.rng = seed * 0xd1b54a32d192ed03ULL + 0x8cb92ba72f3d8dd7ULL;
    if (opt_time (sim, "duration", 30, &plan->duration) < 0
        || plan->duration <= 0) {
        errbuf_set (errbuf, errlen, "[sim]: duration must be a positive "
                    "duration");
        errno = EINVAL;
        return -1;
    }
    if (!json_is_array (events) || json_array_size (events) == 0) {
        errbuf_set (errbuf, errlen, "a scenario needs [[event]] entries (at "
                    "least a boot)");
        errno = EINVAL;
        return -1;
    }
    if (!(ranks = calloc (c.n + 1, sizeof (*ranks)))
        || !(c.hit = calloc (c.n + 1, 1))) {
        free (ranks);
        return -1;
    }
    json_array_foreach (events, i, ev) {
        if ((rc = apply_one (&c, ev, (int)i, ranks)) < 0)
            break;
    }
    free (ranks);
    free (c.hit);
    return rc;
}
