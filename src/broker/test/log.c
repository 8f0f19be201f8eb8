/* SPDX-License-Identifier: LGPL-3.0-or-later */
/* test/log.c: the broker logger's flood control and ring buffer (log.h).
 *
 * stderr is sent to a temporary file so the lines the logger prints can
 * be counted; a fake clock drives the rate-limit windows.  The ring keeps
 * its own level and size: lines stderr does not show are still kept.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "src/common/libtap/tap.h"
#include "src/broker/log.h"

static double fake_now;

static double fake_clock (void *arg)
{
    return fake_now;
}

static char path[] = "/tmp/bgn-log-test-XXXXXX";

/* Lines printed to stderr since the last call containing 'needle'. */
static int printed (const char *needle, char *last, size_t len)
{
    static long offset;
    char line[2048];
    int n = 0;
    FILE *f;

    fflush (stderr);
    if (!(f = fopen (path, "r")))
        return -1;
    fseek (f, offset, SEEK_SET);
    while (fgets (line, sizeof (line), f)) {
        if (strstr (line, needle)) {
            n++;
            if (last)
                snprintf (last, len, "%s", line);
        }
    }
    offset = ftell (f);
    fclose (f);
    return n;
}

struct ring_count {
    int n;
    uint64_t first, last;
    char text[256];
};

static void count_entry (const struct log_entry *e, void *arg)
{
    struct ring_count *c = arg;
    if (c->n++ == 0)
        c->first = e->seq;
    c->last = e->seq;
    snprintf (c->text, sizeof (c->text), "%s", e->text);
}

static void flood (struct logger *l, int times, int who)
{
    for (int i = 0; i < times; i++)
        logger_log (l, LOG_WARNING, "peer %d refused our certificate", who);
}

struct ring_match {
    const char *needle;
    int n;
};

static void match_entry (const struct log_entry *e, void *arg)
{
    struct ring_match *m = arg;
    if (strstr (e->text, m->needle))
        m->n++;
}

/* How many ring entries contain 'needle'. */
static int in_ring (struct logger *l, const char *needle)
{
    struct ring_match m = { .needle = needle };

    logger_ring_foreach (l, 0, match_entry, &m);
    return m.n;
}

/* The ring's heap stays within its byte bound: the oldest lines go. */
static void test_ring_bytes (void)
{
    struct logger *l = logger_create ("bgn-broker", LOG_ERR);
    struct ring_count rc = { 0 };
    char pad[301];
    size_t most = 0;

    memset (pad, 'x', sizeof (pad) - 1);
    pad[sizeof (pad) - 1] = '\0';
    ok (l && logger_ring_bound (l) == LOGGER_RING_BYTES,
        "a new ring is bounded at %u bytes", LOGGER_RING_BYTES);
    ok (logger_set_ring (l, LOG_DEBUG, 16) == 0
        && logger_set_ring_bytes (l, 4096) == 0
        && logger_set_ring_bytes (l, 0) < 0 && errno == EINVAL,
        "16 lines and 4096 bytes (0 refused with EINVAL)");
    for (int i = 0; i < 40; i++) {
        logger_log (l, LOG_DEBUG, "line %d %s", i, pad);
        if (logger_ring_bytes (l) > most)
            most = logger_ring_bytes (l);
    }
    ok (most <= 4096, "the ring's heap never passed its bound (%zu bytes "
        "at most)", most);
    logger_ring_foreach (l, 0, count_entry, &rc);
    ok (rc.n >= 1 && rc.n < 16 && rc.last == 40
        && rc.last - rc.first + 1 == (uint64_t)rc.n
        && !strncmp (rc.text, "line 39 ", 8),
        "the newest %d lines stay, in order, the oldest dropped", rc.n);
    ok (logger_ring_evicted (l) == (uint64_t)(40 - rc.n),
        "dropped lines counted (%llu)",
        (unsigned long long)logger_ring_evicted (l));
    logger_ring_clear (l);
    ok (logger_ring_bytes (l) < 4096 && in_ring (l, "line") == 0,
        "clear gives the lines' heap back");
    logger_destroy (&l);
}

