/* profile.c - interning and weights for the profile model (see profile.h).
 *
 * Composite keys (a function's symbol and DSO, a stack's thread and frame
 * ids...) are packed into small byte strings and interned in their own
 * pl_strtab, which doubles as the id map: the key's id is the object's id
 * and the parallel array holds its attributes.  A stack's frame ids are
 * read straight from its stored key (8-byte aligned by the string table).
 */
#include "profile.h"
#include "base/escape.h"
#include "demangle.h"
#include "base/input.h"
#include "perf_stat.h"
#include "sched.h"

#include <assert.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

const char *pl_format_name(enum pl_format f)
{
	switch (f) {
	case PL_FMT_FOLDED: return "folded";
	case PL_FMT_PERF_SCRIPT: return "perf_script";
	case PL_FMT_AGENT_CHUNKS: return "agent_chunks";
	case PL_FMT_PERF_STAT: return "perf_stat";
	case PL_FMT_PERF_DATA: return "perf_data";
	case PL_FMT_PPROF: return "pprof";
	case PL_FMT_SPEEDSCOPE: return "speedscope";
	case PL_FMT_CPUPROFILE: return "cpuprofile";
	default: return "auto";
	}
}

const char *pl_kind_name(enum pl_kind k)
{
	switch (k) {
	case PL_KIND_USER: return "user";
	case PL_KIND_KERNEL: return "kernel";
	case PL_KIND_JIT: return "jit";
	default: return "unknown";
	}
}

void pl_profile_init(struct pl_profile *p, const struct pl_limits *lim)
{
	memset(p, 0, sizeof(*p));
	if (lim)
		p->limits = *lim;
	else
		pl_limits_default(&p->limits);
	pl_strtab_init(&p->strs);
	pl_strtab_init(&p->thread_keys);
	pl_strtab_init(&p->func_keys);
	pl_strtab_init(&p->frame_keys);
	pl_strtab_init(&p->stack_keys);
	pl_strtab_init(&p->site_keys);
	pl_strtab_init(&p->mark_keys);
}

void pl_profile_reserve(struct pl_profile *p, size_t nstrs, size_t nfuncs,
			size_t nframes, size_t nstacks)
{
	pl_strtab_reserve(&p->strs, nstrs);
	pl_strtab_reserve(&p->func_keys, nfuncs);
	pl_strtab_reserve(&p->frame_keys, nframes);
	pl_strtab_reserve(&p->stack_keys, nstacks);
	PL_GROW(p->funcs, p->funcs_cap, nfuncs);
	PL_GROW(p->frames, p->frames_cap, nframes);
	PL_GROW(p->stacks, p->stacks_cap, nstacks);
	PL_GROW(p->weights, p->weights_cap, nstacks);
}

static void sites_release(struct pl_profile *p);

void pl_profile_add_note(struct pl_profile *p, const char *text)
{
	p->notes = pl_xrealloc(p->notes, (p->nnotes + 1) * sizeof(*p->notes));
	p->notes[p->nnotes++] = pl_xstrdup(text);
}

void pl_profile_release(struct pl_profile *p)
{
	for (size_t i = 0; i < p->nstats; i++)
		pl_stat_block_free(p->stats[i]);
	free(p->stats);
	pl_sched_free(p->sched);
	for (size_t i = 0; i < p->nsources; i++) {
		pl_input_hash_free(p->sources[i].pending_hash);
		free(p->sources[i].path);
		free(p->sources[i].sha256_cache_entry);
		free(p->sources[i].converted_by);
		free(p->sources[i].reader_reason);
		pl_perf_data_info_free(p->sources[i].perf_data);
	}
	free(p->sources);
	free(p->mappings);
	free(p->build_ids);
	pl_strtab_release(&p->strs);
	pl_strtab_release(&p->thread_keys);
	pl_strtab_release(&p->func_keys);
	pl_strtab_release(&p->frame_keys);
	pl_strtab_release(&p->stack_keys);
	free(p->events);
	free(p->threads);
	free(p->funcs);
	free(p->frames);
	free(p->stacks);
	free(p->weights);
	free(p->tails);
	free(p->timed.v);
	for (size_t i = 0; i < p->nnotes; i++)
		free(p->notes[i]);
	free(p->notes);
	sites_release(p);
	pl_strtab_release(&p->mark_keys);
	free(p->marked);
	memset(p, 0, sizeof(*p));
}

/* Names must be UTF-8 to be stored as JSON: a name holding other bytes
 * (or a backslash) is kept in the escaped form of base/escape.h, which
 * gives the same bytes back where they are needed (the folded export, a
 * DSO path opened again), and the profile counts the names it escaped. */
static uint32_t intern_escaped(struct pl_profile *p, const char *s, size_t n)
{
	struct pl_buf b = {0};
	uint32_t id;

	pl_esc_add(&b, s, n);
	if (pl_esc_needed(s, n) && pl_strtab_find(&p->strs, b.data, b.len) == PL_NOID)
		p->names_escaped++;
	id = pl_strtab_intern(&p->strs, b.data, b.len);
	pl_buf_release(&b);
	return id;
}

