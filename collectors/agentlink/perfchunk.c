/* perfchunk.c - the check of a flag-5 chunk (extension 4, "perf_data"):
 * one zstd frame of a whole pipe-mode perf.data, as the agent's splitter
 * cuts it (agent/perfdata.h).
 *
 * The chunk is framed as it decompresses, piece by piece (no copy of it is
 * kept): the 16-byte pipe header ("PERFILE2", size 16, in the device's
 * byte order, which the magic gives), then records whose 8-byte header's
 * u16 size covers them.  A record cut by the end, a size under 8, a
 * stream with no event attribute (PERF_RECORD_HEADER_ATTR), or tracing
 * and AUX data (which follow their record outside its size) refuse the
 * chunk before it is spooled; the records' contents are read by the
 * analysis's native perf.data reader, in its sandbox.
 */
#include "link_int.h"

#include <string.h>

enum { REC_SAMPLE = 9, REC_HEADER_ATTR = 64, REC_TRACING_DATA = 66, REC_AUXTRACE = 71 };

struct framer {
	unsigned char head[16];
	size_t head_len;          /* bytes of the pipe header gathered */
	unsigned char rec[8];
	size_t rec_len;           /* bytes of the current record header gathered */
	size_t skip;              /* bytes of the current record still to pass */
	bool swap;
	bool started;             /* the pipe header was whole and right */
	uint64_t samples, attrs;
};

static uint32_t u32_of(const struct framer *f, const unsigned char *p)
{
	uint32_t v;
	memcpy(&v, p, 4);
	return f->swap ? __builtin_bswap32(v) : v;
}

static uint16_t u16_of(const struct framer *f, const unsigned char *p)
{
	uint16_t v;
	memcpy(&v, p, 2);
	return f->swap ? __builtin_bswap16(v) : v;
}

static enum pl_err pipe_header(struct framer *f, struct pl_error *err)
{
	uint64_t size;
	bool native = memcmp(f->head, "PERFILE2", 8) == 0, swapped = memcmp(f->head, "2ELIFREP", 8) == 0;

	memcpy(&size, f->head + 8, 8);
	f->swap = swapped;
	if (swapped)
		size = __builtin_bswap64(size);
	if ((!native && !swapped) || size != 16)
		return pl_fail(err, PL_ERR_MALFORMED, NULL,
			       "a perf.data chunk that does not start with the 16-byte pipe header");
	f->started = true;
	return PL_OK;
}

/* A record's header is whole: check it and pass the rest of the record. */
static enum pl_err record_header(struct framer *f, struct pl_error *err)
{
	uint32_t type = u32_of(f, f->rec);
	uint16_t size = u16_of(f, f->rec + 6);

	if (size < 8)
		return pl_fail(err, PL_ERR_MALFORMED, NULL,
			       "a perf.data chunk with a record of %u bytes (under its 8-byte header)", size);
	if (type == REC_TRACING_DATA || type == REC_AUXTRACE)
		return pl_fail(err, PL_ERR_UNSUPPORTED, NULL,
			       "a perf.data chunk with tracing or AUX data (not framed by record sizes)");
	f->samples += type == REC_SAMPLE;
	f->attrs += type == REC_HEADER_ATTR;
	f->skip = size - 8u;
	f->rec_len = 0;
	return PL_OK;
}

/* Copy into `buf` (holding *have of `want` bytes) what of the piece it
 * still lacks; the bytes taken. */
static size_t gather(unsigned char *buf, size_t *have, size_t want, const unsigned char *p, size_t n)
{
	size_t take = n < want - *have ? n : want - *have;

	memcpy(buf + *have, p, take);
	*have += take;
	return take;
}

static enum pl_err frame_piece(void *arg, const unsigned char *p, size_t n, struct pl_error *err)
{
	struct framer *f = arg;
	enum pl_err rc;

	while (n > 0) {
		size_t take;
		if (!f->started) {
			take = gather(f->head, &f->head_len, sizeof(f->head), p, n);
			if (f->head_len == sizeof(f->head) && (rc = pipe_header(f, err)))
				return rc;
		} else if (f->skip > 0) {
			take = n < f->skip ? n : f->skip;
			f->skip -= take;
		} else {
			take = gather(f->rec, &f->rec_len, sizeof(f->rec), p, n);
			if (f->rec_len == sizeof(f->rec) && (rc = record_header(f, err)))
				return rc;
		}
		p += take;
		n -= take;
	}
	return PL_OK;
}

enum pl_err coll_wire_perf_chunk_check(const void *p, size_t n, unsigned long long *size,
				       uint64_t *samples, struct pl_error *err)
{
	struct framer f;
	enum pl_err rc;

	memset(&f, 0, sizeof(f));
	*samples = 0;
	if ((rc = coll_wire_zstd_walk(p, n, frame_piece, &f, size, err)))
		return rc;
	if (!f.started)
		return pl_fail(err, PL_ERR_MALFORMED, NULL, "a perf.data chunk shorter than its pipe header");
	if (f.skip > 0 || f.rec_len > 0)
		return pl_fail(err, PL_ERR_MALFORMED, NULL, "a perf.data chunk that ends inside a record");
	if (f.attrs == 0)
		return pl_fail(err, PL_ERR_MALFORMED, NULL,
			       "a perf.data chunk without event attributes (no PERF_RECORD_HEADER_ATTR)");
	*samples = f.samples;
	return PL_OK;
}
