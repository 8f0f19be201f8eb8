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

#endif
