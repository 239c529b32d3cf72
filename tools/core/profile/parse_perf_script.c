/* parse_perf_script.c - streaming parser for `perf script` text.
 *
 * A record is a header line followed by frame lines (leaf first) and ends
 * at a blank line, the next header, or the end of input.  Header lines are
 * read by anchoring on their structure rather than on the comm, which may
 * hold spaces and digits ("pool 2  7824 ..."):
 *
 *   comm [pid/]tid [[cpu]] [time:] [period] event: [trailing text]
 *
 * The event is the first token ending in ':' that follows a number, a
 * [cpu] or a time; the tokens before it are then taken from the right
 * (period, time, cpu, tid), and whatever stands before the tid is the
 * comm, spacing kept.  Frame lines are `ADDR SYM[+0xOFF] (DSO)`; the DSO is
 * the text inside the last " (...)" pair, so DSO paths and C++ symbols may
 * hold spaces and parentheses.  An indented line after a frame that is not
 * itself a frame is that frame's srcline (`perf script -F +srcline`).  A
 * "### PERF_STAT ###" line (device-agent chunks) hands the lines that
 * follow to the perf stat parser, up to its "seconds time elapsed" line
 * (and the user/sys lines and blank lines after it): what follows is
 * script text again, as in the seed's multi-round headless files, and a
 * further marker starts a further block.  Side-band lines (`--show-mmap-events`,
 * `--show-task-events`: "comm pid/tid time: PERF_RECORD_...") are counted
 * apart from samples; MMAP and MMAP2 ones are kept as mappings, which
 * give frames a verified load base for symbolizing them later.
 *
 * Speed: the indented lines of a record are kept until the record ends
 * (or, from a plain file, taken in place all at once by pl_ps_body); a
 * record text seen before takes its frames from the record cache, and
 * only new records go through the lines one by one (each through the
 * frame-line cache).  The entry that followed the previous record's last
 * time is compared first, which saves hashing the text when records come
 * in a repeating order.  A (record entry, thread) pair leads to its stack
 * through a memo.  Records with srclines or bad lines are never cached,
 * so counts, previews and errors come out as line by line.
 *
 * Every frame's printed address travels with it (through both caches):
 * once the input has given mmap records, each record's addresses, root
 * first, become a site of its stack for the caller check (profile.h).
 */
#include "parse.h"
#include "perf_stat.h"
#include "sched.h"

#include <stdlib.h>
#include <string.h>

#define MAX_HDR_TOKENS 48
/* Frame lines repeat (return addresses are the same in every sample that
 * passes through a call site), so whole lines are cached to frame ids.
 * The cap keeps memory bounded when leaf addresses are all different. */
#define LINE_CACHE_MAX (128 * 1024)
/* Whole records repeat too (every sample of the same call stack), so a
 * record's frame lines, as one text, are cached to the frames they give;
 * this many bytes of record text at most. */
#define RECORD_CACHE_BYTES (8u << 20)
#define STAT_MARKER "### PERF_STAT ###"

struct tok {
	const char *s;
	size_t n;
};

struct pl_ps_parser {
	struct pl_profile *p;
	char *source;
	bool in_record;       /* a header was read and frames may follow */
	bool header_frame;    /* its one frame was on the header line: no call
			       * chain, so an indented header may come next */
	bool skipping;        /* a bad header: skip its frame lines */
	bool last_was_frame;
	uint32_t thread, event;
	uint64_t period;
	bool has_period;
	uint64_t time_ns;     /* the record's time, when has_time */
	bool has_time;
	uint64_t count;       /* samples the record stands for: 1, or an
			       * off-CPU record's "waits=N" */
	uint32_t *frames;     /* leaf first, as printed */
	size_t nframes, frames_cap;
	uint64_t *pcs;        /* each frame's address as printed, parallel to frames */
	size_t pcs_cap;
	uint64_t *rev_pcs;    /* root first, for the record's site */
	size_t rev_pcs_cap;
	uint32_t *rev;        /* root first, for interning */
	size_t rev_cap;
	struct pl_stat_parser *stat;
	bool stat_elapsed;        /* the block's "seconds time elapsed" line was seen */
	uint64_t records;
	struct pl_strtab line_cache;  /* trimmed frame line -> index */
	uint32_t *line_frame;         /* index -> frame id */
	uint64_t *line_pc;            /* index -> the line's address */
	size_t line_frame_cap;
	struct pl_buf body;           /* the record's indented lines, each + '\n' */
	uint64_t body_first;          /* the line number of the first */
	struct pl_strtab rec_cache;   /* record body -> index */
	uint32_t *rec_start;          /* index -> its frames in rec_frames */
	uint32_t *rec_depth;          /* index -> how many */
	uint32_t *rec_lines;          /* index -> lines of its text */
	uint32_t *rec_next;           /* index -> the entry that came next last time */
	size_t rec_cap;
	uint32_t last_rec;            /* the entry of the last record, or PL_NOID */
	uint32_t *rec_frames;         /* frame ids, leaf first, back to back */
	uint64_t *rec_pcs;            /* their addresses, parallel to rec_frames */
	size_t nrec_frames, rec_frames_cap;
	uint32_t rec_hit;             /* the record's frames are exactly this entry's,
				       * or PL_NOID (any other change to them clears it) */
	struct stack_memo {           /* (entry, thread) -> stack, open addressing */
		uint64_t key;
		uint32_t stack1;      /* stack id + 1, 0 empty */
	} *memo;
	size_t memo_mask, memo_count;
};

static bool is_space(char c)
{
	return c == ' ' || c == '\t';
}

static bool all_digits(struct tok t)
{
	if (t.n == 0)
		return false;
	for (size_t i = 0; i < t.n; i++)
		if (t.s[i] < '0' || t.s[i] > '9')
			return false;
	return true;
}

static bool is_hex(const char *s, size_t n)
{
	if (n == 0 || n > 16)
		return false;
	for (size_t i = 0; i < n; i++) {
		char c = s[i];
		if (!((c >= '0' && c <= '9') || (c >= 'a' && c <= 'f') ||
		      (c >= 'A' && c <= 'F')))
			return false;
	}
	return true;
}

