/* pdlbr.c - LBR call stacks walked as perf 6.1 walks them (see pdlbr.h).
 *
 * perf's callee-order path (util/machine.c): lbr_callchain_add_kernel_ip
 * adds callchain entries 0..i, i the first PERF_CONTEXT_USER among the
 * first max_stack entries (markers count there, unlike the -g walk, which
 * counts only addresses); lbr_callchain_add_lbr_ip then adds
 * entries[0].to and each entries[k].from with a cpumode of its own that
 * starts as user.  Any value >= PERF_CONTEXT_MAX is a marker to perf in
 * both parts (add_callchain_ip): HV, KERNEL and USER switch the mode, any
 * other one empties the chain and makes the LBR path fail, after which
 * perf walks the callchain as for -g (thread__resolve_callchain_sample
 * goes on).  That walk meets the same marker when it sat in the kernel
 * part, so the chain ends empty, as walk_chain leaves it.
 *
 * perf 6.1 reads entries[0] even when the branch stack has no entries: it
 * then takes the 8 bytes at entries[0].to's place, past the branch stack,
 * for the leaf.  Those are the record's next field or, past the record,
 * the file's next bytes (perf maps a file on 64-bit whole, and delivers
 * file-mode records in place).  This reader reads the same bytes when it
 * can see them: in the record, or in the mapped image for a file-mode,
 * own-byte-order, uncompressed record.  Elsewhere (pipe mode, where perf
 * reads each record into a reused buffer; zstd records; swapped files)
 * what perf reads is not in the file, and the sample is PD_LBR_UNREADABLE.
 */
#include "pdlbr.h"

#define CTX_HV ((uint64_t)-32)
#define CTX_KERNEL ((uint64_t)-128)
#define CTX_USER ((uint64_t)-512)
#define CTX_MAX ((uint64_t)-4095)
#define MODE_KERNEL 1
#define MODE_USER 2
#define MODE_HV 3
#define ENTRY_SIZE 24

static uint64_t chain_at(const struct pd_lbr_iter *it, uint64_t i)
{
	return pd_u64(it->f, it->s->chain + 8 * i);
}

static uint64_t from_at(const struct pd_lbr_iter *it, uint64_t k)
{
	return pd_u64(it->f, it->s->branch + ENTRY_SIZE * k);
}

/* add_callchain_ip's markers: the new mode, or 0 for one perf rejects. */
static uint8_t marker_mode(uint64_t ip)
{
	switch (ip) {
	case CTX_HV: return MODE_HV;
	case CTX_KERNEL: return MODE_KERNEL;
	case CTX_USER: return MODE_USER;
	default: return 0;
	}
}

static bool rejected_marker(uint64_t ip)
{
	return ip >= CTX_MAX && !marker_mode(ip);
}

/* entries[0].to, where perf reads it (see the file comment). */
static bool read_leaf(struct pd_lbr_iter *it, const uint8_t *rec, size_t size)
{
	const struct pd_file *f = it->f;
	uintptr_t to = (uintptr_t)it->s->branch + 8;
	uintptr_t base = (uintptr_t)f->base, r = (uintptr_t)rec;

	if (it->s->nbranch || to + 8 <= r + size) {
		it->leaf = pd_u64(f, (const uint8_t *)to);
		return true;
	}
	if (f->pipe || f->swap || r < base || r >= base + f->size) {
		it->why = "a sample with an empty LBR call stack outside a file-mode, uncompressed recording "
			  "of this byte order (perf 6.1 reads its leaf past the branch stack, from memory the "
			  "file does not hold)";
		return false;
	}
	if (to + 8 > base + f->size) {
		it->why = "a sample with an empty LBR call stack at the end of the file (perf 6.1 reads its "
			  "leaf past the end)";
		return false;
	}
	it->leaf = pd_u64(f, (const uint8_t *)to);
	return true;
}

enum pd_lbr_how pd_lbr_begin(struct pd_lbr_iter *it, const struct pd_file *f, const struct pd_sample *s,
			     const uint8_t *rec, size_t size, unsigned max_stack)
{
	uint64_t reach = s->nchain < max_stack ? s->nchain : max_stack, i = 0;

	*it = (struct pd_lbr_iter){.f = f, .s = s, .mode = MODE_USER};
	while (i < reach && chain_at(it, i) != CTX_USER)
		i++;
	if (i == reach)
		return PD_LBR_FP_CHAIN;
	it->user_at = i;
	for (uint64_t j = 0; j < i; j++)
		if (rejected_marker(chain_at(it, j)))
			return PD_LBR_FP_CHAIN;
	if (!read_leaf(it, rec, size))
		return PD_LBR_UNREADABLE;
	if (rejected_marker(it->leaf))
		return PD_LBR_FP_CHAIN;
	for (uint64_t k = 0; k < s->nbranch; k++)
		if (rejected_marker(from_at(it, k)))
			return PD_LBR_FP_CHAIN;
	return PD_LBR_FRAMES;
}

bool pd_lbr_next(struct pd_lbr_iter *it, uint8_t *mode, uint64_t *ip)
{
	for (;;) {
		uint64_t at = it->at++, v;
		if (at <= it->user_at)
			v = chain_at(it, at);
		else if (at == it->user_at + 1)
			v = it->leaf;
		else if (at - it->user_at - 2 < it->s->nbranch)
			v = from_at(it, at - it->user_at - 2);
		else
			return false;
		if (at == it->user_at + 1)
			it->mode = MODE_USER;   /* the LBR part's own cpumode */
		if (v >= CTX_MAX) {
			it->mode = marker_mode(v);
			continue;
		}
		*mode = it->mode;
		*ip = v;
		return true;
	}
}
