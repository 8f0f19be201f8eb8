/* test/log.c: the broker logger's flood control and ring buffer (log.h).
 *
 * stderr is sent to a temporary file so the lines the logger prints can
 * be counted; a fake clock drives the rate-limit windows.
 */
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
    unlink (path);
    return done_testing ();
}
