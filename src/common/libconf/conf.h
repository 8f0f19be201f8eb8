/* SPDX-License-Identifier: LGPL-3.0-or-later */
/* conf.h: the broker's configuration: TOML files checked against a schema.
 *
 * A configuration is one jansson object built from a TOML file, or from
 * every *.toml file in a directory (merged; a key defined in two files is
 * an error naming both), plus "-o key=value" overrides.  Validation is
 * strict: an unknown table or key, or a value of the wrong type or out of
 * range, is an error.  After conf_finalize() every key in the schema is
 * present, defaults filled in, so callers read values without checks.
 *
 * Error messages (written to errbuf) have the forms:
 *   FILE:LINE:COL: message                 TOML syntax errors
 *   FILE: key 'overlay.peer_timeout': message     schema errors
 *   -o overlay.ttl=0: key 'overlay.ttl': must be 1..255   overrides
 *
 * Schema (key, type, default, rule):
 *   overlay.topology            string   "bgn"   "bgn", "bgn:R" (R 2..64),
 *                                                "kary:K" (K 1..1024),
 *                                                "binomial"
 *   overlay.keepalive_interval  duration "1s"    > 0
 *   overlay.peer_timeout        duration "10s"   > keepalive_interval
 *   overlay.fence_window        duration "10ms"  > 0: fence reports and
 *                                                batches gather this long
 *   overlay.join_timeout        duration "0"     a peer silent since the
 *                                                start is fenced after it;
 *                                                0 = 3 * peer_timeout
 *   overlay.rejoin_wait         duration "500ms" >= 0, < broker.rpc_timeout:
 *                                                a request to a fenced rank
 *                                                waits this long for its
 *                                                rejoin
 *   overlay.ttl                 integer  0       0 (= derived from the
 *                                                diameter) or 1..255
 *   overlay.heal_threshold      integer  -1      -1 (= derived) or 0..1024
 *   overlay.sndhwm              integer  1000    1..1000000
 *   overlay.backlog             integer  10000   0..10000000 (per peer)
 *   overlay.backlog_bytes       integer  32 MiB  65536..2^40: heap of all
 *                                                backlogs (ENOBUFS past it)
 *   overlay.retry_bytes         integer  16 MiB  0..2^40: copies of requests
 *                                                kept to send again (0: off)
 *   overlay.dedup_bytes         integer  16 MiB  0..2^40: requests run here
 *                                                remembered against copies
 *   overlay.tracker_bytes       integer  16 MiB  65536..2^40: the origin's
 *                                                entries for its requests
 *   overlay.held_bytes          integer  4 MiB   0..2^40: responses and
 *                                                requests held for a rank's
 *                                                rejoin
 *   overlay.sndbuf_bytes        integer  4 MiB   65536..2^40: bytes handed
 *                                                to libzmq toward one peer,
 *                                                not yet sent (then backlog)
 *   overlay.event_buffer        integer  100000  16..100000000: events kept
 *                                                for repairs (and held early)
 *   overlay.event_buffer_bytes  integer  64 MiB  65536..2^40: the same in bytes
 *   overlay.event_batch_window  duration "0.2ms" >= 0: rank 0 batches events
 *                                                published this close together
 *   overlay.event_batch_bytes   integer  64 KiB  256..64 MiB: bytes per batch
 *   overlay.event_queue_bytes   integer  16 MiB  1024..2^40: heap of rank 0's
 *                                                events not yet sent (EAGAIN
 *                                                past it)
 *   overlay.bind                string   ""      endpoint override
 *   overlay.curve               boolean  true    encrypt overlay links
 *   broker.log_level            integer  5       0..7 (syslog levels)
 *   broker.log_ring_bytes       integer  1 MiB   4096..2^40: heap of the
 *                                                log ring (oldest lines go)
 *   broker.client_queue_bytes   integer  8 MiB   65536..2^40: bytes queued
 *                                                toward one local client
 *                                                (dropped past it)
 *   broker.module_path          string   ""      colon-separated dirs
 *   broker.rundir               string   ""      "" = mkdtemp under TMPDIR
 *   broker.rpc_timeout          duration "10s"   > 0, default RPC deadline
 *   bootstrap.curve_cert        string   ""      path to a CURVE cert
 *   bootstrap.hostname          string   ""      "" = gethostname()
 *   bootstrap.default_port      integer  8050    1..65535
 *   bootstrap.default_bind      string   tcp:// then *:%p  (any address)
 *   bootstrap.default_connect   string   "tcp://%h:%p"
 *   bootstrap.hosts             array of tables, default absent; each:
 *       host     string (required; a hostlist like "node[0-15,32]")
 *       bind     string (optional, defaults to default_bind)
 *       connect  string (optional, defaults to default_connect)
 *       port     integer (optional, 1..65535)
 *
 * A duration is a string as fsd.h parses ("250ms", "5s"); an integer is
 * also accepted and means seconds (so is a non-negative float, e.g. from
 * "-o broker.rpc_timeout=1.5").  Durations are stored as written; use
 * conf_get_duration() to read them.
 *
 * Clarifications (implementation notes, see conf.c):
 * - Between conf_load()/conf_set() and conf_finalize() the object holds a
 *   reserved member "_origin" (which file or -o set each key, used for the
 *   "already defined in FILE" error); conf_finalize() removes it.
 * - conf_finalize() also fills bind, connect and port into every
 *   bootstrap.hosts entry that lacks them (from default_bind,
 *   default_connect and default_port), so each entry is complete.
 * - Loading a key already set by an earlier conf_load() is an error too;
 *   conf_set() replaces silently (overrides win).
 *
 * No global state; all functions are reentrant.
 */
