/* SPDX-License-Identifier: LGPL-3.0-or-later */
/* modloader.c: find, dlopen and check broker modules (see modloader.h),
 * and the list of extra modules a broker loads besides its overlay. */
#include <dlfcn.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <czmq.h>

#include "src/common/libutil/errbuf.h"
#include "modloader.h"

struct module {
    void *dso;
    char *path;
    const struct bgn_module *entry;
    void *state;
    int loaded;
};

/* Find NAME.so in a colon-separated path.  Returns a malloc'd path. */
static char *module_find (const char *name, const char *searchpath)
{
    char *copy, *dir, *save = NULL, *found = NULL;

    if (strchr (name, '/'))
        return access (name, R_OK) == 0 ? strdup (name) : NULL;
    if (!searchpath || !(copy = strdup (searchpath)))
        return NULL;
    for (dir = strtok_r (copy, ":", &save); dir && !found;
         dir = strtok_r (NULL, ":", &save)) {
        char *p;
        if (asprintf (&p, "%s/%s.so", dir, name) < 0)
            break;
        if (access (p, R_OK) == 0)
            found = p;
        else
            free (p);
    }
    free (copy);
    return found;
}

struct module *module_open (const char *name, const char *searchpath,
                            char *errbuf, size_t errlen)
{
    struct module *m;
    char *path;

    if (!(path = module_find (name, searchpath))) {
        errbuf_set (errbuf, errlen, "module %s: not found in %s", name,
                    searchpath ? searchpath : "(no module path)");
        errno = ENOENT;
        return NULL;
    }
    if (!(m = calloc (1, sizeof (*m)))) {
        free (path);
        return NULL;
    }
    m->path = path;
    dlerror ();
    if (!(m->dso = dlopen (path, RTLD_NOW | RTLD_LOCAL))) {
        errbuf_set (errbuf, errlen, "module %s: %s", path, dlerror ());
        errno = ELIBBAD;
        goto error;
    }
    m->entry = dlsym (m->dso, BGN_MODULE_SYMBOL);
    if (!m->entry) {
        errbuf_set (errbuf, errlen, "module %s: no %s symbol: not a bgn module",
                    path, BGN_MODULE_SYMBOL);
        errno = EINVAL;
        goto error;
    }
    if (m->entry->abi_version != BGN_MODULE_ABI_VERSION) {
        errbuf_set (errbuf, errlen,
                    "module %s: ABI version %u, broker needs %u",
                    path, (unsigned)m->entry->abi_version,
                    (unsigned)BGN_MODULE_ABI_VERSION);
        errno = EINVAL;
        goto error;
    }
    if (!m->entry->name || !m->entry->load) {
        errbuf_set (errbuf, errlen, "module %s: entry lacks a name or load()",
                    path);
        errno = EINVAL;
        goto error;
    }
    return m;
error: {
        int saved = errno;
        module_close (&m);
        errno = saved;
        return NULL;
    }
}

void module_close (struct module **mp)
{
    if (mp && *mp) {
        struct module *m = *mp;
        if (m->loaded && m->entry->unload)
            m->entry->unload (m->state);
        if (m->dso)
            dlclose (m->dso);
        free (m->path);
        free (m);
        *mp = NULL;
    }
}

const struct bgn_module *module_entry (struct module *m)
{
    return m->entry;
}

const char *module_path (struct module *m)
{
    return m->path;
}

int module_load (struct module *m, const struct bgn_broker_api *api,
                 bgn_broker_t *b)
{
    if (m->entry->load (api, b, &m->state) < 0)
        return -1;
    m->loaded = 1;
    return 0;
}

int module_start (struct module *m)
{
    if (!m->entry->start)
        return 0;
    return m->entry->start (m->state);
}

int module_connect (struct module *m)
{
    if (!m->entry->connect)
        return 0;
    return m->entry->connect (m->state);
}

struct modlist {
    zlistx_t *mods;         /* struct module *, in load order */
};

struct modlist *modlist_create (void)
{
    struct modlist *l = calloc (1, sizeof (*l));
    if (!l)
        return NULL;
    if (!(l->mods = zlistx_new ())) {
        free (l);
        errno = ENOMEM;
        return NULL;
    }
    return l;
}

void modlist_destroy (struct modlist **lp)
{
    if (lp && *lp) {
        struct module *m;
        while ((m = zlistx_last ((*lp)->mods))) {
            zlistx_delete ((*lp)->mods, zlistx_cursor ((*lp)->mods));
            module_close (&m);
        }
        zlistx_destroy (&(*lp)->mods);
        free (*lp);
        *lp = NULL;
    }
}

int modlist_add (struct modlist *l, const char *name, const char *searchpath,
                 const struct bgn_broker_api *api, bgn_broker_t *b,
                 char *errbuf, size_t errlen)
{
    struct module *m = module_open (name, searchpath, errbuf, errlen);

    if (!m)
        return -1;
    if (module_load (m, api, b) < 0) {
        int saved = errno;
        errbuf_set (errbuf, errlen, "module %s: load failed: %s",
                    module_path (m), strerror (saved));
        module_close (&m);
        errno = saved;
        return -1;
    }
    if (!zlistx_add_end (l->mods, m)) {
        module_close (&m);
        errno = ENOMEM;
        return -1;
    }
    return 0;
}

/* Run one life-cycle step over the list. */
static int modlist_each (struct modlist *l, int (*step) (struct module *),
                         const char *what, char *errbuf, size_t errlen)
{
    for (struct module *m = zlistx_first (l->mods); m;
         m = zlistx_next (l->mods)) {
        if (step (m) < 0) {
            int saved = errno;
            errbuf_set (errbuf, errlen, "module %s: %s failed: %s",
                        module_path (m), what, strerror (saved));
            errno = saved;
            return -1;
        }
    }
    return 0;
}

struct module *modlist_first (struct modlist *l)
{
    return l ? zlistx_first (l->mods) : NULL;
}

struct module *modlist_next (struct modlist *l)
{
    return l ? zlistx_next (l->mods) : NULL;
}

int modlist_start (struct modlist *l, char *errbuf, size_t errlen)
{
    return modlist_each (l, module_start, "start", errbuf, errlen);
}

int modlist_connect (struct modlist *l, char *errbuf, size_t errlen)
{
    return modlist_each (l, module_connect, "connect", errbuf, errlen);
}
