/* SPDX-License-Identifier: LGPL-3.0-or-later */
/* ovservice.c: the "overlay" service's methods (overlay.status, .ping,
 * .ready, ...): who may call each, and which part answers it.
 *
 * overlay.c's overlay_service is the entry point (it settles the core
 * afterwards); this file only looks the method up, checks the caller's
 * role, and hands the request or the response to its part.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "heal.h"
#include "health.h"
#include "hello.h"
#include "moved.h"
#include "overlay.h"
#include "ovlog.h"
#include "ovservice.h"
#include "status.h"
#include "statusall.h"
#include "trace.h"

static void respond_json (struct overlay *ov, const msg_t *req, json_t *o)
{
    char *s = o ? json_dumps (o, JSON_COMPACT) : NULL;

    if (s)
        ov->io->respond (ov->ctx, req, s);
    else
        ov->io->respond_error (ov->ctx, req, ENOMEM, NULL);
    free (s);
    json_decref (o);
}

static void method_status (struct overlay *ov, const msg_t *req,
                           const struct bgn_msg_info *info)
{
    respond_json (ov, req, status_json (ov));
}

static void method_disconnect (struct overlay *ov, const msg_t *req,
                               const struct bgn_msg_info *info)
{
    ovl_log (ov, LOG_NOTICE, "disconnected by an administrator: leaving");
    ov->io->respond (ov->ctx, req, NULL);
    ov->io->stop (ov->ctx, 0);
}

/* Service-addressed ping target used by tests ("bgn ping overlay"). */
static void method_ping (struct overlay *ov, const msg_t *req,
                         const struct bgn_msg_info *info)
{
    respond_json (ov, req, json_pack ("{s:i s:i}", "rank", (int)ov->rank,
                                      "hops", info ? info->hops : 0));
}

static void method_ready (struct overlay *ov, const msg_t *req,
                          const struct bgn_msg_info *info)
{
    health_ready_request (ov, req, info);
}

static void method_gather (struct overlay *ov, const msg_t *req,
                           const struct bgn_msg_info *info)
{
    status_gather_request (ov, req);
}

static void method_trace (struct overlay *ov, const msg_t *req,
                          const struct bgn_msg_info *info)
{
    trace_start (ov, req);
}

static void method_contact (struct overlay *ov, const msg_t *req,
                            const struct bgn_msg_info *info)
{
    heal_contact_request (ov, req);
}

static void method_moved (struct overlay *ov, const msg_t *req,
                          const struct bgn_msg_info *info)
{
    moved_request (ov, req, info);
}

static void answer_ready (struct overlay *ov, const msg_t *rsp)
{
    health_ready_response (ov, rsp);
}

static void answer_gather (struct overlay *ov, const msg_t *rsp)
{
    status_gather_response (ov, rsp);
}

static void answer_contact (struct overlay *ov, const msg_t *rsp)
{
    struct peer *p = heal_contact_response (ov, rsp);

    if (p)
        hello_send (ov, p);   /* greet the substitute we connected to */
}

/* roles: who may call the method (rolemask bits, message.h).  Whatever
 * changes state or shows message contents is the owner's; a guest may
 * read status and ping.  The broker checks the same rule before a
 * request gets here (src/broker/access.c); this is the core's own guard. */
#define ANYONE (MSG_ROLE_OWNER | MSG_ROLE_USER)
#define OWNER MSG_ROLE_OWNER
static const struct {
    const char *method;
    uint32_t roles;
    void (*request) (struct overlay *ov, const msg_t *req,
                     const struct bgn_msg_info *info);
    void (*response) (struct overlay *ov, const msg_t *rsp);
} methods[] = {   /* under cfg.service: "overlay.status", ... */
    { "status", ANYONE, method_status, NULL },
    { "status-all", ANYONE, method_gather, NULL },
    { "gather", OWNER, method_gather, answer_gather },
    { "trace", OWNER, method_trace, NULL },
    { "ready", OWNER, method_ready, answer_ready },
    { "contact", OWNER, method_contact, answer_contact },
    { "moved", OWNER, method_moved, NULL },
    { "disconnect", OWNER, method_disconnect, NULL },
    { "ping", ANYONE, method_ping, NULL },
};

void ovservice_handle (struct overlay *ov, const msg_t *msg,
                       const struct bgn_msg_info *info)
{
    const char *method = ovconf_method (&ov->cfg, msg_get_topic (msg));
    int type = msg_get_type (msg);

    for (size_t i = 0; method && i < sizeof (methods) / sizeof (methods[0]);
         i++) {
        if (strcmp (method, methods[i].method) != 0)
            continue;
        if (type == MSGTYPE_REQUEST
            && !(msg_get_rolemask (msg) & methods[i].roles))
            ov->io->respond_error (ov->ctx, msg, EPERM,
                                   "the owner role is needed");
        else if (type == MSGTYPE_REQUEST)
            methods[i].request (ov, msg, info);
        else if (methods[i].response)
            methods[i].response (ov, msg);
        return;
    }
    if (type == MSGTYPE_REQUEST)
        ov->io->respond_error (ov->ctx, msg, ENOSYS,
                               "unknown overlay method");
}