/* "123.456789:" */
static bool is_time(struct tok t)
{
	size_t i = 0, dots = 0;

	if (t.n < 3 || t.s[t.n - 1] != ':')
		return false;
	for (i = 0; i + 1 < t.n; i++) {
		if (t.s[i] == '.')
			dots++;
		else if (t.s[i] < '0' || t.s[i] > '9')
			return false;
	}
	return dots == 1 && t.s[0] != '.' && t.s[t.n - 2] != '.';
}

/* "[003]" */
static bool is_cpu(struct tok t)
{
	struct tok in = {t.s + 1, t.n - 2};
	return t.n >= 3 && t.s[0] == '[' && t.s[t.n - 1] == ']' && all_digits(in);
}

static bool is_minus_one(const char *s, size_t n)
{
	return n == 2 && s[0] == '-' && s[1] == '1';
}

/* "1234" or "1234/5678" (pid/tid); either may be -1 as perf prints it
 * for a task it could not resolve (":-1  -1/-1" in sched recordings). */
static bool parse_tid(struct tok t, int64_t *pid, int64_t *tid)
{
	const char *slash = memchr(t.s, '/', t.n);
	size_t tn = slash ? t.n - (size_t)(slash - t.s) - 1 : t.n;
	uint64_t a, b;

	if (is_minus_one(slash ? slash + 1 : t.s, tn))
		b = (uint64_t)-1;
	else if (!pl_parse_u64(slash ? slash + 1 : t.s, tn, &b))
		return false;
	if (!slash) {
		*pid = -1;
		*tid = (int64_t)b;
		return true;
	}
	if (slash - t.s == 2 && t.s[0] == '-' && t.s[1] == '1')
		a = (uint64_t)-1;
	else if (!pl_parse_u64(t.s, (size_t)(slash - t.s), &a))
		return false;
	*pid = (int64_t)a;
	*tid = (int64_t)b;
	return true;
}

static size_t tokenize(const char *line, size_t n, struct tok *toks,
		       size_t max)
{
	size_t i = 0, count = 0;

	while (i < n && count < max) {
		size_t start;
		while (i < n && is_space(line[i]))
			i++;
		if (i >= n)
			break;
		start = i;
		while (i < n && !is_space(line[i]))
			i++;
		toks[count].s = line + start;
		toks[count].n = i - start;
		count++;
	}
	return count;
}

struct header {
	struct tok comm;
	int64_t pid, tid;
	struct tok event;
	uint64_t period;
	bool has_period;
	uint64_t time_ns;      /* valid when has_time */
	bool has_time;
	const char *trailing;  /* text after the event token */
	size_t trailing_n;
};

/* Find the event token: the first token ending in ':' (not a time) that
 * follows a number, a [cpu] or a time.  Returns its index or 0. */
static size_t find_event(const struct tok *t, size_t nt, size_t *time_idx)
{
	*time_idx = 0;
	for (size_t i = 1; i < nt; i++) {
		struct tok prev = t[i - 1];
		int64_t a, b;

		if (is_time(t[i])) {
			*time_idx = i;
			continue;
		}
		if (t[i].s[t[i].n - 1] != ':' || t[i].n < 2)
			continue;
		if (all_digits(prev) || is_cpu(prev) || is_time(prev) ||
		    parse_tid(prev, &a, &b))
			return i;
	}
	return 0;
}

/* "123.456789:" -> ns. */
static bool time_ns(struct tok t, uint64_t *ns)
{
	uint64_t sec = 0, frac = 0;
	size_t i = 0, digits = 0;

	for (; i + 1 < t.n && t.s[i] != '.'; i++)
		sec = sec * 10 + (uint64_t)(t.s[i] - '0');
	for (i++; i + 1 < t.n; i++, digits++)
		if (digits < 9)
			frac = frac * 10 + (uint64_t)(t.s[i] - '0');
	for (; digits < 9; digits++)
		frac *= 10;
	*ns = sec * 1000000000ull + frac;
	return true;
}

static bool parse_header(const char *line, size_t n, struct header *h)
{
	struct tok t[MAX_HDR_TOKENS];
	size_t nt = tokenize(line, n, t, MAX_HDR_TOKENS);
	size_t time_idx, ev = find_event(t, nt, &time_idx);
	size_t j;

	if (ev < 2)
		return false;
	memset(h, 0, sizeof(*h));
	h->event = (struct tok){t[ev].s, t[ev].n - 1};
	h->trailing = t[ev].s + t[ev].n;
	h->trailing_n = n - (size_t)(h->trailing - line);
	j = ev - 1;
	if (time_idx)
		h->has_time = time_ns(t[time_idx], &h->time_ns);
	if (time_idx) {
		if (j > time_idx) {
			if (j != time_idx + 1 || !pl_parse_u64(t[j].s, t[j].n, &h->period))
				return false;
			h->has_period = true;
		}
		if (time_idx < 2)
			return false;
		j = time_idx - 1;
	} else if (all_digits(t[j]) && j >= 2) {
		int64_t a, b;
		/* Without a time the period is the number before the event
		 * only when a tid or [cpu] stands before it. */
		if (is_cpu(t[j - 1]) || parse_tid(t[j - 1], &a, &b)) {
			if (!pl_parse_u64(t[j].s, t[j].n, &h->period))
				return false;
			h->has_period = true;
			j--;
		}
	}
	if (is_cpu(t[j])) {
		if (j < 2)
			return false;
		j--;
	}
	if (j < 1 || !parse_tid(t[j], &h->pid, &h->tid))
		return false;
	/* From the first token: perf right-aligns the comm of records
	 * without a call chain. */
	h->comm.s = t[0].s;
	h->comm.n = (size_t)(t[j - 1].s + t[j - 1].n - t[0].s);
	return true;
}

struct frame_text {
	uint64_t addr;
	struct tok sym;
	struct tok dso;
	bool has_dso;
};

