/* pdformat.c - perf.data header, attributes, features and ordered record
 * walk (see pdformat.h).
 *
 * Ordering is perf's ordered_events: a queue kept stable by timestamp
 * (equal times keep their arrival order), flushed at FINISHED_ROUND up to
 * the newest timestamp seen at the previous round, fully at the end.
 * Records of the mapped file are queued by pointer; records out of the
 * zstd stream are copied (the stream's buffer is reused).
 */
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <unistd.h>
#include <string.h>
#include <zstd.h>

#include "pdformat.h"
#include "base/util.h"

#define FILE_HEADER 104
#define LEGACY_HEADER 72
#define PIPE_HEADER 16
#define MAGIC 0x32454c4946524550ull  /* "PERFILE2" read little-endian */
#define ATTR_MIN 64                    /* PERF_ATTR_SIZE_VER0 */
#define ATTR_MAX 4096

/* ------------------------------------------------------------ helpers */

static enum pl_err bad(struct pl_error *err, const char *what, uint64_t off)
{
	return pl_fail(err, PL_ERR_MALFORMED,
		       "check that the file is a complete perf.data (perf script -i FILE reads it)",
		       "malformed perf.data: %s (at byte %llu)", what, (unsigned long long)off);
}

static bool in_bounds(uint64_t off, uint64_t len, uint64_t size)
{
	return off <= size && len <= size - off;
}

/* Reverse the bits of each byte: a bit field written big-endian. */
static uint64_t revbits_bytes(uint64_t v)
{
	uint64_t out = 0;

	for (int b = 0; b < 8; b++) {
		uint8_t x = (uint8_t)(v >> (8 * b)), r = 0;
		for (int i = 0; i < 8; i++)
			if (x & (1u << i))
				r |= (uint8_t)(0x80u >> i);
		out |= (uint64_t)r << (8 * b);
	}
	return out;
}

/* One perf_event_attr of `n` bytes (n >= 64). */
static void read_attr(const struct pd_file *f, const uint8_t *p, size_t n, struct pd_attr *a)
{
	uint8_t buf[136] = {0};
	uint64_t raw;

	memcpy(buf, p, n < sizeof(buf) ? n : sizeof(buf));
	memset(a, 0, sizeof(*a));
	a->type = pd_u32(f, buf);
	a->size = pd_u32(f, buf + 4);
	a->config = pd_u64(f, buf + 8);
	a->sample_period = pd_u64(f, buf + 16);
	a->sample_type = pd_u64(f, buf + 24);
	a->read_format = pd_u64(f, buf + 32);
	memcpy(&raw, buf + 40, 8);
	if (f->swap)
		raw = revbits_bytes(raw);
	a->flags = raw;   /* little-endian host assumed, as everywhere here */
	a->branch_sample_type = pd_u64(f, buf + 72);
	a->sample_regs_user = pd_u64(f, buf + 80);
	a->sample_stack_user = pd_u32(f, buf + 88);
}

/* {u32 len, bytes} feature string; NULL when it does not fit. */
static char *read_string(const struct pd_file *f, const uint8_t **p, const uint8_t *end)
{
	uint32_t len;

	if (end - *p < 4)
		return NULL;
	len = pd_u32(f, *p);
	if (len > (size_t)(end - *p) - 4)
		return NULL;
	char *s = pl_xstrndup((const char *)*p + 4, strnlen((const char *)*p + 4, len));
	*p += 4 + len;
	return s;
}

/* ------------------------------------------------------------ features */

static void feat_build_ids(struct pd_file *f, const uint8_t *p, const uint8_t *end)
{
	while (end - p >= 8 && f->nbuild_ids < PD_MAX_BUILD_IDS) {
		uint16_t misc = pd_u16(f, p + 4), size = pd_u16(f, p + 6);
		if (size < 8 + 4 + 24 || size > end - p)
			return;
		struct pd_build_id *b;
		f->build_ids = pl_xrealloc(f->build_ids, (f->nbuild_ids + 1) * sizeof(*b));
		b = &f->build_ids[f->nbuild_ids++];
		b->pid = (int32_t)pd_u32(f, p + 8);
		b->misc = misc;
		/* BUILD_ID_SIZE flag: the byte after the 20 says how many are used. */
		size_t idlen = (misc & 0x8000) ? p[12 + 20] : 20;
		if (idlen > 20)
			idlen = 20;
		pl_hex(p + 12, idlen, b->hex);
		b->filename = pl_xstrndup((const char *)p + 36, strnlen((const char *)p + 36, size - 36u));
		p += size;
	}
}

static char *join_cmdline(const struct pd_file *f, const uint8_t *p, const uint8_t *end)
{
	struct pl_buf b = {0};
	uint32_t nr;

	if (end - p < 4)
		return NULL;
	nr = pd_u32(f, p);
	p += 4;
	for (uint32_t i = 0; i < nr && i < 4096; i++) {
		char *s = read_string(f, &p, end);
		if (!s)
			break;
		if (i)
			pl_buf_addc(&b, ' ');
		pl_buf_adds(&b, s);
		free(s);
	}
	pl_buf_add(&b, "", 1);
	return b.data;
}

struct pd_id_attr {
	uint64_t id;
	uint32_t attr;
};

/* The first attr holding `id`: a binary search of the index (a record
 * asks once or twice, and a recording of many CPUs and events has
 * thousands of ids). */
