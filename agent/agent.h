/* agent.h - what the agent's files share: its one global state, the
 * perf capabilities, the counters, logging and the helpers each file
 * exports.
 *
 * Threads: the session loop (commands), the link's receiver, the
 * collector (perf) and the metrics ticker.  A.mu guards every field of A
 * marked (mu); A.send_mu serializes frames on the current link and guards
 * A.link.  Sends are bounded by SO_SNDTIMEO, so no lock is held forever. */
#ifndef AGENT_AGENT_H
#define AGENT_AGENT_H

#include <pthread.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "collectors/procfs.h"
#include "json.h"

#ifndef AGENT_VERSION
#define AGENT_VERSION "dev"
#endif

#define MAX_EVENTS 16
#define EVENT_NAME 48
#define DEFAULT_PORT 9999
#define CHUNK_RAW_MAX (16u * 1024 * 1024)   /* cut a chunk at 16 MB of text */
#define PERF_GRACE_MS 3000                  /* SIGTERM, then SIGKILL */
#define MAX_PROBLEMS 4                      /* status.capture_problems kept per capture */
#define PROBLEM_LEN 768

enum agent_state { ST_IDLE, ST_PROFILING, ST_PAUSED };

struct agent_caps {
	int probed;
	int pid;
	uint64_t start_time;
	char record[MAX_EVENTS][EVENT_NAME];
	int n_record;
	char stat_only[MAX_EVENTS][EVENT_NAME];
	int n_stat_only;
	char callgraph[8];    /* "fp", "dwarf" or "" (flat) */
	int pipe_mode;
	int fields_ok;        /* perf script takes our -F list */
	int fallback;         /* no hardware event records: cpu-clock/task-clock */
};

/* What perf can do here, known at startup, before any capture or probe
 * (our extension: status.perf_caps; the seed's status has no such
 * field).  -1: unknown. */
struct perf_caps {
	int pmu;              /* a hardware cycles counter opens */
	int sampling;         /* a cpu-clock sampling event opens */
	int open_errno;       /* why sampling did not open, 0 if it did */
	int privileged;       /* euid 0, or CAP_PERFMON / CAP_SYS_ADMIN */
	int dwarf;            /* perf was built with a DWARF unwinder (libunwind or libdw) */
	int lbr;              /* perf records --call-graph lbr (the CPU's last branch records) */
	int perf_ok;          /* perf runs and prints its version */
};

struct agent_counters {
	uint64_t chunks_sent, samples_sent, raw_bytes, wire_bytes, chunks_refused, chunks_lost;
	uint64_t tails_cut;   /* captures whose perf script the drain deadline cut */
};

struct link;

struct agent {
	pthread_mutex_t mu;
	pthread_cond_t cv;               /* the collector waits on it (mu) */
	char perf[256];                  /* perf to run (mu) */
	int frequency, duration;         /* Hz; chunk interval / round length, s (mu) */
	int pid;                         /* target, -1 unset (mu) */
	uint64_t pid_start;              /* its start time (field 22) (mu) */
	struct agent_caps caps;          /* (mu) */
	char events[MAX_EVENTS][EVENT_NAME]; /* the effective record set (mu) */
	int n_events;
	enum agent_state state;          /* (mu) */
	int stop_req, pause_req;         /* to the collector (mu) */
	int restart_req;                 /* frequency changed (mu) */
	int collector_running;
	pthread_t collector;
	int continuous;                  /* mode of the capture (mu) */
	char cg_req[8];                  /* start's call_graph: "" the probed one, "fp", "dwarf", "lbr" or "none" (mu) */
	int counting;                    /* start's counting: perf stat only, no samples (mu) */
	struct perf_caps pcaps;          /* (mu) */
	char capture_end[128];           /* why the last capture ended by itself, "" if it did not (mu) */
	char problems[MAX_PROBLEMS][PROBLEM_LEN]; /* what went wrong in the capture, each with its fix (mu) */
	int n_problems;                  /* (mu); status and stop say them until the next start */
	struct agent_counters counters;  /* (mu) */
	int m_enabled, m_interval, m_network, m_disk, m_threads; /* metrics config (mu) */
	uint32_t maps_seq;               /* (mu) */
	/* platform, detected once */
	char arch[65], kernel[65], perf_version[160];
	int paranoid;
	int max_sample_rate;
	/* pairing */
	char token[256];
	size_t token_len;
	int has_token, token_generated, require_proof;
	int send_timeout_ms;
	int listen_mode;
	size_t chunk_raw_max;            /* CHUNK_RAW_MAX; tests lower it (PERFLENS_TEST_CHUNK_BYTES) */
	int text_chunks;                 /* --text-chunks: never offer perf_data */
	int force_rounds;                /* tests: rounds mode even when pipes work (PERFLENS_TEST_ROUNDS) */
	pthread_mutex_t send_mu;
	struct link *link;               /* the authenticated link, or NULL (send_mu) */
};

