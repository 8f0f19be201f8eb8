/* certstore.h: CURVE public keys that may connect (czmq's zcertstore).
 *
 * czmq's ZAP handler (zauth) admits the keys in a zcertstore.  Keys come
 * as Z85 text (from the bootstrap, a contact request, the config); this
 * adds one, ignoring a key already present (czmq asserts on duplicates,
 * and with a shared certificate every broker has the same key).
 */
#ifndef BGN_ZMQUTIL_CERTSTORE_H
#define BGN_ZMQUTIL_CERTSTORE_H

#include <czmq.h>

/* 0 (added, or present already), -1 with EINVAL (not a 40-character Z85
 * key) or ENOMEM. */
int zmqutil_certstore_add (zcertstore_t *store, const char *pubkey);

#endif
