/* offcpu.c - off-CPU time per task and stack, from sched_switch records.
 *
 * sched:sched_switch fires in the context of the task leaving the CPU, so
 * its call chain is where that task blocked, and prev_state says how (S
 * sleeping, D uninterruptible, R preempted, ...).  The same task's next
 * switch-in (next_pid, on any CPU: the recording is system-wide) ends the
 * blocked interval; any later event of the task bounds it when the
 * switch-in was lost.  Tasks are those of the target: the executable's
 * exec, its forks and their threads, or the attached pid's threads.
 *
 * The output, offcpu.txt, is `perf script` text of one event,
 * "offcpu-time" (the name perf record --off-cpu gives the same thing),
 * whose period is blocked time in nanoseconds (unit "ns").  There is one
 * record per (comm, pid, tid, state, stack), aggregated as perf's own
 * off-CPU recording does, its header saying how many waits it sums
 * ("waits=N", where a tracepoint's fields go: the analysis counts the
 * record as N samples, one per sched_switch as perf counts them), and
 * with DWARF stacks a "# event :" line as perf script --header prints it
 * says how many stack bytes each switch copied; with the task state as the leaf pseudo-frame
 * "[state S]" above __schedule, so a self view reads "blocked in state S"
 * and the threads keep their pid, tid and comm.  Records are sorted by
 * their text: the same recording gives the same bytes.  Nothing is lost
 * silently: intervals still open when the recording ended, switches of
 * other tasks and frames past the cap are counted in the metadata.
 * A task switched out runnable (state R: preempted) waits for a CPU; the
 * task switched in instead is kept with the time the preempted one
 * waited (metadata off_cpu.ran_instead: which tasks, the target's own or
 * others, took the CPU).
 * Who woke each wait: sched:sched_waking (recorded without stacks) fires
 * in the waker's context, naming the woken task; the last waking of a
 * waiting task before it runs again is its waker, kept per (waiter,
 * waker) with the waits and blocked time (metadata off_cpu.woken_by).  A
 * mutex's waiter is woken by the thread that unlocks it, the holder; a
 * timer or an I/O completion wakes from an interrupt, in the context of
 * whatever task it found running.
 * DWARF stacks: perf 6.1's unwinder stops at the first user frame (the
 * libc syscall wrapper) of every blocked task in about half of the
 * system-wide recordings made here, deterministically for a given
 * address-space layout, though the stack copy holds the caller's return
 * address.  The same samples are unwound by PerfLens's own reader
 * (env->user_chain), and where its user chain is the longer one it
 * replaces perf's user frames; the metadata counts both
 * (user_chains.perf, user_chains.perflens_deeper).
 */
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "coll_int.h"
#include "base/util.h"

#define MAX_TRACKED 65536
#define MAX_FRAMES 512
#define OFFCPU_EVENT "offcpu-time"

struct pending {
	int64_t tid;
	uint64_t t0;         /* ns */
	uint32_t key;        /* the record text, in `keys` */
	uint32_t ran;        /* runnable (state R): the task switched in, in
			      * `ran_names`; UINT32_MAX otherwise */
	uint32_t woke;       /* the last waking seen, in `woke_pairs`; UINT32_MAX none */
};

#define RAN_TOP 10       /* tasks listed in off_cpu.ran_instead */
#define WOKE_TOP 12      /* (waiter, waker) pairs listed in off_cpu.woken_by */