uint32_t pl_intern_str(struct pl_profile *p, const char *s, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		unsigned char c = (unsigned char)s[i];
		/* Only a name that is not plain ASCII, or holds a backslash,
		 * needs the check. */
		if (c == 0 || c >= 0x80 || c == '\\') {
			if (pl_esc_needed(s + i, n - i))
				return intern_escaped(p, s, n);
			break;
		}
	}
	return pl_strtab_intern(&p->strs, s, n);
}

uint32_t pl_intern_text(struct pl_profile *p, const char *s, size_t n)
{
	return pl_strtab_intern(&p->strs, s, n);
}

uint32_t pl_intern_event(struct pl_profile *p, const char *name, size_t n)
{
	uint32_t sid = pl_intern_str(p, name, n);

	for (size_t i = 0; i < p->nevents; i++)
		if (p->events[i].name == sid)
			return (uint32_t)i;
	PL_GROW(p->events, p->events_cap, p->nevents + 1);
	memset(&p->events[p->nevents], 0, sizeof(p->events[0]));
	p->events[p->nevents].name = sid;
	return (uint32_t)p->nevents++;
}

uint32_t pl_intern_event_unit(struct pl_profile *p, const char *name, size_t n,
			      const char *unit, struct pl_error *err)
{
	size_t before = p->nevents;
	uint32_t ev = pl_intern_event(p, name, n);
	uint32_t u = pl_intern_str(p, unit, strlen(unit));

	if (p->nevents != before)
		p->events[ev].unit1 = u + 1;
	else if (p->events[ev].unit1 != u + 1) {
		pl_fail(err, PL_ERR_MALFORMED, "analyze the inputs apart: events are never merged",
			"event '%s' is in '%s' here but in '%s' in an earlier input", pl_str(p, p->events[ev].name),
			unit, p->events[ev].unit1 ? pl_str(p, p->events[ev].unit1 - 1) : pl_event_unit(p, ev));
		return PL_NOID;
	}
	return ev;
}

uint32_t pl_find_event(const struct pl_profile *p, const char *name)
{
	for (size_t i = 0; i < p->nevents; i++)
		if (strcmp(pl_str(p, p->events[i].name), name) == 0)
			return (uint32_t)i;
	return PL_NOID;
}

const char *pl_event_unit(const struct pl_profile *p, uint32_t event)
{
	const struct pl_event *e = &p->events[event];
	const char *name = pl_str(p, e->name);

	if (e->unit1)
		return pl_str(p, e->unit1 - 1);
	/* Off-CPU folded stacks from collect_profile weigh blocked time. */
	if (strlen(name) > 3 && strcmp(name + strlen(name) - 3, "-us") == 0)
		return "us";
	/* No record carried a period: the weights are sample counts. */
	if (e->samples && e->records_without_period == e->samples && strcmp(name, "unknown") != 0)
		return "samples";

	/* offcpu-time (perf record --off-cpu, collect_profile's off_cpu
	 * mode) weighs blocked nanoseconds in its period. */
	if (strcmp(name, "cpu-clock") == 0 || strcmp(name, "task-clock") == 0 ||
	    strcmp(name, "offcpu-time") == 0 ||
	    strncmp(name, "cpu-clock:", 10) == 0 ||
	    strncmp(name, "task-clock:", 11) == 0)
		return "ns";
	if (strcmp(name, "unknown") == 0)
		return "count";
	return "events";
}

uint32_t pl_intern_thread(struct pl_profile *p, int64_t pid, int64_t tid,
			  uint32_t comm)
{
	unsigned char key[20];
	size_t before = p->thread_keys.count;
	uint32_t id;

	memcpy(key, &pid, 8);
	memcpy(key + 8, &tid, 8);
	memcpy(key + 16, &comm, 4);
	id = pl_strtab_intern(&p->thread_keys, (const char *)key, sizeof(key));
	if (p->thread_keys.count != before) {
		PL_GROW(p->threads, p->threads_cap, p->thread_keys.count);
		p->threads[id] = (struct pl_thread){pid, tid, comm};
	}
	return id;
}

/* perf inject --jit's ELF file of one jitdump code record, written
 * beside the jit-PID.dump: DIR/jitted-PID-N.so (perf's jit_write_elf). */
static bool is_jitted_so(const char *dso, size_t n)
{
	const char *base = dso;
	size_t i, dashes = 0, digits = 0;

	for (i = 0; i < n; i++)
		if (dso[i] == '/')
			base = dso + i + 1;
	n -= (size_t)(base - dso);
	if (n < 13 || memcmp(base, "jitted-", 7) != 0 || memcmp(base + n - 3, ".so", 3) != 0)
		return false;
	for (i = 7; i < n - 3; i++) {
		if (base[i] == '-' && digits) {
			dashes++;
			digits = 0;
		} else if (base[i] >= '0' && base[i] <= '9') {
			digits++;
		} else {
			return false;
		}
	}
	return dashes == 1 && digits;
}

