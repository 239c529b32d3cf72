/* chunk.c - the chunk builder of chunk.h. */
#include "chunk.h"
#include "agent.h"

#include <stdlib.h>
#include <string.h>
#include <zstd.h>

int chunk_init(struct chunk *c, int compress)
{
	memset(c, 0, sizeof *c);
	c->compress = compress;
	if (compress) {
		c->cctx = ZSTD_createCCtx();
		if (!c->cctx)
			c->compress = 0;   /* the seed's fallback: flag 0 */
		else
			ZSTD_CCtx_setParameter(c->cctx, ZSTD_c_compressionLevel, 1);
	}
	return 0;
}

void chunk_release(struct chunk *c)
{
	if (c->cctx)
		ZSTD_freeCCtx(c->cctx);
	free(c->out);
	memset(c, 0, sizeof *c);
}

void chunk_begin(struct chunk *c)
{
	c->out_len = 0;
	c->raw = 0;
	c->samples = 0;
	c->failed = 0;
	if (c->compress)
		ZSTD_CCtx_reset(c->cctx, ZSTD_reset_session_only);
}

static int reserve(struct chunk *c, size_t more)
{
	if (c->out_len + more <= c->out_cap)
		return 0;
	size_t cap = c->out_cap ? c->out_cap : 65536;
	while (cap < c->out_len + more)
		cap *= 2;
	char *nb = realloc(c->out, cap);
	if (!nb) {
		c->failed = 1;
		return -1;
	}
	c->out = nb;
	c->out_cap = cap;
	return 0;
}

static void feed(struct chunk *c, const char *text, size_t len, ZSTD_EndDirective how)
{
	if (c->failed)
		return;
	if (!c->compress) {
		if (reserve(c, len + 1) == 0) {
			memcpy(c->out + c->out_len, text, len);
			c->out_len += len;
		}
		return;
	}
	ZSTD_inBuffer in = {text, len, 0};
	for (;;) {
		if (reserve(c, ZSTD_CStreamOutSize()) < 0)
			return;
		ZSTD_outBuffer o = {c->out + c->out_len, c->out_cap - c->out_len, 0};
		size_t left = ZSTD_compressStream2(c->cctx, &o, &in, how);
		c->out_len += o.pos;
		if (ZSTD_isError(left)) {
			c->failed = 1;
			return;
		}
		if (how == ZSTD_e_end ? left == 0 : in.pos == in.size)
			return;
	}
}

uint64_t count_samples(const char *text, size_t len)
{
	uint64_t n = 0;
	int bol = 1;
	for (size_t i = 0; i < len; i++) {
		if (bol && text[i] != '\t' && text[i] != '\n')
			n++;
		bol = text[i] == '\n';
	}
	return n;
}

void chunk_add(struct chunk *c, const char *text, size_t len, int count)
{
	if (len == 0)
		return;
	if (count)
		c->samples += count_samples(text, len);
	c->raw += len;
	feed(c, text, len, ZSTD_e_continue);
}

void chunk_add_stat(struct chunk *c, const char *stat, size_t len)
{
	static const char marker[] = "\n### PERF_STAT ###\n";
	if (len == 0)
		return;
	c->raw += sizeof marker - 1 + len;
	feed(c, marker, sizeof marker - 1, ZSTD_e_continue);
	feed(c, stat, len, ZSTD_e_continue);
}

int chunk_finish(struct chunk *c)
{
	feed(c, "", 0, ZSTD_e_end);
	return c->failed ? -1 : 0;
}

size_t sample_boundary(const char *text, size_t len, int callchains)
{
	if (len == 0)
		return 0;
	if (callchains) {
		for (size_t i = len - 1; i > 0; i--)
			if (text[i] == '\n' && text[i - 1] == '\n')
				return i + 1;
		return 0;
	}
	for (size_t i = len; i > 0; i--)
		if (text[i - 1] == '\n')
			return i;
	return 0;
}
