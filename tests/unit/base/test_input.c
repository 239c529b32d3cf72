/* test_input.c - unit tests for input.c: plain, gzip (several members)
 * and zstd files give the same lines; truncated data, long lines, large
 * inputs and non-regular files fail with the right error codes; the
 * hashing thread's digest is the file's whether the parser is slower or
 * faster than it, also when finished after the input is closed, and a
 * file changed while it is read fails the hash.
 */
#include <check.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <zlib.h>
#include <zstd.h>

#include "base/input.h"
#include "testlib.h"

static const char text[] = "first line\nsecond line\r\n\nlast line without newline";

static char *temp_path(void)
{
	static char path[64];
	int fd;

	snprintf(path, sizeof(path), "/tmp/perflens-input-XXXXXX");
	fd = mkstemp(path);
	ck_assert_int_ge(fd, 0);
	close(fd);
	return path;
}

static void write_gzip(const char *path, const char *s, size_t n, int members)
{
	/* Several gzip members, as an agent appending chunks writes them. */
	gzFile gz = gzopen(path, "wb");
	size_t part = n / (size_t)members;
	ck_assert_ptr_nonnull(gz);
	for (int m = 0; m < members; m++) {
		size_t len = m == members - 1 ? n - part * (size_t)m : part;
		ck_assert_int_eq(gzwrite(gz, s + part * (size_t)m, (unsigned)len), (int)len);
		if (m < members - 1) {
			gzclose(gz);
			gz = gzopen(path, "ab");
		}
	}
	gzclose(gz);
}

/* Read every line, joined with '\n'. */
static enum pl_err read_all(const char *path, const struct pl_limits *lim, char *out,
			    size_t cap, enum pl_codec *codec)
{
	struct pl_input in;
	struct pl_error err;
	const char *line;
	size_t n, used = 0;
	int r;

	if (pl_input_open(&in, path, lim, &err))
		return err.code;
	*codec = in.codec;
	while ((r = pl_input_line(&in, &line, &n, &err)) > 0) {
		ck_assert_uint_lt(used + n + 1, cap);
		memcpy(out + used, line, n);
		used += n;
		out[used++] = '\n';
	}
	out[used] = '\0';
	pl_input_close(&in);
	return r < 0 ? err.code : PL_OK;
}

static const char expected[] = "first line\nsecond line\n\nlast line without newline\n";

START_TEST(plain_gzip_and_zstd_give_the_same_lines)
{
	struct pl_limits lim;
	char out[256], *path = temp_path();
	char zbuf[256];
	enum pl_codec codec;
	size_t zn;

	pl_limits_default(&lim);
	write_file(path, text, strlen(text));
	ck_assert_int_eq(read_all(path, &lim, out, sizeof(out), &codec), PL_OK);
	ck_assert_str_eq(out, expected);
	ck_assert_int_eq(codec, PL_CODEC_NONE);

	write_gzip(path, text, strlen(text), 3);
	ck_assert_int_eq(read_all(path, &lim, out, sizeof(out), &codec), PL_OK);
	ck_assert_str_eq(out, expected);
	ck_assert_int_eq(codec, PL_CODEC_GZIP);

	zn = ZSTD_compress(zbuf, sizeof(zbuf), text, strlen(text), 3);
	ck_assert(!ZSTD_isError(zn));
	write_file(path, zbuf, zn);
	ck_assert_int_eq(read_all(path, &lim, out, sizeof(out), &codec), PL_OK);
	ck_assert_str_eq(out, expected);
	ck_assert_int_eq(codec, PL_CODEC_ZSTD);
	unlink(path);
}
END_TEST

START_TEST(truncated_compressed_input_is_malformed)
{
	struct pl_limits lim;
	char out[256], zbuf[256], *path = temp_path();
	enum pl_codec codec;
	size_t zn;
	struct stat sb;
	FILE *f;
	char *gz;

	pl_limits_default(&lim);
	zn = ZSTD_compress(zbuf, sizeof(zbuf), text, strlen(text), 3);
	write_file(path, zbuf, zn - 4);
	ck_assert_int_eq(read_all(path, &lim, out, sizeof(out), &codec), PL_ERR_MALFORMED);

	write_gzip(path, text, strlen(text), 1);
	stat(path, &sb);
	gz = malloc((size_t)sb.st_size);
	f = fopen(path, "rb");
	ck_assert_uint_eq(fread(gz, 1, (size_t)sb.st_size, f), (size_t)sb.st_size);
	fclose(f);
	write_file(path, gz, (size_t)sb.st_size - 12);
	ck_assert_int_eq(read_all(path, &lim, out, sizeof(out), &codec), PL_ERR_MALFORMED);
	free(gz);
	unlink(path);
}
END_TEST