enum pl_kind pl_classify_dso(const char *dso, size_t n)
{
	if (!dso || n == 0)
		return PL_KIND_UNKNOWN;
	if (n >= 7 && memcmp(dso + n - 7, "vmlinux", 7) == 0)
		return PL_KIND_KERNEL;
	if (n >= 10 && memcmp(dso, "/tmp/perf-", 10) == 0 &&
	    n >= 4 && memcmp(dso + n - 4, ".map", 4) == 0)
		return PL_KIND_JIT;
	if (is_jitted_so(dso, n))
		return PL_KIND_JIT;
	if (dso[0] == '[') {
		if (n >= 4 && memcmp(dso, "[JIT", 4) == 0)
			return PL_KIND_JIT;
		if (strncmp(dso, "[unknown]", n) == 0 && n == 9)
			return PL_KIND_UNKNOWN;
		/* [vdso], [vsyscall], [heap], [stack], [anon...] are user
		 * mappings; any other bracketed name is the kernel or one of
		 * its modules, as perf prints them. */
		static const char *const user_maps[] = {
			"[vdso]", "[vsyscall]", "[heap]", "[stack]", "[anon", "[uprobes]",
			"[vectors]", "[sigpage]",
		};
		for (size_t i = 0; i < PL_ARRAY_LEN(user_maps); i++) {
			size_t m = strlen(user_maps[i]);
			if (n >= m && memcmp(dso, user_maps[i], m) == 0)
				return PL_KIND_USER;
		}
		return PL_KIND_KERNEL;
	}
	return PL_KIND_USER;
}

/* f->symbol demangled in place, the given name kept as f->linkage.  The
 * kernel's names are not demangled (perf's demangle_kernel is off). */
static void demangle_func(struct pl_profile *p, struct pl_func *f)
{
	const char *s = pl_str(p, f->symbol);
	size_t n = s ? strlen(s) : 0;
	char *d;
	uint32_t id;

	if (f->kind == PL_KIND_KERNEL || !s || !pl_demangle_looks_mangled(s, n))
		return;
	d = pl_demangle(s, n, PL_DM_FULL);
	if (!d) {
		f->undemangled = 1;
		return;
	}
	id = pl_intern_str(p, d, strlen(d));
	free(d);
	if (id == PL_NOID || id == f->symbol)
		return;
	f->linkage = f->symbol;
	f->symbol = id;
}

uint32_t pl_intern_func(struct pl_profile *p, uint32_t symbol, uint32_t dso)
{
	uint32_t key[2] = {symbol, dso};
	size_t before = p->func_keys.count;
	uint32_t id = pl_strtab_intern(&p->func_keys, (const char *)key, sizeof(key));

	if (p->func_keys.count != before) {
		const char *d = pl_str(p, dso);
		const char *s = pl_str(p, symbol);
		struct pl_func *f;

		PL_GROW(p->funcs, p->funcs_cap, p->func_keys.count);
		f = &p->funcs[id];
		f->symbol = symbol;
		f->dso = dso;
		f->kind = (uint8_t)pl_classify_dso(d, d ? strlen(d) : 0);
		f->inlined = d && strcmp(d, "inlined") == 0;
		f->unknown = s && (strcmp(s, "[unknown]") == 0 || s[0] == '\0');
		f->undemangled = 0;
		f->linkage = PL_NOID;
		demangle_func(p, f);
	}
	return id;
}

uint32_t pl_intern_func_inlined(struct pl_profile *p, uint32_t symbol, uint32_t dso)
{
	/* Three words: never the key of an out-of-line function (two). */
	uint32_t key[3] = {symbol, dso, 1};
	size_t before = p->func_keys.count;
	uint32_t id = pl_strtab_intern(&p->func_keys, (const char *)key, sizeof(key));

	if (p->func_keys.count != before) {
		const char *d = pl_str(p, dso);
		PL_GROW(p->funcs, p->funcs_cap, p->func_keys.count);
		p->funcs[id] = (struct pl_func){symbol, dso,
			(uint8_t)pl_classify_dso(d, d ? strlen(d) : 0), 1, 0, 0, PL_NOID};
		demangle_func(p, &p->funcs[id]);
	}
	return id;
}

uint32_t pl_intern_frame(struct pl_profile *p, uint32_t func, bool has_addr,
			 uint64_t addr, uint32_t srcline, struct pl_error *err)
{
	unsigned char key[16];
	uint32_t id;
	size_t before = p->frame_keys.count;

	if (!has_addr)
		addr = 0;
	memcpy(key, &func, 4);
	memcpy(key + 4, &srcline, 4);
	memcpy(key + 8, &addr, 8);
	id = pl_strtab_intern(&p->frame_keys, (const char *)key, sizeof(key));
	if (p->frame_keys.count == before)
		return id;
	if (p->frame_keys.count > p->limits.max_frames) {
		pl_fail(err, PL_ERR_LIMIT,
			"raise --max-frames, or analyze a shorter capture",
			"more than %u unique frames", p->limits.max_frames);
		return PL_NOID;
	}
	PL_GROW(p->frames, p->frames_cap, p->frame_keys.count);
	p->frames[id] = (struct pl_frame){func, srcline, addr, has_addr};
	return id;
}

uint32_t pl_intern_stack(struct pl_profile *p, uint32_t thread,
			 const uint32_t *frames, uint32_t depth,
			 struct pl_error *err)
{
	size_t before = p->stack_keys.count;
	size_t n = (size_t)(depth + 1) * 4;
	uint32_t small[256];
	uint32_t *key = depth < 255 ? small : pl_xmalloc(n);
	uint32_t id;