/* "ADDR SYM (DSO)" after optional indentation. */
static bool parse_frame(const char *line, size_t n, struct frame_text *f)
{
	size_t i = 0, a0, close, open;
	uint64_t addr = 0;

	while (i < n && is_space(line[i]))
		i++;
	a0 = i;
	while (i < n && !is_space(line[i]))
		i++;
	if (!is_hex(line + a0, i - a0))
		return false;
	for (size_t k = a0; k < i; k++) {
		char c = line[k];
		addr = addr * 16 + (uint64_t)(c <= '9' ? c - '0' : (c | 0x20) - 'a' + 10);
	}
	while (i < n && is_space(line[i]))
		i++;
	while (n > i && is_space(line[n - 1]))
		n--;
	if (i >= n)
		return false;
	/* perf prints an empty symbol as "ADDR  (DSO)". */
	if (line[i] == '(' && line[n - 1] == ')' &&
	    !memmem(line + i, n - i, " (", 2)) {
		f->addr = addr;
		f->sym = (struct tok){line + i, 0};
		f->dso = (struct tok){line + i + 1, n - i - 2};
		f->has_dso = true;
		return true;
	}
	f->addr = addr;
	f->has_dso = false;
	for (close = n; close > i && line[close - 1] != ')'; close--)
		;
	if (close > i) {
		close--;
		for (open = close; open > i + 1; open--)
			if (line[open - 1] == '(' && line[open - 2] == ' ')
				break;
		if (open > i + 1) {
			f->sym = (struct tok){line + i, open - 2 - i};
			f->dso = (struct tok){line + open, close - open};
			f->has_dso = true;
			return f->sym.n > 0;
		}
	}
	f->sym = (struct tok){line + i, n - i};
	return true;
}

/* Drop a trailing "+0x1a2b" offset from a symbol. */
static struct tok strip_offset(struct tok s)
{
	size_t i = s.n;

	while (i > 0 && is_hex(s.s + i - 1, 1))
		i--;
	if (i >= 3 && i < s.n && s.s[i - 1] == 'x' && s.s[i - 2] == '0' &&
	    s.s[i - 3] == '+')
		s.n = i - 3;
	return s;
}

struct pl_ps_parser *pl_ps_new(struct pl_profile *p, const char *source)
{
	struct pl_ps_parser *ps = pl_xcalloc(1, sizeof(*ps));

	ps->p = p;
	ps->source = pl_xstrndup(source, strlen(source));
	pl_strtab_init(&ps->line_cache);
	pl_strtab_init(&ps->rec_cache);
	ps->last_rec = PL_NOID;
	return ps;
}

static enum pl_err body_resolve(struct pl_ps_parser *ps, struct pl_error *err);

/* The stack of the record's frames (leaf first as printed). */
static uint32_t record_stack(struct pl_ps_parser *ps, struct pl_error *err)
{
	PL_GROW(ps->rev, ps->rev_cap, ps->nframes);
	for (size_t i = 0; i < ps->nframes; i++)
		ps->rev[i] = ps->frames[ps->nframes - 1 - i];
	return pl_intern_stack(ps->p, ps->thread, ps->rev, (uint32_t)ps->nframes, err);
}

static size_t memo_slot(const struct pl_ps_parser *ps, uint64_t key)
{
	size_t j = (size_t)pl_mix_u64(key) & ps->memo_mask;

	while (ps->memo[j].stack1 && ps->memo[j].key != key)
		j = (j + 1) & ps->memo_mask;
	return j;
}

static void memo_grow(struct pl_ps_parser *ps)
{
	struct stack_memo *old = ps->memo;
	size_t old_mask = ps->memo_mask;

	ps->memo_mask = old_mask * 2 + 1;
	ps->memo = pl_xcalloc(ps->memo_mask + 1, sizeof(*ps->memo));
	pl_prefault(ps->memo, (ps->memo_mask + 1) * sizeof(*ps->memo));
	for (size_t i = 0; i <= old_mask; i++)
		if (old[i].stack1)
			ps->memo[memo_slot(ps, old[i].key)] = old[i];
	free(old);
}

/* A record whose frames are one record-cache entry's: its stack follows
 * from (entry, thread), so it is interned once per pair. */
static uint32_t memo_stack(struct pl_ps_parser *ps, struct pl_error *err)
{
	uint64_t key = (uint64_t)ps->rec_hit << 32 | ps->thread;
	size_t j;
	uint32_t stack;

	if (!ps->memo) {
		/* Records that repeat are many: start past the first doublings. */
		ps->memo_mask = 16383;
		ps->memo = pl_xcalloc(ps->memo_mask + 1, sizeof(*ps->memo));
	}
	j = memo_slot(ps, key);
	if (ps->memo[j].stack1)
		return ps->memo[j].stack1 - 1;
	if ((stack = record_stack(ps, err)) == PL_NOID)
		return PL_NOID;
	ps->memo[j] = (struct stack_memo){key, stack + 1};
	if (++ps->memo_count * 2 > ps->memo_mask)
		memo_grow(ps);
	return stack;
}

/* With mmap records in the input, the record's addresses become a site
 * for the caller check (profile.h, enum pl_edge). */
static void add_site(struct pl_ps_parser *ps, uint32_t stack)
{
	PL_GROW(ps->rev_pcs, ps->rev_pcs_cap, ps->nframes + 1);
	for (size_t i = 0; i < ps->nframes; i++)
		ps->rev_pcs[i] = ps->pcs[ps->nframes - 1 - i];
	pl_add_site(ps->p, stack, ps->event, ps->rev_pcs, (uint32_t)ps->nframes, ps->period);
}

static enum pl_err end_record(struct pl_ps_parser *ps, bool terminated,
			      struct pl_error *err)
{
	struct pl_profile *p = ps->p;
	uint32_t stack;
	enum pl_err rc;

