/* digest_cache.h - an input's SHA-256 kept by the file's identity, so a
 * file analyzed again is not read a second time only to be hashed.
 *
 * The identity is what the kernel changes whenever the bytes change:
 * device, inode, size, modification and change times (ns).  The change
 * time cannot be set by a user, and moves on every write, chmod or
 * rename; an inode reused by a new file has a new change time.  An entry
 * is kept only for a file whose change time was at least
 * PL_DIGEST_SETTLED_S seconds before its hashing started and whose
 * identity was the same after it ended, so a write during or just after
 * the hashing (within one timestamp tick) always gives a new identity.
 * Entries are small text files, one per (device, inode), written
 * atomically (fsatomic.h) under a folder of the artifact root; a missing,
 * torn or stale entry is a miss, and the file is hashed again.
 */
#ifndef PL_DIGEST_CACHE_H
#define PL_DIGEST_CACHE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/stat.h>

#define PL_DIGEST_SETTLED_S 2

struct pl_file_identity {
	uint64_t dev, ino, size;
	int64_t mtime_ns, ctime_ns;
};

void pl_file_identity_of(const struct stat *st, struct pl_file_identity *id);
bool pl_file_identity_equal(const struct pl_file_identity *a, const struct pl_file_identity *b);

/* The digest kept for exactly this identity in `dir`: true with `hex`
 * set and `entry` the entry's file name (relative to `dir`). */
bool pl_digest_cache_get(const char *dir, const struct pl_file_identity *id, char hex[65],
			 char *entry, size_t cap);

/* Keep `hex` for `id` when the file had settled before `started` (the
 * CLOCK_REALTIME time at which its hashing began, ns) and `after` (its
 * identity once hashed) is still `id`.  Failures are ignored: the cache
 * only saves work. */
void pl_digest_cache_put(const char *dir, const struct pl_file_identity *id,
			 const struct pl_file_identity *after, int64_t started, const char *hex);

/* CLOCK_REALTIME now, in ns. */
int64_t pl_digest_clock_ns(void);

#endif
