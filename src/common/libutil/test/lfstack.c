/* SPDX-License-Identifier: LGPL-3.0-or-later */
/* test/lfstack.c: pushes from several threads while one takes: every
 * node is taken exactly once; and after the taker orphans the stack,
 * its pushers take back what they push. */
#include <pthread.h>
#include <stdlib.h>

#include "src/common/libtap/tap.h"
#include "src/common/libutil/lfstack.h"

#define PUSHERS 3
#define EACH 200000

struct item {
    struct lfstack_node node;   /* first: a node is its item */
    int pusher, seq;
};

static struct lfstack_node *top;
static int pushing = PUSHERS;

static void *pusher (void *arg)
{
    int id = (int)(long)arg;

    for (int i = 0; i < EACH; i++) {
        struct item *it = malloc (sizeof (*it));
        if (!it)
            abort ();
        it->pusher = id;
        it->seq = i;
        lfstack_push (&top, &it->node);
    }
    __atomic_sub_fetch (&pushing, 1, __ATOMIC_SEQ_CST);
    return NULL;
}

/* The orphan handshake: pushers push_or_take while the taker takes,
 * then orphans the stack mid-way; every node is freed once, by the taker
 * or by its pusher, and none is left on the stack. */
static struct lfstack_node *otop;
static int orphaned;
static long freed_by_pushers;

static void *orphan_pusher (void *arg)
{
    long mine = 0;

    for (int i = 0; i < EACH; i++) {
        struct item *it = malloc (sizeof (*it));
        if (!it)
            abort ();
        struct lfstack_node *back = lfstack_push_or_take (&otop, &it->node,
                                                          &orphaned);
        while (back) {
            struct lfstack_node *next = back->next;
            free (back);
            mine++;
            back = next;
        }
    }
    __atomic_add_fetch (&freed_by_pushers, mine, __ATOMIC_SEQ_CST);
    return NULL;
}

static void check_orphan (void)
{
    pthread_t t[PUSHERS];
    long by_taker = 0;

    for (long i = 0; i < PUSHERS; i++)
        pthread_create (&t[i], NULL, orphan_pusher, NULL);
    while (by_taker < (long)PUSHERS * EACH / 10)
        for (struct lfstack_node *n = lfstack_take (&otop), *next; n;
             n = next) {
            next = n->next;
            free (n);
            by_taker++;
        }
    for (struct lfstack_node *n = lfstack_orphan (&otop, &orphaned), *next; n;
         n = next) {
        next = n->next;
        free (n);
        by_taker++;
    }
    for (int i = 0; i < PUSHERS; i++)
        pthread_join (t[i], NULL);
    ok (by_taker + freed_by_pushers == (long)PUSHERS * EACH && otop == NULL,
        "orphaned mid-way: %ld freed by the taker, %ld taken back by their "
        "pushers, none left", by_taker, freed_by_pushers);
}

int main (void)
{
    pthread_t t[PUSHERS];
    static unsigned char seen[PUSHERS][EACH];
    long taken = 0, twice = 0, takes = 0;
    struct lfstack_node n1, n2;

    plan (NO_PLAN);
    ok (lfstack_take (&top) == NULL, "an empty stack: nothing to take");
    lfstack_push (&top, &n1);
    lfstack_push (&top, &n2);
    ok (lfstack_take (&top) == &n2 && n2.next == &n1 && n1.next == NULL
        && top == NULL, "take: newest first, the stack left empty");

    for (long i = 0; i < PUSHERS; i++)
        pthread_create (&t[i], NULL, pusher, (void *)i);
    for (;;) {
        int done = __atomic_load_n (&pushing, __ATOMIC_SEQ_CST) == 0;
        struct lfstack_node *n = lfstack_take (&top);
        if (n)
            takes++;
        while (n) {
            struct item *it = (struct item *)n;
            n = n->next;
            if (seen[it->pusher][it->seq]++)
                twice++;
            taken++;
            free (it);
        }
        if (done && !__atomic_load_n (&top, __ATOMIC_SEQ_CST))
            break;
    }
    for (int i = 0; i < PUSHERS; i++)
        pthread_join (t[i], NULL);
    ok (taken == (long)PUSHERS * EACH && twice == 0,
        "%d threads pushed %d each while one took (%ld takes): %ld taken, "
        "none twice", PUSHERS, EACH, takes, taken);
    check_orphan ();
    done_testing ();
}