	if (!ps->in_record)
		return PL_OK;
	if ((rc = body_resolve(ps, err)))
		return rc;
	ps->in_record = false;
	stack = ps->rec_hit != PL_NOID ? memo_stack(ps, err) : record_stack(ps, err);
	if (stack == PL_NOID)
		return err->code;
	pl_add_weight(p, stack, ps->event, ps->count, ps->period, ps->has_period);
	if (ps->has_time)
		pl_add_timed(p, stack, ps->event, ps->time_ns, ps->period);
	else
		pl_note_untimed(p);
	if (p->nmappings)
		add_site(ps, stack);
	p->records_parsed++;
	ps->records++;
	if (!terminated) {
		PL_GROW(p->tails, p->tails_cap, p->ntails + 1);
		p->tails[p->ntails++] = (struct pl_tail){stack, ps->event, ps->period};
	}
	if (p->records_parsed > p->limits.max_records)
		return pl_fail(err, PL_ERR_LIMIT, "raise --max-records, or record a shorter capture",
			       "more than %llu records", (unsigned long long)p->limits.max_records);
	return PL_OK;
}

/* perf prints a frame's inlined calls first, each with "(inlined)" where
 * the DSO goes, then the frame itself.  Once that frame comes, the ones
 * before it take its module as their DSO, the inlined flag kept apart
 * (pl_intern_func_inlined), so an inlined function is never filed under
 * a module called "inlined". */
static bool raw_inlined(const struct pl_profile *p, uint32_t frame)
{
	const struct pl_func *fn = &p->funcs[p->frames[frame].func];

	return fn->inlined && fn->dso != PL_NOID && strcmp(pl_str(p, fn->dso), "inlined") == 0;
}

/* One function under two names at one address: the same name twice, or
 * glibc's hidden alias __GI_X beside X (perf prints both for one frame,
 * which reads as recursion and counts the function twice). */
static bool same_function(const struct pl_profile *p, uint32_t fa, uint32_t fb)
{
	const char *a = pl_str(p, p->funcs[p->frames[fa].func].symbol);
	const char *b = pl_str(p, p->funcs[p->frames[fb].func].symbol);

	if (strncmp(a, "__GI_", 5) == 0)
		a += 5;
	if (strncmp(b, "__GI_", 5) == 0)
		b += 5;
	return strcmp(a, b) == 0;
}

/* Drop the inline frames of the run ending at the real frame (the last)
 * that repeat their neighbour toward it at the same address. */
static void drop_alias_frames(struct pl_ps_parser *ps, size_t start)
{
	size_t out = start;

	for (size_t i = start; i < ps->nframes; i++) {
		if (i + 1 < ps->nframes && ps->pcs[i] == ps->pcs[i + 1] && same_function(ps->p, ps->frames[i], ps->frames[i + 1]))
			continue;
		ps->frames[out] = ps->frames[i];
		ps->pcs[out++] = ps->pcs[i];
	}
	ps->nframes = out;
}

static enum pl_err settle_inlined(struct pl_ps_parser *ps, struct pl_error *err)
{
	struct pl_profile *p = ps->p;
	uint32_t last = ps->frames[ps->nframes - 1], dso = p->funcs[p->frames[last].func].dso;
	size_t start = ps->nframes - 1;

	if (raw_inlined(p, last))
		return PL_OK;
	while (start > 0 && raw_inlined(p, ps->frames[start - 1]))
		start--;
	drop_alias_frames(ps, start);
	last = ps->frames[ps->nframes - 1];
	for (size_t i = ps->nframes - 1; i-- > 0 && raw_inlined(p, ps->frames[i]);) {
		const struct pl_frame f = p->frames[ps->frames[i]];
		const struct pl_func *fn = &p->funcs[f.func];
		/* by the name as given: a mangled one is demangled again */
		uint32_t func = pl_intern_func_inlined(p, fn->linkage != PL_NOID ? fn->linkage : fn->symbol, dso);
		uint32_t id = pl_intern_frame(p, func, f.has_addr, f.addr, f.srcline, err);
		if (id == PL_NOID)
			return err->code;
		ps->frames[i] = id;
	}
	return PL_OK;
}

static enum pl_err push_frame(struct pl_ps_parser *ps, uint32_t frame, uint64_t pc,
			      struct pl_error *err)
{
	if (ps->nframes >= ps->p->limits.max_depth)
		return pl_fail(err, PL_ERR_LIMIT, "analyze a capture recorded with a smaller stack depth",
			       "a stack in '%s' is deeper than %u frames", ps->source,
			       ps->p->limits.max_depth);
	if (ps->nframes >= ps->frames_cap) {
		PL_GROW(ps->frames, ps->frames_cap, ps->nframes + 1);
		ps->pcs = pl_xrealloc(ps->pcs, ps->frames_cap * sizeof(uint64_t));
	}
	ps->pcs[ps->nframes] = pc;
	ps->frames[ps->nframes++] = frame;
	ps->last_was_frame = true;
	ps->rec_hit = PL_NOID;
	return ps->nframes > 1 && raw_inlined(ps->p, ps->frames[ps->nframes - 2]) ?
	       settle_inlined(ps, err) : PL_OK;
}

static uint32_t intern_frame_text(struct pl_ps_parser *ps, const struct frame_text *f,
				  struct pl_error *err)
{
	struct pl_profile *p = ps->p;
	struct tok sym = strip_offset(f->sym);
	uint32_t sym_id = pl_intern_str(p, sym.s, sym.n);
	uint32_t dso_id = f->has_dso ? pl_intern_str(p, f->dso.s, f->dso.n) : PL_NOID;
	uint32_t func = pl_intern_func(p, sym_id, dso_id);

	return pl_intern_frame(p, func, p->funcs[func].unknown || p->keep_addrs, f->addr,
			       PL_NOID, err);
}

static enum pl_err add_frame(struct pl_ps_parser *ps, const struct frame_text *f,
			     struct pl_error *err)
{
	uint32_t frame = intern_frame_text(ps, f, err);

	return frame == PL_NOID ? err->code : push_frame(ps, frame, f->addr, err);
}

/* An indented frame line, through the line cache. */
static enum pl_err add_frame_line(struct pl_ps_parser *ps, const char *line,
				  size_t n, const struct frame_text *f,
				  struct pl_error *err)
{
	uint32_t frame = intern_frame_text(ps, f, err);
	size_t before = ps->line_cache.count;
	uint32_t idx;

