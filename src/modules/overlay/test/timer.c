/* SPDX-License-Identifier: LGPL-3.0-or-later */
/* test/timer.c: the core's timer queue (timer.c), on a clock the test
 * moves by hand.
 *
 * - timers run in deadline order, ties in the order they were armed;
 * - re-arming moves a timer, disarming takes it out, a run leaves the
 *   ones not yet due;
 * - the driver is told the earliest deadline each time it changes, and
 *   at the end of every run;
 * - a callback may arm another timer for now (it runs in the same run),
 *   re-arm itself for later, or destroy itself.
 */
#include <errno.h>
#include <math.h>
#include <string.h>

#include "src/common/libtap/tap.h"
#include "src/modules/overlay/timer.h"

struct trace {
    char order[64];          /* the names of the timers that ran */
    double notified;         /* the last deadline the driver was told */
    int notifies;
};

struct named {
    struct trace *tr;
    char name;
    struct ovtimer *self;
    struct ovtimer *other;   /* armed for 'when' by the callback */
    double when;
    int rearm;               /* re-arm self for 'when' this many times */
    int destroy;             /* destroy self when run */
};

static void on_notify (void *arg, double when)
{
    struct trace *tr = arg;
    tr->notified = when;
    tr->notifies++;
}

static void on_fire (void *arg)
{
    struct named *n = arg;
    size_t len = strlen (n->tr->order);

    if (len + 1 < sizeof (n->tr->order)) {
        n->tr->order[len] = n->name;
        n->tr->order[len + 1] = '\0';
    }
    if (n->other)
        ovtimer_arm (n->other, n->when);
    if (n->rearm > 0) {
        n->rearm--;
        ovtimer_arm (n->self, n->when);
    }
    if (n->destroy)
        ovtimer_destroy (&n->self);
}

static struct ovtimer *make (struct timerq *q, struct named *n,
                             struct trace *tr, char name)
{
    memset (n, 0, sizeof (*n));
    n->tr = tr;
    n->name = name;
    n->self = ovtimer_create (q, on_fire, n);
    return n->self;
}

static void test_order (void)
{
    struct trace tr = { .notified = -1 };
    struct timerq *q = timerq_create (on_notify, &tr);
    struct named a, b, c, d;

    ok (q && timerq_next (q) == INFINITY, "an empty queue: next is INFINITY");
    make (q, &a, &tr, 'a');
    make (q, &b, &tr, 'b');
    make (q, &c, &tr, 'c');
    make (q, &d, &tr, 'd');
    ok (a.self && !ovtimer_armed (a.self)
        && ovtimer_deadline (a.self) == INFINITY,
        "a new timer is disarmed");

    ovtimer_arm (a.self, 5.0);
    ok (tr.notified == 5.0 && timerq_next (q) == 5.0,
        "arming the first timer tells the driver: 5");
    ovtimer_arm (b.self, 3.0);
    ok (tr.notified == 3.0, "an earlier one: the driver is told 3");
    ovtimer_arm (c.self, 3.0);
    ovtimer_arm (d.self, 10.0);
    ok (tr.notified == 3.0 && tr.notifies == 2,
        "later ones and a tie change nothing: 2 notifications in all");

    ok (timerq_run (q, 2.0) == 0 && tr.order[0] == '\0',
        "a run at 2: nothing is due");
    ok (tr.notifies == 3 && tr.notified == 3.0,
        "but the driver is told the next deadline again after every run");
    ok (timerq_run (q, 4.0) == 2 && !strcmp (tr.order, "bc"),
        "at 4: b then c, due at 3, in the order they were armed (%s)",
        tr.order);
    ok (!ovtimer_armed (b.self) && ovtimer_deadline (b.self) == INFINITY,
        "a timer that ran is disarmed");
    ok (ovtimer_armed (a.self) && ovtimer_deadline (a.self) == 5.0
        && tr.notified == 5.0, "a (5) is left, and is next");

    ovtimer_arm (d.self, 1.0);
    ok (timerq_next (q) == 1.0 && tr.notified == 1.0,
        "re-arming d from 10 to 1 moves it to the front");
    ovtimer_disarm (d.self);
    ok (!ovtimer_armed (d.self) && timerq_next (q) == 5.0
        && tr.notified == 5.0, "disarming it: a is next again");
    ovtimer_disarm (d.self);
    ok (timerq_next (q) == 5.0, "disarming twice is harmless");

    tr.order[0] = '\0';
    ovtimer_arm (c.self, 5.0);
    ovtimer_arm (b.self, 4.0);
    ok (timerq_run (q, 100.0) == 3 && !strcmp (tr.order, "bac"),
        "at 100: b (4), then a and c (5, a armed first): %s", tr.order);
    ok (timerq_next (q) == INFINITY && tr.notified == INFINITY,
        "nothing armed: the driver is told INFINITY");
    timerq_destroy (&q);
    ok (q == NULL, "timerq_destroy frees the queue and its timers");
}

static void test_callbacks (void)
{
    struct trace tr = { 0 };
    struct timerq *q = timerq_create (NULL, NULL);
    struct named a, b, c;

    make (q, &a, &tr, 'a');
    make (q, &b, &tr, 'b');
    make (q, &c, &tr, 'c');

    a.other = b.self;
    a.when = 2.0;
    ovtimer_arm (a.self, 1.0);
    ok (timerq_run (q, 2.0) == 2 && !strcmp (tr.order, "ab"),
        "a callback arming another timer for now: it runs in the same run");

    tr.order[0] = '\0';
    c.rearm = 2;
    c.when = 7.0;
    ovtimer_arm (c.self, 3.0);
    ok (timerq_run (q, 5.0) == 1 && ovtimer_deadline (c.self) == 7.0,
        "a callback re-arming itself for later runs once, armed for 7");
    ok (timerq_run (q, 7.0) == 2 && c.rearm == 0,
        "re-arming itself for now (7) runs it again in the same run");
    ok (!ovtimer_armed (c.self) && !strcmp (tr.order, "ccc")
        && timerq_run (q, 7.0) == 0,
        "then it stays disarmed: %s", tr.order);

    b.destroy = 1;
    ovtimer_arm (b.self, 8.0);
    ovtimer_arm (a.self, 9.0);
    a.other = NULL;
    ok (timerq_run (q, 9.0) == 2 && b.self == NULL,
        "a callback destroying its own timer, and the run goes on");
    ovtimer_destroy (&b.self);
    ok (1, "destroying a NULL timer is harmless");

    errno = 0;
    ok (ovtimer_create (q, NULL, NULL) == NULL && errno == EINVAL,
        "a timer without a callback: EINVAL");
    ok (ovtimer_create (NULL, on_fire, &a) == NULL && errno == EINVAL,
        "a timer without a queue: EINVAL");
    ovtimer_arm (a.self, 50.0);
    timerq_destroy (&q);
    ok (q == NULL, "destroying a queue with an armed timer");
}

int main (void)
{
    test_order ();
    test_callbacks ();
    return done_testing ();
}
