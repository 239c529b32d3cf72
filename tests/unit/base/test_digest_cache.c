/* test_digest_cache.c - unit tests for digest_cache.c: an entry is used
 * only for exactly the identity it was kept for, is kept only for a file
 * that had settled and did not change while hashed, and a damaged entry
 * is a miss. */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/digest_cache.h"

static const char HEX[65] = "00112233445566778899aabbccddeeff00112233445566778899aabbccddeeff";

/* A fresh folder for one test's entries. */
static void scratch(char *dir, size_t cap)
{
	snprintf(dir, cap, "/tmp/pl-digest-XXXXXX");
	ck_assert_ptr_nonnull(mkdtemp(dir));
}

/* Remove it again (its one possible entry, then the folder). */
static void scratch_done(const char *dir)
{
	char path[128];

	snprintf(path, sizeof(path), "%s/fe00-42", dir);
	unlink(path);
	ck_assert_int_eq(rmdir(dir), 0);
}

static struct pl_file_identity identity(void)
{
	return (struct pl_file_identity){.dev = 0xfe00, .ino = 42, .size = 1000,
					 .mtime_ns = 1700000000123456789, .ctime_ns = 1700000000123456789};
}

/* `started` for a file whose change time is `s` seconds old. */
static int64_t after_s(const struct pl_file_identity *id, int64_t s)
{
	return id->ctime_ns + s * 1000000000;
}

START_TEST(a_kept_digest_is_given_back_for_the_same_identity_only)
{
	char dir[64], hex[65], entry[64];
	struct pl_file_identity id = identity(), other;

	scratch(dir, sizeof(dir));
	pl_digest_cache_put(dir, &id, &id, after_s(&id, 10), HEX);
	ck_assert(pl_digest_cache_get(dir, &id, hex, entry, sizeof(entry)));
	ck_assert_str_eq(hex, HEX);
	ck_assert_str_eq(entry, "fe00-42");
	other = id;
	other.ctime_ns++;
	ck_assert(!pl_digest_cache_get(dir, &other, hex, entry, sizeof(entry)));
	other = id;
	other.mtime_ns--;
	ck_assert(!pl_digest_cache_get(dir, &other, hex, entry, sizeof(entry)));
	other = id;
	other.size++;
	ck_assert(!pl_digest_cache_get(dir, &other, hex, entry, sizeof(entry)));
	ck_assert(!pl_digest_cache_get(NULL, &id, hex, entry, sizeof(entry)));
	scratch_done(dir);
}
END_TEST

START_TEST(an_unsettled_or_changed_file_is_not_kept)
{
	char dir[64], hex[65], entry[64];
	struct pl_file_identity id = identity(), moved = identity();

	scratch(dir, sizeof(dir));
	/* Changed 1 s before its hashing began: a write within a timestamp
	 * tick of that could go unseen. */
	pl_digest_cache_put(dir, &id, &id, after_s(&id, 1), HEX);
	ck_assert(!pl_digest_cache_get(dir, &id, hex, entry, sizeof(entry)));
	/* Its identity moved while it was hashed. */
	moved.ctime_ns += 5;
	pl_digest_cache_put(dir, &id, &moved, after_s(&id, 10), HEX);
	ck_assert(!pl_digest_cache_get(dir, &id, hex, entry, sizeof(entry)));
	/* Not a digest. */
	pl_digest_cache_put(dir, &id, &id, after_s(&id, 10), "xyz");
	ck_assert(!pl_digest_cache_get(dir, &id, hex, entry, sizeof(entry)));
	scratch_done(dir);
}
END_TEST

START_TEST(a_damaged_entry_is_a_miss)
{
	char dir[64], path[128], hex[65], entry[64];
	struct pl_file_identity id = identity();
	FILE *f;

	scratch(dir, sizeof(dir));
	pl_digest_cache_put(dir, &id, &id, after_s(&id, 10), HEX);
	snprintf(path, sizeof(path), "%s/fe00-42", dir);
	/* Cut short, then one digit that is not lowercase hex. */
	ck_assert_int_eq(truncate(path, 40), 0);
	ck_assert(!pl_digest_cache_get(dir, &id, hex, entry, sizeof(entry)));
	pl_digest_cache_put(dir, &id, &id, after_s(&id, 10), HEX);
	f = fopen(path, "r+");
	ck_assert_ptr_nonnull(f);
	fseek(f, -2, SEEK_END);
	fputc('G', f);
	fclose(f);
	ck_assert(!pl_digest_cache_get(dir, &id, hex, entry, sizeof(entry)));
	scratch_done(dir);
}
END_TEST

Suite *suite_digest_cache(void)
{
	Suite *s = suite_create("digest_cache");
	TCase *tc = tcase_create("core");
	tcase_add_test(tc, a_kept_digest_is_given_back_for_the_same_identity_only);
	tcase_add_test(tc, an_unsettled_or_changed_file_is_not_kept);
	tcase_add_test(tc, a_damaged_entry_is_a_miss);
	suite_add_tcase(s, tc);
	return s;
}