	if (frame == PL_NOID)
		return err->code;
	if (before < LINE_CACHE_MAX) {
		idx = pl_strtab_intern(&ps->line_cache, line, n);
		if (ps->line_cache.count > ps->line_frame_cap) {
			PL_GROW(ps->line_frame, ps->line_frame_cap, ps->line_cache.count);
			ps->line_pc = pl_xrealloc(ps->line_pc, ps->line_frame_cap * sizeof(uint64_t));
		}
		ps->line_frame[idx] = frame;
		ps->line_pc[idx] = f->addr;
	}
	return push_frame(ps, frame, f->addr, err);
}

/* Re-intern the last frame with its source line attached. */
static enum pl_err add_srcline(struct pl_ps_parser *ps, const char *line,
			       size_t n, struct pl_error *err)
{
	struct pl_profile *p = ps->p;
	uint32_t last = ps->frames[ps->nframes - 1];
	const struct pl_frame *f = &p->frames[last];
	uint32_t src, frame;

	while (n > 0 && is_space(*line))
		line++, n--;
	while (n > 0 && is_space(line[n - 1]))
		n--;
	src = pl_intern_str(p, line, n);
	frame = pl_intern_frame(p, f->func, f->has_addr, f->addr, src, err);
	if (frame == PL_NOID)
		return err->code;
	ps->frames[ps->nframes - 1] = frame;
	ps->last_was_frame = false;
	ps->rec_hit = PL_NOID;
	p->srclines++;
	return PL_OK;
}

/* ------------------------------------------------------ tracepoints */

/* A sched:* sample also feeds the per-task scheduling table (sched.h):
 * its tracepoint text is what follows the event, up to the frame perf
 * prints after it when there is no call chain. */
static void tracepoint_sample(struct pl_profile *p, const struct header *h, uint32_t comm)
{
	pl_sched_note(p, h->event.s, h->event.n, h->pid, h->tid, comm, h->time_ns,
		      h->trailing, h->trailing_n);
}

/* collect_profile's off-CPU records sum many waits of one stack: the
 * header says how many ("... NS offcpu-time: waits=N"), and the record
 * counts as that many samples (perf's own sched_switch samples, one per
 * wait).  The event is then marked as counting waits. */
static void record_waits(struct pl_ps_parser *ps, const struct header *h)
{
	const char *s = h->trailing, *end = h->trailing + h->trailing_n;
	uint64_t n = 0;
	size_t digits = 0;

	while (s < end && is_space(*s))
		s++;
	if ((size_t)(end - s) < 7 || memcmp(s, "waits=", 6) != 0)
		return;
	for (s += 6; s < end && *s >= '0' && *s <= '9' && digits < 19; s++, digits++)
		n = n * 10 + (uint64_t)(*s - '0');
	if (!digits || n == 0 || (s < end && !is_space(*s)))
		return;
	ps->count = n;
	pl_set_event_counts_waits(ps->p, ps->p->events[ps->event].name);
}

/* The frame on a header line: "ADDR SYM (DSO)" right after the event, or
 * after a tracepoint's "key=value ..." text.  That text's tokens are not
 * bare hex numbers, except words of a comm with spaces ("prev_comm=be
 * quiet"): past the first token an address needs 4 digits at least, as
 * perf prints every address but 0. */
static bool trailing_frame(const char *s, size_t n, struct frame_text *f)
{
	size_t i = 0;
	bool first = true;

	while (i < n) {
		size_t start, end;
		while (i < n && is_space(s[i]))
			i++;
		start = i;
		while (i < n && !is_space(s[i]))
			i++;
		end = i;
		if (end > start && is_hex(s + start, end - start) && (first || end - start >= 4) &&
		    parse_frame(s + start, n - start, f) && f->has_dso)
			return true;
		first = false;
	}
	return false;
}

/* An indented line that is the next header (perf right-aligns the comm
 * of records without a call chain) or side-band line, never a frame:
 * asked of what follows a record whose frame was on its header, and of
 * the first indented line after any header (a frame never parses as a
 * header, which needs a time after a pid/tid). */
static bool indented_record_start(const char *line, size_t n)
{
	struct header h;

	return memmem(line, n, ": PERF_RECORD_", 14) || parse_header(line, n, &h);
}

/* ------------------------------------------------------------ records */

static enum pl_err start_record(struct pl_ps_parser *ps, const struct header *h,
				struct pl_error *err)
{
	struct pl_profile *p = ps->p;
	struct frame_text f;
	uint32_t comm = pl_intern_str(p, h->comm.s, h->comm.n);

	ps->thread = pl_intern_thread(p, h->pid, h->tid, comm);
	ps->event = pl_intern_event(p, h->event.s, h->event.n);
	ps->has_period = h->has_period;
	ps->period = h->has_period ? h->period : 1;
	ps->has_time = h->has_time;
	ps->time_ns = h->time_ns;
	ps->count = 1;
	if (pl_event_is_offcpu_time(pl_str(p, p->events[ps->event].name)))
		record_waits(ps, h);
	ps->nframes = 0;
	ps->rec_hit = PL_NOID;
	ps->in_record = true;
	ps->skipping = false;
	ps->last_was_frame = false;
	ps->header_frame = false;
	if (h->has_time && h->event.n > 6 && memcmp(h->event.s, "sched:", 6) == 0)
		tracepoint_sample(p, h, comm);
	/* Without -g, perf prints the one frame on the header line, after a
	 * tracepoint's text when there is one. */
	if (h->trailing_n && trailing_frame(h->trailing, h->trailing_n, &f)) {
		ps->header_frame = true;
		return add_frame(ps, &f, err);
	}
	return PL_OK;
}

/* The perf stat block in progress, done: into the profile's stats. */
static void finish_stat(struct pl_ps_parser *ps)
{
	struct pl_profile *p = ps->p;
	struct pl_stat_block *b = pl_stat_parser_finish(ps->stat);

	ps->stat = NULL;
	ps->stat_elapsed = false;
	PL_GROW(p->stats, p->stats_cap, p->nstats + 1);
	p->stats[p->nstats++] = b;
}

/* After "seconds time elapsed": a line that still belongs to the block. */
static bool stat_tail_line(const char *line, size_t n)
{
	size_t i = 0;

	while (i < n && is_space(line[i]))
		i++;
	return i == n || memmem(line, n, "seconds user", 12) || memmem(line, n, "seconds sys", 11);
}

