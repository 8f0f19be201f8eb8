/* SPDX-License-Identifier: LGPL-3.0-or-later */
/* hosttab.h: a static bootstrap, what a bootstrap.hosts table implies.
 *
 * A system instance lists its hosts in its configuration
 * ([bootstrap] hosts, the table Flux's brokers read too).  Everything a
 * broker would otherwise learn from the others at start-up follows from
 * that shared table: each rank's host and endpoint (its connect template
 * expanded), each rank's public key (one shared certificate, or per-host
 * keys, libconf/keys.h), rank 0's event key (bootstrap.event_key), and an
 * instance id hashed over them all.  Every broker computes the same
 * values on its own, so brokers start in any order and a restarted one
 * rejoins with nothing exchanged.
 *
 * Two hosts use this: bgn-broker's static bootstrap (boot.c) and the
 * Flux host when a flux-broker boots from its [bootstrap] table
 * (src/flux/fluxboot.c).  The configuration is libconf's, finalized
 * (conf_finalize filled each host's bind, connect and port).
 */
#ifndef BGN_BROKER_HOSTTAB_H
#define BGN_BROKER_HOSTTAB_H

#include <stddef.h>
#include <stdint.h>
#include <jansson.h>

struct hosttab;

/* Read bootstrap.hosts of 'conf' ('confname' names it in messages).
 * Our rank is 'rank' if >= 0 (the caller knows it: then its host must be
 * 'hostname'), else found by host name: bootstrap.hostname, else
 * gethostname(), a fully qualified name also matching its first label.
 * Unless overlay.bind is set, it is set in 'conf' to our host's bind
 * template expanded.  NULL with errno and a one-line reason in errbuf
 * (EINVAL for a bad table, an unknown host, a certificate or key that is
 * missing or readable by others). */
struct hosttab *hosttab_create (json_t *conf, const char *confname,
                                int rank, const char *hostname,
                                char *errbuf, size_t errlen);
void hosttab_destroy (struct hosttab **tp);

uint32_t hosttab_rank (const struct hosttab *t);
uint32_t hosttab_size (const struct hosttab *t);
const char *hosttab_hostname (const struct hosttab *t);  /* ours */
const char *hosttab_host (const struct hosttab *t, uint32_t rank);

/* Is 'key' one of the values every broker derives ("endpoint", "pubkey",
 * "instance")?  A broker need not publish those. */
int hosttab_derived (const char *key);

/* The value of 'key' for 'rank' into buf: "endpoint", "pubkey",
 * "instance", and "evkey" of another rank (rank 0's is the config's
 * bootstrap.event_key, the others' "": signing keys cannot be derived).
 * 0 with the value; 1 if the key is one of our own rank's that the
 * caller keeps itself; -1 with errno and errbuf (EINVAL: rank out of
 * range; ENOENT: no such value without an exchange; EOVERFLOW). */
int hosttab_get (const struct hosttab *t, uint32_t rank, const char *key,
                 char *buf, size_t len, char *errbuf, size_t errlen);

/* The secret half of a CURVE certificate must be private to its owner:
 * anyone who can read it can join the instance.  The secret is in
 * PATH_secret (as "bgn keygen PATH" writes it) or, where that does not
 * exist, in PATH itself (as "flux keygen PATH" writes it).  Copy the
 * public key (Z85) to pub[41].  0, or -1 with errno and errbuf. */
int hosttab_check_cert (const char *path, char pub[41], char *errbuf,
                        size_t errlen);

#endif
