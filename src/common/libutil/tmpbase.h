/* SPDX-License-Identifier: LGPL-3.0-or-later */
/* tmpbase.h: where a broker or an instance makes its temporary directory.
 *
 * Sockets and key files want a memory file system: creating them there
 * touches no disk and no disk's inode allocator (on ext4 without a
 * journal, every new inode skips those deleted in the last minutes, a
 * cost that grows with how many brokers came and went before), and a
 * secret key on tmpfs is never written to a disk.  The order:
 *   1. $TMPDIR, when set: the user's explicit choice wins;
 *   2. $XDG_RUNTIME_DIR, when set and a directory we may write: the
 *      per-user runtime directory (a tmpfs, mode 0700, by its spec);
 *   3. /dev/shm, when it is a sticky directory we may write;
 *   4. /tmp.
 * No state is kept: the answer is worked out on every call. */
#ifndef BGN_TMPBASE_H
#define BGN_TMPBASE_H

/* The directory under which to mkdtemp(): a pointer into the
 * environment or a string constant, never NULL, never freed. */
const char *tmpbase (void);

/* The same, with the environment and the candidates as arguments (for
 * tests): tmpdir and runtime may be NULL; shm and fallback are paths. */
const char *tmpbase_choose (const char *tmpdir, const char *runtime,
                            const char *shm, const char *fallback);

#endif