static enum pl_err stat_line(struct pl_ps_parser *ps, const char *line,
			     size_t n, struct pl_error *err)
{
	if (!ps->stat)
		ps->stat = pl_stat_parser_new(ps->source);
	return pl_stat_parser_line(ps->stat, line, n, err);
}

/* An indented line inside a record: a frame (through the line cache), the
 * srcline of the frame before it, or malformed. */
static enum pl_err frame_line(struct pl_ps_parser *ps, const char *line, size_t n,
			      uint64_t line_no, struct pl_error *err)
{
	struct frame_text f;
	size_t i = 0, end = n;
	uint32_t hit;

	while (i < n && is_space(line[i]))
		i++;
	while (end > i && is_space(line[end - 1]))
		end--;
	hit = pl_strtab_find(&ps->line_cache, line + i, end - i);
	if (hit != PL_NOID)
		return push_frame(ps, ps->line_frame[hit], ps->line_pc[hit], err);
	if (parse_frame(line, n, &f))
		return add_frame_line(ps, line + i, end - i, &f, err);
	if (ps->last_was_frame)
		return add_srcline(ps, line, n, err);
	pl_note_malformed(ps->p, line_no, "unrecognized frame line", line, n);
	return PL_OK;
}

/* Keep an indented line of the record for body_resolve (the lines of a
 * body are consecutive, so the first one's number gives the others'). */
static void body_add(struct pl_ps_parser *ps, const char *line, size_t n,
		     uint64_t line_no)
{
	if (!ps->body.len)
		ps->body_first = line_no;
	pl_buf_add(&ps->body, line, n);
	pl_buf_addc(&ps->body, '\n');
}

/* Run the kept lines through frame_line, in order; `clean` says whether
 * each gave exactly one frame (no srcline, nothing malformed). */
static enum pl_err body_replay(struct pl_ps_parser *ps, const char *s, size_t len,
			       bool *clean, struct pl_error *err)
{
	const char *end = s + len;
	uint64_t line_no = ps->body_first;
	enum pl_err rc;

	*clean = true;
	while (s < end) {
		const char *nl = memchr(s, '\n', (size_t)(end - s));
		size_t before = ps->nframes;
		if ((rc = frame_line(ps, s, (size_t)(nl - s), line_no++, err)))
			return rc;
		*clean &= ps->nframes == before + 1;
		s = nl + 1;
	}
	return PL_OK;
}

/* Remember the frames a clean body gave, while the cache has room;
 * returns its entry, or PL_NOID. */
static uint32_t body_remember(struct pl_ps_parser *ps, const char *body, size_t len,
			      uint64_t h, size_t first)
{
	size_t before = ps->rec_cache.count, depth = ps->nframes - first;
	uint32_t idx, lines = 0;

	if (ps->rec_cache.bytes + len > RECORD_CACHE_BYTES)
		return PL_NOID;
	idx = pl_strtab_intern_h(&ps->rec_cache, body, len, h);
	if (ps->rec_cache.count == before)
		return PL_NOID;
	if (idx >= ps->rec_cap) {
		pl_grow((void **)&ps->rec_start, &ps->rec_cap, idx + 1, sizeof(uint32_t));
		ps->rec_depth = pl_xrealloc(ps->rec_depth, ps->rec_cap * sizeof(uint32_t));
		ps->rec_lines = pl_xrealloc(ps->rec_lines, ps->rec_cap * sizeof(uint32_t));
		ps->rec_next = pl_xrealloc(ps->rec_next, ps->rec_cap * sizeof(uint32_t));
	}
	for (const char *q = body; (q = memchr(q, '\n', (size_t)(body + len - q))); q++)
		lines++;
	if (ps->nrec_frames + depth > ps->rec_frames_cap) {
		PL_GROW(ps->rec_frames, ps->rec_frames_cap, ps->nrec_frames + depth);
		ps->rec_pcs = pl_xrealloc(ps->rec_pcs, ps->rec_frames_cap * sizeof(uint64_t));
	}
	ps->rec_start[idx] = (uint32_t)ps->nrec_frames;
	ps->rec_depth[idx] = (uint32_t)depth;
	ps->rec_lines[idx] = lines;
	ps->rec_next[idx] = PL_NOID;
	memcpy(ps->rec_frames + ps->nrec_frames, ps->frames + first, depth * sizeof(uint32_t));
	memcpy(ps->rec_pcs + ps->nrec_frames, ps->pcs + first, depth * sizeof(uint64_t));
	ps->nrec_frames += depth;
	return idx;
}

/* The record's frames are a cached entry's. */
static enum pl_err take_cached(struct pl_ps_parser *ps, uint32_t idx, struct pl_error *err)
{
	const uint32_t *fr = ps->rec_frames + ps->rec_start[idx];
	const uint64_t *pcs = ps->rec_pcs + ps->rec_start[idx];
	size_t first = ps->nframes, depth = ps->rec_depth[idx];
	enum pl_err rc = PL_OK;

	/* The common case in one copy: no frame before them, within the
	 * depth limit.  A cached record's frames were settled when it was
	 * cached (settle_inlined), so pushing them one by one would change
	 * none; with frames before them, the first may settle those. */
	if (first == 0 && depth > 0 && depth < ps->p->limits.max_depth) {
		if (depth > ps->frames_cap) {
			PL_GROW(ps->frames, ps->frames_cap, depth);
			ps->pcs = pl_xrealloc(ps->pcs, ps->frames_cap * sizeof(uint64_t));
		}
		memcpy(ps->frames, fr, depth * sizeof(*fr));
		memcpy(ps->pcs, pcs, depth * sizeof(*pcs));
		ps->nframes = depth;
		ps->last_was_frame = true;
	} else {
		for (uint32_t d = 0; d < depth && !rc; d++)
			rc = push_frame(ps, fr[d], pcs[d], err);
	}
	if (first == 0)
		ps->rec_hit = idx;
	return rc;
}

/* Remember which entry came after the last record's, for pl_ps_body's
 * guess. */
