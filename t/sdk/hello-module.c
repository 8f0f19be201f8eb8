/* SPDX-License-Identifier: LGPL-3.0-or-later */
/* hello-module.c: an out-of-tree broker module, built by t0040-sdk.t
 * against the installed SDK only (pkg-config bgn).
 *
 * It registers the service "hello": hello.greet {"name":N} answers
 * {"greeting":"hello, N","count":C} (C counts greetings on this broker);
 * any other hello.* topic gets EPERM with a message.  It uses nothing
 * of the broker api but service_add, respond, respond_error and log.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <syslog.h>
#include <jansson.h>
#include <bgn/module.h>

struct hello {
    const struct bgn_broker_api *api;
    bgn_broker_t *b;
    int count;
};

static void hello_cb (bgn_broker_t *b, const msg_t *req,
                      const struct bgn_msg_info *info, void *arg)
{
    struct hello *h = arg;
    const char *topic = msg_get_topic (req);
    const char *payload = msg_get_payload (req, NULL);
    json_t *in, *out;
    const char *name = NULL;
    char *text;

    (void)info;
    if (!topic || strcmp (topic, "hello.greet") != 0) {
        h->api->respond_error (b, req, EPERM,
                               "hello: only hello.greet is served");
        return;
    }
    in = payload ? json_loads (payload, 0, NULL) : NULL;
    if (!in || json_unpack (in, "{s:s}", "name", &name) < 0) {
        h->api->respond_error (b, req, EPROTO,
                               "hello: payload needs a \"name\" string");
        json_decref (in);
        return;
    }
    h->count++;
    out = json_pack ("{s:s+, s:i}", "greeting", "hello, ", name,
                     "count", h->count);
    text = out ? json_dumps (out, JSON_COMPACT) : NULL;
    if (text)
        h->api->respond (b, req, text);
    else
        h->api->respond_error (b, req, ENOMEM, NULL);
    free (text);
    json_decref (out);
    json_decref (in);
}

static int hello_load (const struct bgn_broker_api *api, bgn_broker_t *b,
                       void **state)
{
    struct hello *h = calloc (1, sizeof (*h));

    if (!h)
        return -1;
    h->api = api;
    h->b = b;
    if (api->service_add (b, "hello", hello_cb, h) < 0) {
        free (h);
        return -1;
    }
    api->log (b, LOG_INFO, "hello module loaded");
    *state = h;
    return 0;
}

static void hello_unload (void *state)
{
    free (state);
}

const struct bgn_module bgn_module_entry = {
    .abi_version = BGN_MODULE_ABI_VERSION,
    .name = "hello",
    .description = "SDK test module: the hello service",
    .load = hello_load,
    .unload = hello_unload,
};
