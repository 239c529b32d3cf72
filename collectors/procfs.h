/* procfs.h - the bounded /proc readers shared by the health metrics
 * (health.c) and the static device agent (agent/): whole small files,
 * /proc/PID/stat's fields, a process's command line, the processes that
 * use most CPU, and the executable mappings of /proc/PID/maps with the
 * GNU build-id of each mapped ELF.  Plain C structs, libc only (no
 * jansson, no scanf): the agent links procfs.c and formats the structs
 * with its own JSON writer; the server may link it too.
 *
 * Everything is bounded: fixed buffers, or a stated maximum for the few
 * reads that allocate (the caller frees those, as each function says). */
#ifndef COLL_PROCFS_H
#define COLL_PROCFS_H

#include <stddef.h>
#include <stdint.h>

/* ------------------------------------------------------------------ */
/* files and text                                                       */

/* At most cap-1 bytes of path into buf, NUL-terminated (a longer file
 * loses its tail); the length, or -1 when it cannot be opened. */
long coll_read_text(const char *path, char *buf, size_t cap);
/* The whole of path, NUL-terminated, at most max bytes; *len gets the
 * length.  NULL when it cannot be opened.  The caller frees the result. */
char *coll_read_alloc(const char *path, size_t max, size_t *len);
/* Up to n unsigned numbers separated by blanks from p into v; how many. */
int coll_u64s(const char *p, unsigned long long *v, int n);
/* The number after "key:" on a line of a /proc/meminfo or status style
 * text into *out: 1, or 0 when no line has that key. */
int coll_key_u64(const char *text, const char *key, uint64_t *out);

/* ------------------------------------------------------------------ */
/* CPU time                                                             */

struct coll_cpu_times {
	uint64_t busy, total;    /* clock ticks; busy = total - idle - iowait */
};

/* One "cpu..." line of /proc/stat: 0, or -1 when it has too few fields. */
int coll_cpu_line(const char *line, struct coll_cpu_times *t);
/* The machine's "cpu " line of /proc/stat: 0 or -1. */
int coll_system_cpu_times(struct coll_cpu_times *t);

/* ------------------------------------------------------------------ */
/* /proc/PID/stat                                                       */

struct coll_pid_stat {
	char comm[64];
	char state;
	uint64_t minor_faults, major_faults;  /* fields 10, 12 */
	uint64_t utime, stime;                /* 14, 15: clock ticks */
	uint64_t threads;                     /* 20 */
	uint64_t start_time;                  /* 22: ticks since boot */
	uint64_t vsize, rss_pages;            /* 23 (bytes), 24 */
};

/* A stat file (/proc/PID/stat or /proc/PID/task/TID/stat): 0, or -1
 * when it is gone or malformed.  The comm may hold spaces and
 * parentheses: fields are counted from the last ')'. */
int coll_pid_stat_read(const char *path, struct coll_pid_stat *out);
int coll_pid_stat(int pid, struct coll_pid_stat *out);
/* Field 22 (start time), the comm and the state of pid: 0, or -1 when
 * the process is gone.  comm and state may be NULL. */
int coll_proc_stat_identity(int pid, uint64_t *start_time, char *comm, unsigned comm_cap,
			    char *state);
/* /proc/PID/cmdline with its NULs as blanks, at most cap-1 bytes: the
 * length, or -1 when it cannot be read. */
int coll_proc_cmdline(int pid, char *out, size_t cap);

/* ------------------------------------------------------------------ */
/* the process list                                                     */

struct coll_proc_entry {
	int pid;
	char comm[64];
	char cmdline[256];
	double cpu_pct;          /* share of the whole machine over the window */
};

/* The seed's list_processes: two snapshots window_ms apart of at most
 * 4096 processes, the max that used most CPU into out, highest first
 * (ties by pid).  The count, or -1 when /proc cannot be listed. */
int coll_proc_top(struct coll_proc_entry *out, int max, int window_ms);

/* ------------------------------------------------------------------ */
/* /proc/PID/maps                                                       */

struct coll_map {
	char start[20], end[20], perms[5], offset[20], dev[12]; /* hex, no leading zeros */
	unsigned long long inode;
	const char *line;        /* the whole line, in the buffer of coll_maps_read */
	const char *path;        /* the rest of the line: file, [vdso], or "" */
	size_t path_len;
};

/* /proc/PID/maps whole (at most 8 MB): NULL when unreadable; caller frees. */
char *coll_maps_read(int pid);
/* The next executable mapping of a buffer of coll_maps_read, which it
 * cuts into lines (*cursor starts as the buffer): 1, or 0 at the end. */
int coll_maps_next(char **cursor, struct coll_map *m);
/* The GNU build-id of the file mapped at m in pid, as lowercase hex
 * into hex (cap bytes): read through /proc/PID/map_files (the very file
 * mapped, even if deleted or replaced since), else /proc/PID/root/PATH.
 * 0, or -1 when it is not a readable ELF with a build-id. */
int coll_map_build_id(int pid, const struct coll_map *m, char *hex, size_t cap);
/* The GNU build-id of the ELF open on fd, from its PT_NOTE segments. */
int coll_elf_build_id(int fd, char *hex, size_t cap);

#endif
