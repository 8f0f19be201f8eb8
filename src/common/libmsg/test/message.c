/* placeholder, replaced below */
#include "src/common/libtap/tap.h"
#include "src/common/libmsg/message.h"
int main (void) { plan (NO_PLAN); ok (msg_typestr (1) != NULL, "typestr"); return done_testing (); }
