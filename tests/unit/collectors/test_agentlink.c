/* test_agentlink.c - unit tests for the agent link's wire and channel
 * (collectors/agentlink/): the pairing proofs against HMAC-SHA256 values
 * computed with Python's hmac module (an independent implementation),
 * the zstd chunk check on frames made by the zstd command, frame reading
 * over a socketpair (caps before allocation, a frame cut mid-way), ids,
 * a request through the channel's files, the startup sweep of a
 * session a killed server left (its temps removed, whatever their name),
 * the framing of a perf.data chunk (records hand-made from the kernel's
 * perf_event_header layout) across the check's 1 MB pieces, and an
 * agent's capture_problems kept in the capture's record. */
#include <check.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <fcntl.h>
#include <stdio.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zstd.h>

#include "collectors/agentlink/link_int.h"
#include "collectors/agentlink/channel.h"

#define AN "00112233445566778899aabbccddeeff"
#define SN "ffeeddccbbaa99887766554433221100"

START_TEST(pair_proofs_match_python_hmac)
{
	char p[65];

	coll_wire_pair_proof("pairing-Code-42", "server", AN, SN, p);
	ck_assert_str_eq(p, "b5cf170fbd53b899953212ed6ddbb698b4c4f9aeb6ebc627ed3944e41aeb2332");
	coll_wire_pair_proof("pairing-Code-42", "agent", AN, SN, p);
	ck_assert_str_eq(p, "a47d8b16d67d7a30dfae0348ed40e2b90a848ce2c8aa0083d1a463efed725151");
	ck_assert(coll_wire_equal_ct(p, "a47d8b16d67d7a30dfae0348ed40e2b90a848ce2c8aa0083d1a463efed725151"));
	ck_assert(!coll_wire_equal_ct(p, "a47d8b16d67d7a30dfae0348ed40e2b90a848ce2c8aa0083d1a463efed725150"));
	ck_assert(!coll_wire_equal_ct(p, "a47d"));
}
END_TEST

static size_t unhex(const char *h, unsigned char *out)
{
	size_t n = strlen(h) / 2;

	for (size_t i = 0; i < n; i++)
		sscanf(h + 2 * i, "%2hhx", &out[i]);
	return n;
}

START_TEST(zstd_check_counts_text_and_refuses_bad_frames)
{
	/* printf 'hello perf text\n' | zstd -q -c */
	unsigned char z[64], two[128];
	size_t n = unhex("28b52ffd045881000068656c6c6f207065726620746578740a2f661ae1", z);
	unsigned long long size;
	struct pl_error err;

	ck_assert_int_eq(coll_wire_zstd_text_size(z, n, &size, &err), PL_OK);
	ck_assert_uint_eq(size, 16);
	ck_assert_int_eq(coll_wire_zstd_text_size(z, n - 3, &size, &err), PL_ERR_MALFORMED);
	ck_assert_ptr_nonnull(strstr(err.text, "cut short"));
	ck_assert_int_eq(coll_wire_zstd_text_size("garbage!", 8, &size, &err), PL_ERR_MALFORMED);
	ck_assert_ptr_nonnull(strstr(err.text, "magic"));
	memcpy(two, z, n);
	memcpy(two + n, z, n);
	ck_assert_int_eq(coll_wire_zstd_text_size(two, 2 * n, &size, &err), PL_ERR_MALFORMED);
	ck_assert_ptr_nonnull(strstr(err.text, "after its frame"));
}
END_TEST

START_TEST(frames_are_capped_before_allocation_and_cut_ones_say_so)
{
	int sv[2];
	struct wire_frame f;
	struct pl_error err;

	ck_assert_int_eq(socketpair(AF_UNIX, SOCK_STREAM, 0, sv), 0);
	ck_assert_int_eq(write(sv[1], "\x00\x00\x00\x03\x03" "abc", 8), 8);
	ck_assert_int_eq(coll_wire_read(sv[0], 1024, &f, &err), PL_OK);
	ck_assert_int_eq(f.flag, 3);
	ck_assert_str_eq((char *)f.data, "abc");
	free(f.data);
	ck_assert_int_eq(write(sv[1], "\xff\xff\xff\xf0\x01", 5), 5);
	ck_assert_int_eq(coll_wire_read(sv[0], AGENT_FRAME_PREAUTH_MAX, &f, &err), PL_ERR_LIMIT);
	ck_assert_ptr_null(f.data);
	ck_assert_str_eq(err.text, "a frame header claims 4294967280 bytes, over the cap of 65536");
	ck_assert_int_eq(write(sv[1], "\x00\x00\x01\x00\x01" "half", 9), 9);
	close(sv[1]);
	ck_assert_int_eq(coll_wire_read(sv[0], 1024, &f, &err), PL_ERR_EXTERNAL);
	ck_assert_int_eq(f.flag, 1);  /* a chunk was cut: the link records a gap */
	ck_assert_str_eq(err.text, "the link closed mid-frame");
	close(sv[0]);
}
END_TEST

