/* SPDX-License-Identifier: LGPL-3.0-or-later */
/* keys.h: per-host CURVE keys of a system instance (bootstrap.curve_keys).
 *
 * With one shared certificate (bootstrap.curve_cert) any holder of the
 * secret can be any rank.  Per-host keys give every node its own key
 * pair instead: bootstrap.curve_keys names a directory holding HOST.cert
 * (the public half, as "bgn keygen DIR/HOST.cert" writes it) for every
 * host of bootstrap.hosts, and on each node that node's own
 * HOST.cert_secret (mode 0600).  Brokers then bind each connection to the
 * rank whose key it holds (doc/overlay-protocol.md, section 2).
 *
 * The broker reads the keys through these functions and "bgn config
 * check" checks them with conf_check_keys().  No global state.
 */
#ifndef BGN_CONF_KEYS_H
#define BGN_CONF_KEYS_H

#include <stddef.h>
#include <jansson.h>

/* The public key (Z85, 40 characters + NUL) of the czmq certificate file
 * at 'path' (its "public-key = ..." line).  0, or -1 with errno and a
 * one-line reason in errbuf. */
int conf_read_pubkey (const char *path, char pub[41], char *errbuf,
                      size_t errlen);

/* The same from the text of such a file (len bytes, need not be
 * NUL-terminated); 'name' is for the message. */
int conf_parse_pubkey (const char *text, size_t len, const char *name,
                       char pub[41], char *errbuf, size_t errlen);

/* DIR/HOST.cert for host 'host' of key directory 'dir' into buf.  -1 with
 * ENAMETOOLONG. */
int conf_key_path (const char *dir, const char *host, char *buf, size_t len);

/* Check a finalized config's per-host keys: nothing to do (0) unless
 * bootstrap.curve_keys is set; then it must not be combined with
 * bootstrap.curve_cert, every host of bootstrap.hosts needs a readable
 * DIR/HOST.cert with a public key, no two hosts may share a key, and if
 * 'host' is not NULL, that host's DIR/HOST.cert_secret must exist with
 * no access for group or others.  0, or -1 with the first problem in
 * errbuf (one line). */
int conf_check_keys (json_t *conf, const char *host, char *errbuf,
                     size_t errlen);

#endif
