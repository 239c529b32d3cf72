/* login_link.c - HMAC-signed viewer login links and cookies (see
 * login_link.h).  nettle's HMAC-SHA256; labels keep the two kinds of MAC
 * apart. */
#include "login_link.h"
#include "util.h"

#include <inttypes.h>
#include <stdio.h>
#include <string.h>
#include <sys/random.h>

#include <nettle/hmac.h>

#define LINK_LABEL "perflens viewer login"
#define COOKIE_LABEL "perflens viewer session"

static bool is_hex(const char *s, size_t n)
{
	if (!s || strlen(s) != n)
		return false;
	for (size_t i = 0; i < n; i++)
		if (!((s[i] >= '0' && s[i] <= '9') || (s[i] >= 'a' && s[i] <= 'f')))
			return false;
	return true;
}

/* HMAC(token, label NUL a NUL b) as 64 hex digits. */
static void mac_hex(const char *token, const char *label, const char *a, const char *b,
		    char out[PL_LOGIN_MAC_HEX + 1])
{
	struct hmac_sha256_ctx c;
	unsigned char d[SHA256_DIGEST_SIZE];

	hmac_sha256_set_key(&c, strlen(token), (const uint8_t *)token);
	hmac_sha256_update(&c, strlen(label) + 1, (const uint8_t *)label);
	hmac_sha256_update(&c, strlen(a) + 1, (const uint8_t *)a);
	hmac_sha256_update(&c, strlen(b), (const uint8_t *)b);
	hmac_sha256_digest(&c, sizeof(d), d);
	pl_hex(d, sizeof(d), out);
}

bool pl_const_time_eq(const char *a, const char *b)
{
	size_t n = strlen(a), m = strlen(b);
	unsigned char diff = (unsigned char)(n != m);

	for (size_t i = 0; i < m; i++)
		diff |= (unsigned char)(b[i] ^ (i < n ? a[i] : 0));
	return diff == 0;
}

bool pl_login_random_hex(char out[PL_LOGIN_NONCE_HEX + 1])
{
	unsigned char raw[PL_LOGIN_NONCE_HEX / 2];

	if (getrandom(raw, sizeof(raw), 0) != (ssize_t)sizeof(raw))
		return false;
	pl_hex(raw, sizeof(raw), out);
	return true;
}

bool pl_login_link_query(const char *token, uint64_t expiry, char *out, size_t cap)
{
	char n[PL_LOGIN_NONCE_HEX + 1], x[24], m[PL_LOGIN_MAC_HEX + 1];

	if (!pl_login_random_hex(n))
		return false;
	snprintf(x, sizeof(x), "%" PRIu64, expiry);
	mac_hex(token, LINK_LABEL, n, x, m);
	return (size_t)snprintf(out, cap, "n=%s&x=%s&m=%s", n, x, m) < cap;
}

bool pl_login_link_valid(const char *token, const char *n, const char *x, const char *mac)
{
	char want[PL_LOGIN_MAC_HEX + 1];

	if (!token || !is_hex(n, PL_LOGIN_NONCE_HEX) || !x || !*x || strlen(x) > 20 ||
	    strspn(x, "0123456789") != strlen(x) || !is_hex(mac, PL_LOGIN_MAC_HEX))
		return false;
	mac_hex(token, LINK_LABEL, n, x, want);
	return pl_const_time_eq(mac, want);
}

bool pl_login_cookie_make(const char *token, char out[PL_LOGIN_COOKIE_LEN + 1])
{
	char s[PL_LOGIN_NONCE_HEX + 1], m[PL_LOGIN_MAC_HEX + 1];

	if (!pl_login_random_hex(s))
		return false;
	mac_hex(token, COOKIE_LABEL, s, "", m);
	snprintf(out, PL_LOGIN_COOKIE_LEN + 1, "%s.%s", s, m);
	return true;
}

bool pl_login_cookie_valid(const char *token, const char *value)
{
	char s[PL_LOGIN_NONCE_HEX + 1], want[PL_LOGIN_MAC_HEX + 1];

	if (!token || !value || strlen(value) != PL_LOGIN_COOKIE_LEN || value[PL_LOGIN_NONCE_HEX] != '.')
		return false;
	memcpy(s, value, PL_LOGIN_NONCE_HEX);
	s[PL_LOGIN_NONCE_HEX] = '\0';
	if (!is_hex(s, PL_LOGIN_NONCE_HEX))
		return false;
	mac_hex(token, COOKIE_LABEL, s, "", want);
	return pl_const_time_eq(value + PL_LOGIN_NONCE_HEX + 1, want);
}
