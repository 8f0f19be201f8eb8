/* SPDX-License-Identifier: LGPL-3.0-or-later */
/* jsonv.h: is this text one JSON object?  Answered without allocating.
 *
 * msg_decode checks every payload that enters a broker or a client.
 * Parsing it with jansson only to throw the tree away cost an allocation
 * per key and value and was most of a broker's time per request; this
 * scanner answers the same question in one pass over the bytes.
 *
 * The rules are those of jansson 2.14's json_loadb() with flags 0, for a
 * document whose top level is an object, so that whatever passes here
 * also parses with jansson later: RFC 8259 syntax (no trailing commas,
 * no leading zeros, nothing after the object but white space); strings
 * of valid UTF-8 (no overlong forms, surrogates or code points past
 * U+10FFFF) without raw control characters; escapes \" \\ \/ \b \f \n
 * \r \t and \uXXXX, where \u0000 and unpaired surrogates are refused;
 * integers (no fraction or exponent) that fit in int64_t; reals that do
 * not overflow a double (underflow is fine); values nested at most
 * JSONV_MAX_DEPTH deep, the object itself counting as depth 1.
 * Duplicate keys are allowed, as jansson allows them (the last wins).
 *
 * Pure function, no state.  Internal to libmsg (not installed); the
 * public entry point is msg_json_check() in message.h.
 */
#ifndef BGN_MSG_JSONV_H
#define BGN_MSG_JSONV_H

#include <stddef.h>

#define JSONV_MAX_DEPTH 2048   /* jansson's JSON_PARSER_MAX_DEPTH */

/* 0 if s[0..len) is exactly one JSON object (surrounding white space
 * allowed), else -1 and, if why is non-NULL, a one-line reason in
 * why[whylen] ("invalid escape at byte 12", ...).  s need not be
 * NUL-terminated; a NUL byte anywhere makes it invalid.  Allocates
 * nothing, except to check a real of more than 100 characters whose
 * magnitude is near the largest double.
 */
int jsonv_object (const char *s, size_t len, char *why, size_t whylen);

#endif
