/* pdformat.h - the perf.data format: header, attributes, features and the
 * record stream, in the order perf delivers it.
 *
 * pd_open checks the header (file mode "PERFILE2" with its attr, data and
 * feature sections, or the 16-byte pipe header), in either byte order,
 * and reads the attributes and the features the analysis uses.
 * pd_walk then hands every record to a callback in perf's own delivery
 * order (util/ordered-events.c): user records (type >= 64) and records
 * without a timestamp at once, the others queued by time and flushed at
 * each FINISHED_ROUND up to the newest time seen at the round before,
 * everything at the end.  COMPRESSED records are one zstd stream across
 * the file; their inner records take part like the others.
 *
 * Every size comes from the file and is checked against what is left
 * before it is used; records are read with memcpy (no alignment is
 * assumed).  A record that cannot be framed ends the walk with an error
 * naming its offset; a record of an unknown type is skipped by its size
 * and counted.  Memory: the file is mapped; queued records that came out
 * of the zstd stream are copied; the queue's entries and copies together
 * stay within PD_MAX_QUEUE_BYTES (past it the older half is delivered,
 * as perf does when its queue is full).
 *
 * Byte order: every field is read through pd_u16/u32/u64, which swap
 * when the file is of the other byte order; the attribute bit field is
 * bit-reversed per byte, as perf does.
 */
#ifndef PD_FORMAT_H
#define PD_FORMAT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "base/error.h"

/* perf_event_attr.sample_type bits */
enum {
	PD_S_IP = 1u << 0, PD_S_TID = 1u << 1, PD_S_TIME = 1u << 2, PD_S_ADDR = 1u << 3,
	PD_S_READ = 1u << 4, PD_S_CALLCHAIN = 1u << 5, PD_S_ID = 1u << 6, PD_S_CPU = 1u << 7,
	PD_S_PERIOD = 1u << 8, PD_S_STREAM_ID = 1u << 9, PD_S_RAW = 1u << 10,
	PD_S_BRANCH_STACK = 1u << 11, PD_S_REGS_USER = 1u << 12, PD_S_STACK_USER = 1u << 13,
	PD_S_WEIGHT = 1u << 14, PD_S_DATA_SRC = 1u << 15, PD_S_IDENTIFIER = 1u << 16,
	PD_S_TRANSACTION = 1u << 17, PD_S_REGS_INTR = 1u << 18, PD_S_PHYS_ADDR = 1u << 19,
	PD_S_AUX = 1u << 20, PD_S_CGROUP = 1u << 21, PD_S_DATA_PAGE_SIZE = 1u << 22,
	PD_S_CODE_PAGE_SIZE = 1u << 23, PD_S_WEIGHT_STRUCT = 1u << 24,
};
#define PD_S_KNOWN ((1ull << 25) - 1)

/* perf_event_attr.branch_sample_type bits (perf 6.1 knows those below
 * PD_BR_MAX); CALL_STACK is --call-graph lbr, HW_INDEX puts a u64 after
 * the branch stack's nr. */
enum { PD_BR_CALL_STACK = 1u << 11, PD_BR_HW_INDEX = 1u << 17, PD_BR_MAX = 1u << 19 };

/* read_format bits */
enum { PD_R_TOTAL_ENABLED = 1, PD_R_TOTAL_RUNNING = 2, PD_R_ID = 4, PD_R_GROUP = 8, PD_R_LOST = 16 };

