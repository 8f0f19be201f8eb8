/* SPDX-License-Identifier: LGPL-3.0-or-later */
/* wire.h: the overlay's name for libutil's network-order integers. */
#ifndef BGN_OVERLAY_WIRE_H
#define BGN_OVERLAY_WIRE_H

#include "src/common/libutil/wire.h"

#endif
