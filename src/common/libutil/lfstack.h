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
 * Its first look is a relaxed load: a thread that must see every push
 * after a store of its own (a "no more pushes here" flag the pushers
 * read) puts a sequentially consistent fence between the two. */
static inline struct lfstack_node *lfstack_take (struct lfstack_node **top)
{
    if (!__atomic_load_n (top, __ATOMIC_RELAXED))
        return NULL;
    return __atomic_exchange_n (top, NULL, __ATOMIC_SEQ_CST);
}

#endif /* BGN_LIBUTIL_LFSTACK_H */