struct offcpu {
	int64_t root_pid;    /* the attached pid, or the target's exec'd pid */
	const char *exe_comm;/* the executable's comm (15 bytes), to find its exec */
	int64_t *tracked;
	size_t ntracked, tracked_cap;
	struct pending *pend;
	size_t npend, pend_cap;
	struct pl_strtab keys;  /* "COMM PID/TID\x1fSTATE\x1fFRAMES" */
	uint64_t *ns;           /* per key */
	size_t ns_cap;
	uint64_t *waits;        /* per key: the blocked intervals its ns sums */
	size_t waits_cap;
	uint64_t intervals, blocked_ns, untracked_switches, frames_cut, tracked_full, task_exits;
	uint64_t comms_from_switch;  /* tasks perf named ":TID", named by prev_comm */
	/* runnable waits, by the task that took the CPU ("COMM\x1fown") */
	struct pl_strtab ran_names;
	uint64_t *ran_ns, *ran_waits;
	size_t ran_cap;
	uint64_t runnable_ns;
	/* wakings of waits: "WAITER COMM/TID\x1fWAKER COMM/TID\x1fOWN" */
	struct pl_strtab woke_pairs;
	uint64_t *woke_ns, *woke_waits;
	size_t woke_cap;
	uint64_t wakings;
	/* the switch being read */
	bool in_switch;
	int64_t pid, prev_tid, next_tid;
	uint64_t t;
	char state[16];
	char next_comm[64];
	struct pl_buf comm;
	struct pl_buf frames;   /* "\tADDR SYM (DSO)\n" lines, leaf first */
	size_t nframes;
	size_t user_from;       /* offset in `frames` of the first user frame */
	size_t nuser;           /* user frames in `frames` */
	/* the collection's own unwinder (pl_collect_env's user_chain) */
	const struct pl_collect_env *env;
	struct pl_user_chains *chains;
	uint32_t dwarf_stack;   /* DWARF stacks: bytes copied per switch; 0: fp */
	struct pl_buf native;
	uint64_t chains_perf, chains_deeper;
};

static bool tracked(const struct offcpu *o, int64_t id)
{
	for (size_t i = 0; i < o->ntracked; i++)
		if (o->tracked[i] == id)
			return true;
	return false;
}

static void track(struct offcpu *o, int64_t id)
{
	if (tracked(o, id))
		return;
	if (o->ntracked == MAX_TRACKED) {
		o->tracked_full++;
		return;
	}
	PL_GROW(o->tracked, o->tracked_cap, o->ntracked + 1);
	o->tracked[o->ntracked++] = id;
}

/* "key=value" of a tracepoint's text. */
static bool field(const char *text, const char *key, char *out, size_t cap)
{
	const char *p = text;
	size_t n = 0, nk = strlen(key);

	while ((p = strstr(p, key)) && p != text && p[-1] != ' ')
		p += nk;
	if (!p)
		return false;
	p += nk;
	while (p[n] && p[n] != ' ' && n + 1 < cap)
		n++;
	memcpy(out, p, n);
	out[n] = '\0';
	return n > 0;
}

static bool field_int(const char *text, const char *key, int64_t *v)
{
	char buf[32];

	if (!field(text, key, buf, sizeof(buf)))
		return false;
	*v = strtoll(buf, NULL, 10);
	return true;
}

/* "812.424498161:" -> ns (perf script --ns prints nine digits). */
static bool parse_time(const char *s, size_t n, uint64_t *ns)
{
	uint64_t sec = 0, frac = 0;
	size_t i = 0, digits = 0;

	if (n < 4 || s[n - 1] != ':')
		return false;
	for (; i < n - 1 && s[i] >= '0' && s[i] <= '9'; i++)
		sec = sec * 10 + (uint64_t)(s[i] - '0');
	if (i == 0 || i >= n - 1 || s[i++] != '.')
		return false;
	for (; i < n - 1 && s[i] >= '0' && s[i] <= '9'; i++, digits++)
		if (digits < 9)
			frac = frac * 10 + (uint64_t)(s[i] - '0');
	if (i != n - 1 || digits == 0)
		return false;
	for (; digits < 9; digits++)
		frac *= 10;
	*ns = sec * 1000000000ull + frac;
	return true;
}

struct head {
	const char *comm;
	size_t comm_n;
	int64_t pid, tid;
	uint64_t t;
	const char *rest;    /* after "TIME: " */
};

/* "COMM PID/TID TIME: REST": the first PID/TID token followed by a time
 * anchors it, so a comm may hold spaces and digits. */
