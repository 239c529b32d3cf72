/* fsatomic.h - mkdir -p and atomic file writes, for every writer.
 *
 * What PerfLens writes (analyses, exports, collections, caches) appears
 * whole or not at all: a temporary file in the same folder, fsync, then
 * rename.  No jansson here, so the device agent can link it.
 */
#ifndef PL_FSATOMIC_H
#define PL_FSATOMIC_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

#include "error.h"

/* mkdir -p: create `path` and any missing parents (mode 0755). */
enum pl_err pl_make_dirs(const char *path, struct pl_error *err);

/* Write `len` bytes to `path` atomically (temp file, fsync, rename),
 * creating missing parent folders. */
enum pl_err pl_write_file_atomic(const char *path, const void *data,
				 size_t len, struct pl_error *err);

/* Open a temporary file beside `path` for streaming; commit renames it
 * into place, abort removes it. */
struct pl_atomic_file {
	FILE *fp;
	bool synced;          /* pl_atomic_sync ran: commit only renames */
	char tmp[4096];
	char path[4096];
};
enum pl_err pl_atomic_open(struct pl_atomic_file *af, const char *path,
			   struct pl_error *err);
enum pl_err pl_atomic_commit(struct pl_atomic_file *af, struct pl_error *err);
/* Flush and fsync ahead of commit (from another thread, say); 0 or -1. */
int pl_atomic_sync(struct pl_atomic_file *af);
void pl_atomic_abort(struct pl_atomic_file *af);

#endif
