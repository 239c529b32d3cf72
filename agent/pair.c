/* pair.c - pairing: the code and nonces from /dev/urandom, the
 * constant-time comparison, and the hmac-sha256-v1 proofs of
 * docs/agent-protocol.md (extension 1).  Nothing here logs a secret. */
#include "agent.h"
#include "sha256.h"

#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

int random_bytes(void *buf, size_t n)
{
	int fd = open("/dev/urandom", O_RDONLY | O_CLOEXEC);
	size_t got = 0;
	if (fd < 0)
		return -1;
	while (got < n) {
		ssize_t k = read(fd, (char *)buf + got, n - got);
		if (k <= 0) {
			close(fd);
			return -1;
		}
		got += (size_t)k;
	}
	close(fd);
	return 0;
}

void hex_encode(const uint8_t *in, size_t n, char *out)
{
	static const char d[] = "0123456789abcdef";
	for (size_t i = 0; i < n; i++) {
		out[2 * i] = d[in[i] >> 4];
		out[2 * i + 1] = d[in[i] & 15];
	}
	out[2 * n] = '\0';
}

/* Lengths first (a length is not the secret), then every byte. */
int ct_equal(const void *a, size_t alen, const void *b, size_t blen)
{
	const volatile uint8_t *x = a, *y = b;
	uint8_t diff = 0;
	if (alen != blen)
		return 0;
	for (size_t i = 0; i < alen; i++)
		diff |= x[i] ^ y[i];
	return diff == 0;
}

void pair_proof(const char *code, size_t code_len, const char *role, const char *agent_nonce,
		const char *server_nonce, char out_hex[65])
{
	char msg[160];
	uint8_t mac[ASHA256_DIGEST];
	int n = snprintf(msg, sizeof msg, "perflens-pair-v1 %s %s %s", role, agent_nonce, server_nonce);
	asha256_hmac(code, code_len, msg, (size_t)n, mac);
	hex_encode(mac, sizeof mac, out_hex);
	memset(mac, 0, sizeof mac);
}

int is_hex(const char *s, size_t want_len)
{
	size_t n = 0;
	for (; s[n]; n++)
		if (!((s[n] >= '0' && s[n] <= '9') || (s[n] >= 'a' && s[n] <= 'f')))
			return 0;
	return n == want_len;
}
