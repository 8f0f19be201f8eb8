/* SPDX-License-Identifier: LGPL-3.0-or-later */
/* lfstack.h: a lock-free stack of records, pushed by any thread, taken
 * whole by one.
 *
 * libzmq frees what it was sent by reference in its own I/O thread; a
 * broker that lets it free there loses its malloc cache on every
 * message (each allocation then takes malloc's slow path).  Instead the
 * I/O thread pushes the record here and the broker's thread takes the
 * whole stack and frees it.  Taking everything with one exchange (never
 * popping one node) is what keeps the stack free of the ABA problem
 * with any number of pushers.
 *
 * When the taking thread goes away for good (the socket or table it
 * serves is destroyed), it marks the stack orphaned (lfstack_orphan);
 * a pusher that then finds the mark takes back what it pushed
 * (lfstack_push_or_take) and frees it itself.  Nothing is left behind:
 * either the pusher sees the mark, or the orphaning thread's take sees
 * the push.
 *
 * The record embeds a struct lfstack_node; the stack is one pointer
 * (zero: empty).  Header only: the functions are a few atomics.
 */
#ifndef BGN_LIBUTIL_LFSTACK_H
#define BGN_LIBUTIL_LFSTACK_H

#include <stdbool.h>

struct lfstack_node {
    struct lfstack_node *next;
};

/* Push node (any thread). */
static inline void lfstack_push (struct lfstack_node **top,
                                 struct lfstack_node *node)
{
    node->next = __atomic_load_n (top, __ATOMIC_RELAXED);
    while (!__atomic_compare_exchange_n (top, &node->next, node, true,
                                         __ATOMIC_SEQ_CST, __ATOMIC_RELAXED))
        ;
}

/* Take every node (newest first, linked by next), leaving the stack
 * empty; NULL if it was.  Any thread, but the nodes it gets are its own.
 * Its first look is a relaxed load (cheap when empty, as it mostly is). */
static inline struct lfstack_node *lfstack_take (struct lfstack_node **top)
{
    if (!__atomic_load_n (top, __ATOMIC_RELAXED))
        return NULL;
    return __atomic_exchange_n (top, NULL, __ATOMIC_SEQ_CST);
}

/* Push node; if the stack is orphaned (*orphaned set), take everything
 * back for the caller to free.  NULL otherwise. */
static inline struct lfstack_node *lfstack_push_or_take (
    struct lfstack_node **top, struct lfstack_node *node, const int *orphaned)
{
    lfstack_push (top, node);
    if (__atomic_load_n (orphaned, __ATOMIC_SEQ_CST))
        return lfstack_take (top);
    return NULL;
}

/* Mark the stack orphaned (*orphaned) and take what is on it, for the
 * caller to free: later pushes are taken back by their pushers.  The
 * fence orders the mark before the take's first (relaxed) load, so a
 * push the pusher saw no mark after is seen here. */
static inline struct lfstack_node *lfstack_orphan (struct lfstack_node **top,
                                                   int *orphaned)
{
    __atomic_store_n (orphaned, 1, __ATOMIC_SEQ_CST);
    __atomic_thread_fence (__ATOMIC_SEQ_CST);
    return lfstack_take (top);
}

#endif /* BGN_LIBUTIL_LFSTACK_H */
