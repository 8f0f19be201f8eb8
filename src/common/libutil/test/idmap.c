/* SPDX-License-Identifier: LGPL-3.0-or-later */
/* test/idmap.c: unit tests for idmap.h, against a plain array model. */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "src/common/libtap/tap.h"
#include "src/common/libutil/idmap.h"

struct val {
    uint64_t id;
    uint32_t payload;
};

#define UNIVERSE 3000

static uint64_t rng = 88172645463325252ULL;
static uint64_t next_rand (void)
{
    rng ^= rng << 13;
    rng ^= rng >> 7;
    rng ^= rng << 17;
    return rng;
}

/* Random puts and deletes over ids 0..UNIVERSE-1 (and some huge ids);
 * after each step the map agrees with the model. */
static void check_random (void)
{
    struct idmap *m = idmap_create (sizeof (struct val));
    static uint32_t model[UNIVERSE];   /* 0: absent, else payload */
    size_t count = 0;
    int bad = 0;

    for (int step = 0; step < 200000 && !bad; step++) {
        uint64_t r = next_rand ();
        uint32_t k = (uint32_t)(r % UNIVERSE);
        uint64_t id = k < 100 ? (uint64_t)k << 40 : k;   /* spread ids */
        if ((r >> 20) % 3 != 0) {
            int created;
            struct val *v = idmap_put (m, id, &created);
            if (!v || created != (model[k] == 0)) {
                bad = 1;
                break;
            }
            if (created) {
                count++;
                if (v->id != 0 || v->payload != 0)
                    bad = 1;    /* new slots are zeroed */
                v->id = id;
            }
            v->payload = model[k] = (uint32_t)(r >> 32) | 1;
        }
        else {
            int rc = idmap_delete (m, id);
            if ((rc == 0) != (model[k] != 0))
                bad = 1;
            if (rc == 0) {
                model[k] = 0;
                count--;
            }
        }
        if (step % 1000 == 0 || bad) {
            for (uint32_t i = 0; i < UNIVERSE && !bad; i++) {
                uint64_t idi = i < 100 ? (uint64_t)i << 40 : i;
                struct val *v = idmap_get (m, idi);
                if (model[i] ? !v || v->payload != model[i] || v->id != idi
                             : v != NULL)
                    bad = 1;
            }
        }
    }
    ok (!bad, "200,000 random puts and deletes agree with a model");
    ok (idmap_size (m) == count, "size counts the entries (%zu)", count);

    size_t seen = 0;
    int mismatch = 0;
    struct idmap_iter it;
    for (struct val *v = idmap_first (m, &it); v; v = idmap_next (&it)) {
        seen++;
        if (v->id != it.id)
            mismatch = 1;
    }
    ok (seen == count && !mismatch, "iteration visits each entry once");
    idmap_clear (m);
    ok (idmap_size (m) == 0 && idmap_get (m, 5) == NULL, "clear empties it");
    idmap_destroy (&m);
    ok (m == NULL, "destroy sets the pointer to NULL");
}

int main (void)
{
    plan (NO_PLAN);
    errno = 0;
    ok (idmap_create (0) == NULL && errno == EINVAL,
        "a zero value size is EINVAL");
    struct idmap *m = idmap_create (4);
    ok (m && idmap_get (m, 1) == NULL, "an empty map finds nothing");
    errno = 0;
    ok (idmap_delete (m, 1) < 0 && errno == ENOENT,
        "deleting an absent id is ENOENT");
    idmap_destroy (&m);
    idmap_destroy (&m);   /* NULL-safe */
    check_random ();
    done_testing ();
}