/* Record types */
enum {
	PD_MMAP = 1, PD_LOST = 2, PD_COMM = 3, PD_EXIT = 4, PD_THROTTLE = 5, PD_UNTHROTTLE = 6,
	PD_FORK = 7, PD_READ = 8, PD_SAMPLE = 9, PD_MMAP2 = 10, PD_AUX = 11, PD_ITRACE_START = 12,
	PD_LOST_SAMPLES = 13, PD_SWITCH = 14, PD_SWITCH_CPU_WIDE = 15, PD_NAMESPACES = 16,
	PD_KSYMBOL = 17, PD_BPF_EVENT = 18, PD_CGROUP = 19, PD_TEXT_POKE = 20,
	PD_KERNEL_TYPES = 64,
	PD_HEADER_ATTR = 64, PD_HEADER_EVENT_TYPE = 65, PD_HEADER_TRACING_DATA = 66,
	PD_HEADER_BUILD_ID = 67, PD_FINISHED_ROUND = 68, PD_ID_INDEX = 69, PD_AUXTRACE_INFO = 70,
	PD_AUXTRACE = 71, PD_AUXTRACE_ERROR = 72, PD_THREAD_MAP = 73, PD_CPU_MAP = 74,
	PD_EVENT_UPDATE = 78, PD_TIME_CONV = 79, PD_HEADER_FEATURE = 80, PD_COMPRESSED = 81,
	PD_FINISHED_INIT = 82, PD_COMPRESSED2 = 83, PD_TYPES = 128,
};

/* Feature bits */
enum {
	PD_F_TRACING_DATA = 1, PD_F_BUILD_ID = 2, PD_F_HOSTNAME = 3, PD_F_OSRELEASE = 4,
	PD_F_VERSION = 5, PD_F_ARCH = 6, PD_F_NRCPUS = 7, PD_F_CPUDESC = 8, PD_F_CPUID = 9,
	PD_F_TOTAL_MEM = 10, PD_F_CMDLINE = 11, PD_F_EVENT_DESC = 12, PD_F_AUXTRACE = 18,
	PD_F_COMPRESSED = 27, PD_F_MAX = 256,
};

#define PD_MAX_ATTRS 256
#define PD_MAX_IDS (1u << 20)            /* ids of all events together */
#define PD_MAX_BUILD_IDS 4096
#define PD_MAX_QUEUE_BYTES (256u << 20)  /* queue entries + copies of zstd records */
#define PD_MAX_DECOMP_CHUNK (64u << 20)  /* what one COMPRESSED record may become */
#define PD_MAX_CHAIN 4096                /* callchain entries read per sample */

struct pd_attr {
	uint32_t type, size;
	uint64_t config, sample_period, sample_type, read_format, flags;
	uint64_t branch_sample_type, sample_regs_user;
	uint32_t sample_stack_user;
	uint64_t *ids;
	size_t nids;
	char *name;          /* EVENT_DESC or EVENT_UPDATE name, or NULL */
};
/* attr.flags bits */
#define PD_A_EXCLUDE_USER (1ull << 4)
#define PD_A_EXCLUDE_KERNEL (1ull << 5)
#define PD_A_EXCLUDE_HV (1ull << 6)
#define PD_A_FREQ (1ull << 10)
#define PD_A_PRECISE(f) (((f) >> 15) & 3)
#define PD_A_MMAP_DATA (1ull << 17)
#define PD_A_SAMPLE_ID_ALL (1ull << 18)
#define PD_A_EXCLUDE_HOST (1ull << 19)
#define PD_A_EXCLUDE_GUEST (1ull << 20)
#define PD_A_EXCLUDE_CALLCHAIN_USER (1ull << 22)

struct pd_id_attr;

struct pd_build_id {
	int32_t pid;
	uint16_t misc;
	char hex[41];        /* lowercase */
	char *filename;
};

/* A decoded sample, up to its callchain and branch stack (all the
 * analysis reads). */
struct pd_sample {
	const struct pd_attr *attr;
	uint32_t attr_index;
	uint8_t cpumode;     /* header.misc & 7 */
	uint64_t ip, time, period, id;
	int32_t pid, tid;
	bool has_period;
	uint64_t nchain;
	const uint8_t *chain; /* nchain u64s, read with pd_u64 */
	uint64_t nbranch;     /* BRANCH_STACK: entries, each {from, to, flags} */
	const uint8_t *branch; /* where entries[0] is (past hw_idx), even for nbranch 0 */
	/* REGS_USER and STACK_USER (DWARF call graphs): regs_abi 0 means no
	 * registers; regs holds nregs u64s in mask order; the stack copy's
	 * valid bytes are stack_size (dyn_size), 0 when none was taken. */
	uint64_t regs_abi;
	const uint8_t *regs;
	uint32_t nregs;
	const uint8_t *stack;
	uint64_t stack_size;
};

