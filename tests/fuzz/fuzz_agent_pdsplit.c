/* fuzz_agent_pdsplit.c - libFuzzer harness for the device agent's
 * perf.data stream splitter (agent/perfdata.c), which reads `perf record
 * -o -` output: the input is that stream, fed in pieces whose sizes come
 * from the first byte, with a chunk cut (its parts taken, as the capture
 * sends them) after every few pieces.  Once a stream is refused it stays
 * refused; every part stays within its bound; a body's sample count fits
 * its length (a record is at least its 8-byte header). */
// fuzz-link: agent/perfdata.c
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>

#include "agent/perfdata.h"

static void check_parts(const struct pdsplit *s)
{
	const uint8_t *part[3];
	size_t len[3];

	pdsplit_parts(s, part, len);
	if (len[0] > PDS_HEAD_MAX || len[1] > PDS_STATE_MAX || s->samples > s->body_len / 8)
		abort();
	for (int i = 0; i < 3; i++)
		if (len[i] && !part[i])
			abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct pdsplit s;
	size_t step = size ? (size_t)data[0] % 61 + 1 : 1, pos = size ? 1 : 0;
	unsigned pieces = 0;

	if (pdsplit_init(&s) < 0)
		return 0;
	while (pos < size) {
		size_t n = size - pos < step ? size - pos : step;
		int was_bad = s.bad, rc = pdsplit_feed(&s, data + pos, n);
		if ((was_bad || s.bad) && rc >= 0)
			abort();   /* a refused stream stays refused, and says so */
		pos += n;
		if (!s.bad && ++pieces % 4 == 0 && s.have_header) {
			check_parts(&s);
			pdsplit_next(&s);
		}
	}
	if (!s.bad && s.have_header)
		check_parts(&s);
	pdsplit_release(&s);
	return 0;
}
