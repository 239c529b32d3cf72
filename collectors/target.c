/* target.c - what collect_profile knows of the program it ran: how it
 * ended, the tail of what it printed, and the CPUs it ran on.
 *
 * perf record (and perf sched record, perf lock record, which are perf
 * record) starts the target itself and ends with its exit status, or
 * raises the signal that killed it, once it has written its file and
 * said "Captured and wrote": so after that line perf's end is the
 * target's.  perf stat ends 0 whatever the target did, and an attached
 * pid is not perf's child: there the status is unknown, and says why.
 * perf prints nothing on stdout in these modes, so stdout is the
 * target's own; stderr is the target's with perf's messages interleaved.
 * The program may print the very metric being investigated, so the last
 * TAIL_BYTES of each are kept (bytes that are not UTF-8 become U+FFFD:
 * this is text for a reader, not data to round-trip).
 */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "coll_int.h"
#include "base/escape.h"
#include "base/util.h"

#define TAIL_BYTES 4096

enum pl_err coll_tail_line(void *arg, const char *line, size_t len, struct pl_error *err)
{
	struct coll_tail *t = arg;

	(void)err;
	t->bytes += len + 1;
	pl_buf_add(&t->buf, line, len);
	pl_buf_addc(&t->buf, '\n');
	if (t->buf.len > 2 * TAIL_BYTES) {
		memmove(t->buf.data, t->buf.data + t->buf.len - TAIL_BYTES, TAIL_BYTES);
		t->buf.len = TAIL_BYTES;
	}
	return PL_OK;
}

json_t *coll_text_json(const char *s, size_t n)
{
	struct pl_buf b = {0};
	json_t *j;

	pl_esc_add_text(&b, s, n);
	j = json_stringn(b.data ? b.data : "", b.len);
	pl_buf_release(&b);
	return j;
}

/* The last TAIL_BYTES of s[0..n), starting on a line when one starts
 * within the first 256 bytes of the cut. */
static json_t *tail_json(const char *s, size_t n)
{
	if (n > TAIL_BYTES) {
		const char *cut = s + n - TAIL_BYTES, *nl = memchr(cut, '\n', 256);
		if (nl)
			cut = nl + 1;
		n -= (size_t)(cut - s);
		s = cut;
	}
	return coll_text_json(s, n);
}

/* The signal perf stat names for its program ("EXE: Segmentation
 * fault" on a line of its own), or 0. */
static int stat_signal(const struct pl_collect_req *r, const struct pl_run_result *res)
{
	char line[4200];

	if (!r->executable || !res->stderr_text)
		return 0;
	for (int sig = 1; sig < 32; sig++) {
		const char *name = strsignal(sig);
		if (!name)
			continue;
		snprintf(line, sizeof(line), "%s: %s\n", r->executable, name);
		const char *at = strstr(res->stderr_text, line);
		if (at && (at == res->stderr_text || at[-1] == '\n'))
			return sig;
	}
	return 0;
}

static json_t *status_json(const struct pl_collect_req *r, const struct pl_run_result *res,
			   bool counts_written, bool *failed)
{
	bool wrote = res->stderr_text && strstr(res->stderr_text, "Captured and wrote");

	*failed = false;
	if (r->pid > 0)
		return json_pack("{s:n,s:n,s:s}", "exit_status", "signal", "status_unknown_because",
				 "the target is a running pid that perf attached to, not perf's child");
	if (r->mode == PL_COLLECT_STAT && (!counts_written || res->timed_out || res->signal))
		return json_pack("{s:n,s:n,s:s}", "exit_status", "signal", "status_unknown_because",
				 "perf stat did not write its counts");
	if (r->mode == PL_COLLECT_STAT) {
		/* perf stat ends with its program's exit status; a program killed
		 * by a signal it names on stderr ("PROG: Segmentation fault") and
		 * ends 0: that line gives the signal back. */
		int sig = stat_signal(r, res);
		if (sig) {
			*failed = true;
			return json_pack("{s:n,s:i,s:s}", "exit_status", "signal", sig,
					 "signal_name", sigabbrev_np(sig) ? sigabbrev_np(sig) : "?");
		}
		*failed = res->exit_status != 0;
		return json_pack("{s:i,s:n,s:s}", "exit_status", res->exit_status, "signal", "signal_note",
				 "perf stat passes on the exit status; a signal that killed the program is read from the line perf stat prints for it (EXE: Segmentation fault)");
	}
	if (!wrote || res->timed_out)
		return json_pack("{s:n,s:n,s:s}", "exit_status", "signal", "status_unknown_because",
				 "perf did not finish its recording");
	*failed = res->signal || res->exit_status;
	if (res->signal)
		return json_pack("{s:n,s:i,s:s}", "exit_status", "signal", res->signal,
				 "signal_name", sigabbrev_np(res->signal) ? sigabbrev_np(res->signal) : "?");
	return json_pack("{s:i,s:n}", "exit_status", res->exit_status, "signal");
}

json_t *coll_target_json(const struct pl_collect_req *r, const struct pl_run_result *res,
			 const struct coll_tail *out, bool counts_written, bool *failed)
{
	json_t *t = status_json(r, res, counts_written, failed);
	const char *err_text = res->stderr_text ? res->stderr_text : "";

	json_object_set_new(t, "stdout_tail", tail_json(out->buf.data ? out->buf.data : "", out->buf.len));
	json_object_set_new(t, "stdout_bytes", json_integer((json_int_t)out->bytes));
	json_object_set_new(t, "stderr_tail", tail_json(err_text, strlen(err_text)));
	json_object_set_new(t, "stderr_note", json_sprintf("%s%s", r->pid > 0 ?
		"perf's stderr alone: an attached process's own stderr goes where it always went" :
		"the target's stderr with perf's own lines interleaved", res->stderr_truncated ?
		"; it passed the kept size, so this is the end of what was kept, not of what was printed" : ""));
	return t;
}

json_t *coll_cpus_json(void)
{
	char list[256] = "";
	FILE *fp = fopen("/sys/devices/system/cpu/online", "r");
	long online = sysconf(_SC_NPROCESSORS_ONLN), conf = sysconf(_SC_NPROCESSORS_CONF);

	if (fp) {
		if (!fgets(list, sizeof(list), fp))
			list[0] = '\0';
		fclose(fp);
		list[strcspn(list, "\n")] = '\0';
	}
	return json_pack("{s:o,s:o,s:o}",
			 "online", online > 0 ? json_integer(online) : json_null(),
			 "configured", conf > 0 ? json_integer(conf) : json_null(),
			 "online_list", list[0] ? coll_text_json(list, strlen(list)) : json_null());
}
