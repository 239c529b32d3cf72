/* test_fault.c - a tool that exists only in test builds (PL_TEST_HOOKS):
 * it makes its worker crash, hang, call a forbidden system call, execute
 * a program or answer too much, so the tests can prove that the sandbox
 * and the server turn each into an error result and keep serving.  A
 * normal build compiles none of this and lists no such tool.
 */
#include "registry.h"

#ifdef PL_TEST_HOOKS
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

enum pl_err tool_test_fault(const struct tool_ctx *ctx, json_t *args,
			    json_t **result, struct pl_error *err)
{
	const char *kind = json_string_value(json_object_get(args, "kind"));

	(void)ctx;
	(void)err;
	if (strcmp(kind, "crash") == 0)
		raise(SIGSEGV);
	if (strcmp(kind, "hang") == 0)
		for (;;)
			sleep(60);
	if (strcmp(kind, "syscall") == 0)
		(void)socket(AF_INET, SOCK_STREAM, 0);
	if (strcmp(kind, "exec") == 0)
		execl("/bin/true", "true", (char *)NULL);
	if (strcmp(kind, "oversize") == 0) {
		size_t n = (4u << 20) + 4096;  /* just over the 4 MiB result cap */
		char *pad = malloc(n + 1);
		memset(pad, 'x', n);
		pad[n] = '\0';
		*result = json_pack("{s:s,s:s}", "kind", kind, "padding", pad);
		free(pad);
		return PL_OK;
	}
	*result = json_pack("{s:s}", "kind", kind);
	return PL_OK;
}
#endif