	assert(frames || depth == 0);
	key[0] = thread;
	if (depth)   /* a sample without frames may come with frames NULL */
		memcpy(key + 1, frames, (size_t)depth * 4);
	id = pl_strtab_intern(&p->stack_keys, (const char *)key, n);
	if (key != small)
		free(key);
	if (p->stack_keys.count == before)
		return id;
	if (p->stack_keys.count > p->limits.max_stacks) {
		pl_fail(err, PL_ERR_LIMIT,
			"raise --max-stacks, or filter the capture to fewer threads",
			"more than %u unique call paths", p->limits.max_stacks);
		return PL_NOID;
	}
	PL_GROW(p->stacks, p->stacks_cap, p->stack_keys.count);
	p->stacks[id].thread = thread;
	p->stacks[id].depth = depth;
	p->stacks[id].frames = (const uint32_t *)p->stack_keys.strs[id] + 1;
	p->stacks[id].first_weight = PL_NOID;
	return id;
}

void pl_add_weight(struct pl_profile *p, uint32_t stack, uint32_t event,
		   uint64_t samples, uint64_t period, bool has_period)
{
	struct pl_stack *s;
	struct pl_event *e;
	uint32_t *link;
	struct pl_weight *w;

	assert(stack < pl_nstacks(p) && event < p->nevents);  /* ids the interners gave */
	s = &p->stacks[stack];
	e = &p->events[event];

	/* Grow first: `link` may point into the weights array. */
	PL_GROW(p->weights, p->weights_cap, p->nweights + 1);
	link = &s->first_weight;
	while (*link != PL_NOID) {
		w = &p->weights[*link];
		if (w->event == event)
			goto add;
		link = &w->next;
	}
	*link = (uint32_t)p->nweights;
	w = &p->weights[p->nweights++];
	*w = (struct pl_weight){event, PL_NOID, 0, 0};
add:
	w->samples += samples;
	w->period += period;
	e->samples += samples;
	e->period += period;
	if (!has_period)
		e->records_without_period += samples;
}

void pl_add_timed(struct pl_profile *p, uint32_t stack, uint32_t event, uint64_t time_ns,
		  uint64_t period)
{
	struct pl_timed_table *t = &p->timed;

	if (time_ns > INT64_MAX) {   /* no clock reads so: a crafted input */
		t->untimed++;
		return;
	}
	if (t->n == PL_MAX_TIMED) {
		t->past_cap++;
		return;
	}
	PL_GROW(t->v, t->cap, t->n + 1);
	t->v[t->n++] = (struct pl_timed){time_ns, period, stack, event};
}

const struct pl_weight *pl_stack_weight(const struct pl_profile *p,
					uint32_t stack, uint32_t event)
{
	for (uint32_t i = p->stacks[stack].first_weight; i != PL_NOID;
	     i = p->weights[i].next)
		if (p->weights[i].event == event)
			return &p->weights[i];
	return NULL;
}

void pl_note_malformed(struct pl_profile *p, uint64_t line_no,
		       const char *reason, const char *text, size_t n)
{
	struct pl_bad_line *b;

	p->records_malformed++;
	if (p->npreviews >= PL_MAX_PREVIEWS)
		return;
	b = &p->previews[p->npreviews++];
	b->line_no = line_no;
	snprintf(b->reason, sizeof(b->reason), "%s", reason);
	if (n > sizeof(b->text) - 1)
		n = sizeof(b->text) - 1;
	memcpy(b->text, text, n);
	b->text[n] = '\0';
}

/* ------------------------------------------------------- caller checks */

/* A site's key: varints of the stack, the event and the depth, then each
 * pc as the zigzag varint of its difference from the pc before (0 before
 * the root).  Frames of one module sit close together and a recursion
 * repeats its return address, so most pcs take one to three bytes instead
 * of eight: a frame-pointer recording of deep recursions, whose distinct
 * address chains grow with its length, holds three times the sites in
 * the same bytes (PL_MAX_SITE_BYTES). */
static size_t put_varint(uint8_t *out, uint64_t v)
{
	size_t n = 0;

	do {
		out[n++] = (uint8_t)(v & 0x7f) | (v >> 7 ? 0x80 : 0);
		v >>= 7;
	} while (v);
	return n;
}

static bool get_varint(const uint8_t **at, const uint8_t *end, uint64_t *v)
{
	*v = 0;
	for (unsigned shift = 0; *at < end && shift < 64; shift += 7) {
		uint8_t b = *(*at)++;
		*v |= (uint64_t)(b & 0x7f) << shift;
		if (!(b & 0x80))
			return true;
	}
	return false;
}

static size_t site_key(uint8_t *key, uint32_t stack, uint32_t event, const uint64_t *pcs, uint32_t depth)
{
	size_t n = put_varint(key, stack);
	uint64_t prev = 0;

	n += put_varint(key + n, event);
	n += put_varint(key + n, depth);
	for (uint32_t i = 0; i < depth; i++) {
		int64_t d = (int64_t)(pcs[i] - prev);
		uint64_t z = (uint64_t)d << 1 ^ (uint64_t)(d >> 63);
		if (z < 0x80)
			key[n++] = (uint8_t)z;
		else
			n += put_varint(key + n, z);
		prev = pcs[i];
	}
	return n;
}