START_TEST(ids_are_names_not_paths)
{
	ck_assert(coll_id_ok("127.0.0.1_9999"));
	ck_assert(coll_id_ok("20261201_213531_10.0.0.2_41234_3"));
	ck_assert(!coll_id_ok(".."));
	ck_assert(!coll_id_ok("a/b"));
	ck_assert(!coll_id_ok(""));
	ck_assert(!coll_id_ok(NULL));
	ck_assert(!coll_id_ok(".hidden"));
}
END_TEST

START_TEST(a_request_goes_through_the_channel_files)
{
	char root[] = "/tmp/pl-channel-XXXXXX", id[64];
	json_t *req, *taken, *answer = NULL;
	struct pl_error err;

	ck_assert_ptr_nonnull(mkdtemp(root));
	ck_assert_ptr_null(coll_channel_take(root, id, sizeof(id)));
	/* Nobody answers: the request times out and is taken back. */
	req = json_pack("{s:s,s:{}}", "op", "status", "args");
	ck_assert_int_ne(coll_channel_call(root, req, 50, &answer, &err), PL_OK);
	ck_assert_ptr_nonnull(strstr(err.text, "no agent link answered"));
	json_decref(req);  /* borrowed by coll_channel_call */
	ck_assert_ptr_null(coll_channel_take(root, id, sizeof(id)));
	/* A link that takes it and answers. */
	req = json_pack("{s:s,s:s}", "request_id", "r1", "op", "ping");
	ck_assert_int_eq(coll_write_json(root, "devices/requests/r1.json", req), 0);
	json_decref(req);
	taken = coll_channel_take(root, id, sizeof(id));
	ck_assert_ptr_nonnull(taken);
	ck_assert_str_eq(id, "r1");
	ck_assert_str_eq(json_string_value(json_object_get(taken, "op")), "ping");
	ck_assert_ptr_null(coll_channel_take(root, id, sizeof(id)));  /* removed as taken */
	json_decref(taken);
}
END_TEST

static void put_file(const char *path, const char *text)
{
	FILE *f = fopen(path, "w");

	ck_assert_ptr_nonnull(f);
	fputs(text, f);
	fclose(f);
}

START_TEST(the_sweep_finalizes_a_killed_session_and_drops_its_temps)
{
	char root[] = "/tmp/pl-sweep-XXXXXX", dir[200], path[300];
	struct stat sb;
	json_t *m;

	ck_assert_ptr_nonnull(mkdtemp(root));
	snprintf(dir, sizeof(dir), "%s/sessions", root);
	ck_assert_int_eq(mkdir(dir, 0755), 0);
	snprintf(dir, sizeof(dir), "%s/sessions/s1", root);
	ck_assert_int_eq(mkdir(dir, 0755), 0);
	snprintf(path, sizeof(path), "%s/chunk_00000.txt", dir);
	put_file(path, "x 1/1 1.0: 1 cpu-clock:\n");
	snprintf(path, sizeof(path), "%s/metadata.json", dir);
	put_file(path, "{\"live\": true, \"chunks\": 1}");
	/* What coll_write_file_atomic leaves when the server dies mid-write. */
	snprintf(path, sizeof(path), "%s/.chunk_00001.zst.tmp-AbC123", dir);
	put_file(path, "half");
	snprintf(path, sizeof(path), "%s/.metadata.json.tmp-XyZ789", dir);
	put_file(path, "{");
	spool_sweep(root);
	snprintf(path, sizeof(path), "%s/.chunk_00001.zst.tmp-AbC123", dir);
	ck_assert_int_ne(stat(path, &sb), 0);
	snprintf(path, sizeof(path), "%s/.metadata.json.tmp-XyZ789", dir);
	ck_assert_int_ne(stat(path, &sb), 0);
	m = coll_read_json(root, "sessions/s1/metadata.json", 1 << 20);
	ck_assert_ptr_nonnull(m);
	ck_assert(json_is_false(json_object_get(m, "live")));
	ck_assert(json_is_true(json_object_get(m, "recovered")));
	ck_assert_int_eq(json_integer_value(json_object_get(m, "chunks")), 1);
	json_decref(m);
}
END_TEST

START_TEST(a_state_file_is_written_whole_and_errors_are_counted)
{
	char root[] = "/tmp/pl-state-XXXXXX";
	json_t *doc = json_pack("{s:s}", "state", "connected"), *errors = json_object(), *back;
	bool landed = false;

	ck_assert_ptr_nonnull(mkdtemp(root));
	ck_assert_int_eq(coll_write_state(root, "devices/d.json", doc, &landed), 0);
	ck_assert(landed);
	back = coll_read_json(root, "devices/d.json", 1 << 16);
	ck_assert_str_eq(json_string_value(json_object_get(back, "state")), "connected");
	json_decref(back);
	/* The first error of a file is new (logged), the same again counted,
	 * another kind new again; the count is of every failed write. */
	ck_assert(coll_note_write_error(errors, "d", "metrics.jsonl", ENOSPC));
	ck_assert(!coll_note_write_error(errors, "d", "metrics.jsonl", ENOSPC));
	ck_assert(coll_note_write_error(errors, "d", "metrics.jsonl", EIO));
	ck_assert_int_eq(json_integer_value(json_object_get(json_object_get(errors, "metrics.jsonl"), "count")), 3);
	ck_assert_str_eq(json_string_value(json_object_get(json_object_get(errors, "metrics.jsonl"), "error")),
			 strerror(EIO));
	json_decref(errors);
	json_decref(doc);
}
END_TEST