static struct pd_attr *attr_by_id(const struct pd_file *f, uint64_t id)
{
	size_t lo = 0, hi = f->nid_index;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (f->id_index[mid].id < id)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo < f->nid_index && f->id_index[lo].id == id ? &f->attrs[f->id_index[lo].attr] : NULL;
}

static int cmp_id_attr(const void *a, const void *b)
{
	const struct pd_id_attr *x = a, *y = b;

	if (x->id != y->id)
		return x->id < y->id ? -1 : 1;
	return (x->attr > y->attr) - (x->attr < y->attr);
}

/* Merge attr `ai`'s ids into the index; an id already there keeps its
 * older attr first (the first attr holding it is the one found). */
static void index_ids(struct pd_file *f, uint32_t ai)
{
	const struct pd_attr *a = &f->attrs[ai];
	size_t n = f->nid_index, i = 0, j = 0, k = 0;
	struct pd_id_attr *add = pl_xmalloc((a->nids ? a->nids : 1) * sizeof(*add));
	struct pd_id_attr *out = pl_xmalloc((n + a->nids ? n + a->nids : 1) * sizeof(*out));

	for (size_t x = 0; x < a->nids; x++)
		add[x] = (struct pd_id_attr){a->ids[x], ai};
	if (a->nids)
		qsort(add, a->nids, sizeof(*add), cmp_id_attr);
	while (i < n || j < a->nids)
		out[k++] = j >= a->nids || (i < n && f->id_index[i].id <= add[j].id) ? f->id_index[i++]
										      : add[j++];
	free(f->id_index);
	free(add);
	f->id_index = out;
	f->nid_index = k;
}

/* perf's evlist__id2evsel: the only one, or the first for id 0. */
static struct pd_attr *attr_of_id(const struct pd_file *f, uint64_t id)
{
	if (f->nattrs == 0)
		return NULL;
	if (f->nattrs == 1 || id == 0)
		return &f->attrs[0];
	return attr_by_id(f, id);
}

static void set_name(struct pd_attr *a, const char *name)
{
	if (a && !a->name && name && name[0])
		a->name = pl_xstrdup(name);
}

/* {u32 nr, u32 attr_size, nr x {attr, u32 nr_ids, string name, ids}} */
static void feat_event_desc(struct pd_file *f, const uint8_t *p, const uint8_t *end)
{
	uint32_t nr, asz;

	if (end - p < 8)
		return;
	nr = pd_u32(f, p);
	asz = pd_u32(f, p + 4);
	p += 8;
	if (asz < ATTR_MIN || asz > ATTR_MAX)
		return;
	for (uint32_t i = 0; i < nr && i < PD_MAX_ATTRS; i++) {
		uint32_t nids;
		char *name;
		if ((size_t)(end - p) < asz + 4u)
			return;
		p += asz;
		nids = pd_u32(f, p);
		p += 4;
		if (!(name = read_string(f, &p, end)))
			return;
		if (nids > (size_t)(end - p) / 8) {
			free(name);
			return;
		}
		set_name(attr_of_id(f, nids ? pd_u64(f, p) : 0), name);
		free(name);
		p += (size_t)nids * 8;
	}
}

static void feature(struct pd_file *f, unsigned bit, const uint8_t *p, size_t n)
{
	const uint8_t *end = p + n, *q = p;

	switch (bit) {
	case PD_F_BUILD_ID: feat_build_ids(f, p, end); break;
	case PD_F_HOSTNAME: free(f->hostname); f->hostname = read_string(f, &q, end); break;
	case PD_F_OSRELEASE: free(f->osrelease); f->osrelease = read_string(f, &q, end); break;
	case PD_F_VERSION: free(f->version); f->version = read_string(f, &q, end); break;
	case PD_F_ARCH: free(f->arch); f->arch = read_string(f, &q, end); break;
	case PD_F_CPUDESC: free(f->cpudesc); f->cpudesc = read_string(f, &q, end); break;
	case PD_F_CMDLINE: free(f->cmdline); f->cmdline = join_cmdline(f, p, end); break;
	case PD_F_EVENT_DESC: feat_event_desc(f, p, end); break;
	case PD_F_NRCPUS:
		if (n >= 8) {
			f->nrcpus_avail = pd_u32(f, p);
			f->nrcpus_online = pd_u32(f, p + 4);
			f->has_nrcpus = true;
		}
		break;
	case PD_F_COMPRESSED:
		if (n >= 20) {
			f->comp_type = pd_u32(f, p + 4);
			f->comp_mmap_len = pd_u32(f, p + 16);
			f->has_compressed = true;
		}
		break;
	default: break;
	}
	if (bit < PD_F_MAX)
		f->features[bit / 64] |= 1ull << (bit % 64);
}

/* ------------------------------------------------------------ header */

static void calc_positions(struct pd_file *f)
{
	uint64_t t = f->nattrs ? f->attrs[0].sample_type : 0;

	if (t & PD_S_IDENTIFIER) {
		f->id_pos = 0;
		f->is_pos = 1;
	} else if (!(t & PD_S_ID)) {
		f->id_pos = f->is_pos = -1;
	} else {
		f->id_pos = !!(t & PD_S_IP) + !!(t & PD_S_TID) + !!(t & PD_S_TIME) + !!(t & PD_S_ADDR);
		f->is_pos = 1 + !!(t & PD_S_CPU) + !!(t & PD_S_STREAM_ID);
	}
}

