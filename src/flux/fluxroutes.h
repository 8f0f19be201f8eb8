/* SPDX-License-Identifier: LGPL-3.0-or-later */
/* fluxroutes.h: route stacks between Flux's messages and bgn's.
 *
 * A request the broker sends over the BGN keeps its Flux route stack
 * (bottom: its sender) below the origin's client token and rank on
 * bgn's stack, and comes out of the BGN with the same stack, so that
 * the far broker's services see its sender as the TBON would show it.
 * On Flux's side the origin's rank and its token are one route id,
 * "RANK:TOKEN" (one frame per overlay crossing, as the TBON pushes
 * one); on bgn's they are two (the token, the rank on top), which is
 * how bgn's routing finds the rank.  A token is the prefix "f" and
 * digits (fluxroutes_is_token).
 *
 * Both append to the destination's stack, bottom first; -1 with errno
 * (EPROTO: more routes than bgn carries, or an id it cannot; ENOMEM).
 */
#ifndef BGN_FLUX_FLUXROUTES_H
#define BGN_FLUX_FLUXROUTES_H

#include <stdbool.h>
#include <flux/core.h>

#include "src/common/libmsg/message.h"

#define FLUXROUTES_TOKEN_PREFIX "f"

/* Is id a client token of the Flux host's ("f" and digits)? */
bool fluxroutes_is_token (const char *id);

int fluxroutes_to_bgn (const flux_msg_t *fmsg, msg_t *msg);
/* enables f's route stack first */
int fluxroutes_to_flux (const msg_t *msg, flux_msg_t *f);

#endif
