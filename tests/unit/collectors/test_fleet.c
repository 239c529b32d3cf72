/* test_fleet.c - unit tests for the fleet store's pieces that need no
 * store (collectors/fleet/): the URL and credentials a flag gives, labels,
 * SQL string quoting, ids against Python's hashlib (an independent
 * SHA-256), and a chunk's rows from a small perf script text: every
 * sample once, profile stacks that differ only in addresses summed into
 * one fleet stack row. */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <fcntl.h>
#include <unistd.h>

#include "collectors/fleet/store.h"
#include "collectors/fleet/rows.h"
#include "profile/parse.h"

START_TEST(urls_name_an_http_endpoint_and_a_database)
{
	char ep[128], db[64];
	struct pl_error err;

	ck_assert_int_eq(fleet_parse_url("http://127.0.0.1:8123/perflens", ep, sizeof(ep), db, sizeof(db), &err),
			 PL_OK);
	ck_assert_str_eq(ep, "http://127.0.0.1:8123");
	ck_assert_str_eq(db, "perflens");
	ck_assert_int_eq(fleet_parse_url("https://ch.example/fleet_1", ep, sizeof(ep), db, sizeof(db), &err), PL_OK);
	ck_assert_int_eq(fleet_parse_url("ftp://h/db", ep, sizeof(ep), db, sizeof(db), &err), PL_ERR_USAGE);
	ck_assert_int_eq(fleet_parse_url("http://h:8123/", ep, sizeof(ep), db, sizeof(db), &err), PL_ERR_USAGE);
	ck_assert_int_eq(fleet_parse_url("http://h/db;DROP", ep, sizeof(ep), db, sizeof(db), &err), PL_ERR_USAGE);
	ck_assert_ptr_nonnull(strstr(err.text, "';'"));
	ck_assert_int_eq(fleet_parse_url("http://h", ep, sizeof(ep), db, sizeof(db), &err), PL_ERR_USAGE);
}
END_TEST

START_TEST(credentials_come_from_the_first_line)
{
	char path[] = "/tmp/pl-fleet-cred-XXXXXX", user[256], pw[256];
	struct pl_error err;
	int fd = mkstemp(path);

	ck_assert_int_ge(fd, 0);
	ck_assert_int_eq(write(fd, "ingest:s3:cret\nignored\n", 23), 23);
	close(fd);
	ck_assert_int_eq(fleet_read_credentials(path, user, pw, &err), PL_OK);
	ck_assert_str_eq(user, "ingest");
	ck_assert_str_eq(pw, "s3:cret");
	fd = open(path, O_WRONLY | O_TRUNC);
	ck_assert_int_eq(write(fd, "no-colon\n", 9), 9);
	close(fd);
	ck_assert_int_eq(fleet_read_credentials(path, user, pw, &err), PL_ERR_USAGE);
	unlink(path);
	ck_assert_int_eq(fleet_read_credentials(path, user, pw, &err), PL_ERR_USAGE);
}
END_TEST

START_TEST(labels_and_quoting)
{
	struct pl_buf b = {0};

	ck_assert(fleet_label_ok("firmware=1.4.2"));
	ck_assert(fleet_label_ok("rack=B 'north' \\x"));
	ck_assert(fleet_label_ok("k="));
	ck_assert(!fleet_label_ok("=v"));
	ck_assert(!fleet_label_ok("no-equals"));
	ck_assert(!fleet_label_ok("bad key=v"));
	ck_assert(!fleet_label_ok("k=tab\there"));
	fleet_sql_quote(&b, "it's a \\ test");
	pl_buf_addc(&b, '\0');
	ck_assert_str_eq(b.data, "'it\\'s a \\\\ test'");
	pl_buf_release(&b);
}
END_TEST

/* python3 -c "import hashlib; print(int.from_bytes(hashlib.sha256(b'main\0/bin/app').digest()[:8], 'big') >> 1)" */
START_TEST(ids_are_63_bits_of_sha256)
{
	ck_assert_uint_eq(fleet_id("main\0/bin/app", 13), 350166150111471728ULL);
	ck_assert_uint_lt(fleet_id("", 0), 1ULL << 63);
}
END_TEST