static enum pl_err add_attr(struct pd_file *f, const uint8_t *p, size_t asz, const uint8_t *ids,
			    uint64_t nids, uint64_t off, struct pl_error *err)
{
	struct pd_attr *a;
	size_t total = 0;

	if (f->nattrs >= PD_MAX_ATTRS)
		return bad(err, "more than 256 events", off);
	for (size_t i = 0; i < f->nattrs; i++)
		total += f->attrs[i].nids;
	if (nids > PD_MAX_IDS || total + nids > PD_MAX_IDS)
		return bad(err, "more than 1048576 event ids", off);
	f->attrs = pl_xrealloc(f->attrs, (f->nattrs + 1) * sizeof(*a));
	a = &f->attrs[f->nattrs++];
	read_attr(f, p, asz, a);
	a->nids = (size_t)nids;
	a->ids = pl_xmalloc((a->nids ? a->nids : 1) * sizeof(uint64_t));
	for (size_t k = 0; k < a->nids; k++)
		a->ids[k] = pd_u64(f, ids + 8 * k);
	index_ids(f, (uint32_t)(f->nattrs - 1));
	calc_positions(f);
	return PL_OK;
}

static enum pl_err open_file_mode(struct pd_file *f, struct pl_error *err)
{
	const uint8_t *b = f->base;
	uint64_t hsz = pd_u64(f, b + 8), asz = pd_u64(f, b + 16);
	uint64_t aoff = pd_u64(f, b + 24), alen = pd_u64(f, b + 32);
	uint64_t feat_off;
	enum pl_err rc;

	if (hsz != FILE_HEADER && hsz != LEGACY_HEADER)
		return bad(err, "header size is neither 104 nor 72", 8);
	if (f->size < hsz)
		return bad(err, "file shorter than its header", 0);
	f->data_off = pd_u64(f, b + 40);
	f->data_size = pd_u64(f, b + 48);
	if (asz < ATTR_MIN + 16 || asz > ATTR_MAX + 16)
		return bad(err, "attr size out of range", 16);
	if (!in_bounds(aoff, alen, f->size))
		return bad(err, "attr section past the end of the file", 24);
	if (!in_bounds(f->data_off, f->data_size, f->size))
		return bad(err, "data section past the end of the file", 40);
	for (uint64_t off = aoff; off + asz <= aoff + alen; off += asz) {
		uint64_t ids = pd_u64(f, b + off + asz - 16), idlen = pd_u64(f, b + off + asz - 8);
		if (!in_bounds(ids, idlen, f->size))
			return bad(err, "event id array past the end of the file", off);
		if ((rc = add_attr(f, b + off, (size_t)(asz - 16), b + ids, idlen / 8, off, err)))
			return rc;
	}
	if (f->nattrs == 0)
		return bad(err, "no event attributes", 24);
	if (hsz == LEGACY_HEADER)
		return PL_OK;
	/* Feature table: one {offset, size} per set bit, after the data. */
	uint64_t bits[4];
	for (int i = 0; i < 4; i++)
		bits[i] = pd_u64(f, b + 72 + 8 * i);
	feat_off = f->data_off + f->data_size;
	for (unsigned bit = 0; bit < PD_F_MAX; bit++) {
		if (!(bits[bit / 64] & (1ull << (bit % 64))))
			continue;
		if (!in_bounds(feat_off, 16, f->size))
			return bad(err, "feature table past the end of the file", feat_off);
		uint64_t off = pd_u64(f, b + feat_off), len = pd_u64(f, b + feat_off + 8);
		feat_off += 16;
		if (!in_bounds(off, len, f->size))
			return bad(err, "feature section past the end of the file", feat_off - 16);
		feature(f, bit, b + off, (size_t)len);
	}
	return PL_OK;
}

enum pl_err pd_open(struct pd_file *f, const void *base, size_t size, struct pl_error *err)
{
	uint64_t magic;

	memset(f, 0, sizeof(*f));
	f->base = base;
	f->size = size;
	if (size < PIPE_HEADER)
		return bad(err, "shorter than a perf.data header", 0);
	memcpy(&magic, base, 8);
	if (magic == __builtin_bswap64(MAGIC))
		f->swap = true;
	else if (magic != MAGIC)
		return pl_fail(err, PL_ERR_UNSUPPORTED, "record it with perf record (perf.data version 2)",
			       "not a perf.data version 2 file (magic is not PERFILE2)");
	if (pd_u64(f, (const uint8_t *)base + 8) == PIPE_HEADER) {
		f->pipe = true;
		f->data_off = PIPE_HEADER;
		f->data_size = size - PIPE_HEADER;
		f->id_pos = f->is_pos = -1;
		return PL_OK;
	}
	if (size < FILE_HEADER)
		return bad(err, "shorter than a perf.data header", 0);
	return open_file_mode(f, err);
}

void pd_release(struct pd_file *f)
{
	for (size_t i = 0; i < f->nattrs; i++) {
		free(f->attrs[i].ids);
		free(f->attrs[i].name);
	}
	free(f->attrs);
	free(f->id_index);
	for (size_t i = 0; i < f->nbuild_ids; i++)
		free(f->build_ids[i].filename);
	free(f->build_ids);
	free(f->hostname);
	free(f->osrelease);
	free(f->version);
	free(f->arch);
	free(f->cpudesc);
	free(f->cmdline);
	memset(f, 0, sizeof(*f));
}

/* ------------------------------------------------------------ samples */

