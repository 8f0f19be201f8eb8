/* SPDX-License-Identifier: LGPL-3.0-or-later */
/* tmpbase.c: the base of temporary directories (see tmpbase.h). */
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include "tmpbase.h"

static int usable_dir (const char *path, int need_sticky)
{
    struct stat st;

    if (!path || !*path || stat (path, &st) < 0 || !S_ISDIR (st.st_mode))
        return 0;
    if (need_sticky && !(st.st_mode & S_ISVTX))
        return 0;
    return access (path, W_OK | X_OK) == 0;
}

const char *tmpbase_choose (const char *tmpdir, const char *runtime,
                            const char *shm, const char *fallback)
{
    if (tmpdir && *tmpdir)
        return tmpdir;
    if (usable_dir (runtime, 0))
        return runtime;
    /* a shared directory without the sticky bit would let another user
     * rename our directory away: not a place for sockets */
    if (usable_dir (shm, 1))
        return shm;
    return fallback;
}

const char *tmpbase (void)
{
    return tmpbase_choose (getenv ("TMPDIR"), getenv ("XDG_RUNTIME_DIR"),
                           "/dev/shm", "/tmp");
}
