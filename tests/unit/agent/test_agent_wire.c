/* test_agent_wire.c - the agent's SHA-256/HMAC (agent/sha256.c) against
 * nettle and the RFC 4231 vectors, the pairing proofs against a direct
 * HMAC, the frame reader (agent/wire.c: caps checked on the header before
 * any allocation, zero-length frames skipped, byte-at-a-time feeding) and
 * the command decoder (agent/cmd.c: ids, scoped args). */
#include <check.h>
#include <nettle/hmac.h>
#include <nettle/sha2.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "agent/cmd.h"
#include "agent/sha256.h"
#include "agent/wire.h"

void hex_encode(const uint8_t *in, size_t n, char *out);
void pair_proof(const char *code, size_t code_len, const char *role, const char *agent_nonce,
		const char *server_nonce, char out_hex[65]);
int ct_equal(const void *a, size_t alen, const void *b, size_t blen);

static void hex(const uint8_t *d, size_t n, char *out)
{
	hex_encode(d, n, out);
}

START_TEST(sha256_matches_nettle)
{
	unsigned seed = 7;
	static uint8_t buf[1000];
	for (size_t i = 0; i < sizeof buf; i++)
		buf[i] = (uint8_t)rand_r(&seed);
	for (size_t n = 0; n <= sizeof buf; n += (n < 130 ? 1 : 37)) {
		uint8_t a[32], b[32];
		struct asha256 s;
		struct sha256_ctx ns;
		asha256_init(&s);
		/* in two pieces, to cross block edges */
		asha256_update(&s, buf, n / 3);
		asha256_update(&s, buf + n / 3, n - n / 3);
		asha256_final(&s, a);
		nettle_sha256_init(&ns);
		nettle_sha256_update(&ns, n, buf);
		nettle_sha256_digest(&ns, sizeof b, b);
		ck_assert_msg(memcmp(a, b, 32) == 0, "length %zu", n);
		uint8_t key[200];
		size_t kl = n % sizeof key;
		memcpy(key, buf + 7, kl);
		struct hmac_sha256_ctx nh;
		hmac_sha256_set_key(&nh, kl, key);
		hmac_sha256_update(&nh, n, buf);
		hmac_sha256_digest(&nh, sizeof b, b);
		asha256_hmac(key, kl, buf, n, a);
		ck_assert_msg(memcmp(a, b, 32) == 0, "hmac key %zu msg %zu", kl, n);
	}
}
END_TEST

START_TEST(hmac_rfc4231_vectors)
{
	uint8_t k1[20], k3[20], d3[50], k4[25], d4[50], k5[20], k6[131], mac[32];
	char h[65];
	memset(k1, 0x0b, 20);
	memset(k3, 0xaa, 20);
	memset(d3, 0xdd, 50);
	for (int i = 0; i < 25; i++)
		k4[i] = (uint8_t)(i + 1);
	memset(d4, 0xcd, 50);
	memset(k5, 0x0c, 20);
	memset(k6, 0xaa, 131);
	const char *m7 = "This is a test using a larger than block-size key and a larger than block-size "
			 "data. The key needs to be hashed before being used by the HMAC algorithm.";
	struct { const void *k; size_t kl; const void *d; size_t dl; const char *want; } v[] = {
		{k1, 20, "Hi There", 8, "b0344c61d8db38535ca8afceaf0bf12b881dc200c9833da726e9376c2e32cff7"},
		{"Jefe", 4, "what do ya want for nothing?", 28,
		 "5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843"},
		{k3, 20, d3, 50, "773ea91e36800e46854db8ebd09181a72959098b3ef8c122d9635514ced565fe"},
		{k4, 25, d4, 50, "82558a389a443c0ea4cc819899f2083a85f0faa3e578f8077a2e3ff46729665b"},
		{k5, 20, "Test With Truncation", 20, "a3b6167473100ee06e0c796c2955552b"},
		{k6, 131, "Test Using Larger Than Block-Size Key - Hash Key First", 54,
		 "60e431591ee0b67f0d8a26aacbf5b77f8e0bc6213728c5140546040f0ee37f54"},
		{k6, 131, m7, strlen(m7), "9b09ffa71b942fcb27635fbcd5b0e944bfdc63644f0713938a7f51535c3a35e2"},
	};
	for (size_t i = 0; i < sizeof v / sizeof v[0]; i++) {
		asha256_hmac(v[i].k, v[i].kl, v[i].d, v[i].dl, mac);
		hex(mac, 32, h);
		ck_assert_msg(strncmp(h, v[i].want, strlen(v[i].want)) == 0, "RFC 4231 case %zu: %s", i + 1, h);
	}
}
END_TEST

START_TEST(pairing_proof_binds_role_and_both_nonces)
{
	char a[65], b[65], c[65], want[65];
	uint8_t mac[32];
	const char *msg = "perflens-pair-v1 server 00112233445566778899aabbccddeeff ffeeddccbbaa99887766554433221100";
	pair_proof("code", 4, "server", "00112233445566778899aabbccddeeff", "ffeeddccbbaa99887766554433221100", a);
	asha256_hmac("code", 4, msg, strlen(msg), mac);
	hex(mac, 32, want);
	ck_assert_str_eq(a, want);
	pair_proof("code", 4, "agent", "00112233445566778899aabbccddeeff", "ffeeddccbbaa99887766554433221100", b);
	pair_proof("code", 4, "server", "00112233445566778899aabbccddeeff", "0feeddccbbaa99887766554433221100", c);
	ck_assert_str_ne(a, b);
	ck_assert_str_ne(a, c);
	ck_assert(ct_equal("abc", 3, "abc", 3));
	ck_assert(!ct_equal("abc", 3, "abd", 3));
	ck_assert(!ct_equal("abc", 3, "abcd", 4));
}
END_TEST