const struct pd_attr *pd_attr_of(const struct pd_file *f, const uint8_t *rec, size_t size)
{
	uint32_t type = pd_u32(f, rec);
	uint64_t id;

	if (f->nattrs == 0)
		return NULL;
	if (f->nattrs == 1)
		return &f->attrs[0];
	if (!(f->attrs[0].flags & PD_A_SAMPLE_ID_ALL) && type != PD_SAMPLE)
		return &f->attrs[0];
	if (type == PD_SAMPLE) {
		if (f->id_pos < 0 || 8 + 8 * (size_t)f->id_pos + 8 > size)
			return NULL;
		id = pd_u64(f, rec + 8 + 8 * (size_t)f->id_pos);
	} else {
		size_t n = size / 8;
		if (f->is_pos < 0 || (size_t)f->is_pos > n)
			return NULL;
		id = pd_u64(f, rec + 8 * (n - (size_t)f->is_pos));
	}
	return id == 0 ? &f->attrs[0] : attr_by_id(f, id);
}

/* The time of a kernel-type non-sample record from its sample_id trailer. */
static uint64_t trailer_time(const struct pd_file *f, const struct pd_attr *a, const uint8_t *rec,
			     size_t size)
{
	uint64_t t = a->sample_type;
	size_t back = 0;

	if (!(a->flags & PD_A_SAMPLE_ID_ALL) || !(t & PD_S_TIME))
		return UINT64_MAX;
	back += !!(t & PD_S_IDENTIFIER) + !!(t & PD_S_CPU) + !!(t & PD_S_STREAM_ID) + !!(t & PD_S_ID);
	size_t n = (size - 8) / 8;
	if (back + 1 > n)
		return UINT64_MAX;
	return pd_u64(f, rec + 8 + 8 * (n - 1 - back));
}

struct cursor {
	const struct pd_file *f;
	const uint8_t *p, *end;
	bool ok;
};

static uint64_t take(struct cursor *c)
{
	if (c->end - c->p < 8) {
		c->ok = false;
		return 0;
	}
	uint64_t v = pd_u64(c->f, c->p);
	c->p += 8;
	return v;
}

/* What follows CALLCHAIN up to the branch stack's end (RAW, BRANCH_STACK:
 * nr, hw_idx when the attr has HW_INDEX, nr entries of 24 bytes), as
 * evsel__parse_sample reads it.  The kernel writes every field after it
 * as fixed u64s but REGS_* and STACK_USER (refused for this reader) and
 * AUX: without those the record's size must come out exactly, so a
 * hw_idx present where the attr says none (or missing where it says one)
 * makes the sample a skipped one instead of entries read shifted. */
static bool parse_branch_stack(struct cursor *c, const struct pd_attr *a, struct pd_sample *s,
			       const char **why)
{
	const uint64_t after = PD_S_WEIGHT | PD_S_DATA_SRC | PD_S_TRANSACTION | PD_S_PHYS_ADDR |
			       PD_S_CGROUP | PD_S_DATA_PAGE_SIZE | PD_S_CODE_PAGE_SIZE | PD_S_WEIGHT_STRUCT;
	const uint64_t variable = PD_S_REGS_USER | PD_S_STACK_USER | PD_S_REGS_INTR | PD_S_AUX;
	uint64_t t = a->sample_type;

	if ((t & PD_S_RAW) && c->end - c->p >= 4) {
		uint64_t raw = pd_u32(c->f, c->p);
		if (raw + 4 > (uint64_t)(c->end - c->p))
			c->ok = false;
		else
			c->p += raw + 4;
	} else if (t & PD_S_RAW) {
		c->ok = false;
	}
	uint64_t nr = take(c);
	if (a->branch_sample_type & PD_BR_HW_INDEX)
		take(c);
	if (!c->ok) {
		*why = "record shorter than its sample_type says";
		return false;
	}
	if (nr > (uint64_t)(c->end - c->p) / 24) {
		*why = "branch stack runs past the end of the record";
		return false;
	}
	s->nbranch = nr;
	s->branch = c->p;
	c->p += nr * 24;
	if (!(t & variable) && (uint64_t)(c->end - c->p) != 8 * (uint64_t)__builtin_popcountll(t & after)) {
		*why = "record size disagrees with its branch stack (hw_idx present where the attr says absent, "
		       "or missing where it says present)";
		return false;
	}
	return true;
}

/* REGS_USER (abi, then one u64 per mask bit when abi is not 0) and
 * STACK_USER (size, size bytes, dyn_size when size is not 0), as
 * evsel__parse_sample reads them: a dyn_size above size fails the sample
 * ("user stack dump failure"). */
static bool parse_user_stack(struct cursor *c, const struct pd_attr *a, struct pd_sample *s,
			     const char **why)
{
	uint64_t t = a->sample_type;

	if (t & PD_S_REGS_USER) {
		s->regs_abi = take(c);
		if (c->ok && s->regs_abi) {
			uint64_t nr = (uint64_t)__builtin_popcountll(a->sample_regs_user);
			if (nr > (uint64_t)(c->end - c->p) / 8) {
				*why = "user registers run past the end of the record";
				return false;
			}
			s->regs = c->p;
			s->nregs = (uint32_t)nr;
			c->p += nr * 8;
		}
	}
	if (c->ok && (t & PD_S_STACK_USER)) {
		uint64_t sz = take(c);
		if (c->ok && sz) {
			if (sz > (uint64_t)(c->end - c->p) || (uint64_t)(c->end - c->p) - sz < 8) {
				*why = "user stack runs past the end of the record";
				return false;
			}
			s->stack = c->p;
			c->p += sz;
			s->stack_size = take(c);
			if (s->stack_size > sz) {
				*why = "user stack dump failure (dyn_size above size)";
				return false;
			}
		}
	}
	if (!c->ok) {
		*why = "record shorter than its sample_type says";
		return false;
	}
	return true;
}

