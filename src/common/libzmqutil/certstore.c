/* certstore.c: add a Z85 public key to a zcertstore (see certstore.h). */
#include <errno.h>
#include <string.h>

#include "certstore.h"

int zmqutil_certstore_add (zcertstore_t *store, const char *pubkey)
{
    uint8_t pub[32], sec[32] = { 0 };
    zcert_t *cert;

    if (!pubkey || strlen (pubkey) != 40 || !zmq_z85_decode (pub, pubkey)) {
        errno = EINVAL;
        return -1;
    }
    if (zcertstore_lookup (store, pubkey))
        return 0;
    if (!(cert = zcert_new_from (pub, sec))) {
        errno = ENOMEM;
        return -1;
    }
    zcertstore_insert (store, &cert);
    return 0;
}
