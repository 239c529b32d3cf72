/* digest_cache.c - SHA-256 digests kept by file identity (see
 * digest_cache.h).
 *
 * An entry is CACHE/DEV-INO (hex device, decimal inode) holding one
 * line: "perflens-digest 1 DEV INO SIZE MTIME_NS CTIME_NS SHA256".
 * Every field is compared on reading, so an entry for an older file
 * that had the same inode is a miss, and so is anything that does not
 * parse.
 */
#include "digest_cache.h"
#include "fsatomic.h"

#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define ENTRY_MAX 256

void pl_file_identity_of(const struct stat *st, struct pl_file_identity *id)
{
	id->dev = (uint64_t)st->st_dev;
	id->ino = (uint64_t)st->st_ino;
	id->size = (uint64_t)st->st_size;
	id->mtime_ns = (int64_t)st->st_mtim.tv_sec * 1000000000 + st->st_mtim.tv_nsec;
	id->ctime_ns = (int64_t)st->st_ctim.tv_sec * 1000000000 + st->st_ctim.tv_nsec;
}

bool pl_file_identity_equal(const struct pl_file_identity *a, const struct pl_file_identity *b)
{
	return a->dev == b->dev && a->ino == b->ino && a->size == b->size &&
	       a->mtime_ns == b->mtime_ns && a->ctime_ns == b->ctime_ns;
}

int64_t pl_digest_clock_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

static bool entry_name(const struct pl_file_identity *id, char *out, size_t cap)
{
	return snprintf(out, cap, "%" PRIx64 "-%" PRIu64, id->dev, id->ino) < (int)cap;
}

static int entry_line(const struct pl_file_identity *id, const char *hex, char *out, size_t cap)
{
	return snprintf(out, cap, "perflens-digest 1 %" PRIu64 " %" PRIu64 " %" PRIu64 " %" PRId64 " %" PRId64 " %.64s\n",
			id->dev, id->ino, id->size, id->mtime_ns, id->ctime_ns, hex);
}

static bool is_hex64(const char *s)
{
	for (int i = 0; i < 64; i++)
		if (!((s[i] >= '0' && s[i] <= '9') || (s[i] >= 'a' && s[i] <= 'f')))
			return false;
	return true;
}

bool pl_digest_cache_get(const char *dir, const struct pl_file_identity *id, char hex[65],
			 char *entry, size_t cap)
{
	char path[4096], text[ENTRY_MAX + 1], want[ENTRY_MAX];
	ssize_t n;
	int fd, wn;

	if (!dir || !entry_name(id, entry, cap) ||
	    snprintf(path, sizeof(path), "%s/%s", dir, entry) >= (int)sizeof(path))
		return false;
	fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
	if (fd < 0)
		return false;
	n = read(fd, text, ENTRY_MAX);
	close(fd);
	if (n <= 0)
		return false;
	text[n] = '\0';
	/* The whole line must be the one this identity would write, but for
	 * the digest, which must be 64 lowercase hex digits. */
	wn = entry_line(id, "", want, sizeof(want));
	if (wn <= 0 || wn >= (int)sizeof(want) || n != wn + 64 ||
	    memcmp(text, want, (size_t)wn - 1) != 0 || !is_hex64(text + wn - 1) || text[n - 1] != '\n')
		return false;
	memcpy(hex, text + wn - 1, 64);
	hex[64] = '\0';
	return true;
}

void pl_digest_cache_put(const char *dir, const struct pl_file_identity *id,
			 const struct pl_file_identity *after, int64_t started, const char *hex)
{
	char name[64], path[4096], line[ENTRY_MAX];
	struct pl_error ignored;
	int n;

	if (!dir || !pl_file_identity_equal(id, after) ||
	    id->ctime_ns > started - (int64_t)PL_DIGEST_SETTLED_S * 1000000000 ||
	    strlen(hex) != 64 || !is_hex64(hex) || !entry_name(id, name, sizeof(name)) ||
	    snprintf(path, sizeof(path), "%s/%s", dir, name) >= (int)sizeof(path))
		return;
	n = entry_line(id, hex, line, sizeof(line));
	if (n <= 0 || n >= (int)sizeof(line) || pl_make_dirs(dir, &ignored) != PL_OK)
		return;
	pl_write_file_atomic(path, line, (size_t)n, &ignored);
}