static bool parse_head(const char *line, struct head *h)
{
	for (const char *p = strchr(line, ' '); p; p = strchr(p + 1, ' ')) {
		const char *tok = p + 1, *tt;
		long long pid, tid;
		int used = 0;

		while (*tok == ' ')
			tok++;
		if (sscanf(tok, "%lld/%lld%n", &pid, &tid, &used) != 2 || tok[used] != ' ')
			continue;
		for (tt = tok + used; *tt == ' '; tt++)
			;
		const char *end = strchr(tt, ' ');
		if (!end || !parse_time(tt, (size_t)(end - tt), &h->t))
			continue;
		h->comm = line;
		for (h->comm_n = (size_t)(p - line); h->comm_n && line[h->comm_n - 1] == ' ';)
			h->comm_n--;
		h->pid = pid;
		h->tid = tid;
		h->rest = end + 1;
		return true;
	}
	return false;
}

/* Task `tid` runs again at `t`: its blocked interval, if one is open,
 * ends there. */
static void runs_again(struct offcpu *o, int64_t tid, uint64_t t)
{
	for (size_t i = 0; i < o->npend; i++)
		if (o->pend[i].tid == tid) {
			uint64_t dt = t > o->pend[i].t0 ? t - o->pend[i].t0 : 0;
			o->ns[o->pend[i].key] += dt;
			o->waits[o->pend[i].key]++;
			o->blocked_ns += dt;
			o->intervals++;
			if (o->pend[i].woke != UINT32_MAX) {
				o->woke_ns[o->pend[i].woke] += dt;
				o->woke_waits[o->pend[i].woke]++;
			}
			if (o->pend[i].ran != UINT32_MAX) {
				o->ran_ns[o->pend[i].ran] += dt;
				o->ran_waits[o->pend[i].ran]++;
				o->runnable_ns += dt;
			}
			o->pend[i] = o->pend[--o->npend];
			return;
		}
}

/* The record text of the switch just read. */
static uint32_t record_key(struct offcpu *o)
{
	struct pl_buf b = {0};
	uint32_t id;

	pl_buf_add(&b, o->comm.data, o->comm.len);
	pl_buf_addf(&b, " %lld/%lld\x1f%s\x1f", (long long)o->pid, (long long)o->prev_tid, o->state);
	pl_buf_add(&b, o->frames.data, o->frames.len);
	id = pl_strtab_intern(&o->keys, b.data, b.len);
	if (o->keys.count > o->ns_cap) {
		size_t old = o->ns_cap;
		PL_GROW(o->ns, o->ns_cap, o->keys.count);
		memset(o->ns + old, 0, (o->ns_cap - old) * sizeof(*o->ns));
	}
	if (o->keys.count > o->waits_cap) {
		size_t old = o->waits_cap;
		PL_GROW(o->waits, o->waits_cap, o->keys.count);
		memset(o->waits + old, 0, (o->waits_cap - old) * sizeof(*o->waits));
	}
	pl_buf_release(&b);
	return id;
}

/* The task switched in when a tracked task was preempted: its comm,
 * and whether it is one of the target's own tasks. */
static uint32_t ran_key(struct offcpu *o)
{
	struct pl_buf b = {0};
	uint32_t id;

	pl_buf_adds(&b, o->next_comm[0] ? o->next_comm : "?");
	pl_buf_adds(&b, tracked(o, o->next_tid) ? "\x1f" "1" : "\x1f" "0");
	id = pl_strtab_intern(&o->ran_names, b.data, b.len);
	if (o->ran_names.count > o->ran_cap) {
		size_t old = o->ran_cap, cap = o->ran_cap;
		PL_GROW(o->ran_ns, cap, o->ran_names.count);
		PL_GROW(o->ran_waits, o->ran_cap, o->ran_names.count);
		memset(o->ran_ns + old, 0, (o->ran_cap - old) * sizeof(*o->ran_ns));
		memset(o->ran_waits + old, 0, (o->ran_cap - old) * sizeof(*o->ran_waits));
	}
	pl_buf_release(&b);
	return id;
}

