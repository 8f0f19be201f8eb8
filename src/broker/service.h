/* SPDX-License-Identifier: LGPL-3.0-or-later */
/* service.h: the broker's service registry.
 *
 * A service owns a topic prefix: a request "broker.ping" belongs to the
 * service "broker".  Built-in services and modules register here; the
 * broker looks up every request it must handle locally.  A handful of
 * services exist per broker, so a small array with linear search is both
 * simplest and fastest.
 */
#ifndef BGN_BROKER_SERVICE_H
#define BGN_BROKER_SERVICE_H

#include <stddef.h>
#include "src/include/bgn/module.h"

struct service_registry;

struct service_registry *service_registry_create (void);
void service_registry_destroy (struct service_registry **sp);

/* Register 'name'.  -1 with EEXIST if taken, EINVAL for a bad name
 * (empty, containing '.', longer than 63 bytes), ENOMEM.
 */
int service_add (struct service_registry *s, const char *name,
                 bgn_service_f fn, void *arg);

/* -1 with ENOENT if not registered. */
int service_remove (struct service_registry *s, const char *name);

/* Find the service for 'topic' (matched on its first component).
 * Returns 0 and sets fn/arg, or -1 with ENOSYS.
 */
int service_lookup (struct service_registry *s, const char *topic,
                    bgn_service_f *fn, void **arg);

/* Names, for broker.info / module-list: calls cb for each. */
void service_foreach (struct service_registry *s,
                      void (*cb) (const char *name, void *arg), void *arg);

#endif
