/* SPDX-License-Identifier: LGPL-3.0-or-later */
/* test/lfstack.c: pushes from several threads while one takes: every
 * node is taken exactly once. */
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
    done_testing ();
}
