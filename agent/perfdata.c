/* perfdata.c - the pipe-mode perf.data splitter of perfdata.h.
 *
 * Records are read in the device's own byte order (perf wrote them on
 * this machine).  The only check is the framing itself: a header that is
 * not the 16-byte pipe header, or a record shorter than its own header,
 * means the stream is not what we asked perf for, and the capture falls
 * back to text rather than sending bytes no reader can frame.  It needs
 * nothing of the agent (the caller logs), so it stays out of the agent's
 * cycle of files. */
#include "perfdata.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/utsname.h>

enum {
	REC_MMAP = 1, REC_COMM = 3, REC_EXIT = 4, REC_FORK = 7, REC_SAMPLE = 9, REC_MMAP2 = 10,
	REC_NAMESPACES = 16, REC_KSYMBOL = 17, REC_BPF_EVENT = 18, REC_CGROUP = 19, REC_TEXT_POKE = 20,
	REC_USER_FIRST = 64, REC_TRACING_DATA = 66, REC_FINISHED_ROUND = 68, REC_AUXTRACE = 71,
};

int pdsplit_init(struct pdsplit *s)
{
	memset(s, 0, sizeof *s);
	s->head = malloc(PDS_HEAD_MAX);
	s->state = malloc(PDS_STATE_MAX);
	s->pend = malloc(PDS_REC_MAX + 1);
	return s->head && s->state && s->pend ? 0 : -1;
}

void pdsplit_release(struct pdsplit *s)
{
	free(s->head);
	free(s->state);
	free(s->body);
	free(s->pend);
	memset(s, 0, sizeof *s);
}

static int body_add(struct pdsplit *s, const uint8_t *rec, size_t n)
{
	if (s->body_len + n > s->body_cap) {
		size_t cap = s->body_cap ? s->body_cap : 1u << 20;
		while (cap < s->body_len + n)
			cap *= 2;
		uint8_t *nb = realloc(s->body, cap);
		if (!nb)
			return -1;
		s->body = nb;
		s->body_cap = cap;
	}
	memcpy(s->body + s->body_len, rec, n);
	s->body_len += n;
	return 0;
}

/* What a reader needs from before a sample to name its frames. */
static int is_state(uint32_t type)
{
	switch (type) {
	case REC_MMAP: case REC_COMM: case REC_EXIT: case REC_FORK: case REC_MMAP2:
	case REC_NAMESPACES: case REC_KSYMBOL: case REC_BPF_EVENT: case REC_CGROUP: case REC_TEXT_POKE:
		return 1;
	}
	return 0;
}

static int one_record(struct pdsplit *s, const uint8_t *rec, size_t n)
{
	uint32_t type;
	memcpy(&type, rec, 4);
	if (type == REC_TRACING_DATA || type == REC_AUXTRACE) {
		/* data follows these outside their size: not framed by it */
		s->bad = 1;
		return -1;
	}
	if (type >= REC_USER_FIRST && type != REC_FINISHED_ROUND) {
		/* written once at the start: every chunk carries them */
		if (s->head_len + n > PDS_HEAD_MAX) {
			s->bad = 1;
			return -1;
		}
		memcpy(s->head + s->head_len, rec, n);
		s->head_len += n;
		return 0;
	}
	if (is_state(type)) {
		if (s->state_len + n <= PDS_STATE_MAX) {
			memcpy(s->state + s->state_len, rec, n);
			s->state_len += n;
		} else if (!s->state_full) {
			s->state_full = 1;   /* the caller logs it, and makes it 2 */
		}
	}
	if (type == REC_SAMPLE)
		s->samples++;
	return body_add(s, rec, n);
}

/* The size of the record starting at p (n bytes available), 0 when its
 * header is not whole yet, -1 when it is shorter than its header. */
static long record_size(const uint8_t *p, size_t n)
{
	uint16_t size;
	if (n < 8)
		return 0;
	memcpy(&size, p + 6, 2);
	return size < 8 ? -1 : (long)size;
}

static int take_header(struct pdsplit *s, const uint8_t **p, size_t *n)
{
	size_t want = 16 - s->pend_len, take = *n < want ? *n : want;
	memcpy(s->pend + s->pend_len, *p, take);
	s->pend_len += take;
	*p += take;
	*n -= take;
	if (s->pend_len < 16)
		return 0;
	uint64_t size;
	memcpy(&size, s->pend + 8, 8);
	if ((memcmp(s->pend, "PERFILE2", 8) != 0 && memcmp(s->pend, "2ELIFREP", 8) != 0) || size != 16) {
		s->bad = 1;
		return -1;
	}
	memcpy(s->head, s->pend, 16);
	s->head_len = 16;
	s->pend_len = 0;
	s->have_header = 1;
	return 0;
}

int pdsplit_feed(struct pdsplit *s, const uint8_t *p, size_t n)
{
	if (s->bad)
		return -1;
	if (!s->have_header && (take_header(s, &p, &n) < 0 || !s->have_header))
		return s->bad ? -1 : 0;
	/* finish a record split across reads */
	while (s->pend_len > 0 && n > 0) {
		long size = record_size(s->pend, s->pend_len);
		size_t want = size > 0 ? (size_t)size - s->pend_len : 8 - s->pend_len;
		if (size < 0)
			goto bad;
		size_t take = n < want ? n : want;
		memcpy(s->pend + s->pend_len, p, take);
		s->pend_len += take;
		p += take;
		n -= take;
		size = record_size(s->pend, s->pend_len);
		if (size < 0)
			goto bad;
		if (size > 0 && s->pend_len == (size_t)size) {
			if (one_record(s, s->pend, s->pend_len) < 0)
				return -1;
			s->pend_len = 0;
		}
	}
	while (n > 0) {
		long size = record_size(p, n);
		if (size < 0)
			goto bad;
		if (size == 0 || (size_t)size > n) {
			memcpy(s->pend, p, n);
			s->pend_len = n;
			return 0;
		}
		if (one_record(s, p, (size_t)size) < 0)
			return -1;
		p += size;
		n -= (size_t)size;
	}
	return 0;
bad:
	s->bad = 1;
	return -1;
}

void pdsplit_parts(const struct pdsplit *s, const uint8_t *part[3], size_t len[3])
{
	part[0] = s->head;
	len[0] = s->head_len;
	part[1] = s->state;
	len[1] = s->state_at_start;
	part[2] = s->body;
	len[2] = s->body_len;
}

void pdsplit_next(struct pdsplit *s)
{
	s->state_at_start = s->state_len;
	s->body_len = 0;
	s->samples = 0;
}

/* "6.1.187" -> 601 (major * 100 + minor); 0 when unreadable. */
static int version_code(const char *s)
{
	int major = 0, minor = 0;
	while (*s && (*s < '0' || *s > '9'))
		s++;
	if (sscanf(s, "%d.%d", &major, &minor) < 1)
		return 0;
	return major * 100 + minor;
}

int perfdata_record_opts(const char *perf_version, char **argv)
{
	struct utsname u;
	int perf = version_code(perf_version), kernel = uname(&u) == 0 ? version_code(u.release) : 0;
	if (perf >= 512 && kernel >= 512) {
		argv[0] = "--buildid-mmap";
		return 1;
	}
	return 0;
}
