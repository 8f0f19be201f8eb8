/* SPDX-License-Identifier: LGPL-3.0-or-later */
/* ovservice.h: the "overlay" service's method table (ovservice.c). */
#ifndef BGN_OVERLAY_OVSERVICE_H
#define BGN_OVERLAY_OVSERVICE_H

#include "src/common/libmsg/message.h"
#include "src/include/bgn/module.h"

struct overlay;

/* Handle one request or response addressed to the overlay service
 * (cfg.service, e.g. "overlay.status"): a request from a caller without
 * the method's role is answered EPERM, an unknown method ENOSYS; a
 * response goes to the part that asked, or is dropped.  The caller
 * (overlay_service) has checked the message type and settles after. */
void ovservice_handle (struct overlay *ov, const msg_t *msg,
                       const struct bgn_msg_info *info);

#endif