/* Where PerfLens's own unwinder went further up the user stack than
 * perf script did, its user frames replace perf's (the kernel frames
 * stay perf's). */
static void deeper_user_chain(struct offcpu *o)
{
	size_t n;

	if (!o->chains)
		return;
	pl_buf_reset(&o->native);
	n = o->env->user_chain(o->chains, o->prev_tid, o->t, &o->native);
	if (n <= o->nuser || o->nframes - o->nuser + n > MAX_FRAMES) {
		o->chains_perf++;
		return;
	}
	o->frames.len = o->nuser ? o->user_from : o->frames.len;
	pl_buf_add(&o->frames, o->native.data, o->native.len);
	o->nframes += n - o->nuser;
	o->nuser = n;
	o->chains_deeper++;
}

static void end_switch(struct offcpu *o)
{
	if (!o->in_switch)
		return;
	o->in_switch = false;
	runs_again(o, o->next_tid, o->t);
	if (tracked(o, o->prev_tid) && (o->state[0] == 'X' || o->state[0] == 'Z')) {
		/* A dead task's last switch: it never runs again, nor waits. */
		runs_again(o, o->prev_tid, o->t);
		o->task_exits++;
	} else if (tracked(o, o->prev_tid)) {
		runs_again(o, o->prev_tid, o->t);
		deeper_user_chain(o);
		uint32_t key = record_key(o);
		uint32_t ran = o->state[0] == 'R' ? ran_key(o) : UINT32_MAX;
		PL_GROW(o->pend, o->pend_cap, o->npend + 1);
		o->pend[o->npend++] = (struct pending){o->prev_tid, o->t, key, ran, UINT32_MAX};
	} else {
		o->untracked_switches++;
	}
	pl_buf_reset(&o->frames);
	o->nframes = 0;
	o->nuser = 0;
}

/* A frame's address as perf script prints it: kernel text is above the
 * canonical hole (x86_64 and aarch64 alike), user frames below it. */
static bool user_frame(const char *line)
{
	return strtoull(line, NULL, 16) < 0xffff800000000000ull;
}

static void frame_line(struct offcpu *o, const char *line)
{
	while (*line == ' ' || *line == '\t')
		line++;
	if (!o->in_switch || !*line)
		return;
	if (o->nframes == MAX_FRAMES) {
		o->frames_cut++;
		return;
	}
	if (user_frame(line) && o->nuser++ == 0)
		o->user_from = o->frames.len;
	pl_buf_addc(&o->frames, '\t');
	pl_buf_adds(&o->frames, line);
	pl_buf_addc(&o->frames, '\n');
	o->nframes++;
}

/* The comm as the record's header carries it: control bytes (which would
 * break the line structure of perf script text) become '?'. */
static void set_comm(struct offcpu *o, const char *comm, size_t n)
{
	pl_buf_reset(&o->comm);
	pl_buf_add(&o->comm, comm, n);
	for (size_t i = 0; i < o->comm.len; i++)
		if ((unsigned char)o->comm.data[i] < 0x20 || o->comm.data[i] == 0x7f)
			o->comm.data[i] = '?';
	if (!o->comm.len)
		pl_buf_adds(&o->comm, "?");
}

/* The name of the task leaving the CPU.  perf script prints ":TID" for a
 * task it saw no COMM or FORK record of (side-band records lost on a busy
 * system-wide recording: seen here with DWARF stacks); the switch's own
 * prev_comm is the kernel's name of that task at that moment, so it is
 * the evidence then, and the metadata counts the switches named so. */
static void switch_comm(struct offcpu *o, const struct head *h, const char *text)
{
	char unknown[32];
	int n = snprintf(unknown, sizeof(unknown), ":%lld", (long long)h->tid);
	const char *pc = strstr(text, "prev_comm="), *pp = pc ? strstr(pc, " prev_pid=") : NULL;

	set_comm(o, h->comm, h->comm_n);
	if (o->comm.len != (size_t)n || memcmp(o->comm.data, unknown, (size_t)n) != 0 || !pp || pp == pc + 10)
		return;
	set_comm(o, pc + 10, (size_t)(pp - pc - 10));
	o->comms_from_switch++;
}