START_TEST(long_lines_and_large_inputs_hit_limits)
{
	struct pl_limits lim;
	char out[256], *path = temp_path();
	enum pl_codec codec;

	pl_limits_default(&lim);
	lim.max_line = 8;
	write_file(path, text, strlen(text));
	ck_assert_int_eq(read_all(path, &lim, out, sizeof(out), &codec), PL_ERR_LIMIT);
	pl_limits_default(&lim);
	lim.max_input_bytes = 10;
	ck_assert_int_eq(read_all(path, &lim, out, sizeof(out), &codec), PL_ERR_LIMIT);
	unlink(path);
}
END_TEST

START_TEST(folders_and_fifos_are_refused)
{
	struct pl_limits lim;
	char out[16], fifo[] = "/tmp/perflens-fifo-XXXXXX";
	enum pl_codec codec;
	int fd = mkstemp(fifo);

	close(fd);
	unlink(fifo);
	ck_assert_int_eq(mkfifo(fifo, 0600), 0);
	pl_limits_default(&lim);
	ck_assert_int_eq(read_all("/tmp", &lim, out, sizeof(out), &codec), PL_ERR_INPUT);
	ck_assert_int_eq(read_all(fifo, &lim, out, sizeof(out), &codec), PL_ERR_INPUT);
	ck_assert_int_eq(read_all("/nonexistent/x", &lim, out, sizeof(out), &codec), PL_ERR_INPUT);
	unlink(fifo);
}
END_TEST

