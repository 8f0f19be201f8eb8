/* SPDX-License-Identifier: LGPL-3.0-or-later */
/* modloader.h: find, dlopen and check broker modules (bgn/module.h).
 *
 * A module is named ("overlay-bgn") and searched for as NAME.so in each
 * directory of a colon-separated module path, or given as a path
 * containing '/'.  Loading checks the ABI before any module code runs.
 */
#ifndef BGN_BROKER_MODLOADER_H
#define BGN_BROKER_MODLOADER_H

#include <stddef.h>
#include "src/include/bgn/module.h"

struct module;

/* Open module 'name' from 'searchpath'.  On failure returns NULL, sets
 * errno (ENOENT not found, EINVAL bad ABI, ELIBBAD dlopen failure) and
 * writes a message naming the module and the reason (dlerror() text,
 * expected vs found ABI version) to errbuf.
 */
struct module *module_open (const char *name, const char *searchpath,
                            char *errbuf, size_t errlen);

/* Unload (calling the module's unload() if it was loaded) and dlclose. */
void module_close (struct module **mp);

const struct bgn_module *module_entry (struct module *m);
const char *module_path (struct module *m);

/* Call the module's load()/start().  -1 with errno on failure. */
int module_load (struct module *m, const struct bgn_broker_api *api,
                 bgn_broker_t *b);
int module_start (struct module *m);
int module_connect (struct module *m);

/* A list of modules loaded besides the overlay (bgn-broker --module),
 * driven through the same life cycle in the order they were added, and
 * unloaded in reverse order.
 */
struct modlist;

struct modlist *modlist_create (void);
/* Unload and close every module, last added first. */
void modlist_destroy (struct modlist **lp);

/* module_open() + module_load() 'name', then keep it.  -1 with errno and
 * a message naming the module in errbuf. */
int modlist_add (struct modlist *l, const char *name, const char *searchpath,
                 const struct bgn_broker_api *api, bgn_broker_t *b,
                 char *errbuf, size_t errlen);

/* start() / connect() each module in turn; stop at the first failure,
 * naming that module in errbuf. */
int modlist_start (struct modlist *l, char *errbuf, size_t errlen);
int modlist_connect (struct modlist *l, char *errbuf, size_t errlen);

/* Iterate over the list in load order (NULL at the end). */
struct module *modlist_first (struct modlist *l);
struct module *modlist_next (struct modlist *l);

#endif