/* A sched_waking of a task with an open wait: the current task (the
 * record's own comm and tid) woke it.  The waiter's comm is that of its
 * wait's record. */
static void waking(struct offcpu *o, const struct head *h, const char *text)
{
	int64_t wakee;
	struct pl_buf b = {0};
	uint32_t id;

	if (!field_int(text, "pid=", &wakee))
		return;
	for (size_t i = 0; i < o->npend; i++) {
		const char *rec, *sp;
		if (o->pend[i].tid != wakee)
			continue;
		rec = pl_strtab_get(&o->keys, o->pend[i].key);
		sp = strchr(rec, ' ');
		pl_buf_add(&b, rec, sp ? (size_t)(sp - rec) : strlen(rec));
		pl_buf_addf(&b, "/%lld\x1f", (long long)wakee);
		for (size_t k = 0; k < h->comm_n; k++)
			pl_buf_addc(&b, (unsigned char)h->comm[k] < 0x20 ? '?' : h->comm[k]);
		pl_buf_addf(&b, "/%lld\x1f%c", (long long)h->tid, tracked(o, h->tid) ? '1' : '0');
		id = pl_strtab_intern(&o->woke_pairs, b.data, b.len);
		if (o->woke_pairs.count > o->woke_cap) {
			size_t old = o->woke_cap, cap = o->woke_cap;
			PL_GROW(o->woke_ns, cap, o->woke_pairs.count);
			PL_GROW(o->woke_waits, o->woke_cap, o->woke_pairs.count);
			memset(o->woke_ns + old, 0, (o->woke_cap - old) * sizeof(*o->woke_ns));
			memset(o->woke_waits + old, 0, (o->woke_cap - old) * sizeof(*o->woke_waits));
		}
		o->pend[i].woke = id;
		o->wakings++;
		break;
	}
	pl_buf_release(&b);
}

/* Side-band records: forks of tracked tasks are tracked, and the
 * target's exec names its pid. */
static bool task_event(struct offcpu *o, const struct head *h)
{
	long long cpid, ctid, ppid;
	char want[32];

	if (sscanf(h->rest, "PERF_RECORD_FORK(%lld:%lld):(%lld:", &cpid, &ctid, &ppid) == 3) {
		if (tracked(o, ppid)) {
			track(o, cpid);
			track(o, ctid);
		}
		return true;
	}
	if (strncmp(h->rest, "PERF_RECORD_COMM exec: ", 23) == 0) {
		snprintf(want, sizeof(want), "%s:", o->exe_comm ? o->exe_comm : "");
		if (o->root_pid <= 0 && o->exe_comm && strncmp(h->rest + 23, want, strlen(want)) == 0) {
			o->root_pid = h->pid;
			track(o, h->pid);
		}
		return true;
	}
	return false;
}

static enum pl_err offcpu_line(void *arg, const char *line, size_t len, struct pl_error *err)
{
	struct offcpu *o = arg;
	const char *text;
	struct head h;