/* A pipe-mode perf.data: the 16-byte header, one attribute record (type
 * 64) and `n` records of `type` and `size` bytes (perf_event_header: u32
 * type, u16 misc, u16 size) whose headers say `said` bytes, in this
 * machine's byte order; zstd'ed into *z (new), its length returned; *raw
 * its plain length. */
static size_t perf_chunk_new(unsigned n, uint32_t type, uint16_t size, uint16_t said, unsigned char **z,
			     size_t *raw)
{
	size_t len = 16 + 8 + (size_t)n * size, off = 16;
	unsigned char *p = calloc(1, len);
	uint64_t head = 16;
	uint32_t attr = 64;
	uint16_t eight = 8;

	memcpy(p, "PERFILE2", 8);
	memcpy(p + 8, &head, 8);
	memcpy(p + off, &attr, 4);
	memcpy(p + off + 6, &eight, 2);
	for (off += 8; off < len; off += size) {
		memcpy(p + off, &type, 4);
		memcpy(p + off + 6, &said, 2);
	}
	*z = malloc(ZSTD_compressBound(len));
	*raw = len;
	len = ZSTD_compress(*z, ZSTD_compressBound(len), p, len, 1);
	free(p);
	return len;
}

START_TEST(a_perf_chunk_is_framed_across_pieces_and_its_refusals_have_codes)
{
	unsigned char *z;
	unsigned long long size;
	uint64_t samples;
	size_t raw, n;
	struct pl_error err;

	/* 9-byte samples: the first 1 MB piece ends 7 bytes into a record's
	 * header, so the header is gathered from two pieces. */
	n = perf_chunk_new(130000, 9, 9, 9, &z, &raw);
	ck_assert_int_eq(coll_wire_perf_chunk_check(z, n, &size, &samples, &err), PL_OK);
	ck_assert_uint_eq(size, raw);
	ck_assert_uint_eq(samples, 130000);
	free(z);
	n = perf_chunk_new(2, 9, 8, 4, &z, &raw);
	ck_assert_int_eq(coll_wire_perf_chunk_check(z, n, &size, &samples, &err), PL_ERR_MALFORMED);
	ck_assert_str_eq(err.text, "a perf.data chunk with a record of 4 bytes (under its 8-byte header)");
	free(z);
	n = perf_chunk_new(1, 66, 16, 16, &z, &raw);
	ck_assert_int_eq(coll_wire_perf_chunk_check(z, n, &size, &samples, &err), PL_ERR_UNSUPPORTED);
	free(z);
}
END_TEST

START_TEST(capture_problems_are_kept_checked_and_counted)
{
	json_t *capture = json_object();
	json_t *a = json_loads("{\"ok\": true, \"capture_problems\": [\"perf stuck. Fix: x\", 7, \"a\\u0001b\"]}",
			       0, NULL);

	ck_assert(a != NULL);
	ck_assert(!coll_capture_problems(NULL, a));
	ck_assert(coll_capture_problems(capture, a));
	json_t *kept = json_object_get(capture, "problems");
	ck_assert_int_eq(json_array_size(kept), 2);
	ck_assert_str_eq(json_string_value(json_array_get(kept, 0)), "perf stuck. Fix: x");
	ck_assert(strstr(json_string_value(json_array_get(kept, 1)), "2 more problem(s)") != NULL);
	/* the same answer again (the next status ping): no change */
	ck_assert(!coll_capture_problems(capture, a));
	/* an answer without them leaves the record alone */
	json_t *none = json_pack("{s:b}", "ok", 1);
	ck_assert(!coll_capture_problems(capture, none));
	ck_assert_int_eq(json_array_size(json_object_get(capture, "problems")), 2);
	json_decref(none);
	json_decref(a);
	json_decref(capture);
}
END_TEST

Suite *suite_agentlink(void)
{
	Suite *s = suite_create("agentlink");
	TCase *tc = tcase_create("core");
	tcase_add_test(tc, pair_proofs_match_python_hmac);
	tcase_add_test(tc, zstd_check_counts_text_and_refuses_bad_frames);
	tcase_add_test(tc, frames_are_capped_before_allocation_and_cut_ones_say_so);
	tcase_add_test(tc, ids_are_names_not_paths);
	tcase_add_test(tc, a_request_goes_through_the_channel_files);
	tcase_add_test(tc, the_sweep_finalizes_a_killed_session_and_drops_its_temps);
	tcase_add_test(tc, a_state_file_is_written_whole_and_errors_are_counted);
	tcase_add_test(tc, a_perf_chunk_is_framed_across_pieces_and_its_refusals_have_codes);
	tcase_add_test(tc, capture_problems_are_kept_checked_and_counted);
	suite_add_tcase(s, tc);
	return s;
}
