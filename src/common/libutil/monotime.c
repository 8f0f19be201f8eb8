/* SPDX-License-Identifier: LGPL-3.0-or-later */
/* monotime.c: the monotonic clock in seconds (see monotime.h). */
#include <time.h>

#include "monotime.h"

double monotime_now (void)
{
    struct timespec ts;
    clock_gettime (CLOCK_MONOTONIC, &ts);
    return ts.tv_sec + ts.tv_nsec * 1e-9;
}