extern struct agent A;
#include <signal.h>
/* SIGINT/SIGTERM: finish and exit.  Atomic, not only sig_atomic_t: the
 * handler runs on the main thread and the collector, metrics and receive
 * threads read it (TSan: a data race as a volatile sig_atomic_t). */
extern _Atomic int agent_quit;

/* state.c: the defaults of A, logging and clocks */
void agent_defaults(void);
void agent_log(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
double mono_now(void);
double real_now(void);
void sleep_ms(int ms);
int agent_thread(pthread_t *t, void *(*fn)(void *), void *arg);

/* proc.c (the /proc readers themselves are collectors/procfs.h's) */
int target_alive(int pid, uint64_t start_time);
void platform_detect(void);
int max_sample_rate(void);
void write_processes(struct jw *w);
void write_pid_info(struct jw *w, int pid);
/* maps: returns a hash of the executable mappings, writes the frame when w */
uint64_t maps_hash(int pid);
int write_maps_frame(struct jw *w, int pid, uint64_t start_time, uint32_t seq);

/* perf.c: children */
struct child {
	pid_t pid;
	int out_fd;           /* the child's stdout, or -1 */
	int err_fd;           /* its stderr, or -1 */
};
struct spawn_opts {
	int stdin_fd;         /* -1: /dev/null */
	int stdout_fd;        /* >= 0: give the child this fd as stdout */
	int want_out, want_err; /* pipes back to us */
	int nice;
};
int spawn_child(char *const argv[], const struct spawn_opts *o, struct child *c);
int child_wait(struct child *c, int timeout_ms);   /* exit status, -1 timeout */
int child_end(struct child *c);                    /* TERM, grace, KILL; status */
/* Run to completion within timeout_ms, capturing stdout/stderr (each up
 * to cap bytes, NUL-terminated, caller frees).  Returns the exit code,
 * -1 when it could not run, -2 on timeout (killed). */
int run_perf(char *const argv[], int timeout_ms, size_t cap, char **out, char **err, int nice_val);
int perf_version(const char *perf, char *out, size_t cap);
int probe_caps(int pid, struct agent_caps *caps);
void perf_caps_detect(struct perf_caps *pc);
void perf_default_events(const struct agent_caps *caps, char ev[MAX_EVENTS][EVENT_NAME], int *n);

/* How the collector reaches the server: link.c hands one to the thread it
 * starts, so capture.c needs nothing of link.c (and the files do not need
 * each other). */
struct agent_outlet {
	/* a frame on the current authenticated link: 0, -1 the send failed
	 * (the link is dropped), -2 no link */
	int (*emit)(uint8_t flag, const char *data, size_t len);
	/* the current link's FEAT_* (0: none) and its generation, which
	 * changes with every new authenticated link */
	int (*features)(uint32_t *gen);
};

/* capture.c */
int headless_run(const char *output, int rounds);
extern const char *const SCRIPT_FIELDS;
void *collector_main(void *outlet);  /* outlet: a const struct agent_outlet * that outlives it */
/* Say what went wrong in the capture (logged, and in status and stop's
 * capture_problems until the next start; past MAX_PROBLEMS only logged). */
void capture_problem(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
uint64_t count_samples(const char *text, size_t len);

/* metrics.c: the ticker of one link, which sends through the link's own
 * functions handed to it (as the collector's outlet). */
struct metrics_outlet {
	struct link *link;
	int (*alive)(struct link *l);
	int (*send)(struct link *l, uint8_t flag, const char *data, size_t len);
};
void *metrics_main(void *outlet);  /* outlet: a struct metrics_outlet * that outlives it */

/* link.c */
int serve_listen(const char *bind_addr, int port);
int serve_dial(const char *host, int port);
void capture_stop(void);
#define FEAT_MAPS 1
#define FEAT_COUNTERS 2
#define FEAT_PERF_DATA 4   /* chunks as perf.data (perfdata.h), not perf script text */

/* pair.c */
int random_bytes(void *buf, size_t n);
void hex_encode(const uint8_t *in, size_t n, char *out);
int ct_equal(const void *a, size_t alen, const void *b, size_t blen);
void pair_proof(const char *code, size_t code_len, const char *role, const char *agent_nonce,
		const char *server_nonce, char out_hex[65]);
int is_hex(const char *s, size_t want_len);

#endif
