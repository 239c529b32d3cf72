/* test_login_link.c - unit tests for login_link.c: MACs checked against
 * Python's hmac module (the values below were computed with it), links
 * and cookies that round-trip, and every tampering refused. */
#include <check.h>
#include <stdio.h>
#include <string.h>

#include "base/login_link.h"

#define NONCE "0123456789abcdef0123456789abcdef"
/* hmac.new(b"tok", b"perflens viewer login\0" + NONCE + b"\0" + b"1796000000", sha256) */
#define LINK_MAC "32edc2153d1388269582fb0ef84cde8bdd6191fc51de73d5bc0276e5764d510c"
/* hmac.new(b"tok", b"perflens viewer session\0" + NONCE + b"\0", sha256) */
#define COOKIE_MAC "9581a9fd3bfd680d38df2faa298fcddd87253cfb7ad6e55ff6cb82888eab7fe6"

START_TEST(link_mac_matches_python_hmac)
{
	ck_assert(pl_login_link_valid("tok", NONCE, "1796000000", LINK_MAC));
	ck_assert(!pl_login_link_valid("tok2", NONCE, "1796000000", LINK_MAC));
	ck_assert(!pl_login_link_valid("tok", NONCE, "1796000001", LINK_MAC));
	ck_assert(!pl_login_link_valid("tok", "1" NONCE "", "1796000000", LINK_MAC));
	ck_assert(!pl_login_link_valid("tok", NONCE, "1796000000", "0" LINK_MAC));
	ck_assert(!pl_login_link_valid("tok", NONCE, "17960x0000", LINK_MAC));
	ck_assert(!pl_login_link_valid("tok", NULL, "1796000000", LINK_MAC));
}
END_TEST

START_TEST(cookie_mac_matches_python_hmac_and_is_not_a_link_mac)
{
	ck_assert(pl_login_cookie_valid("tok", NONCE "." COOKIE_MAC));
	ck_assert(!pl_login_cookie_valid("tok", NONCE "." LINK_MAC));
	ck_assert(!pl_login_cookie_valid("other", NONCE "." COOKIE_MAC));
	ck_assert(!pl_login_cookie_valid("tok", NONCE "-" COOKIE_MAC));
	ck_assert(!pl_login_cookie_valid("tok", NULL));
	ck_assert(!pl_login_cookie_valid("tok", ""));
}
END_TEST

START_TEST(made_links_and_cookies_check_and_differ)
{
	char q1[200], q2[200], c1[PL_LOGIN_COOKIE_LEN + 1], c2[PL_LOGIN_COOKIE_LEN + 1];
	char n[40], x[24], m[70];

	ck_assert(pl_login_link_query("secret", 1796000000, q1, sizeof(q1)));
	ck_assert(pl_login_link_query("secret", 1796000000, q2, sizeof(q2)));
	ck_assert_str_ne(q1, q2);  /* a fresh nonce each time */
	ck_assert_int_eq(sscanf(q1, "n=%39[0-9a-f]&x=%23[0-9]&m=%69[0-9a-f]", n, x, m), 3);
	ck_assert(pl_login_link_valid("secret", n, x, m));
	ck_assert(pl_login_cookie_make("secret", c1) && pl_login_cookie_make("secret", c2));
	ck_assert_str_ne(c1, c2);
	ck_assert(pl_login_cookie_valid("secret", c1));
	c1[3] = c1[3] == 'a' ? 'b' : 'a';
	ck_assert(!pl_login_cookie_valid("secret", c1));
}
END_TEST

Suite *suite_login_link(void)
{
	Suite *s = suite_create("login_link");
	TCase *t = tcase_create("login_link");

	tcase_add_test(t, link_mac_matches_python_hmac);
	tcase_add_test(t, cookie_mac_matches_python_hmac_and_is_not_a_link_mac);
	tcase_add_test(t, made_links_and_cookies_check_and_differ);
	suite_add_tcase(s, t);
	return s;
}
