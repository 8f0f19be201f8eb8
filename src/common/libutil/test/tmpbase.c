/* SPDX-License-Identifier: LGPL-3.0-or-later */
/* test/tmpbase.c: the choice of a temporary directory's base. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "src/common/libtap/tap.h"
#include "src/common/libutil/tmpbase.h"

int main (void)
{
    char dir[] = "/tmp/tmpbase-test.XXXXXX";
    char sticky[64], plain[64], file[64];
    FILE *f;

    plan (NO_PLAN);
    if (!mkdtemp (dir))
        bail_out ("mkdtemp failed");
    snprintf (sticky, sizeof (sticky), "%s/sticky", dir);
    snprintf (plain, sizeof (plain), "%s/plain", dir);
    snprintf (file, sizeof (file), "%s/file", dir);
    if (mkdir (sticky, 01777) < 0 || chmod (sticky, 01777) < 0
        || mkdir (plain, 0777) < 0 || chmod (plain, 0777) < 0
        || !(f = fopen (file, "w")))
        bail_out ("cannot set up the test directories");
    fclose (f);

    ok (!strcmp (tmpbase_choose ("/mine", plain, sticky, "/tmp"), "/mine"),
        "TMPDIR, when set, wins");
    ok (!strcmp (tmpbase_choose ("", plain, sticky, "/tmp"), plain),
        "an empty TMPDIR counts as unset: the runtime directory");
    ok (!strcmp (tmpbase_choose (NULL, NULL, sticky, "/tmp"), sticky),
        "no runtime directory: the sticky shared memory directory");
    ok (!strcmp (tmpbase_choose (NULL, file, sticky, "/tmp"), sticky),
        "a runtime 'directory' that is a file is passed over");
    ok (!strcmp (tmpbase_choose (NULL, "/nonexistent/run", plain, "/tmp"),
                 "/tmp"),
        "a missing runtime directory and a shared one without the sticky "
        "bit: the fallback");
    ok (!strcmp (tmpbase_choose (NULL, NULL, file, "/tmp"), "/tmp"),
        "a shared memory 'directory' that is a file: the fallback");
    ok (tmpbase () != NULL && *tmpbase () != '\0',
        "tmpbase() names a directory: %s", tmpbase ());

    remove (file);
    rmdir (sticky);
    rmdir (plain);
    rmdir (dir);
    done_testing ();
}