bool pl_site_read(const struct pl_profile *p, uint32_t site, uint32_t *stack, uint32_t *event,
		  uint64_t *pcs, uint32_t cap)
{
	const uint8_t *at = (const uint8_t *)pl_strtab_get(&p->site_keys, site);
	const uint8_t *end = at + p->site_keys.lens[site];
	uint64_t v, depth, prev = 0;

	if (!get_varint(&at, end, &v) || v >= pl_nstacks(p))
		return false;
	*stack = (uint32_t)v;
	if (!get_varint(&at, end, &v) || v >= p->nevents)
		return false;
	*event = (uint32_t)v;
	if (!get_varint(&at, end, &depth) || depth != p->stacks[*stack].depth || depth > cap)
		return false;
	for (uint32_t i = 0; i < depth; i++) {
		if (at < end && !(*at & 0x80))
			v = *at++;  /* a one-byte delta: frames of a module sit close */
		else if (!get_varint(&at, end, &v))
			return false;
		prev += (v >> 1) ^ (uint64_t)-(int64_t)(v & 1);
		pcs[i] = prev;
	}
	return at == end;
}

uint32_t pl_add_site(struct pl_profile *p, uint32_t stack, uint32_t event, const uint64_t *pcs,
		     uint32_t depth, uint64_t period)
{
	size_t cap = 30 + (size_t)depth * 10, before = p->site_keys.count, n;
	uint8_t small[30 + 64 * 10];
	uint8_t *key = cap <= sizeof(small) ? small : pl_xmalloc(cap);
	uint32_t id = PL_NOID;

	n = site_key(key, stack, event, pcs, depth);
	if (p->site_keys.bytes + n <= PL_MAX_SITE_BYTES ||
	    (id = pl_strtab_find(&p->site_keys, (const char *)key, n)) != PL_NOID) {
		if (id == PL_NOID)
			id = pl_strtab_intern(&p->site_keys, (const char *)key, n);
		if (p->site_keys.count != before) {
			pl_grow((void **)&p->site_samples, &p->sites_cap, p->site_keys.count,
				sizeof(uint64_t));
			p->site_period = pl_xrealloc(p->site_period, p->sites_cap * sizeof(uint64_t));
			p->site_samples[id] = p->site_period[id] = 0;
		}
	}
	pl_add_site_again(p, id, period);
	if (key != small)
		free(key);
	return id;
}

void pl_add_site_again(struct pl_profile *p, uint32_t site, uint64_t period)
{
	if (site == PL_NOID) {
		p->caller_check.records_unchecked++;
		return;
	}
	p->site_samples[site]++;
	p->site_period[site] += period;
}

static void sites_release(struct pl_profile *p)
{
	pl_strtab_release(&p->site_keys);
	free(p->site_samples);
	free(p->site_period);
	p->site_samples = p->site_period = NULL;
	p->sites_cap = 0;
}

void pl_drop_sites(struct pl_profile *p)
{
	sites_release(p);
	pl_strtab_init(&p->site_keys);
}

uint32_t pl_intern_mark(struct pl_profile *p, const uint32_t *words, size_t n)
{
	return pl_strtab_intern(&p->mark_keys, (const char *)words, n * 4);
}

const uint32_t *pl_mark_words(const struct pl_profile *p, uint32_t id, size_t *n)
{
	*n = p->mark_keys.lens[id] / 4;
	return (const uint32_t *)p->mark_keys.strs[id];
}

enum pl_edge pl_mark_edge(const struct pl_profile *p, uint32_t id, uint32_t index)
{
	size_t n;
	const uint32_t *w = pl_mark_words(p, id, &n);

	for (size_t i = 0; i < n && PL_MARK_INDEX(w[i]) <= index; i++)
		if (PL_MARK_INDEX(w[i]) == index)
			return PL_MARK_EDGE(w[i]);
	return PL_EDGE_KEPT;
}

void pl_add_marked(struct pl_profile *p, uint32_t stack, uint32_t event, uint32_t mark,
		   uint64_t samples, uint64_t period)
{
	PL_GROW(p->marked, p->marked_cap, p->nmarked + 1);
	p->marked[p->nmarked++] = (struct pl_marked){stack, event, mark, samples, period};
}

static int cmp_marked(const void *a, const void *b)
{
	const struct pl_marked *x = a, *y = b;

	if (x->stack != y->stack)
		return x->stack < y->stack ? -1 : 1;
	if (x->event != y->event)
		return x->event < y->event ? -1 : 1;
	return x->mark < y->mark ? -1 : (x->mark > y->mark);
}

/* Sort the marked records by (stack, event, mark): a counting sort by
 * stack, whose buckets hold a few records each, then each bucket by the
 * rest.  qsort's calls through cmp_marked cost ~1100 instructions a
 * record (187k records of a 115 MB perf.data: 210M). */
static void sort_marked(struct pl_profile *p)
{
	size_t nstacks = 0;

	for (size_t i = 0; i < p->nmarked; i++)
		if (p->marked[i].stack >= nstacks)
			nstacks = (size_t)p->marked[i].stack + 1;
	size_t *at = pl_xcalloc(nstacks + 1, sizeof(*at));
	struct pl_marked *out = pl_xmalloc(p->nmarked * sizeof(*out));
	for (size_t i = 0; i < p->nmarked; i++)
		at[p->marked[i].stack + 1]++;
	for (size_t s = 0; s < nstacks; s++)
		at[s + 1] += at[s];
	for (size_t i = 0; i < p->nmarked; i++)
		out[at[p->marked[i].stack]++] = p->marked[i];
	/* at[s] is now the end of bucket s, the start of bucket s + 1. */
	for (size_t s = 0, lo = 0; s < nstacks; lo = at[s++]) {
		size_t n = at[s] - lo;
		if (n < 2)
			continue;
		if (n > 16) {
			qsort(out + lo, n, sizeof(*out), cmp_marked);
			continue;
		}
		for (size_t i = lo + 1; i < at[s]; i++) {
			struct pl_marked x = out[i];
			size_t j = i;
			for (; j > lo && cmp_marked(&out[j - 1], &x) > 0; j--)
				out[j] = out[j - 1];
			out[j] = x;
		}
	}
	free(at);
	free(p->marked);
	p->marked = out;
	p->marked_cap = p->nmarked;
}