/* The fixed-size fields before the read values, in sample_type order. */
static void take_fixed_fields(struct cursor *c, uint64_t t, struct pd_sample *s)
{
	if (t & PD_S_IDENTIFIER)
		s->id = take(c);
	if (t & PD_S_IP)
		s->ip = take(c);
	if (t & PD_S_TID) {
		take(c);
		const uint8_t *q = c->p - 8;
		s->pid = (int32_t)pd_u32(c->f, q);
		s->tid = (int32_t)pd_u32(c->f, q + 4);
	}
	if (t & PD_S_TIME)
		s->time = take(c);
	if (t & PD_S_ADDR)
		take(c);
	if (t & PD_S_ID)
		s->id = take(c);
	if (t & PD_S_STREAM_ID)
		take(c);
	if (t & PD_S_CPU)
		take(c);
	if (t & PD_S_PERIOD) {
		s->period = take(c);
		s->has_period = true;
	}
}

/* PERF_SAMPLE_READ's values, skipped: a group's nr entries or one value,
 * each with the fields read_format adds. */
static void skip_read_values(struct cursor *c, uint64_t rf)
{
	size_t per = 1 + !!(rf & PD_R_ID) + !!(rf & PD_R_LOST);

	if (rf & PD_R_GROUP) {
		uint64_t nr = take(c);
		if (rf & PD_R_TOTAL_ENABLED)
			take(c);
		if (rf & PD_R_TOTAL_RUNNING)
			take(c);
		if (nr > (uint64_t)(c->end - c->p) / 8 / per)
			c->ok = false;
		else
			c->p += nr * per * 8;
	} else {
		take(c);
		if (rf & PD_R_TOTAL_ENABLED)
			take(c);
		if (rf & PD_R_TOTAL_RUNNING)
			take(c);
		if (rf & PD_R_ID)
			take(c);
		if (rf & PD_R_LOST)
			take(c);
	}
}

/* The callchain: its count, then as many addresses, kept in place. */
static bool take_callchain(struct cursor *c, struct pd_sample *s, const char **why)
{
	uint64_t nr = take(c);

	if (c->ok && nr > (uint64_t)(c->end - c->p) / 8) {
		*why = "callchain runs past the end of the record";
		return false;
	}
	s->nchain = nr;
	s->chain = c->p;
	c->p += nr * 8;
	return true;
}

/* PERF_SAMPLE_RAW's bytes, skipped (a u32 size, then the data). */
static void skip_raw(struct cursor *c)
{
	uint64_t raw = c->end - c->p >= 4 ? pd_u32(c->f, c->p) : UINT64_MAX;

	if (raw == UINT64_MAX || raw + 4 > (uint64_t)(c->end - c->p))
		c->ok = false;
	else
		c->p += raw + 4;
}

bool pd_parse_sample(const struct pd_file *f, const uint8_t *rec, size_t size,
		     struct pd_sample *s, const char **why)
{
	const struct pd_attr *a = pd_attr_of(f, rec, size);
	struct cursor c = {f, rec + 8, rec + size, true};
	uint64_t t;

	memset(s, 0, sizeof(*s));
	if (!a) {
		*why = "sample of no known event id";
		return false;
	}
	s->attr = a;
	s->attr_index = (uint32_t)(a - f->attrs);
	s->cpumode = (uint8_t)(pd_u16(f, rec + 4) & 7);
	t = a->sample_type;
	s->time = UINT64_MAX;
	s->period = a->sample_period;
	take_fixed_fields(&c, t, s);
	if (t & PD_S_READ)
		skip_read_values(&c, a->read_format);
	if ((t & PD_S_CALLCHAIN) && !take_callchain(&c, s, why))
		return false;
	if ((t & PD_S_BRANCH_STACK) && !parse_branch_stack(&c, a, s, why))
		return false;
	if (!(t & PD_S_BRANCH_STACK) && (t & PD_S_RAW) && (t & (PD_S_REGS_USER | PD_S_STACK_USER)))
		skip_raw(&c);
	if (c.ok && (t & (PD_S_REGS_USER | PD_S_STACK_USER)))
		return parse_user_stack(&c, a, s, why);
	if (!c.ok) {
		*why = "record shorter than its sample_type says";
		return false;
	}
	return true;
}

/* ------------------------------------------------------------ names */

static const char *const hw_names[] = {
	"cycles", "instructions", "cache-references", "cache-misses", "branches", "branch-misses",
	"bus-cycles", "stalled-cycles-frontend", "stalled-cycles-backend", "ref-cycles",
};
static const char *const sw_names[] = {
	"cpu-clock", "task-clock", "page-faults", "context-switches", "cpu-migrations",
	"minor-faults", "major-faults", "alignment-faults", "emulation-faults", "dummy",
	"bpf-output", "cgroup-switches",
};