static void test_ring_level (void)
{
    struct logger *l = logger_create ("bgn-broker", LOG_NOTICE);
    struct ring_count rc = { 0 };
    char last[2048] = "";

    ok (l && logger_get_ring_level (l) == LOG_DEBUG
            && logger_get_ring_size (l) == LOGGER_RING_SIZE,
        "by default the ring keeps debug lines, %d of them",
        LOGGER_RING_SIZE);
    logger_set_rank (l, 0);
    logger_log (l, LOG_INFO, "up: rank 0 of 4, pmi bootstrap");
    logger_log (l, LOG_DEBUG, "overlay bgn: 3 peers, bind ipc://x");
    logger_log (l, LOG_WARNING, "peer 2 lost");
    ok (printed ("bgn-broker[0]:", last, sizeof (last)) == 1
        && strstr (last, "warning: peer 2 lost"),
        "stderr at notice: only the warning is printed: %s", last);
    ok (in_ring (l, "pmi bootstrap") == 1 && in_ring (l, "3 peers") == 1
        && in_ring (l, "peer 2 lost") == 1,
        "the ring keeps all three");

    errno = 0;
    ok (logger_set_ring (l, LOG_DEBUG + 1, 8) < 0 && errno == EINVAL,
        "a level above debug is refused (EINVAL)");
    errno = 0;
    ok (logger_set_ring (l, LOG_INFO, 0) < 0 && errno == EINVAL,
        "a ring of 0 lines is refused (EINVAL)");
    ok (in_ring (l, "pmi bootstrap") == 1, "and the ring stays as it was");

    ok (logger_set_ring (l, LOG_INFO, 4) == 0
        && logger_get_ring_level (l) == LOG_INFO
        && logger_get_ring_size (l) == 4,
        "the ring set to info, 4 lines");
    ok (in_ring (l, "pmi bootstrap") == 0, "which drops the lines kept");
    logger_log (l, LOG_DEBUG, "a debug line");
    ok (in_ring (l, "a debug line") == 0
        && printed ("a debug line", NULL, 0) == 0,
        "a debug line is now neither kept nor printed");
    for (int i = 0; i < 6; i++)
        logger_log (l, LOG_INFO, "info line %d", i);
    logger_ring_foreach (l, 0, count_entry, &rc);
    ok (rc.n == 4 && rc.last - rc.first == 3
        && !strcmp (rc.text, "info line 5"),
        "the ring keeps the last 4 info lines, in order (%s)", rc.text);

    ok (logger_set_ring (l, LOG_ERR, 4) == 0, "the ring set to error");
    logger_set_level (l, LOG_DEBUG);
    logger_log (l, LOG_DEBUG, "printed only");
    ok (printed ("printed only", NULL, 0) == 1
        && in_ring (l, "printed only") == 0,
        "stderr at debug, ring at error: a debug line is printed, not kept");
    logger_destroy (&l);
}

int main (void)
{
    struct logger *l;
    struct ring_count rc = { 0 };
    char last[2048] = "";
    int fd = mkstemp (path);

    if (fd < 0 || !freopen (path, "w", stderr))
        bail_out ("cannot redirect stderr");
    close (fd);
    l = logger_create ("bgn-broker", LOG_DEBUG);
    logger_set_rank (l, 3);
    logger_set_clock (l, fake_clock, NULL);

    flood (l, 25, 7);
    ok (printed ("refused our certificate", NULL, 0) == LOGGER_BURST,
        "25 warnings in a window print %d lines", LOGGER_BURST);
    ok (logger_suppressed (l) == 25 - LOGGER_BURST, "15 counted as "
        "suppressed");
    logger_log (l, LOG_ERR, "another message");
    ok (printed ("another message", NULL, 0) == 1,
        "another message has its own budget");

    fake_now += LOGGER_INTERVAL;
    flood (l, 1, 8);
    ok (printed ("refused our certificate", last, sizeof (last)) == 1
        && strstr (last, "bgn-broker[3]: warning: peer 8 refused our "
                   "certificate (15 similar messages suppressed)"),
        "the next window's first line carries the count: %s", last);

    flood (l, 2 * LOGGER_BURST, 9);
    printed ("refused", NULL, 0);
    fake_now += LOGGER_INTERVAL;
    logger_flush (l);
    ok (printed ("suppressed; the last: peer 9 refused", last,
                 sizeof (last)) == 1
        && strstr (last, "11 similar messages suppressed; the last: peer 9 "
                   "refused our certificate"),
        "a flood that stopped is reported by flush: %s", last);
    logger_flush (l);
    ok (printed ("suppressed", NULL, 0) == 0, "and only once");

    for (int i = 0; i < LOGGER_RING_SIZE + 10; i++)
        logger_log (l, LOG_DEBUG, "debug line %d", i);
    ok (printed ("debug line", NULL, 0) == LOGGER_RING_SIZE + 10,
        "debug lines are not limited");
    logger_ring_foreach (l, 0, count_entry, &rc);
    ok (rc.n == LOGGER_RING_SIZE, "the ring keeps the last %d lines",
        LOGGER_RING_SIZE);
    ok (rc.last - rc.first + 1 == LOGGER_RING_SIZE
        && !strcmp (rc.text, "debug line 1033"),
        "in order, the newest last (%s)", rc.text);
    memset (&rc, 0, sizeof (rc));
    logger_ring_foreach (l, 0 + (uint64_t)-1 / 2, count_entry, &rc);
    ok (rc.n == 0, "nothing after a sequence beyond the last");
    logger_ring_clear (l);
    memset (&rc, 0, sizeof (rc));
    logger_ring_foreach (l, 0, count_entry, &rc);
    ok (rc.n == 0, "clear empties the ring");
    logger_log (l, LOG_NOTICE, "after clear");
    logger_ring_foreach (l, 0, count_entry, &rc);
    ok (rc.n == 1 && rc.first > LOGGER_RING_SIZE,
        "sequence numbers keep counting after a clear");

    logger_destroy (&l);
    test_ring_level ();
    test_ring_bytes ();
    unlink (path);
    return done_testing ();
}