START_TEST(frame_reader_checks_the_cap_on_the_header)
{
	struct frame_reader r;
	size_t used;
	const uint8_t huge[5] = {0xff, 0xff, 0xff, 0xff, 2};
	frame_reader_init(&r, AGENT_FRAME_PREAUTH_MAX);
	ck_assert_int_eq(frame_reader_feed(&r, huge, 5, &used), FRAME_TOO_BIG);
	ck_assert_ptr_null(r.payload);   /* nothing was allocated */
	ck_assert_uint_eq(r.len, 0xffffffffu);
	frame_reader_release(&r);
	const uint8_t over[5] = {0x00, 0x01, 0x00, 0x01, 2};  /* 64 KB + 1 */
	frame_reader_init(&r, AGENT_FRAME_PREAUTH_MAX);
	ck_assert_int_eq(frame_reader_feed(&r, over, 5, &used), FRAME_TOO_BIG);
	frame_reader_release(&r);
}
END_TEST

START_TEST(frame_reader_feeds_byte_by_byte_and_skips_empty_frames)
{
	uint8_t stream[64];
	size_t n = 0;
	wire_header(stream, 0, 2);            /* an empty frame: skipped */
	n += 5;
	wire_header(stream + n, 3, 2);
	memcpy(stream + n + 5, "{}x", 3);
	n += 8;
	wire_header(stream + n, 2, 4);
	memcpy(stream + n + 5, "{}", 2);
	n += 7;
	struct frame_reader r;
	frame_reader_init(&r, 100);
	int frames = 0;
	for (size_t i = 0; i < n; i++) {
		size_t used;
		enum frame_status s = frame_reader_feed(&r, stream + i, 1, &used);
		ck_assert_uint_eq(used, 1);
		if (s == FRAME_DONE) {
			frames++;
			if (frames == 1) {
				ck_assert_uint_eq(r.flag, 2);
				ck_assert_str_eq(r.payload, "{}x");
				free(frame_reader_take(&r));   /* taken: the reader must not reuse it */
			} else {
				ck_assert_uint_eq(r.flag, 4);
				ck_assert_uint_eq(r.len, 2);
			}
		}
	}
	ck_assert_int_eq(frames, 2);
	frame_reader_release(&r);
}
END_TEST

START_TEST(command_decoder_validates_ids_and_scopes_args)
{
	struct cmd c;
	const char *t = "{\"id\":\"a.b:c-1_2\",\"cmd\":\"start\",\"args\":{\"pid\":5}}";
	ck_assert_int_eq(cmd_decode(&c, t, strlen(t)), CMD_OK);
	ck_assert_str_eq(c.id, "a.b:c-1_2");
	ck_assert_str_eq(c.name, "start");
	ck_assert_ptr_nonnull(c.args);
	cmd_release(&c);
	t = "{\"id\":\"a b\",\"cmd\":\"ping\"}";
	ck_assert_int_eq(cmd_decode(&c, t, strlen(t)), CMD_OK);
	ck_assert(c.id_invalid);
	ck_assert_ptr_null(c.id);
	cmd_release(&c);
	char longid[100];
	snprintf(longid, sizeof longid, "{\"id\":\"%064d\",\"cmd\":\"ping\"}", 0);
	ck_assert_int_eq(cmd_decode(&c, longid, strlen(longid)), CMD_OK);
	ck_assert(c.id_invalid);  /* 64 characters: one too many */
	cmd_release(&c);
	t = "{\"id\":\"x\"}";
	ck_assert_int_eq(cmd_decode(&c, t, strlen(t)), CMD_NO_NAME);
	cmd_release(&c);
	t = "{\"id\":\"x\",\"cmd\":\"start\",\"args\":[1]}";
	ck_assert_int_eq(cmd_decode(&c, t, strlen(t)), CMD_BAD_ARGS);
	cmd_release(&c);
	t = "[\"id\"]";
	ck_assert_int_eq(cmd_decode(&c, t, strlen(t)), CMD_NOT_JSON);
	cmd_release(&c);
	ck_assert(cmd_id_valid("azAZ09_.:-"));
	ck_assert(!cmd_id_valid(""));
	ck_assert(!cmd_id_valid("a\"b"));
}
END_TEST

Suite *suite_agent_wire(void)
{
	Suite *s = suite_create("agent_wire");
	TCase *tc = tcase_create("core");
	tcase_add_test(tc, sha256_matches_nettle);
	tcase_add_test(tc, hmac_rfc4231_vectors);
	tcase_add_test(tc, pairing_proof_binds_role_and_both_nonces);
	tcase_add_test(tc, frame_reader_checks_the_cap_on_the_header);
	tcase_add_test(tc, frame_reader_feeds_byte_by_byte_and_skips_empty_frames);
	tcase_add_test(tc, command_decoder_validates_ids_and_scopes_args);
	suite_add_tcase(s, tc);
	return s;
}
