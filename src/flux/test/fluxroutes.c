/* SPDX-License-Identifier: LGPL-3.0-or-later */
/* test/fluxroutes.c: route stacks cross between Flux and bgn and back,
 * the origin's rank and token folded into one Flux frame. */
#include <errno.h>
#include <stdbool.h>
#include <string.h>
#include <flux/core.h>

#include "src/common/libtap/tap.h"
#include "src/flux/fluxroutes.h"

/* Flux's stack, top first, joined with '|' (full ids, unlike
 * flux_msg_route_string's abbreviations). */
static void flux_stack (const flux_msg_t *f, char *buf, size_t len)
{
    flux_msg_t *cpy = flux_msg_copy (f, false);
    const char *id;

    buf[0] = '\0';
    while (cpy && (id = flux_msg_route_last (cpy))) {
        if (buf[0])
            strncat (buf, "|", len - strlen (buf) - 1);
        strncat (buf, id, len - strlen (buf) - 1);
        flux_msg_route_delete_last (cpy);
    }
    flux_msg_destroy (cpy);
}

static void bgn_stack (const msg_t *m, char *buf, size_t len)
{
    buf[0] = '\0';
    for (int i = 0; i < msg_route_count (m); i++) {
        if (buf[0])
            strncat (buf, "|", len - strlen (buf) - 1);
        strncat (buf, msg_route_at (m, i), len - strlen (buf) - 1);
    }
}

int main (void)
{
    const char *client = "6b3c2f0e-1a2b-4c3d-9e8f-0a1b2c3d4e5f";
    flux_msg_t *f = flux_request_encode ("kvs.lookup", NULL);
    flux_msg_t *back = flux_request_encode ("kvs.lookup", NULL);
    msg_t *m = msg_request_create ("kvs.lookup", 3, NULL);
    char buf[512];

    plan (NO_PLAN);
    ok (fluxroutes_is_token ("f12") && !fluxroutes_is_token ("f")
        && !fluxroutes_is_token ("f1x") && !fluxroutes_is_token (client)
        && !fluxroutes_is_token ("12"), "a token is f and digits, nothing else");

    /* the origin: Flux's stack below the token and the rank */
    flux_msg_route_enable (f);
    flux_msg_route_push (f, client);
    flux_msg_route_push (f, "module-uuid");
    msg_route_enable (m);
    ok (fluxroutes_to_bgn (f, m) == 0 && msg_route_push (m, "f7") == 0
        && msg_route_push (m, "5") == 0, "a Flux stack onto bgn's, then the "
        "token and the rank");
    bgn_stack (m, buf, sizeof (buf));
    is (buf, "5|f7|module-uuid|6b3c2f0e-1a2b-4c3d-9e8f-0a1b2c3d4e5f",
        "bgn's stack, top first");

    /* the destination: into Flux, the rank and token as one frame */
    ok (fluxroutes_to_flux (m, back) == 0, "bgn's stack onto Flux's");
    flux_stack (back, buf, sizeof (buf));
    is (buf, "5:f7|module-uuid|6b3c2f0e-1a2b-4c3d-9e8f-0a1b2c3d4e5f",
        "one frame per overlay crossing: 5:f7 on top, the sender at the "
        "bottom");
    int n = flux_msg_route_count (back);
    ok (n == 3, "three frames, as the TBON would push one (%d)", n);

    /* the answer's way back: the frame comes apart again */
    msg_t *rsp = msg_create (MSGTYPE_RESPONSE);
    msg_route_enable (rsp);
    ok (fluxroutes_to_bgn (back, rsp) == 0, "the answer's Flux stack onto "
        "bgn's");
    bgn_stack (rsp, buf, sizeof (buf));
    is (buf, "5|f7|module-uuid|6b3c2f0e-1a2b-4c3d-9e8f-0a1b2c3d4e5f",
        "the rank back on top, the token below it, for bgn's routing");

    /* a no-response request has no token: the rank alone */
    msg_t *nr = msg_request_create ("x.y", 0, NULL);
    flux_msg_t *fnr = flux_request_encode ("x.y", NULL);
    msg_route_enable (nr);
    msg_route_push (nr, client);
    msg_route_push (nr, "2");
    ok (fluxroutes_to_flux (nr, fnr) == 0, "a stack with no token");
    flux_stack (fnr, buf, sizeof (buf));
    is (buf, "2|6b3c2f0e-1a2b-4c3d-9e8f-0a1b2c3d4e5f", "crosses unfolded");

    /* an id that only looks folded is left whole */
    msg_t *odd = msg_create (MSGTYPE_RESPONSE);
    flux_msg_t *fodd = flux_request_encode ("x.y", NULL);
    flux_msg_route_enable (fodd);
    flux_msg_route_push (fodd, "12:abc");
    msg_route_enable (odd);
    ok (fluxroutes_to_bgn (fodd, odd) == 0 && msg_route_count (odd) == 1
        && !strcmp (msg_route_first (odd), "12:abc"),
        "RANK:NOT-A-TOKEN is one id, not split");

    /* more frames than bgn carries */
    flux_msg_t *deep = flux_request_encode ("x.y", NULL);
    msg_t *dm = msg_create (MSGTYPE_REQUEST);
    flux_msg_route_enable (deep);
    for (int i = 0; i < MSG_MAX_ROUTES + 1; i++)
        flux_msg_route_push (deep, "r");
    msg_route_enable (dm);
    errno = 0;
    ok (fluxroutes_to_bgn (deep, dm) < 0 && errno == EPROTO,
        "a Flux stack deeper than bgn carries is refused with EPROTO");

    msg_destroy (&dm);
    flux_msg_destroy (deep);
    msg_destroy (&odd);
    flux_msg_destroy (fodd);
    msg_destroy (&nr);
    flux_msg_destroy (fnr);
    msg_destroy (&rsp);
    msg_destroy (&m);
    flux_msg_destroy (back);
    flux_msg_destroy (f);
    done_testing ();
}
