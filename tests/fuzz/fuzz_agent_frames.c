/* fuzz_agent_frames.c - libFuzzer harness for what the agent link reads
 * from a peer before anything is spooled: frames off a socket (coll_wire_read,
 * its caps), the zstd check of a chunk (coll_wire_zstd_text_size) and the JSON
 * of responses and metrics frames (jansson, as the link takes them), and
 * an answer's capture_problems into a capture's record (problems.c).
 * Seed corpus: tests/fuzz/corpus/agent_frames/ (a hello, a zstd chunk, a
 * metrics frame, a 4 GB header, a stop answer with capture_problems).
 *
 *   clang -g -O1 -fsanitize=fuzzer,address,undefined -Itools/core -I. \
 *     tests/fuzz/fuzz_agent_frames.c collectors/agentlink/wire.c \
 *     collectors/agentlink/problems.c \
 *     tools/core/base/util.c -ljansson -lzstd -lnettle -o fuzz_agent_frames
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "collectors/agentlink/link_int.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	int sv[2];
	struct pl_error err;
	unsigned long long text;

	if (size > 60000 || socketpair(AF_UNIX, SOCK_STREAM, 0, sv) < 0)
		return 0;
	if (size && write(sv[1], data, size) != (ssize_t)size) {
		close(sv[0]);
		close(sv[1]);
		return 0;
	}
	close(sv[1]);
	for (;;) {
		struct wire_frame f;
		if (coll_wire_read(sv[0], 1u << 20, &f, &err))
			break;
		if (f.flag == AGENT_FRAME_ZSTD && f.len)
			(void)coll_wire_zstd_text_size(f.data, f.len, &text, &err);
		if ((f.flag == AGENT_FRAME_RESP || f.flag == AGENT_FRAME_METRICS) && f.len) {
			json_t *j = json_loadb((const char *)f.data, f.len, JSON_REJECT_DUPLICATES, NULL);
			json_t *capture = json_object();
			(void)json_string_value(json_object_get(j, "type"));
			/* an answer's capture_problems, kept as the link keeps them */
			(void)coll_capture_problems(capture, j);
			(void)coll_capture_problems(capture, j);
			json_decref(capture);
			json_decref(j);
		}
		free(f.data);
	}
	close(sv[0]);
	return 0;
}