/* perf's evsel__add_modifiers. */
static void modifiers(const struct pd_attr *a, char *buf, size_t cap)
{
	char m[16];
	size_t r = 0;
	bool guest_default = false;
	uint64_t fl = a->flags;

	if (fl & (PD_A_EXCLUDE_KERNEL | PD_A_EXCLUDE_USER | PD_A_EXCLUDE_HV)) {
		if (!(fl & PD_A_EXCLUDE_KERNEL))
			m[r++] = 'k';
		if (!(fl & PD_A_EXCLUDE_USER))
			m[r++] = 'u';
		if (!(fl & PD_A_EXCLUDE_HV))
			m[r++] = 'h';
		guest_default = true;
	}
	for (unsigned i = 0; i < PD_A_PRECISE(fl); i++)
		m[r++] = 'p';
	if (PD_A_PRECISE(fl))
		guest_default = true;
	if ((fl & PD_A_EXCLUDE_HOST) || !!(fl & PD_A_EXCLUDE_GUEST) == guest_default) {
		if (!(fl & PD_A_EXCLUDE_HOST))
			m[r++] = 'H';
		if (!(fl & PD_A_EXCLUDE_GUEST))
			m[r++] = 'G';
	}
	m[r] = '\0';
	if (r)
		snprintf(buf + strlen(buf), cap - strlen(buf), ":%s", m);
}

const char *pd_event_name(const struct pd_attr *a, char *buf, size_t cap)
{
	if (a->name)
		return a->name;
	if (a->type == 0 && a->config < PL_ARRAY_LEN(hw_names))
		snprintf(buf, cap, "%s", hw_names[a->config]);
	else if (a->type == 1 && a->config < PL_ARRAY_LEN(sw_names))
		snprintf(buf, cap, "%s", sw_names[a->config]);
	else
		return NULL;
	modifiers(a, buf, cap);
	return buf;
}

/* ------------------------------------------------------------ the walk */

struct qent {
	uint64_t time, seq;
	const uint8_t *rec;
	size_t size;
	bool owned;
};

struct pd_queue {
	struct qent *v;
	size_t n, cap;
	uint64_t seq, max_ts, next_flush, last_flush;
	size_t owned_bytes;
	bool sorted;
};

/* The end of the ascending run (by time) that starts at i. */
static size_t run_end(const struct qent *v, size_t i, size_t n)
{
	while (++i < n && v[i].time >= v[i - 1].time)
		;
	return i;
}

/* Sort the queue by (time, seq), merging its ascending runs.  A queue is
 * the older sorted part left by the last flush, then records pushed in
 * seq order, one ascending run per CPU buffer perf drained in a round: a
 * few runs, so merging them costs a pass or two where qsort cost ~240
 * instructions a record.  Every entry of a run has a smaller seq than
 * every entry after it (only the first run can hold older entries), so a
 * merge that takes the left one on equal times keeps (time, seq) order. */
static void q_sort(struct pd_queue *q)
{
	struct qent *tmp = pl_xmalloc(q->cap * sizeof(*tmp));
	size_t nruns;

	do {
		size_t i = 0, out = 0;
		nruns = 0;
		while (i < q->n) {
			size_t a = i, mid = run_end(q->v, i, q->n), hi = mid < q->n ? run_end(q->v, mid, q->n) : mid;
			size_t b = mid;
			while (a < mid && b < hi)
				tmp[out++] = q->v[b].time < q->v[a].time ? q->v[b++] : q->v[a++];
			while (a < mid)
				tmp[out++] = q->v[a++];
			while (b < hi)
				tmp[out++] = q->v[b++];
			i = hi;
			nruns++;
		}
		struct qent *x = q->v;
		q->v = tmp;
		tmp = x;
	} while (nruns > 1);
	free(tmp);
}

/* Deliver queued records with time <= limit, in order. */
static enum pl_err q_flush(struct pd_queue *q, uint64_t limit, pd_record_fn fn, void *arg,
			   struct pl_error *err)
{
	size_t i = 0;
	enum pl_err rc = PL_OK;

	if (!q->sorted) {
		if (q->n)   /* an empty queue's v is NULL */
			q_sort(q);
		q->sorted = true;
	}
	for (; i < q->n && q->v[i].time <= limit; i++) {
		if (!rc)
			rc = fn(arg, q->v[i].rec, q->v[i].size, q->v[i].time, err);
		q->last_flush = q->v[i].time;
		if (q->v[i].owned) {
			q->owned_bytes -= q->v[i].size;
			free((void *)q->v[i].rec);
		}
	}
	if (i)   /* nothing delivered: v may be NULL, and NULL + 0 is undefined */
		memmove(q->v, q->v + i, (q->n - i) * sizeof(*q->v));
	q->n -= i;
	return rc;
}

static enum pl_err q_push(struct pd_file *f, const uint8_t *rec, size_t size, uint64_t time,
			  bool copy, pd_record_fn fn, void *arg, struct pl_error *err)
{
	struct pd_queue *q = f->queue;
	struct qent e = {time, q->seq++, rec, size, copy};

	if (time < q->last_flush)
		f->counts.out_of_order++;
	if (copy) {
		uint8_t *c = pl_xmalloc(size);
		memcpy(c, rec, size);
		e.rec = c;
		q->owned_bytes += size;
	}
	if (q->n && time < q->v[q->n - 1].time)
		q->sorted = false;
	if (!q->n || time >= q->max_ts)
		q->max_ts = time;
	PL_GROW(q->v, q->cap, q->n + 1);
	q->v[q->n++] = e;
	/* A full queue: deliver the older half (perf's OE_FLUSH__HALF).  The
	 * entries count too: 32-byte records out of a zstd stream cost more
	 * in entries than in copies, and records of the mapped file only
	 * entries (a 42 KB file of 16M compressed samples took 1.2 GB when
	 * only the copies were counted). */
	if (q->owned_bytes + q->n * sizeof(*q->v) > PD_MAX_QUEUE_BYTES) {
		f->counts.queue_half_flushes++;
		if (!q->sorted) {
			q_sort(q);
			q->sorted = true;
		}
		return q_flush(q, q->v[q->n / 2].time, fn, arg, err);
	}
	return PL_OK;
}

