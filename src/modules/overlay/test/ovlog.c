/* SPDX-License-Identifier: LGPL-3.0-or-later */
/* test/ovlog.c: the core's rate-limited log (ovlog.c) via a fake io.
 *
 * Each call site (format) has its own budget: a warning a peer makes
 * fire in a loop is cut to a few lines a minute, and another warning
 * still gets through (issue 42: with one budget for all, "peer lost"
 * lines during churn hid "this broker was fenced").
 */
#include <stdio.h>
#include <string.h>
#include <syslog.h>

#include "src/common/libtap/tap.h"
#include "src/modules/overlay/ovlog.h"
#include "fakeio.h"

static int logged (struct fake *f, const char *s)
{
    int n = 0;

    for (int i = 0; i < f->nlogs; i++)
        if (strstr (f->logs[i], s))
            n++;
    return n;
}

static void noisy (struct fake *f, int i)
{
    ovl_log_limited (f->ov, LOG_WARNING, "noisy peer %d", i);
}

static void other (struct fake *f)
{
    ovl_log_limited (f->ov, LOG_WARNING, "this broker was fenced by %d", 7);
}

int main (void)
{
    struct fake *f = fake_create (0, 4, "bgn");
    static char fmts[OVLOG_SLOTS + 8][32];

    if (!f || fake_start (f) < 0)
        bail_out ("the fake core does not start");
    fake_clear (f);
    for (int i = 0; i < 30; i++)
        noisy (f, i);
    ok (logged (f, "noisy peer") == 10,
        "30 lines of one warning within a minute: 10 logged");
    other (f);
    ok (logged (f, "this broker was fenced by 7") == 1,
        "another warning in the same minute is logged: it has a budget of "
        "its own");
    fake_advance (f, 61);
    noisy (f, 30);
    ok (logged (f, "noisy peer 30 (20 similar messages suppressed)") == 1,
        "a minute later the noisy one is logged again, saying how many "
        "were suppressed");

    fake_clear (f);
    for (int i = 0; i < OVLOG_SLOTS + 8; i++) {
        snprintf (fmts[i], sizeof (fmts[i]), "format %d: %%d", i);
        for (int k = 0; k < 3; k++)
            ovl_log_limited (f->ov, LOG_WARNING, fmts[i], k);
    }
    ok (f->nlogs == 3 * (OVLOG_SLOTS + 8),
        "more formats than budgets: each format's first lines still go "
        "out (the least recently used budget is reused)");
    fake_clear (f);
    for (int i = 0; i < 12; i++)
        ovl_log_limited (f->ov, LOG_WARNING, fmts[OVLOG_SLOTS + 7], i);
    ok (f->nlogs == 7, "and a reused budget limits as before (3 + 7 of 15 "
        "lines)");
    fake_destroy (&f);
    return done_testing ();
}