	(void)err;
	(void)len;
	/* perf right-aligns the comm of records without a call chain (the
	 * wakings): such a line is a header, never a frame. */
	if ((line[0] == '\t' || line[0] == ' ') && strstr(line, ": sched:sched_waking: "))
		line += strspn(line, " \t");
	if (line[0] == '\t' || line[0] == ' ') {
		frame_line(o, line);
		return PL_OK;
	}
	end_switch(o);
	if (!*line || !parse_head(line, &h) || task_event(o, &h))
		return PL_OK;
	if (strncmp(h.rest, "sched:sched_waking:", 19) == 0)
		waking(o, &h, h.rest + 19);
	if (strncmp(h.rest, "sched:sched_switch:", 19) != 0) {
		runs_again(o, h.tid, h.t);
		return PL_OK;
	}
	/* Threads of a tracked process are tracked. */
	if (tracked(o, h.pid))
		track(o, h.tid);
	text = h.rest + 19;
	o->t = h.t;
	o->pid = h.pid;
	o->in_switch = field_int(text, "prev_pid=", &o->prev_tid) &&
		       field_int(text, "next_pid=", &o->next_tid) &&
		       field(text, "prev_state=", o->state, sizeof(o->state));
	if (o->in_switch) {
		/* next_comm runs up to " next_pid=" (a comm may hold spaces) */
		const char *nc = strstr(text, "next_comm="), *np = nc ? strstr(nc, " next_pid=") : NULL;
		size_t n = np ? (size_t)(np - nc - 10) : 0;
		if (n >= sizeof(o->next_comm))
			n = sizeof(o->next_comm) - 1;
		memcpy(o->next_comm, np ? nc + 10 : "", n);
		o->next_comm[n] = '\0';
		switch_comm(o, &h, text);
	}
	return PL_OK;
}

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* One record: "COMM PID/TID NS offcpu-time: waits=N" (N: the blocked
 * intervals NS sums, left out when none ended), the state frame, the
 * stack. */
static void write_record(FILE *fp, const char *key, uint64_t ns, uint64_t waits)
{
	const char *s1 = strchr(key, '\x1f'), *s2 = s1 ? strchr(s1 + 1, '\x1f') : NULL;
	char w[32] = "";

	if (!s2)
		return;
	if (waits)
		snprintf(w, sizeof(w), " waits=%llu", (unsigned long long)waits);
	fprintf(fp, "%.*s %llu " OFFCPU_EVENT ":%s\n\t0 [state %.*s]\n%s\n", (int)(s1 - key), key,
		(unsigned long long)ns, w, (int)(s2 - s1 - 1), s1 + 1, s2 + 1);
}

static enum pl_err write_offcpu(const struct offcpu *o, const char *path, struct pl_error *err)
{
	FILE *fp = fopen(path, "w");
	const char **keys;

	if (!fp)
		return pl_fail(err, PL_ERR_OUTPUT, "check that the artifact root is writable",
			       "cannot write '%s'", path);
	keys = pl_xcalloc(o->keys.count + 1, sizeof(*keys));
	for (uint32_t i = 0; i < o->keys.count; i++)
		keys[i] = pl_strtab_get(&o->keys, i);
	qsort(keys, o->keys.count, sizeof(*keys), cmp_str);
	/* How the stacks were recorded, as perf script --header says it, so
	 * the analysis knows a DWARF stack cut at the copy's end from a lost
	 * frame pointer (pl_note_event_attr). */
	if (o->dwarf_stack)
		fprintf(fp, "# event : name = " OFFCPU_EVENT ", , sample_type = IP|TID|TIME|CALLCHAIN|PERIOD|RAW|"
			"REGS_USER|STACK_USER, exclude_callchain_user = 1, sample_stack_user = %u\n", o->dwarf_stack);
	for (uint32_t i = 0; i < o->keys.count; i++) {
		uint32_t k = pl_strtab_find(&o->keys, keys[i], strlen(keys[i]));
		write_record(fp, keys[i], o->ns[k], o->waits[k]);
	}
	free(keys);
	if (fclose(fp) != 0)
		return pl_fail(err, PL_ERR_OUTPUT, "check free space", "cannot write '%s'", path);
	return PL_OK;
}

static int cmp_ran(const void *a, const void *b, void *arg)
{
	const struct offcpu *sort_o = arg;
	uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;

	if (sort_o->ran_ns[x] != sort_o->ran_ns[y])
		return sort_o->ran_ns[x] > sort_o->ran_ns[y] ? -1 : 1;
	return strcmp(pl_strtab_get(&sort_o->ran_names, x), pl_strtab_get(&sort_o->ran_names, y));
}

