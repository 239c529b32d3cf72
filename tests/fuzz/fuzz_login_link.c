/* fuzz_login_link.c - libFuzzer harness for the viewer's login checks
 * (base/login_link.c), which read a browser's query arguments and cookie:
 * the input is split at its first three newlines into nonce, expiry, MAC
 * and a cookie value, as the server passes them.  Nothing may crash, and
 * nothing but the real MAC may pass. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "base/login_link.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *text = malloc(size + 1), *part[4] = {NULL, NULL, NULL, NULL};
	size_t n = 0;

	memcpy(text, data, size);
	text[size] = '\0';
	part[n++] = text;
	for (char *p = text; *p && n < 4; p++)
		if (*p == '\n') {
			*p = '\0';
			part[n++] = p + 1;
		}
	(void)pl_login_link_valid("token", part[0], part[1], part[2]);
	(void)pl_login_cookie_valid("token", part[3] ? part[3] : part[0]);
	free(text);
	return 0;
}