static void note_order(struct pl_ps_parser *ps, uint32_t idx)
{
	if (ps->last_rec != PL_NOID && idx != PL_NOID)
		ps->rec_next[ps->last_rec] = idx;
	ps->last_rec = idx;
}

/* A record's indented lines, all there (`body`, each line + '\n', the
 * first numbered ps->body_first): take their frames from the record cache,
 * or run them one by one (and cache them when clean). */
static enum pl_err body_take(struct pl_ps_parser *ps, const char *body, size_t len,
			     struct pl_error *err)
{
	size_t first = ps->nframes;
	uint64_t h = pl_strtab_hash(body, len);
	uint32_t idx = pl_strtab_find_h(&ps->rec_cache, body, len, h);
	bool clean;
	enum pl_err rc = PL_OK;

	if (idx != PL_NOID)
		rc = take_cached(ps, idx, err);
	else if (!(rc = body_replay(ps, body, len, &clean, err)) && clean)
		idx = body_remember(ps, body, len, h, first);
	note_order(ps, idx);
	return rc;
}

/* The kept lines of the record, when the line after them came. */
static enum pl_err body_resolve(struct pl_ps_parser *ps, struct pl_error *err)
{
	enum pl_err rc;

	if (!ps->body.len)
		return PL_OK;
	rc = body_take(ps, ps->body.data, ps->body.len, err);
	pl_buf_reset(&ps->body);
	return rc;
}

/* What a complete line is to an open record: one of its frame lines
 * (indented, something after the indentation), the end of them, or one
 * for pl_ps_line to judge (it ends in '\r', which pl_ps_line never sees). */
enum body_kind { BODY_LINE, BODY_END, BODY_ASK };

static enum body_kind body_kind(const char *line, size_t n)
{
	size_t i = 0;

	if (n && line[n - 1] == '\r')
		return BODY_ASK;
	while (i < n && is_space(line[i]))
		i++;
	return i > 0 && i < n ? BODY_LINE : BODY_END;
}

/* Records often come in the order they came before (a capture repeated,
 * a loop sampled): the entry that followed the last record's entry last
 * time is tried first, by comparing bytes, which saves scanning the lines
 * and hashing them.  Its length when `text` starts with exactly its text
 * (the line after it ends the frame lines), else 0. */
static size_t body_guess(const struct pl_ps_parser *ps, const char *text, size_t n,
			 uint64_t max_line)
{
	uint32_t idx;
	size_t len;
	const char *rest, *nl;

	if (ps->last_rec == PL_NOID || (idx = ps->rec_next[ps->last_rec]) == PL_NOID)
		return 0;
	len = ps->rec_cache.lens[idx];
	if (len >= n || memcmp(text, pl_strtab_get(&ps->rec_cache, idx), len) != 0)
		return 0;
	rest = text + len;
	nl = memchr(rest, '\n', n - len);
	if (!nl || (size_t)(nl - rest) > max_line ||
	    body_kind(rest, (size_t)(nl - rest)) != BODY_END)
		return 0;
	return len;
}

size_t pl_ps_body(struct pl_ps_parser *ps, const char *text, size_t n, uint64_t line_no,
		  uint64_t max_line, uint64_t *nlines, enum pl_err *rc, struct pl_error *err)
{
	size_t pos = 0;
	bool complete = false;

	*nlines = 0;
	*rc = PL_OK;
	/* A record whose frame was on its header has no body: what is
	 * indented after it is the next header (pl_ps_line tells). */
	if (!ps->in_record || ps->stat || ps->body.len || ps->header_frame)
		return 0;
	if ((pos = body_guess(ps, text, n, max_line))) {
		uint32_t idx = ps->rec_next[ps->last_rec];
		*nlines = ps->rec_lines[idx];
		ps->p->lines += *nlines;
		ps->body_first = line_no;
		*rc = take_cached(ps, idx, err);
		note_order(ps, idx);
		return pos;
	}
	/* A record without a call chain whose frame was not read off its
	 * header: the next header follows, indented. */
	const char *first_nl = memchr(text, '\n', n);
	if (first_nl && indented_record_start(text, (size_t)(first_nl - text)))
		return 0;
	while (pos < n) {
		const char *nl = memchr(text + pos, '\n', n - pos);
		size_t len = nl ? (size_t)(nl - text) - pos : 0;
		enum body_kind kind;
		if (!nl || len > max_line)
			break;
		if ((kind = body_kind(text + pos, len)) != BODY_LINE) {
			complete = kind == BODY_END;
			break;
		}
		pos += len + 1;
		++*nlines;
	}
	if (!pos)
		return 0;
	ps->p->lines += *nlines;
	ps->body_first = line_no;
	if (complete)
		*rc = body_take(ps, text, pos, err);
	else
		pl_buf_add(&ps->body, text, pos);
	return pos;
}

/* MMAP2's " MAJ:MIN INO GEN]" after the offset: the file mapped, which
 * a local file must be to stand for it when no build-id is recorded. */
static void mapping_file(struct pl_mapping *m, const char *s)
{
	char *e;

	m->has_file_id = false;
	if (*s++ != ' ')
		return;
	m->dev_major = (uint32_t)strtoul(s, &e, 16);
	if (e == s || *e != ':')
		return;
	s = e + 1;
	m->dev_minor = (uint32_t)strtoul(s, &e, 16);
	if (e == s || *e != ' ')
		return;
	s = e + 1;
	m->ino = strtoull(s, &e, 10);
	m->has_file_id = e != s && *e == ' ' && m->ino != 0;
}

/* "... PERF_RECORD_MMAP2 PID/TID: [0xSTART(0xLEN) @ 0xPGOFF ...]: PROT PATH"
 * (MMAP: "[0xSTART(0xLEN) @ 0xPGOFF]: PROT PATH"). */
