/* SPDX-License-Identifier: LGPL-3.0-or-later */
/* bundle.h: one rank's bootstrap values, as it published them.
 *
 * Under PMI-1 a rank puts all its values (endpoint, public keys, ...) as
 * one JSON object of strings, {"endpoint":"ipc://...","pubkey":"..."},
 * and every broker reads every rank's bundle at start-up: N^2 parses in
 * an instance of N brokers.  A bundle is therefore parsed once into one
 * allocation (a table of key and value pointers into a copy of the
 * text) and looked up with a few strcmp.  Text with escapes or bytes
 * past ASCII goes through jansson, which checks its UTF-8; the result is
 * the same table.
 */
#ifndef BGN_BROKER_BUNDLE_H
#define BGN_BROKER_BUNDLE_H

struct bundle;

/* Parse a bundle.  NULL with errno EPROTO if text is not a JSON object
 * whose values are all strings (or a value holds a NUL, or a key comes
 * twice), ENOMEM. */
struct bundle *bundle_parse (const char *text);

/* The value of key, or NULL.  Valid until bundle_destroy. */
const char *bundle_value (const struct bundle *b, const char *key);

/* How many keys it holds. */
int bundle_count (const struct bundle *b);

void bundle_destroy (struct bundle **bp);

#endif /* BGN_BROKER_BUNDLE_H */
