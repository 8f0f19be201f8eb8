/* Unit tests for the event layer's logic, on a simulated instance.
 *
 * N layers exchange messages through an in-memory queue instead of
 * sockets; the test drops messages, takes brokers down and checks that
 * every live broker delivers every event exactly once, in order, that the
 * tree re-forms around a down broker, and that an unrepairable gap is
 * reported as lost.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "src/common/libtap/tap.h"
#include "src/modules/overlay/events.h"

#define N 16
#define MAXQ 200000
#define MAXSEQ 2000

struct qmsg {
    uint32_t from, to;
    int kind;            /* EV_TREE/EV_REPAIR, or 100 + EV_CTL_* */
    msg_t *event;
    json_t *ctl;
};

struct sim;
struct node {
    struct sim *s;
    uint32_t rank;
    uint32_t got[MAXSEQ];
    int ngot;
    int in_order;        /* every delivery was last + 1 (or after a loss) */
    uint32_t last;
    int lost_calls;
    uint32_t lost_first;
    uint32_t lost_from, lost_to;
};

struct sim {
    struct bgn_topo *topo;
    struct evlayer *ev[N];
    struct node node[N];
    int down[N];          /* fenced: others route around it */
    int cut[N];           /* alive but its messages vanish */
    struct qmsg q[MAXQ];
    int qhead, qtail;
    double drop_tree;     /* probability an EV_TREE message is lost */
    double now;
};

static void enqueue (struct sim *s, struct qmsg m)
{
    if (s->qtail >= MAXQ) {
        msg_destroy (&m.event);
        json_decref (m.ctl);
        return;
    }
    s->q[s->qtail++] = m;
}

static int sim_send (void *arg, uint32_t to, int kind, const msg_t *event)
{
    struct node *n = arg;
    struct qmsg m = { .from = n->rank, .to = to, .kind = kind,
                      .event = msg_copy (event) };
    enqueue (n->s, m);
    return 0;
}

static int sim_control (void *arg, uint32_t to, int kind, json_t *o)
{
    struct node *n = arg;
    struct qmsg m = { .from = n->rank, .to = to, .kind = 100 + kind,
                      .ctl = json_deep_copy (o) };
    enqueue (n->s, m);
    return 0;
}

static int sim_is_down (void *arg, uint32_t rank)
{
    struct node *n = arg;
    return n->s->down[rank];
}

static void sim_deliver (void *arg, const msg_t *event)
{
    struct node *n = arg;
    uint32_t seq = 0;
    msg_get_seq (event, &seq);
    if (seq != n->last + 1)
        n->in_order = 0;
    n->last = seq;
    if (n->ngot < MAXSEQ)
        n->got[n->ngot++] = seq;
}

static void sim_lost (void *arg, uint32_t from, uint32_t to)
{
    struct node *n = arg;
    n->lost_calls++;
    if (n->lost_calls == 1)
        n->lost_first = from;
    diag ("rank %u: lost %u..%u", (unsigned)n->rank, (unsigned)from,
          (unsigned)to);
    n->lost_from = from;
    n->lost_to = to;
    n->last = to;   /* deliveries continue after the gap */
}

static uint32_t sim_repair_peer (void *arg, int attempt)
{
    struct node *n = arg;
    int k = 0;
    for (uint32_t r = 0; r < N; r++) {
        uint32_t cand = (n->rank + 1 + r) % N;
        if (cand == n->rank || n->s->down[cand])
            continue;
        if (k++ == attempt)
            return cand;
    }
    return UINT32_MAX;
}

static const struct evlayer_ops ops = {
    .send = sim_send,
    .control = sim_control,
    .is_down = sim_is_down,
    .deliver = sim_deliver,
    .lost = sim_lost,
    .repair_peer = sim_repair_peer,
};

static struct sim *sim_create (int buffer)
{
    struct sim *s = calloc (1, sizeof (*s));
    s->topo = bgn_topo_create ("bgn", N);
    for (int i = 0; i < N; i++) {
        s->node[i].s = s;
        s->node[i].rank = i;
        s->node[i].in_order = 1;
        s->ev[i] = evlayer_create (s->topo, i, buffer, 1.0, &ops, &s->node[i]);
    }
    evlayer_set_ready (s->ev[0]);
    /* what the hellos at start-up tell everyone: the sequence is at 0 */
    for (int i = 1; i < N; i++)
        evlayer_seq_hint (s->ev[i], 0);
    return s;
}

static void sim_destroy (struct sim *s)
{
    for (int i = s->qhead; i < s->qtail; i++) {
        msg_destroy (&s->q[i].event);
        json_decref (s->q[i].ctl);
    }
    for (int i = 0; i < N; i++)
        evlayer_destroy (&s->ev[i]);
    bgn_topo_destroy (&s->topo);
    free (s);
}

/* Deliver queued messages until the queue is empty. */
static void sim_run (struct sim *s)
{
    while (s->qhead < s->qtail) {
        struct qmsg m = s->q[s->qhead++];
        int lose = s->down[m.to] || s->cut[m.to] || s->cut[m.from]
                   || (m.kind == EV_TREE && s->drop_tree > 0
                       && (double)rand () / RAND_MAX < s->drop_tree);
        if (lose) {
            msg_destroy (&m.event);
            json_decref (m.ctl);
            continue;
        }
        if (m.kind >= 100) {
            evlayer_recv_control (s->ev[m.to], m.from, m.kind - 100, m.ctl);
            json_decref (m.ctl);
        }
        else
            evlayer_recv_event (s->ev[m.to], m.from, m.kind, m.event);
    }
    s->qhead = s->qtail = 0;
}

