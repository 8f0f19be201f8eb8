/* SPDX-License-Identifier: LGPL-3.0-or-later */
/* test-client.c: libclient's request path, watched from inside.
 *
 *   bgn-test-client allocs COUNT
 *       after 200 warm-up round trips, make COUNT rounds of two
 *       broker.ping RPCs in flight at once (the second answered first
 *       waits in its rpc) and print "rpcs=N allocs=A": the heap
 *       allocations the calling thread
 *       made meanwhile (libzmq's I/O thread is not counted: it belongs to
 *       the transport, not to libclient).
 *
 * The count comes from malloc, calloc and realloc defined here, which
 * take precedence over the C library's in every library of the process
 * and pass the calls on to glibc's __libc_* entry points.  Under a
 * sanitizer, which brings its own allocator, it prints "allocs=skip".
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "src/common/libclient/client.h"

#if defined(__SANITIZE_ADDRESS__)
#define COUNTING 0
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define COUNTING 0
#endif
#endif
#ifndef COUNTING
#define COUNTING 1
#endif

static __thread int counting;       /* only in the thread that asks */
static unsigned long allocs;

#if COUNTING
extern void *__libc_malloc (size_t size);
extern void *__libc_calloc (size_t n, size_t size);
extern void *__libc_realloc (void *p, size_t size);

void *malloc (size_t size)
{
    if (counting)
        allocs++;
    return __libc_malloc (size);
}

void *calloc (size_t n, size_t size)
{
    if (counting)
        allocs++;
    return __libc_calloc (n, size);
}

void *realloc (void *p, size_t size)
{
    if (counting)
        allocs++;
    return __libc_realloc (p, size);
}
#endif

static int ping (bgn_t *h, const char *payload)
{
    bgn_rpc_t *rpc = bgn_rpc (h, "broker.ping", 0, payload, 0);
    const char *out;
    int rc = rpc && bgn_rpc_get (rpc, &out) == 0 && out ? 0 : -1;

    bgn_rpc_destroy (&rpc);
    return rc;
}

int main (int argc, char **argv)
{
    char err[256];
    bgn_t *h;
    long count, done = 0;

    if (argc < 3 || strcmp (argv[1], "allocs") != 0
        || (count = strtol (argv[2], NULL, 10)) < 1) {
        fprintf (stderr, "Usage: bgn-test-client allocs COUNT\n");
        return 1;
    }
    if (!(h = bgn_open (NULL, err, sizeof (err)))) {
        fprintf (stderr, "bgn-test-client: %s\n", err);
        return 1;
    }
    for (int i = 0; i < 200; i++) {
        if (ping (h, "{\"warm\":1}") < 0) {
            perror ("bgn-test-client: warm-up");
            return 1;
        }
    }
    counting = 1;
    for (long i = 0; i < count; i++) {
        /* payloads of varying length, a window of two in flight */
        bgn_rpc_t *a = bgn_rpc (h, "broker.ping", 0,
                                i % 2 ? "{\"n\":1}" : "{\"name\":\"x\"}", 0);
        bgn_rpc_t *b = bgn_rpc (h, "broker.ping", 0, "{\"m\":[1,2,3]}", 0);
        if (a && b && bgn_rpc_get (b, NULL) == 0 && bgn_rpc_get (a, NULL) == 0)
            done += 2;
        bgn_rpc_destroy (&a);
        bgn_rpc_destroy (&b);
    }
    counting = 0;
    if (COUNTING)
        printf ("rpcs=%ld allocs=%lu\n", done, allocs);
    else
        printf ("rpcs=%ld allocs=skip\n", done);
    bgn_close (&h);
    return done == 2 * count ? 0 : 1;
}

/* vi: ts=4 sw=4 expandtab
 */