/* The timestamp perf orders a kernel-type record by (UINT64_MAX: none). */
static uint64_t record_time(const struct pd_file *f, const uint8_t *rec, size_t size)
{
	const struct pd_attr *a = pd_attr_of(f, rec, size);
	uint32_t type = pd_u32(f, rec);

	if (!a)
		return UINT64_MAX;
	if (type == PD_SAMPLE) {
		uint64_t t = a->sample_type;
		if (!(t & PD_S_TIME))
			return UINT64_MAX;
		size_t pos = !!(t & PD_S_IDENTIFIER) + !!(t & PD_S_IP) + !!(t & PD_S_TID);
		if (8 + 8 * pos + 8 > size)
			return UINT64_MAX;
		return pd_u64(f, rec + 8 + 8 * pos);
	}
	return trailer_time(f, a, rec, size);
}

static enum pl_err pipe_attr(struct pd_file *f, const uint8_t *rec, size_t size, uint64_t off,
			     struct pl_error *err)
{
	uint32_t asz;

	if (size < 8 + ATTR_MIN)
		return bad(err, "HEADER_ATTR shorter than an attr", off);
	asz = pd_u32(f, rec + 8 + 4);
	if (asz < ATTR_MIN || asz > size - 8)
		return bad(err, "HEADER_ATTR attr size out of range", off);
	return add_attr(f, rec + 8, asz, rec + 8 + asz, (size - 8 - asz) / 8, off, err);
}

/* EVENT_UPDATE: u64 type (2 = name), u64 id, data. */
static void event_update(struct pd_file *f, const uint8_t *rec, size_t size)
{
	if (size < 24 || pd_u64(f, rec + 8) != 2)
		return;
	char *name = pl_xstrndup((const char *)rec + 24, strnlen((const char *)rec + 24, size - 24));
	set_name(attr_by_id(f, pd_u64(f, rec + 16)), name);
	free(name);
}

/* User records that change what the reader knows (pipe mode mostly). */
static enum pl_err user_record(struct pd_file *f, const uint8_t *rec, size_t size, uint64_t off,
			       struct pl_error *err)
{
	switch (pd_u32(f, rec)) {
	case PD_HEADER_ATTR:
		/* Only a pipe's events come as records; a file's are fixed. */
		return f->pipe ? pipe_attr(f, rec, size, off, err) : PL_OK;
	case PD_HEADER_FEATURE:
		if (size >= 16)
			feature(f, (unsigned)pd_u64(f, rec + 8) & 0xffff, rec + 16, size - 16);
		return PL_OK;
	case PD_HEADER_BUILD_ID:
		feat_build_ids(f, rec, rec + size);
		return PL_OK;
	case PD_EVENT_UPDATE:
		event_update(f, rec, size);
		return PL_OK;
	default:
		return PL_OK;
	}
}

/* Extra payload bytes after a record that its size does not count. */
static uint64_t extra_payload(const struct pd_file *f, const uint8_t *rec, size_t size)
{
	uint32_t type = pd_u32(f, rec);

	if (type == PD_AUXTRACE && size >= 16)
		return pd_u64(f, rec + 8);
	if (type == PD_HEADER_TRACING_DATA && size >= 12)
		return ((uint64_t)pd_u32(f, rec + 8) + 7) & ~7ull;
	return 0;
}

static enum pl_err one_record(struct pd_file *f, const uint8_t *rec, size_t size, uint64_t off,
			      bool from_stream, pd_record_fn fn, void *arg, struct pl_error *err);

/* Decompress one COMPRESSED record's payload and process the complete
 * inner records; an incomplete tail waits for the next. */
struct stream {
	uint8_t *buf;
	size_t len, cap;
};

static enum pl_err decompress(struct pd_file *f, struct stream *st, const uint8_t *src, size_t n,
			      uint64_t off, pd_record_fn fn, void *arg, struct pl_error *err)
{
	ZSTD_inBuffer in = {src, n, 0};
	size_t pos = 0;
	enum pl_err rc;

	if (!f->zstd)
		f->zstd = ZSTD_createDStream();
	if (!f->zstd)
		return pl_fail(err, PL_ERR_INTERNAL, NULL, "cannot create a zstd stream");
	size_t start = st->len;
	while (in.pos < in.size) {
		if (st->cap - st->len < (1u << 16)) {
			if (st->len - start > PD_MAX_DECOMP_CHUNK)
				return bad(err, "a COMPRESSED record decompresses to more than 64 MiB", off);
			st->cap = st->cap ? st->cap * 2 : (1u << 20);
			st->buf = pl_xrealloc(st->buf, st->cap);
		}
		ZSTD_outBuffer out = {st->buf + st->len, st->cap - st->len, 0};
		size_t r = ZSTD_decompressStream(f->zstd, &out, &in);
		if (ZSTD_isError(r))
			return bad(err, "zstd data does not decompress", off);
		st->len += out.pos;
		if (out.pos == 0 && in.pos < in.size && out.size > 0)
			return bad(err, "zstd data does not decompress", off);
	}
	f->counts.compressed_bytes += n;
	f->counts.decompressed_bytes += st->len - start;
	while (st->len - pos >= 8) {
		uint16_t sz = pd_u16(f, st->buf + pos + 6);
		if (sz < 8)
			return bad(err, "a compressed record of size less than 8", off);
		if (sz > st->len - pos)
			break;
		if ((rc = one_record(f, st->buf + pos, sz, off, true, fn, arg, err)))
			return rc;
		pos += sz;
	}
	/* A frame that decompresses to nothing leaves buf NULL: no offset on it. */
	if (pos) {
		memmove(st->buf, st->buf + pos, st->len - pos);
		st->len -= pos;
	}
	return PL_OK;
}

