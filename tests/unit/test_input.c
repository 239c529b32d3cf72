/* test_input.c - unit tests for input.c: plain, gzip (several members)
 * and zstd files give the same lines; truncated data, long lines, large
 * inputs and non-regular files fail with the right error codes.
 */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <zlib.h>
#include <zstd.h>

#include "input.h"

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

static void write_file(const char *path, const void *p, size_t n)
{
	FILE *f = fopen(path, "wb");
	ck_assert_ptr_nonnull(f);
	ck_assert_uint_eq(fwrite(p, 1, n, f), n);
	fclose(f);
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
	pl_input_sha256(&in, hex);
	/* FIPS 180-2 test vector for "abc". */
	ck_assert_str_eq(hex, "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
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
	suite_add_tcase(s, tc);
	return s;
}
