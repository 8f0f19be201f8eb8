/* SPDX-License-Identifier: LGPL-3.0-or-later */
/* service.c: the broker's service registry (see service.h). */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "service.h"

#define SERVICE_NAME_MAX 64

struct service {
    char name[SERVICE_NAME_MAX];
    bgn_service_f fn;
    void *arg;
};

struct service_registry {
    struct service *v;
    size_t count;
    size_t alloc;
};

struct service_registry *service_registry_create (void)
{
    return calloc (1, sizeof (struct service_registry));
}

void service_registry_destroy (struct service_registry **sp)
{
    if (sp && *sp) {
        free ((*sp)->v);
        free (*sp);
        *sp = NULL;
    }
}

static struct service *find (struct service_registry *s, const char *name,
                             size_t len)
{
    for (size_t i = 0; i < s->count; i++) {
        if (strlen (s->v[i].name) == len && !strncmp (s->v[i].name, name, len))
            return &s->v[i];
    }
    return NULL;
}

int service_add (struct service_registry *s, const char *name,
                 bgn_service_f fn, void *arg)
{
    size_t len;

    if (!name || !fn || (len = strlen (name)) == 0 || len >= SERVICE_NAME_MAX
        || strchr (name, '.')) {
        errno = EINVAL;
        return -1;
    }
    if (find (s, name, len)) {
        errno = EEXIST;
        return -1;
    }
    if (s->count == s->alloc) {
        size_t n = s->alloc ? s->alloc * 2 : 8;
        struct service *v = realloc (s->v, n * sizeof (*v));
        if (!v)
            return -1;
        s->v = v;
        s->alloc = n;
    }
    struct service *svc = &s->v[s->count++];
    memcpy (svc->name, name, len + 1);
    svc->fn = fn;
    svc->arg = arg;
    return 0;
}

int service_remove (struct service_registry *s, const char *name)
{
    struct service *svc = name ? find (s, name, strlen (name)) : NULL;
    if (!svc) {
        errno = ENOENT;
        return -1;
    }
    size_t i = svc - s->v;
    memmove (&s->v[i], &s->v[i + 1], (s->count - i - 1) * sizeof (*svc));
    s->count--;
    return 0;
}

int service_lookup (struct service_registry *s, const char *topic,
                    bgn_service_f *fn, void **arg)
{
    struct service *svc = NULL;
    if (topic) {
        const char *dot = strchr (topic, '.');
        size_t len = dot ? (size_t)(dot - topic) : strlen (topic);
        svc = find (s, topic, len);
    }
    if (!svc) {
        errno = ENOSYS;
        return -1;
    }
    *fn = svc->fn;
    *arg = svc->arg;
    return 0;
}

void service_foreach (struct service_registry *s,
                      void (*cb) (const char *name, void *arg), void *arg)
{
    for (size_t i = 0; i < s->count; i++)
        cb (s->v[i].name, arg);
}
