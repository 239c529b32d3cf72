/* fuzz_agent_frame.c - libFuzzer harness for the device agent's frame
 * reader (agent/wire.c): the input is a byte stream from a peer, fed in
 * pieces whose sizes come from the first byte; every frame returned must
 * respect the cap, and a header over the cap must stop the stream before
 * anything is allocated for it.  Complete command frames go through the
 * command decoder as the link does. */
// fuzz-link: agent/wire.c agent/cmd.c agent/json.c
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>

#include "agent/cmd.h"
#include "agent/wire.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct frame_reader r;
	size_t step = size ? (size_t)data[0] % 17 + 1 : 1, pos = size ? 1 : 0;
	frame_reader_init(&r, size % 2 ? AGENT_FRAME_PREAUTH_MAX : 4096);
	while (pos < size) {
		size_t n = size - pos < step ? size - pos : step, used;
		enum frame_status s = frame_reader_feed(&r, data + pos, n, &used);
		if (used > n)
			__builtin_trap();
		pos += used;
		if (s == FRAME_TOO_BIG) {
			if (r.payload || r.len <= r.max)
				__builtin_trap();
			break;
		}
		if (s == FRAME_DONE) {
			if (r.len > r.max || r.len == 0)
				__builtin_trap();
			if (r.flag == AGENT_FRAME_CMD) {
				struct cmd c;
				cmd_decode(&c, r.payload, r.len);
				cmd_release(&c);
			}
			if (pos % 3 == 0)
				free(frame_reader_take(&r));
		} else if (used < n) {
			__builtin_trap();   /* MORE consumes everything it was given */
		}
	}
	frame_reader_release(&r);
	return 0;
}