static int cmp_woke(const void *a, const void *b, void *arg)
{
	const struct offcpu *sort_o = arg;
	uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;

	if (sort_o->woke_ns[x] != sort_o->woke_ns[y])
		return sort_o->woke_ns[x] > sort_o->woke_ns[y] ? -1 : 1;
	return strcmp(pl_strtab_get(&sort_o->woke_pairs, x), pl_strtab_get(&sort_o->woke_pairs, y));
}

/* Who woke the target's waits, per (waiter, waker), by the blocked time
 * they ended: the first WOKE_TOP (new). */
static json_t *woken_by_json(const struct offcpu *o)
{
	uint32_t *order = pl_xcalloc(o->woke_pairs.count + 1, sizeof(uint32_t));
	json_t *out = json_array();

	for (uint32_t i = 0; i < o->woke_pairs.count; i++)
		order[i] = i;
	qsort_r(order, o->woke_pairs.count, sizeof(uint32_t), cmp_woke, (void *)o);
	for (uint32_t i = 0; i < o->woke_pairs.count && i < WOKE_TOP; i++) {
		const char *name = pl_strtab_get(&o->woke_pairs, order[i]), *s1 = strchr(name, '\x1f');
		const char *s2 = s1 ? strchr(s1 + 1, '\x1f') : NULL;
		if (!s2 || !o->woke_waits[order[i]])
			continue;
		json_array_append_new(out, json_pack("{s:s%,s:s%,s:b,s:I,s:I}",
			"waiter", name, (size_t)(s1 - name), "woken_by", s1 + 1, (size_t)(s2 - s1 - 1),
			"own_task", s2[1] == '1', "waits", (json_int_t)o->woke_waits[order[i]],
			"ns", (json_int_t)o->woke_ns[order[i]]));
	}
	free(order);
	return out;
}

/* The tasks that took the CPU from the target's runnable (preempted)
 * tasks, by the time those waited: the first RAN_TOP (new). */
static json_t *ran_instead_json(const struct offcpu *o)
{
	uint32_t *order = pl_xcalloc(o->ran_names.count + 1, sizeof(uint32_t));
	json_t *out = json_array();

	for (uint32_t i = 0; i < o->ran_names.count; i++)
		order[i] = i;
	qsort_r(order, o->ran_names.count, sizeof(uint32_t), cmp_ran, (void *)o);
	for (uint32_t i = 0; i < o->ran_names.count && i < RAN_TOP; i++) {
		const char *name = pl_strtab_get(&o->ran_names, order[i]), *sep = strchr(name, '\x1f');
		json_array_append_new(out, json_pack("{s:s%,s:b,s:I,s:I}",
			"comm", name, sep ? (size_t)(sep - name) : strlen(name),
			"own_task", sep && sep[1] == '1',
			"runnable_waits", (json_int_t)o->ran_waits[order[i]],
			"runnable_ns", (json_int_t)o->ran_ns[order[i]]));
	}
	free(order);
	return out;
}

static json_t *offcpu_meta(const struct offcpu *o)
{
	return json_pack("{s:s,s:s,s:s,s:I,s:I,s:I,s:I,s:I,s:I,s:I,s:I,s:I,s:I,s:I,s:I,s:o}",
		"event", OFFCPU_EVENT, "unit", "ns", "file", "offcpu.txt",
		"root_pid", (json_int_t)o->root_pid, "tracked_tasks", (json_int_t)o->ntracked,
		"tasks_not_tracked_past_limit", (json_int_t)o->tracked_full,
		"blocked_intervals", (json_int_t)o->intervals, "blocked_ns", (json_int_t)o->blocked_ns,
		"records", (json_int_t)o->keys.count,
		"intervals_open_at_end", (json_int_t)o->npend, "task_exits", (json_int_t)o->task_exits,
		"switches_of_other_tasks", (json_int_t)o->untracked_switches,
		"frames_past_cap", (json_int_t)o->frames_cut,
		"switches_named_by_prev_comm", (json_int_t)o->comms_from_switch,
		"runnable_ns", (json_int_t)o->runnable_ns, "ran_instead", ran_instead_json(o));
}