void pl_marked_finish(struct pl_profile *p)
{
	size_t k = 0;

	if (!p->nmarked)
		return;
	sort_marked(p);
	for (size_t i = 0; i < p->nmarked; i++) {
		if (k && cmp_marked(&p->marked[k - 1], &p->marked[i]) == 0) {
			p->marked[k - 1].samples += p->marked[i].samples;
			p->marked[k - 1].period += p->marked[i].period;
		} else {
			p->marked[k++] = p->marked[i];
		}
	}
	p->nmarked = k;
}

size_t pl_marked_first(const struct pl_profile *p, uint32_t stack)
{
	size_t lo = 0, hi = p->nmarked;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (p->marked[mid].stack < stack)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

const char *const pl_unknown_why_text[PL_UW_COUNT] = {
	[PL_UW_NOT_A_FILE] = "not a module file (vdso, JIT code or no mapping)",
	[PL_UW_NO_BUILD_ID] = "no build-id recorded for the module",
	[PL_UW_NO_LOCAL_FILE] = "no local file has the recorded build-id (pass --binary FILE, --sysroot or --module-map)",
	[PL_UW_NO_LOAD_BASE] = "no mmap record verifies the load base",
	[PL_UW_CANNOT_OPEN] = "the module file cannot be opened",
	[PL_UW_NOT_ELF] = "the module file is not ELF",
	[PL_UW_NOT_X86_64] = "the module is not x86-64, whose frame-pointer layout this check knows",
	[PL_UW_NO_CFI] = "the module has no CFI (.eh_frame or .debug_frame)",
	[PL_UW_NO_SEGMENT] = "no segment of the module holds the address",
	[PL_UW_NO_ROW] = "no CFI row covers the address",
	[PL_UW_TOO_MANY_MODULES] = "too many modules for one check",
};

void pl_note_unknown_module(struct pl_profile *p, uint32_t dso, enum pl_unknown_why why)
{
	struct pl_caller_check *c = &p->caller_check;

	for (size_t i = 0; i < c->nunknown; i++)
		if (c->unknown[i].dso == dso && c->unknown[i].why == why)
			return;
	if (c->nunknown == PL_MAX_UNKNOWN_MODULES) {
		c->unknown_modules_more++;
		return;
	}
	c->unknown[c->nunknown++] = (struct pl_unknown_module){dso, (uint32_t)why};
}

bool pl_event_is_offcpu_time(const char *name)
{
	static const char *const names[] = {"offcpu-time", "off-cpu-time", "offcpu", "off-cpu"};
	size_t n = name ? strlen(name) : 0;

	/* The unit suffixes of folded captures: off-cpu-us, offcpu-time-ns. */
	if (n > 3 && (strcmp(name + n - 3, "-us") == 0 || strcmp(name + n - 3, "-ns") == 0))
		n -= 3;
	for (size_t i = 0; name && i < PL_ARRAY_LEN(names); i++)
		if (strlen(names[i]) == n && strncmp(name, names[i], n) == 0)
			return true;
	return false;
}

void pl_note_event_attr(struct pl_profile *p, const char *name, size_t n, const char *attrs,
			size_t attrs_n)
{
	struct pl_caller_check *c = &p->caller_check;
	uint32_t id = pl_intern_str(p, name, n);
	bool fp = memmem(attrs, attrs_n, "CALLCHAIN", 9) && !memmem(attrs, attrs_n, "STACK_USER", 10) &&
		  !memmem(attrs, attrs_n, "BRANCH_STACK", 12) &&
		  !memmem(attrs, attrs_n, "exclude_callchain_user", 22);

	uint32_t dwarf = 0;
	const char *sz;

	/* "sample_stack_user = 8192" (perf script --header) or
	 * "sample_stack_user: 8192" (perf evlist -v) */
	if (memmem(attrs, attrs_n, "STACK_USER", 10) &&
	    (sz = memmem(attrs, attrs_n, "sample_stack_user", 17))) {
		const char *end = attrs + attrs_n;
		sz += 17;
		while (sz < end && (*sz == ' ' || *sz == '=' || *sz == ':'))
			sz++;
		while (sz < end && *sz >= '0' && *sz <= '9' && dwarf < (1u << 24))
			dwarf = dwarf * 10 + (uint32_t)(*sz++ - '0');
	}
	for (size_t i = 0; i < c->nattrs; i++)
		if (c->attrs[i].name == id) {
			c->attrs[i].fp_chain = fp;
			c->attrs[i].dwarf_stack = dwarf;
			return;
		}
	if (c->nattrs < PL_MAX_EVENT_ATTRS)
		c->attrs[c->nattrs++] = (struct pl_event_attr){id, fp, dwarf, false};
}

uint32_t pl_event_dwarf_stack(const struct pl_profile *p, uint32_t event)
{
	const struct pl_caller_check *c = &p->caller_check;

	for (size_t i = 0; i < c->nattrs; i++)
		if (c->attrs[i].name == p->events[event].name)
			return c->attrs[i].dwarf_stack;
	return 0;
}

void pl_set_event_dwarf_stack(struct pl_profile *p, uint32_t name, uint32_t bytes)
{
	struct pl_caller_check *c = &p->caller_check;

	for (size_t i = 0; i < c->nattrs; i++)
		if (c->attrs[i].name == name) {
			c->attrs[i].dwarf_stack = bytes;
			return;
		}
	if (c->nattrs < PL_MAX_EVENT_ATTRS)
		c->attrs[c->nattrs++] = (struct pl_event_attr){name, false, bytes, false};
}

bool pl_event_counts_waits(const struct pl_profile *p, uint32_t event)
{
	const struct pl_caller_check *c = &p->caller_check;

	for (size_t i = 0; i < c->nattrs; i++)
		if (c->attrs[i].name == p->events[event].name)
			return c->attrs[i].counts_waits;
	return false;
}

void pl_set_event_counts_waits(struct pl_profile *p, uint32_t name)
{
	struct pl_caller_check *c = &p->caller_check;

	for (size_t i = 0; i < c->nattrs; i++)
		if (c->attrs[i].name == name) {
			c->attrs[i].counts_waits = true;
			return;
		}
	if (c->nattrs < PL_MAX_EVENT_ATTRS)
		c->attrs[c->nattrs++] = (struct pl_event_attr){name, false, 0, true};
}

bool pl_event_fp_chain(const struct pl_profile *p, uint32_t event)
{
	const struct pl_caller_check *c = &p->caller_check;

	for (size_t i = 0; i < c->nattrs; i++)
		if (c->attrs[i].name == p->events[event].name)
			return c->attrs[i].fp_chain;
	return false;
}

struct pl_missing_module *pl_recovery_missing(struct pl_profile *p, uint32_t dso,
					      const char *build_id)
{
	struct pl_recovery *r = &p->recovery;
	struct pl_missing_module *m;

	for (size_t i = 0; i < r->nmissing; i++)
		if (r->missing[i].dso == dso)
			return &r->missing[i];
	if (r->nmissing == PL_MAX_MISSING_MODULES) {
		r->missing_more++;
		return NULL;
	}
	m = &r->missing[r->nmissing++];
	memset(m, 0, sizeof(*m));
	m->dso = dso;
	snprintf(m->build_id, sizeof(m->build_id), "%s", build_id ? build_id : "");
	return m;
}

/* ------------------------------------------------------------ restack */

/* The tables a restack replaces, kept until every stack is rebuilt. */
struct old_tables {
	struct pl_strtab frame_keys, stack_keys;
	struct pl_frame *frames;
	struct pl_stack *stacks;
	struct pl_weight *weights;
	struct pl_event *events;
};

static void take_tables(struct pl_profile *p, struct old_tables *o)
{
	o->frame_keys = p->frame_keys;
	o->stack_keys = p->stack_keys;
	o->frames = p->frames;
	o->stacks = p->stacks;
	o->weights = p->weights;
	o->events = pl_xmalloc((p->nevents + 1) * sizeof(*o->events));
	if (p->nevents)  /* a profile with no sample has no events array */
		memcpy(o->events, p->events, p->nevents * sizeof(*o->events));
	pl_strtab_init(&p->frame_keys);
	pl_strtab_init(&p->stack_keys);
	p->frames = NULL, p->frames_cap = 0;
	p->stacks = NULL, p->stacks_cap = 0;
	p->weights = NULL, p->weights_cap = 0, p->nweights = 0;
}

static void drop_tables(struct old_tables *o)
{
	pl_strtab_release(&o->frame_keys);
	pl_strtab_release(&o->stack_keys);
	free(o->frames);
	free(o->stacks);
	free(o->weights);
	free(o->events);
}

/* pl_stack_leaf_index over a frame table that may not be p's own. */
static uint32_t leaf_in(const struct pl_profile *p, const struct pl_frame *frames,
			const struct pl_stack *st)
{
	for (uint32_t d = st->depth; d-- > 0;)
		if (p->funcs[frames[st->frames[d]].func].kind != PL_KIND_KERNEL)
			return d;
	return st->depth ? st->depth - 1 : 0;
}

uint32_t pl_stack_leaf_index(const struct pl_profile *p, const struct pl_stack *st)
{
	return leaf_in(p, p->frames, st);
}

/* Old stack `st` through `map` into a new stack id (PL_NOID on error);
 * starts[d] gets where old frame d's replacement begins. */
static uint32_t restack_one(struct pl_profile *p, const struct old_tables *o,
			    const struct pl_stack *st, pl_frame_map_fn map, void *arg,
			    struct pl_buf *buf, uint32_t *starts, struct pl_error *err)
{
	int64_t pid = p->threads[st->thread].pid;
	uint32_t depth = 0, chunk[PL_RESTACK_MAX_EXPANSION], leaf = leaf_in(p, o->frames, st);

	buf->len = 0;
	for (uint32_t d = 0; d < st->depth; d++) {
		struct pl_frame old = o->frames[st->frames[d]];
		size_t n = 0;
		if (map(arg, p, &old, d == leaf, pid, chunk, PL_ARRAY_LEN(chunk), &n, err))
			return PL_NOID;
		starts[d] = depth;
		pl_buf_add(buf, (const char *)chunk, n * sizeof(*chunk));
		depth += (uint32_t)n;
	}
	if (depth > p->limits.max_depth) {
		pl_fail(err, PL_ERR_LIMIT, "raise --max-depth, or analyze without srcline",
			"a stack is deeper than %u frames once its inline frames are added",
			p->limits.max_depth);
		return PL_NOID;
	}
	return pl_intern_stack(p, st->thread, (const uint32_t *)buf->data, depth, err);
}

/* The caller-check marks of old stack `old` (entries from *k on: they are
 * sorted by stack) onto new stack `to`, each marked frame's index moved
 * to where its replacement begins (its edge to its caller is that of the
 * replacement's outermost frame). */
static void remap_marks(struct pl_profile *p, size_t *k, uint32_t old, uint32_t to,
			const uint32_t *starts, struct pl_buf *words)
{
	for (; *k < p->nmarked && p->marked[*k].stack == old; (*k)++) {
		size_t n;
		const uint32_t *w = pl_mark_words(p, p->marked[*k].mark, &n);
		words->len = 0;
		for (size_t i = 0; i < n; i++) {
			uint32_t nw = starts[PL_MARK_INDEX(w[i])] << 2 | (uint32_t)PL_MARK_EDGE(w[i]);
			pl_buf_add(words, &nw, sizeof(nw));
		}
		p->marked[*k].mark = pl_intern_mark(p, (const uint32_t *)words->data, n);
		p->marked[*k].stack = to;
	}
}

enum pl_err pl_profile_restack(struct pl_profile *p, pl_frame_map_fn map, void *arg,
			       struct pl_error *err)
{
	size_t nstacks = pl_nstacks(p), k = 0;
	uint32_t *to = pl_xmalloc((nstacks + 1) * sizeof(*to)), *starts = NULL;
	size_t starts_cap = 0;
	struct pl_buf buf = {0}, words = {0};
	struct old_tables o;
	enum pl_err rc = PL_OK;

	take_tables(p, &o);
	for (size_t i = 0; i < nstacks && rc == PL_OK; i++) {
		const struct pl_stack *st = &o.stacks[i];
		PL_GROW(starts, starts_cap, (size_t)st->depth + 1);
		if ((to[i] = restack_one(p, &o, st, map, arg, &buf, starts, err)) == PL_NOID) {
			rc = err->code;
			break;
		}
		for (uint32_t w = st->first_weight; w != PL_NOID; w = o.weights[w].next)
			pl_add_weight(p, to[i], o.weights[w].event, o.weights[w].samples,
				      o.weights[w].period, true);
		remap_marks(p, &k, (uint32_t)i, to[i], starts, &words);
	}
	/* The totals are what they were: only the stacks' frames changed. */
	if (p->nevents)
		memcpy(p->events, o.events, p->nevents * sizeof(*o.events));
	for (size_t i = 0; i < p->ntails && rc == PL_OK; i++)
		p->tails[i].stack = to[p->tails[i].stack];
	for (size_t i = 0; i < p->timed.n && rc == PL_OK; i++)
		p->timed.v[i].stack = to[p->timed.v[i].stack];
	if (rc == PL_OK)
		pl_marked_finish(p);  /* merged stacks: sorted and summed again */
	pl_drop_sites(p);             /* keyed by the old stack ids */
	pl_buf_release(&buf);
	pl_buf_release(&words);
	drop_tables(&o);
	free(starts);
	free(to);
	return rc;
}

void pl_perf_data_info_free(struct pl_perf_data_info *i)
{
	if (!i)
		return;
	free(i->hostname);
	free(i->osrelease);
	free(i->arch);
	free(i->cpudesc);
	free(i->cmdline);
	free(i->perf_version);
	free(i->kernel_symbols);
	free(i->jit_maps);
	free(i->events);
	free(i);
}

/* demangle.h's pl_profile_show_names: here, beside the interning it
 * needs, so the demangler stays below the profile. */
void pl_profile_show_names(struct pl_profile *p, enum pl_name_form form)
{
	size_t n = pl_nfuncs(p);
	char **names;

	if (form == PL_NAMES_FULL)
		return;
	if (form == PL_NAMES_SHORT) {
		names = pl_profile_short_names(p);
	} else {
		names = pl_xcalloc(n ? n : 1, sizeof(*names));
		for (size_t i = 0; i < n; i++) {
			const char *l = p->funcs[i].linkage != PL_NOID ? pl_str(p, p->funcs[i].linkage) : NULL;
			if (l)
				names[i] = form == PL_NAMES_PERF ? pl_demangle(l, strlen(l), PL_DM_PERF)
								 : pl_xstrdup(l);
		}
	}
	for (size_t i = 0; i < n; i++) {
		uint32_t id;
		if (!names[i])
			continue;
		id = pl_intern_str(p, names[i], strlen(names[i]));
		if (id != PL_NOID)
			p->funcs[i].symbol = id;
	}
	pl_short_names_free(names, n);
}