#ifndef BGN_CONF_H
#define BGN_CONF_H

#include <jansson.h>
#include <stddef.h>

/* Create an empty configuration.  ENOMEM. */
json_t *conf_create (void);

/* Parse 'path' (a TOML file, or a directory whose *.toml files are read
 * in name order) and merge it into 'conf', validating against the schema.
 * Returns 0, or -1 with errno (ENOENT, also for a directory without any
 * *.toml file; EACCES; EINVAL for syntax/schema errors) and a message in
 * errbuf.  Nothing is merged on error.
 */
int conf_load (json_t *conf, const char *path, char *errbuf, size_t errlen);

/* Parse and validate the TOML text 'text' as if read from 'name'. */
int conf_load_string (json_t *conf, const char *name, const char *text,
                      char *errbuf, size_t errlen);

/* Apply "key=value", where key is dotted ("overlay.peer_timeout") and
 * value is a TOML value ("2s" quoted or not: a value that does not parse
 * as TOML is taken as a string).  Validated like a file.  -1 + EINVAL.
 */
int conf_set (json_t *conf, const char *keyval, char *errbuf, size_t errlen);

/* Check cross-key rules (peer_timeout > keepalive_interval, ...) and fill
 * in defaults.  Call once, after loading and overrides.  -1 + EINVAL.
 */
int conf_finalize (json_t *conf, char *errbuf, size_t errlen);

/* Typed getters for a finalized config ("overlay.ttl").  Each returns
 * -1 with ENOENT for a key not in the config, EINVAL for a type mismatch.
 */
int conf_get_string (json_t *conf, const char *key, const char **val);
int conf_get_int (json_t *conf, const char *key, long long *val);
int conf_get_bool (json_t *conf, const char *key, int *val);
int conf_get_duration (json_t *conf, const char *key, double *seconds);

/* The static bootstrap's host list, expanded in rank order: rank i runs
 * on the i'th host (the same expansion the broker's static bootstrap
 * does).  Each entry's "host" is a hostlist (hostlist.h).  Returns a new
 * list the caller destroys; NULL with ENOENT if the config has no
 * bootstrap.hosts, EINVAL (message in errbuf naming the entry) for a bad
 * hostlist, ENOMEM.
 */
struct hostlist;
struct hostlist *conf_bootstrap_hosts (json_t *conf, char *errbuf,
                                       size_t errlen);

/* Expand a bootstrap.hosts template: %h becomes 'host', %p 'port'; other
 * %-sequences (%R, %r of overlay.bind) are copied as they are.  -1 +
 * EOVERFLOW if the result does not fit in out[len].
 */
int conf_expand_template (const char *tmpl, const char *host, int port,
                          char *out, size_t len);

/* Check the form of an overlay endpoint: "tcp://HOST:PORT" (HOST a name,
 * an address, an interface or "*"; PORT 1..65535 or "*"; IPv6 in
 * brackets), or "ipc://PATH".  Returns 0, or -1 + EINVAL with the reason
 * in errbuf.  The form only: whether HOST exists is the caller's test.
 */
int conf_check_endpoint (const char *uri, char *errbuf, size_t errlen);

#endif /* BGN_CONF_H */