/* off_cpu.woken_by and what it means. */
static json_t *woken_meta(const struct offcpu *o)
{
	return json_pack("{s:o,s:s}", "pairs", woken_by_json(o),
		"means", "per waiting thread (comm/tid), the task current when it was woken (sched:sched_waking), "
			 "heaviest blocked time first: for a mutex or futex wait the thread that unlocked it (the holder), "
			 "for a pipe or socket the writer; a timer or I/O completion wakes from an interrupt, so the task "
			 "named is whatever was running then");
}

/* How the user frames of the waits were unwound (DWARF stacks only). */
static json_t *user_chains_meta(const struct offcpu *o)
{
	return json_pack("{s:I,s:I,s:s}", "perf", (json_int_t)o->chains_perf,
			 "perflens_deeper", (json_int_t)o->chains_deeper,
			 "why", "perf script's unwinder stops at the first user frame in some recordings; "
			 "where PerfLens's own unwinder of the same stack copy goes further up, its user frames "
			 "are kept");
}

static void offcpu_release(struct offcpu *o)
{
	free(o->tracked);
	free(o->pend);
	free(o->ns);
	free(o->waits);
	pl_buf_release(&o->comm);
	pl_buf_release(&o->frames);
	pl_buf_release(&o->native);
	if (o->chains)
		o->env->user_chains_close(o->chains);
	pl_strtab_release(&o->keys);
	pl_strtab_release(&o->ran_names);
	pl_strtab_release(&o->woke_pairs);
	free(o->woke_ns);
	free(o->woke_waits);
	free(o->ran_ns);
	free(o->ran_waits);
	free(o);
}

enum pl_err coll_off_cpu(const struct pl_collect_env *env, const struct pl_collect_req *r,
			 const char *dir, const char *data, json_t *meta, struct pl_error *err)
{
	const char *argv[] = {env->perf_path, "script", "-i", data, "--ns", "-F",
			      "comm,pid,tid,time,event,trace,ip,sym,dso", "--show-task-events",
			      /* no addr2line child for inline frames of DWARF
			       * stacks (the worker may run perf only); names
			       * demangled by PerfLens, as for every input */
			      "--no-inline", "--no-demangle", NULL, NULL, NULL};
	struct offcpu *o = pl_xcalloc(1, sizeof(*o));
	const char *base = r->executable ? strrchr(r->executable, '/') : NULL;
	struct pl_run_result res;
	char path[PATH_MAX], comm[16];
	enum pl_err rc;

	if (env->kallsyms) {
		argv[10] = "--kallsyms";
		argv[11] = env->kallsyms;
	}
	o->root_pid = r->pid;
	if (r->pid > 0)
		track(o, r->pid);
	if (base) {
		snprintf(comm, sizeof(comm), "%s", base + 1);
		o->exe_comm = comm;
	}
	pl_strtab_init(&o->keys);
	pl_strtab_init(&o->ran_names);
	pl_strtab_init(&o->woke_pairs);
	o->env = env;
	if (r->call_graph && strcmp(r->call_graph, "dwarf") == 0)
		o->dwarf_stack = r->dwarf_stack_bytes ? r->dwarf_stack_bytes : 8192;
	if (o->dwarf_stack && env->user_chains_open)
		o->chains = env->user_chains_open(data, env->kallsyms);
	rc = coll_run_perf(env, argv, r->timeout_ms, 0, false, offcpu_line, o, &res, err);
	pl_run_result_release(&res);
	end_switch(o);
	coll_join(path, sizeof(path), dir, "offcpu.txt");
	if (rc == PL_OK)
		rc = write_offcpu(o, path, err);
	json_object_set_new(meta, "off_cpu", offcpu_meta(o));
	json_object_set_new(json_object_get(meta, "off_cpu"), "woken_by", woken_meta(o));
	if (o->chains)
		json_object_set_new(json_object_get(meta, "off_cpu"), "user_chains", user_chains_meta(o));
	offcpu_release(o);
	return rc;
}
