/* perfdata.h - extension 4 ("perf_data"): `perf record -o -` output cut
 * into chunks that are each a whole pipe-mode perf.data.
 *
 * The pipe stream is records (an 8-byte header whose u16 size covers the
 * record) after a 16-byte header.  The splitter keeps three things: the
 * stream's head (the pipe header and the records perf writes once at the
 * start: attributes, features, id index, thread and cpu maps, types >= 64
 * but FINISHED_ROUND), the state (every COMM, FORK, EXIT, MMAP, MMAP2 and
 * the other records a reader needs to name a later sample's frames), and
 * the body of the chunk being cut.  A chunk is head + the state as it was
 * when the chunk began + the body: a reader needs nothing of an earlier
 * chunk, so a lost chunk costs its own samples only. */
#ifndef AGENT_PERFDATA_H
#define AGENT_PERFDATA_H

#include <stddef.h>
#include <stdint.h>

#define PDS_HEAD_MAX (1u << 20)    /* attributes and features: KBs in practice */
#define PDS_STATE_MAX (8u << 20)   /* past it, later state records are not replayed */
#define PDS_REC_MAX 65535u         /* a record's size is a u16 */

struct pdsplit {
	uint8_t *head;
	size_t head_len;
	uint8_t *state;
	size_t state_len, state_at_start;  /* state_at_start: replayed by the chunk being cut */
	int state_full;                    /* some state records were not kept (the caller logs it) */
	uint8_t *body;
	size_t body_len, body_cap;
	uint64_t samples;                  /* SAMPLE records in the body */
	uint8_t *pend;                     /* a record split across reads */
	size_t pend_len;
	int have_header;
	int bad;                           /* not a pipe-mode perf.data stream */
};

int pdsplit_init(struct pdsplit *s);
void pdsplit_release(struct pdsplit *s);
/* Feed bytes as read from perf record's stdout; -1 (and s->bad) when they
 * are not a pipe-mode stream, or carry tracing or AUX data (which follows
 * its record outside the record's size). */
int pdsplit_feed(struct pdsplit *s, const uint8_t *p, size_t n);
/* The chunk's parts in order (head, replayed state, body); the caller
 * sends them as one payload, then calls pdsplit_next. */
void pdsplit_parts(const struct pdsplit *s, const uint8_t *part[3], size_t len[3]);
void pdsplit_next(struct pdsplit *s);

/* The `perf record` options of a perf.data capture for this perf and
 * kernel: --buildid-mmap (the build-id in each MMAP2, so the server
 * matches binaries without perf's post-processing on the device) from
 * perf ("perf version X.Y...") and kernel 5.12 on.  Returns the number of argv entries added. */
int perfdata_record_opts(const char *perf_version, char **argv);

#endif