static void sim_tick (struct sim *s, double dt)
{
    s->now += dt;
    for (int i = 0; i < N; i++)
        if (!s->down[i])
            evlayer_tick (s->ev[i], s->now);
    sim_run (s);
}

static void publish (struct sim *s, int count)
{
    for (int i = 0; i < count; i++) {
        msg_t *ev = msg_event_create ("test.x", "{}");
        evlayer_publish (s->ev[0], ev);
        sim_run (s);
    }
}

static int complete (struct node *n, uint32_t first, uint32_t last)
{
    if (n->ngot != (int)(last - first + 1))
        return 0;
    for (int i = 0; i < n->ngot; i++)
        if (n->got[i] != first + i)
            return 0;
    return 1;
}

int main (void)
{
    struct sim *s;
    int all;

    /* 1: no loss */
    s = sim_create (256);
    publish (s, 100);
    all = 1;
    for (int i = 0; i < N; i++)
        all &= complete (&s->node[i], 1, 100) && s->node[i].in_order;
    ok (all, "no loss: every broker delivers 1..100 once, in order");
    sim_destroy (s);

    /* 2: 10% of tree messages lost; syncs and repairs fill the gaps */
    srand (7);
    s = sim_create (256);
    s->drop_tree = 0.10;
    publish (s, 300);
    for (int t = 0; t < 20; t++)
        sim_tick (s, 1.0);
    all = 1;
    for (int i = 0; i < N; i++)
        all &= complete (&s->node[i], 1, 300) && s->node[i].in_order;
    ok (all, "10%% loss: repairs give every broker 1..300 once, in order");
    json_t *st = evlayer_stats (s->ev[5]);
    json_int_t dups = -1;
    json_unpack (st, "{s:I}", "duplicates", &dups);
    char *sts = json_dumps (st, JSON_COMPACT);
    diag ("rank 5 stats: %s", sts ? sts : "?");
    free (sts);
    json_decref (st);
    sim_destroy (s);

    /* 3: an interior broker is down: its subtree still gets everything */
    s = sim_create (256);
    s->down[1] = 1;
    s->down[2] = 1;
    publish (s, 50);
    sim_tick (s, 1.0);
    all = 1;
    for (int i = 0; i < N; i++)
        if (!s->down[i])
            all &= complete (&s->node[i], 1, 50);
    ok (all, "ranks 1 and 2 down: the tree re-forms, all others get 1..50");
    ok (s->node[3].ngot == 50, "rank 3 (below 1 and 2) got all 50");
    sim_destroy (s);

    /* 4: a joining broker starts from the current seq */
    s = sim_create (256);
    s->cut[9] = 1;
    publish (s, 20);
    s->cut[9] = 0;
    evlayer_destroy (&s->ev[9]);
    memset (s->node[9].got, 0, sizeof (s->node[9].got));
    s->node[9].ngot = 0;
    s->node[9].last = 0;
    s->ev[9] = evlayer_create (s->topo, 9, 256, 1.0, &ops, &s->node[9]);
    evlayer_seq_hint (s->ev[9], 20);   /* its first hello after restart */
    publish (s, 5);
    ok (complete (&s->node[9], 21, 25) && s->node[9].lost_calls == 0,
        "a rejoined broker delivers from the current seq on (21..25)");
    sim_destroy (s);

    /* 5: a gap older than every buffer is reported as lost, then go on */
    s = sim_create (16);
    s->cut[12] = 1;
    publish (s, 40);
    s->cut[12] = 0;
    publish (s, 1);
    for (int t = 0; t < 10; t++)
        sim_tick (s, 1.0);
    struct node *n = &s->node[12];
    ok (n->lost_calls >= 1 && n->lost_first == 1,
        "rank 12 reports the events no buffer still has as lost");
    ok (n->ngot >= 1 && n->got[n->ngot - 1] == 41,
        "rank 12 delivers the events after the loss (ends at 41)");
    diag ("rank 12: lost %u..%u, delivered %d", n->lost_from, n->lost_to,
          n->ngot);
    int nodup = 1;
    for (int i = 1; i < n->ngot; i++)
        if (n->got[i] <= n->got[i - 1])
            nodup = 0;
    ok (nodup, "rank 12 never delivers an event twice or out of order");
    sim_destroy (s);

    /* 6: publish errors */
    s = sim_create (256);
    msg_t *ev = msg_event_create ("x", NULL);
    errno = 0;
    ok (evlayer_publish (s->ev[3], ev) < 0 && errno == EINVAL,
        "publishing on rank 3 is EINVAL");
    struct evlayer *fresh = evlayer_create (s->topo, 0, 256, 1.0, &ops,
                                            &s->node[0]);
    ev = msg_event_create ("x", NULL);
    errno = 0;
    ok (evlayer_publish (fresh, ev) < 0 && errno == EAGAIN,
        "a restarted rank 0 refuses to publish before it knows the seq");
    evlayer_seq_hint (fresh, 1234);
    ev = msg_event_create ("x", NULL);
    ok (evlayer_publish (fresh, ev) == 1235,
        "after a peer's hint it continues at 1235");
    evlayer_destroy (&fresh);
    ok (evlayer_create (s->topo, 0, 8, 1.0, &ops, NULL) == NULL
        && errno == EINVAL, "a buffer below 16 is EINVAL");
    sim_destroy (s);
    return done_testing ();
}