/* What the walk counted. */
struct pd_counts {
	uint64_t records;               /* every record delivered or skipped */
	uint64_t by_type[PD_TYPES];
	uint64_t unknown_types;         /* skipped by size */
	uint64_t lost_records, lost;    /* PERF_RECORD_LOST: records, summed `lost` */
	uint64_t lost_samples;          /* PERF_RECORD_LOST_SAMPLES summed */
	uint64_t compressed_bytes, decompressed_bytes;
	uint64_t out_of_order;          /* queued older than the last flush */
	uint64_t queue_half_flushes;
	uint64_t unknown_id;            /* samples of no attr */
};

struct pd_file {
	const uint8_t *base;
	size_t size;
	bool swap, pipe;
	uint64_t data_off, data_size;   /* file mode; pipe: from 16 to the end */
	struct pd_attr *attrs;
	size_t nattrs;
	struct pd_id_attr *id_index;    /* every attr's ids, by (id, attr): pd_attr_of */
	size_t nid_index;
	int id_pos, is_pos;             /* of the first attr: perf's evlist values */
	uint64_t features[4];           /* bitmap (file mode; pipe: those seen) */
	char *hostname, *osrelease, *version, *arch, *cpudesc, *cmdline;
	uint32_t nrcpus_avail, nrcpus_online;
	bool has_nrcpus;
	struct pd_build_id *build_ids;
	size_t nbuild_ids;
	uint32_t comp_type, comp_mmap_len;
	bool has_compressed;
	struct pd_counts counts;
	/* The image is a private read-only file mapping: pages the walk is
	 * done with may be dropped (madvise), so memory stays bounded by what
	 * is queued, not by the file.  Set by the caller after pd_open. */
	bool droppable;
	/* set by pd_walk */
	struct pd_queue *queue;
	void *zstd;
};

static inline uint16_t pd_bswap16(uint16_t v) { return (uint16_t)(v << 8 | v >> 8); }
static inline uint16_t pd_u16(const struct pd_file *f, const void *p)
{
	uint16_t v;
	memcpy(&v, p, 2);
	return f->swap ? pd_bswap16(v) : v;
}
static inline uint32_t pd_u32(const struct pd_file *f, const void *p)
{
	uint32_t v;
	memcpy(&v, p, 4);
	return f->swap ? __builtin_bswap32(v) : v;
}
static inline uint64_t pd_u64(const struct pd_file *f, const void *p)
{
	uint64_t v;
	memcpy(&v, p, 8);
	return f->swap ? __builtin_bswap64(v) : v;
}

/* Check the header and read attributes and features of the `size` bytes
 * at `base` (borrowed: they must outlive the pd_file).  PL_ERR_MALFORMED
 * for what is not a perf.data or does not hold together, with what and
 * where. */
enum pl_err pd_open(struct pd_file *f, const void *base, size_t size, struct pl_error *err);
void pd_release(struct pd_file *f);

/* Called for each record in delivery order: `rec` points at its header
 * (8 bytes: type u32, misc u16, size u16) and holds `size` bytes; `time`
 * is its timestamp or UINT64_MAX.  A nonzero error code stops the walk. */
typedef enum pl_err (*pd_record_fn)(void *arg, const uint8_t *rec, size_t size, uint64_t time,
				    struct pl_error *err);
enum pl_err pd_walk(struct pd_file *f, pd_record_fn fn, void *arg, struct pl_error *err);

/* The attr a record belongs to (perf's evlist__event2evsel), or NULL. */
const struct pd_attr *pd_attr_of(const struct pd_file *f, const uint8_t *rec, size_t size);

/* Decode a SAMPLE record; false (with the reason in `why`) when it does
 * not hold together. */
bool pd_parse_sample(const struct pd_file *f, const uint8_t *rec, size_t size,
		     struct pd_sample *s, const char **why);

/* The event's name as perf script prints it (EVENT_DESC / EVENT_UPDATE,
 * else built from the attr as perf does); NULL when perf would need more
 * than the attr (a tracepoint, a dynamic PMU). */
const char *pd_event_name(const struct pd_attr *a, char *buf, size_t cap);

#endif