START_TEST(sha256_matches_a_known_digest)
{
	struct pl_limits lim;
	struct pl_input in;
	struct pl_error err;
	const char *line;
	size_t n;
	char hex[65], *path = temp_path();

	pl_limits_default(&lim);
	write_file(path, "abc", 3);
	ck_assert_int_eq(pl_input_open(&in, path, &lim, &err), PL_OK);
	while (pl_input_line(&in, &line, &n, &err) > 0)
		;
	ck_assert_int_eq(pl_input_sha256(&in, hex, &err), PL_OK);
	/* FIPS 180-2 test vector for "abc". */
	ck_assert_str_eq(hex, "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
	pl_input_close(&in);
	unlink(path);
}
END_TEST

/* Big enough for the hashing thread (input.c starts it from 4 MiB). */
#define BIG_SIZE ((size_t)12 << 20)

/* A temporary file (*path) of BIG_SIZE bytes of numbered lines; returns
 * its text, which the caller frees. */
static char *big_file(char **path)
{
	const size_t n = BIG_SIZE;
	char *t = malloc(n + 1);
	size_t used = 0;

	ck_assert_ptr_nonnull(t);
	for (unsigned i = 0; used < n; i++) {
		int k = snprintf(t + used, n + 1 - used, "line %u of a file that a thread hashes\n", i);
		used += (size_t)k < n - used ? (size_t)k : n - used;
	}
	t[n - 1] = '\n';
	t[n] = '\0';
	*path = temp_path();
	write_file(*path, t, n);
	return t;
}

/* Read every line of a big file, checking each against `t`; the parser
 * pauses `pause_us` after the first line (then the hash runs ahead). */
static void read_big(struct pl_input *in, const char *t, useconds_t pause_us)
{
	struct pl_error err;
	const char *line;
	size_t n, got = 0, lines = 0;
	int r;

	while ((r = pl_input_line(in, &line, &n, &err)) > 0) {
		ck_assert_int_eq(memcmp(line, t + got, n), 0);
		got += n + 1;
		if (++lines == 1 && pause_us)
			usleep(pause_us);
	}
	ck_assert_int_eq(r, 0);
	ck_assert_uint_eq(got, BIG_SIZE);
}

/* The parser stalls at the start (the hash runs ahead), or runs at its
 * own speed and the hash is finished after the input is closed: either
 * way the lines and the digest are exactly the file's. */
START_TEST(a_big_file_gives_its_digest_whichever_side_is_faster)
{
	struct pl_limits lim;
	struct pl_input in;
	struct pl_input_hash *h;
	struct pl_error err;
	char hex[65], want[65], *path, *t = big_file(&path);

	pl_limits_default(&lim);
	sha256sum_of(path, want);
	ck_assert_int_eq(pl_input_open(&in, path, &lim, &err), PL_OK);
	read_big(&in, t, 200 * 1000);
	ck_assert_int_eq(pl_input_sha256(&in, hex, &err), PL_OK);
	ck_assert_str_eq(hex, want);
	pl_input_close(&in);

	ck_assert_int_eq(pl_input_open(&in, path, &lim, &err), PL_OK);
	read_big(&in, t, 0);
	h = pl_input_detach_hash(&in);
	pl_input_close(&in);
	memset(hex, 0, sizeof(hex));
	ck_assert_int_eq(pl_input_hash_finish(h, hex, &err), PL_OK);
	ck_assert_str_eq(hex, want);
	unlink(path);
	free(t);
}
END_TEST

/* The file is written to while it is read (after the hash has read all
 * of it, so the two reads may differ): the hash fails rather than give a
 * digest of other bytes than were parsed.  A hash given up unfinished
 * (the parser stopped early) costs nothing more. */
START_TEST(a_file_changed_while_read_fails)
{
	struct pl_limits lim;
	struct pl_input in;
	struct pl_error err;
	const char *line;
	char hex[65], *path, *t = big_file(&path);
	size_t n;
	int fd;

	pl_limits_default(&lim);
	ck_assert_int_eq(pl_input_open(&in, path, &lim, &err), PL_OK);
	ck_assert_int_eq(pl_input_line(&in, &line, &n, &err), 1);
	/* Give the hashing thread time to read the whole file. */
	usleep(300 * 1000);
	fd = open(path, O_WRONLY);
	ck_assert_int_ge(fd, 0);
	ck_assert_int_eq(pwrite(fd, "CHANGED", 7, BIG_SIZE - 2048), 7);
	close(fd);
	while (pl_input_line(&in, &line, &n, &err) > 0)
		;
	ck_assert_int_eq(pl_input_sha256(&in, hex, &err), PL_ERR_INPUT);
	ck_assert_ptr_nonnull(strstr(err.text, "changed while it was read"));
	pl_input_close(&in);

	ck_assert_int_eq(pl_input_open(&in, path, &lim, &err), PL_OK);
	ck_assert_int_eq(pl_input_line(&in, &line, &n, &err), 1);
	pl_input_close(&in);
	unlink(path);
	free(t);
}
END_TEST

/* What happens to the file once both sides have read it to the end (a
 * rewrite, a chmod) does not count as a change: the digest handed over
 * and finished afterwards is the file's as it was read.  The hash can be
 * taken once only. */
START_TEST(a_change_after_both_reads_ended_does_not_count)
{
	struct pl_limits lim;
	struct pl_input in;
	struct pl_input_hash *h;
	struct pl_error err;
	char hex[65], want[65], *path, *t = big_file(&path);
	int fd;

	pl_limits_default(&lim);
	sha256sum_of(path, want);
	ck_assert_int_eq(pl_input_open(&in, path, &lim, &err), PL_OK);
	read_big(&in, t, 0);
	h = pl_input_detach_hash(&in);
	ck_assert_ptr_nonnull(h);
	ck_assert_ptr_null(pl_input_detach_hash(&in));
	ck_assert_int_eq(pl_input_sha256(&in, hex, &err), PL_ERR_INTERNAL);
	pl_input_close(&in);
	while (pl_input_hash_busy(h))
		usleep(1000);
	fd = open(path, O_WRONLY);
	ck_assert_int_ge(fd, 0);
	ck_assert_int_eq(pwrite(fd, "CHANGED", 7, BIG_SIZE - 2048), 7);
	close(fd);
	ck_assert_int_eq(chmod(path, 0600), 0);
	ck_assert_int_eq(pl_input_hash_finish(h, hex, &err), PL_OK);
	ck_assert_str_eq(hex, want);
	unlink(path);
	free(t);
}
END_TEST

/* Buffered text is the rest of the block after the last line; skipping
 * part of it moves the next line and the line numbers on. */
START_TEST(buffered_lines_can_be_skipped)
{
	static const char lines[] = "one\n two\n three\nfour\n";
	struct pl_limits lim;
	struct pl_input in;
	struct pl_error err;
	const char *line, *rest;
	char *path = temp_path();
	size_t n;

	pl_limits_default(&lim);
	write_file(path, lines, sizeof(lines) - 1);
	ck_assert_int_eq(pl_input_open(&in, path, &lim, &err), PL_OK);
	ck_assert_int_eq(pl_input_line(&in, &line, &n, &err), 1);
	ck_assert_uint_eq(pl_input_buffered(&in, &rest), sizeof(lines) - 1 - 4);
	ck_assert_int_eq(memcmp(rest, " two\n three\n", 12), 0);
	pl_input_skip(&in, 12, 2);
	ck_assert_int_eq(pl_input_line(&in, &line, &n, &err), 1);
	ck_assert_uint_eq(n, 4);
	ck_assert_int_eq(memcmp(line, "four", 4), 0);
	ck_assert_uint_eq(in.line_no, 4);
	ck_assert_int_eq(pl_input_line(&in, &line, &n, &err), 0);
	pl_input_close(&in);
	unlink(path);
}
END_TEST

START_TEST(plain_lines_run_across_read_blocks)
{
	/* Lines of every length around the 256 KiB read block, CRLF too, in
	 * a file big enough to be read by the reader and hasher threads. */
	char path[] = "/tmp/perflens-blocks-XXXXXX";
	size_t lens[] = {1, 262142, 262143, 262144, 262145, 3, 524290, 0, 17,
			 1000000, 1000000, 1000000, 1000000, 5};
	struct pl_limits lim;
	struct pl_input in;
	struct pl_error err;
	const char *line;
	size_t n, k = 0;
	char want[128], got[65];
	FILE *f;
	int fd = mkstemp(path);

	ck_assert_int_ge(fd, 0);
	f = fdopen(fd, "wb");
	for (size_t i = 0; i < sizeof(lens) / sizeof(lens[0]); i++) {
		for (size_t j = 0; j < lens[i]; j++)
			fputc('a' + (int)((i + j) % 26), f);
		fputs(i % 2 ? "\r\n" : "\n", f);
	}
	fclose(f);
	pl_limits_default(&lim);
	ck_assert_int_eq(pl_input_open(&in, path, &lim, &err), PL_OK);
	while (pl_input_line(&in, &line, &n, &err) > 0) {
		bool same = n == lens[k];
		for (size_t j = 0; j < n && same; j++)
			same = line[j] == 'a' + (int)((k + j) % 26);
		ck_assert_msg(same, "line %zu differs", k + 1);
		k++;
	}
	ck_assert_uint_eq(k, sizeof(lens) / sizeof(lens[0]));
	ck_assert_int_eq(pl_input_sha256(&in, got, &err), PL_OK);
	ck_assert_str_eq(got, sha256sum_of(path, want));
	pl_input_close(&in);
	/* A line longer than the limit (its CR counts) is an error however
	 * blocks cut it. */
	lim.max_line = 262144;
	ck_assert_int_eq(pl_input_open(&in, path, &lim, &err), PL_OK);
	while (pl_input_line(&in, &line, &n, &err) > 0)
		;
	ck_assert_int_eq(err.code, PL_ERR_LIMIT);
	snprintf(want, sizeof(want), "line 4 of '%s' is longer than 262144 bytes", path);
	ck_assert_str_eq(err.text, want);
	pl_input_close(&in);
	unlink(path);
}
END_TEST

Suite *suite_input(void)
{
	Suite *s = suite_create("input");
	TCase *tc = tcase_create("files");
	tcase_add_test(tc, plain_gzip_and_zstd_give_the_same_lines);
	tcase_add_test(tc, truncated_compressed_input_is_malformed);
	tcase_add_test(tc, long_lines_and_large_inputs_hit_limits);
	tcase_add_test(tc, folders_and_fifos_are_refused);
	tcase_add_test(tc, sha256_matches_a_known_digest);
	tcase_add_test(tc, a_big_file_gives_its_digest_whichever_side_is_faster);
	tcase_add_test(tc, a_file_changed_while_read_fails);
	tcase_add_test(tc, a_change_after_both_reads_ended_does_not_count);
	tcase_add_test(tc, buffered_lines_can_be_skipped);
	tcase_add_test(tc, plain_lines_run_across_read_blocks);
	tcase_set_timeout(tc, 30);
	suite_add_tcase(s, tc);
	return s;
}