static struct stream *g_stream_of(struct pd_file *f);

static enum pl_err one_record(struct pd_file *f, const uint8_t *rec, size_t size, uint64_t off,
			      bool from_stream, pd_record_fn fn, void *arg, struct pl_error *err)
{
	uint32_t type = pd_u32(f, rec);
	enum pl_err rc;

	f->counts.records++;
	if (type < PD_TYPES)
		f->counts.by_type[type]++;
	/* The stream's buffer is being walked: a COMPRESSED record out of it
	 * would append to (and move) that buffer and walk it again from its
	 * start, recursing without end.  perf writes none; refuse it. */
	if (from_stream && (type == PD_COMPRESSED || type == PD_COMPRESSED2))
		return bad(err, "a COMPRESSED record inside compressed data", off);
	if (type >= PD_KERNEL_TYPES) {
		switch (type) {
		case PD_FINISHED_ROUND:
			rc = q_flush(f->queue, f->queue->next_flush, fn, arg, err);
			f->queue->next_flush = f->queue->max_ts;
			return rc;
		case PD_COMPRESSED:
			return decompress(f, g_stream_of(f), rec + 8, size - 8, off, fn, arg, err);
		case PD_COMPRESSED2:
			if (size < 16 || pd_u64(f, rec + 8) > size - 16)
				return bad(err, "COMPRESSED2 data size past the record", off);
			return decompress(f, g_stream_of(f), rec + 16, (size_t)pd_u64(f, rec + 8), off, fn,
					  arg, err);
		default:
			if (type > PD_COMPRESSED2 + 2)
				f->counts.unknown_types++;
			if ((rc = user_record(f, rec, size, off, err)))
				return rc;
			return fn(arg, rec, size, UINT64_MAX, err);
		}
	}
	if (type > PD_TEXT_POKE + 2)
		f->counts.unknown_types++;
	if (type == PD_LOST && size >= 24) {
		f->counts.lost_records++;
		f->counts.lost += pd_u64(f, rec + 16);
	} else if (type == PD_LOST_SAMPLES && size >= 16) {
		f->counts.lost_samples += pd_u64(f, rec + 8);
	}
	uint64_t t = record_time(f, rec, size);
	if (t == 0 || t == UINT64_MAX)
		return fn(arg, rec, size, t, err);
	return q_push(f, rec, size, t, from_stream, fn, arg, err);
}

struct walk_state {
	struct pd_queue q;
	struct stream st;
};
static struct stream *g_stream_of(struct pd_file *f)
{
	return &((struct walk_state *)f->queue)->st;
}

/* Give back the mapped pages before `off` that no queued record points
 * into (they are re-read from the page cache if touched again). */
static void drop_done(struct pd_file *f, const struct pd_queue *q, uint64_t off, uint64_t *dropped)
{
	uint64_t keep = off;
	long page = sysconf(_SC_PAGESIZE);

	for (size_t i = 0; i < q->n; i++)
		if (!q->v[i].owned && (uint64_t)(q->v[i].rec - f->base) < keep)
			keep = (uint64_t)(q->v[i].rec - f->base);
	keep -= keep % (uint64_t)page;
	if (keep > *dropped + (4u << 20)) {
		madvise((void *)(f->base + *dropped), keep - *dropped, MADV_DONTNEED);
		*dropped = keep;
	}
}

enum pl_err pd_walk(struct pd_file *f, pd_record_fn fn, void *arg, struct pl_error *err)
{
	struct walk_state ws = {0};
	uint64_t off = f->data_off, end = f->data_off + f->data_size, dropped = 0;
	enum pl_err rc = PL_OK;

	f->queue = &ws.q;   /* the queue is the walk state's first member */
	while (rc == PL_OK && off < end) {
		if (end - off < 8) {
			rc = bad(err, "a record header cut off at the end", off);
			break;
		}
		const uint8_t *rec = f->base + off;
		uint16_t size = pd_u16(f, rec + 6);
		if (size < 8) {
			rc = bad(err, "a record of size less than 8 (size 0 would loop)", off);
			break;
		}
		if (size > end - off) {
			rc = bad(err, "a record runs past the end of the data", off);
			break;
		}
		uint64_t extra = extra_payload(f, rec, size);
		if (extra > end - off - size) {
			rc = bad(err, "a record's payload runs past the end of the data", off);
			break;
		}
		rc = one_record(f, rec, size, off, false, fn, arg, err);
		off += size + extra;
		if (f->droppable && pd_u32(f, rec) == PD_FINISHED_ROUND)
			drop_done(f, &ws.q, off, &dropped);
	}
	if (rc == PL_OK)
		rc = q_flush(&ws.q, UINT64_MAX, fn, arg, err);
	for (size_t i = 0; i < ws.q.n; i++)
		if (ws.q.v[i].owned)
			free((void *)ws.q.v[i].rec);
	free(ws.q.v);
	free(ws.st.buf);
	if (f->zstd)
		ZSTD_freeDStream(f->zstd);
	f->zstd = NULL;
	f->queue = NULL;
	return rc;
}
