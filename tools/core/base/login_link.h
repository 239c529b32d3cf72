/* login_link.h - the web viewer's login links and session cookies, signed
 * with the HTTP bearer token (HMAC-SHA256), so that the server and
 * `perflens viewer-url` make and check the same links without sharing
 * anything but the token, and the token itself never appears in a URL.
 *
 * A login link is /viewer/login?n=NONCE&x=EXPIRY&m=MAC: NONCE 32 random hex
 * digits, EXPIRY a Unix time, MAC the HMAC of both.  The server takes each
 * nonce once (mcp-server/viewer.c remembers the ones used) and answers with
 * a cookie SESSION.MAC, SESSION 32 random hex digits and MAC its HMAC under
 * another label, so a login MAC is never a valid cookie and the reverse.
 */
#ifndef PL_LOGIN_LINK_H
#define PL_LOGIN_LINK_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define PL_LOGIN_NONCE_HEX 32
#define PL_LOGIN_MAC_HEX 64
/* How long a login link may be opened: long enough to copy it from a
 * terminal to a browser, short enough that an old scrollback is useless. */
#define PL_LOGIN_TTL_SECONDS 3600
/* SESSION.MAC */
#define PL_LOGIN_COOKIE_LEN (PL_LOGIN_NONCE_HEX + 1 + PL_LOGIN_MAC_HEX)

/* 32 hex digits from getrandom into out[33]; false if it failed. */
bool pl_login_random_hex(char out[PL_LOGIN_NONCE_HEX + 1]);

/* The query of a new login link valid until `expiry`:
 * "n=NONCE&x=EXPIRY&m=MAC" into out (cap >= 160).  False if no randomness. */
bool pl_login_link_query(const char *token, uint64_t expiry, char *out, size_t cap);

/* Does `mac` (hex) sign nonce `n` and expiry text `x` under `token`?  In
 * constant time in the MAC's content; says nothing of expiry or reuse. */
bool pl_login_link_valid(const char *token, const char *n, const char *x, const char *mac);

/* A new session cookie value SESSION.MAC into out[PL_LOGIN_COOKIE_LEN + 1]. */
bool pl_login_cookie_make(const char *token, char out[PL_LOGIN_COOKIE_LEN + 1]);

/* Is `value` a cookie this token made? */
bool pl_login_cookie_valid(const char *token, const char *value);

/* Equal strings, in time that depends only on their lengths. */
bool pl_const_time_eq(const char *a, const char *b);

#endif