START_TEST(a_chunk_becomes_rows_with_stacks_summed)
{
	char path[] = "/tmp/pl-fleet-chunk-XXXXXX";
	const char *text =
		"app 10/10 1.000000: 1000 cycles: \n\t 1000 hot+0x1 (/bin/app)\n\t 2000 main+0x2 (/bin/app)\n\n"
		"app 10/10 1.100000: 1000 cycles: \n\t 1004 hot+0x5 (/bin/app)\n\t 2000 main+0x2 (/bin/app)\n\n"
		"app 10/11 1.200000: 3000 cycles: \n\t 3000 cold+0x1 (/bin/app)\n\n";
	int fd = mkstemp(path);
	struct pl_parse_opts opts = {0};
	struct fleet_rows rows = {0};
	struct pl_limits lim;
	struct pl_profile p;
	struct pl_error err;
	json_t *labels = json_pack("[s]", "firmware=1");
	struct fleet_chunk_meta m = {"S/0", "dev", "S", 0, "srv", 1765098061, 1.0, labels};
	size_t nlines = 0;

	ck_assert_int_ge(fd, 0);
	ck_assert_int_eq(write(fd, text, strlen(text)), (ssize_t)strlen(text));
	close(fd);
	pl_limits_default(&lim);
	pl_profile_init(&p, &lim);
	ck_assert_int_eq(pl_parse_path(&p, path, &opts, &err), PL_OK);
	ck_assert_int_eq(fleet_chunk_rows(&p, &m, &rows, &err), PL_OK);
	ck_assert_uint_eq(rows.samples_total, 3);
	/* hot+0x1 and hot+0x5 are one fleet stack: one row of 2 samples */
	for (size_t i = 0; i < rows.samples.len; i++)
		nlines += rows.samples.data[i] == '\n';
	ck_assert_uint_eq(nlines, 2);
	pl_buf_addc(&rows.samples, '\0');
	ck_assert_ptr_nonnull(strstr(rows.samples.data, "\"samples\":2"));
	ck_assert_ptr_nonnull(strstr(rows.samples.data, "\"period\":2000"));
	ck_assert_ptr_nonnull(strstr(rows.samples.data, "\"minute\":1765098060"));
	ck_assert_ptr_nonnull(strstr(rows.samples.data, "\"day\":\"2025-12-07\""));
	pl_buf_addc(&rows.chunks, '\0');
	ck_assert_ptr_nonnull(strstr(rows.chunks.data, "\"samples\":3"));
	fleet_rows_release(&rows);
	pl_profile_release(&p);
	json_decref(labels);
	unlink(path);
}
END_TEST

/* With the session's clock, each sample lands in the minute of its own
 * time, however late the chunk arrived; the rows still sum to it. */
START_TEST(samples_are_bucketed_by_their_own_time)
{
	char path[] = "/tmp/pl-fleet-timed-XXXXXX";
	const char *text =
		"app 10/10 1.000000: 1000 cycles: \n\t 1000 hot+0x1 (/bin/app)\n\n"
		"app 10/10 1.100000: 1000 cycles: \n\t 1004 hot+0x5 (/bin/app)\n\n"
		"app 10/11 1.200000: 3000 cycles: \n\t 3000 cold+0x1 (/bin/app)\n\n";
	int fd = mkstemp(path);
	struct pl_parse_opts opts = {0};
	struct fleet_rows rows = {0};
	struct pl_limits lim;
	struct pl_profile p;
	struct pl_error err;
	json_t *labels = json_pack("[s]", "firmware=1");
	/* 1.0 s is 1765098059.95 (minute ...000), 1.1 and 1.2 s are past ...060;
	 * the chunk arrived two hours later */
	struct fleet_chunk_meta m = {"S/0", "dev", "S", 0, "srv", 1765098061 + 7200, 1.0, labels,
				     true, 1765098058950000000LL};
	size_t nlines = 0;

	ck_assert_int_ge(fd, 0);
	ck_assert_int_eq(write(fd, text, strlen(text)), (ssize_t)strlen(text));
	close(fd);
	pl_limits_default(&lim);
	pl_profile_init(&p, &lim);
	ck_assert_int_eq(pl_parse_path(&p, path, &opts, &err), PL_OK);
	ck_assert_int_eq(fleet_chunk_rows(&p, &m, &rows, &err), PL_OK);
	ck_assert_uint_eq(rows.samples_total, 3);
	for (size_t i = 0; i < rows.samples.len; i++)
		nlines += rows.samples.data[i] == '\n';
	ck_assert_uint_eq(nlines, 3);
	pl_buf_addc(&rows.samples, '\0');
	ck_assert_ptr_nonnull(strstr(rows.samples.data, "\"minute\":1765098000"));
	ck_assert_ptr_nonnull(strstr(rows.samples.data, "\"minute\":1765098060"));
	ck_assert_ptr_null(strstr(rows.samples.data, "\"minute\":1765105"));
	ck_assert_ptr_null(strstr(rows.samples.data, "\"samples\":2"));
	pl_buf_addc(&rows.chunks, '\0');
	ck_assert_ptr_nonnull(strstr(rows.chunks.data, "\"minute\":1765098000"));
	ck_assert_ptr_nonnull(strstr(rows.chunks.data, "\"samples\":3"));
	fleet_rows_release(&rows);
	pl_profile_release(&p);
	json_decref(labels);
	unlink(path);
}
END_TEST

Suite *suite_fleet(void)
{
	Suite *s = suite_create("fleet");
	TCase *tc = tcase_create("core");
	tcase_add_test(tc, urls_name_an_http_endpoint_and_a_database);
	tcase_add_test(tc, credentials_come_from_the_first_line);
	tcase_add_test(tc, labels_and_quoting);
	tcase_add_test(tc, ids_are_63_bits_of_sha256);
	tcase_add_test(tc, a_chunk_becomes_rows_with_stacks_summed);
	tcase_add_test(tc, samples_are_bucketed_by_their_own_time);
	suite_add_tcase(s, tc);
	return s;
}