static void sideband_mmap(struct pl_profile *p, const char *rec, const char *end)
{
	const char *q = rec, *path;
	struct pl_mapping m;
	char *e;

	while (q < end && *q != ' ')
		q++;
	m.pid = strtoll(q, &e, 10);
	if (e == q || (q = memchr(e, '[', (size_t)(end - e))) == NULL)
		return;
	m.start = strtoull(q + 1, &e, 16);
	if (*e != '(')
		return;
	m.len = strtoull(e + 1, &e, 16);
	if (strncmp(e, ") @ ", 4) != 0)
		return;
	m.pgoff = strtoull(e + 4, &e, 16);
	mapping_file(&m, e);
	if (!(q = memmem(e, (size_t)(end - e), "]: ", 3)))
		return;
	/* PROT, then the path (which may hold spaces). */
	path = memchr(q + 3, ' ', (size_t)(end - q - 3));
	if (!path || path + 1 >= end || m.len == 0)
		return;
	path++;
	if (p->nmappings == PL_MAX_MAPPINGS) {
		p->mappings_dropped++;
		return;
	}
	m.path = pl_intern_str(p, path, (size_t)(end - path));
	PL_GROW(p->mappings, p->mappings_cap, p->nmappings + 1);
	p->mappings[p->nmappings++] = m;
}

/* A side-band line: true when `line` is one (and it was taken). */
static bool sideband_line(struct pl_profile *p, const char *line, size_t n)
{
	const char *rec = n > 40 ? memmem(line, n, ": PERF_RECORD_", 14) : NULL;
	const char *end = line + n;

	if (!rec)
		return false;
	rec += 2;
	p->sideband_records++;
	if ((size_t)(end - rec) > 16 && (memcmp(rec, "PERF_RECORD_MMAP ", 17) == 0 ||
					 memcmp(rec, "PERF_RECORD_MMAP2 ", 18) == 0))
		sideband_mmap(p, rec, end);
	return true;
}

/* perf script --header: "# event : name = NAME, , id = {...}, ...,
 * sample_type = IP|TID|CALLCHAIN..., ..." says how NAME was unwound. */
static void event_attr_line(struct pl_profile *p, const char *line, size_t n)
{
	static const char head[] = "# event : name = ";
	const char *name = line + sizeof(head) - 1, *end;

	if (n < sizeof(head) || memcmp(line, head, sizeof(head) - 1) != 0 ||
	    !(end = memchr(name, ',', n - (size_t)(name - line))) || end == name)
		return;
	pl_note_event_attr(p, name, (size_t)(end - name), end, n - (size_t)(end - line));
}

/* A "#" line: an event's attributes (perf script --header), the start
 * of perf stat's output, or a comment, skipped. */
static enum pl_err comment_line(struct pl_ps_parser *ps, const char *line, size_t n, struct pl_error *err)
{
	event_attr_line(ps->p, line, n);
	if (n >= sizeof(STAT_MARKER) - 1 && memcmp(line, STAT_MARKER, sizeof(STAT_MARKER) - 1) == 0) {
		enum pl_err rc = end_record(ps, true, err);
		ps->stat = pl_stat_parser_new(ps->source);
		return rc;
	}
	ps->p->records_skipped++;
	return PL_OK;
}

/* A line of perf stat's output (appended after perf script's): true when
 * it was, and *rc is its result. */
static bool stat_output_line(struct pl_ps_parser *ps, const char *line, size_t n, enum pl_err *rc,
			     struct pl_error *err)
{
	if (!ps->stat)
		return false;
	if (!ps->stat_elapsed || stat_tail_line(line, n)) {
		if (memmem(line, n, "seconds time elapsed", 20))
			ps->stat_elapsed = true;
		*rc = stat_line(ps, line, n, err);
		return true;
	}
	finish_stat(ps);
	return false;
}

enum pl_err pl_ps_line(struct pl_ps_parser *ps, const char *line, size_t n,
		       uint64_t line_no, struct pl_error *err)
{
	struct pl_profile *p = ps->p;
	struct header h;
	struct frame_text f;
	size_t i = 0;
	enum pl_err rc;

	p->lines++;
	if (stat_output_line(ps, line, n, &rc, err))
		return rc;
	while (i < n && is_space(line[i]))
		i++;
	/* Indented lines of a record wait for the end of the record. */
	bool no_body = ps->header_frame || ps->body.len == 0;
	if (ps->in_record && i > 0 && i < n && !(no_body && indented_record_start(line, n))) {
		body_add(ps, line, n, line_no);
		return PL_OK;
	}
	if ((rc = body_resolve(ps, err)))
		return rc;
	if (i == n) {
		ps->skipping = false;
		return end_record(ps, true, err);
	}
	if (line[0] == '#')
		return comment_line(ps, line, n, err);
	/* Headers start the line, except those of records without a call
	 * chain, which perf right-aligns. */
	bool may_head = i == 0 || !ps->in_record || no_body;
	if (may_head && sideband_line(p, line, n)) {
		ps->skipping = false;
		return end_record(ps, true, err);
	}
	if (may_head && parse_header(line, n, &h)) {
		rc = end_record(ps, true, err);
		return rc ? rc : start_record(ps, &h, err);
	}
	if (ps->skipping) {
		p->records_skipped++;
		return PL_OK;
	}
	if (ps->in_record && parse_frame(line, n, &f) && f.has_dso)
		return add_frame(ps, &f, err);
	/* A line we cannot place: if it looks like a header, its frames
	 * would be orphans, so skip them with it. */
	pl_note_malformed(p, line_no, ps->in_record ? "unrecognized frame line" :
			  "unrecognized sample header", line, n);
	if (!ps->in_record && i == 0)
		ps->skipping = true;
	return PL_OK;
}

enum pl_err pl_ps_finish(struct pl_ps_parser *ps, struct pl_error *err)
{
	enum pl_err rc = end_record(ps, false, err);

	if (ps->stat)
		finish_stat(ps);
	free(ps->frames);
	free(ps->rev);
	free(ps->source);
	pl_strtab_release(&ps->line_cache);
	free(ps->line_frame);
	free(ps->line_pc);
	free(ps->pcs);
	free(ps->rev_pcs);
	pl_buf_release(&ps->body);
	pl_strtab_release(&ps->rec_cache);
	free(ps->rec_start);
	free(ps->rec_depth);
	free(ps->rec_lines);
	free(ps->rec_next);
	free(ps->rec_frames);
	free(ps->rec_pcs);
	free(ps->memo);
	free(ps);
	return rc;
}
