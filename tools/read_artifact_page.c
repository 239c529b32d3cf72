/* read_artifact_page.c - the read_artifact_page tool: a bounded slice of
 * one artifact's text, ending on a UTF-8 character boundary, with the
 * offset of the next slice.  The artifact is named by its path under the
 * artifact root, its perflens://artifacts/ uri, or the absolute path a
 * tool returned (the root's prefix is dropped; the rest is checked alike).
 * A device session's compressed chunk (sessions/ID/chunk_NNNNN.zst) is
 * paged in its decompressed text, read through base/input.h's limits. */
#include "registry.h"
#include "base/escape.h"
#include "base/input.h"
#include "store/artifact.h"

#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* Step back so the slice does not end inside a UTF-8 sequence. */
static size_t utf8_boundary(const unsigned char *p, size_t n, bool at_eof)
{
	size_t i = n, lead;

	if (at_eof || n == 0)
		return n;
	while (i > 0 && n - i < 4 && (p[i - 1] & 0xc0) == 0x80)
		i--;
	if (i == 0)
		return n;
	lead = p[i - 1];
	if (lead < 0x80)
		return n;
	/* p[i-1] starts a sequence of this many bytes: */
	size_t want = lead >= 0xf0 ? 4 : lead >= 0xe0 ? 3 : lead >= 0xc0 ? 2 : 1;
	return n - (i - 1) >= want ? n : i - 1;
}

/* An absolute path under the artifact root, as export_profile and
 * build_report return it, names the artifact its relative path does. */
static const char *under_root(const char *root, const char *which)
{
	size_t n = strlen(root);

	while (n > 1 && root[n - 1] == '/')
		n--;
	if (which[0] == '/' && strncmp(which, root, n) == 0 && which[n] == '/')
		return which + n + 1;
	return which;
}

/* Is `rel` a compressed file of a device session (paged decompressed)? */
static bool session_compressed(const char *rel)
{
	size_t n = strlen(rel);

	return strncmp(rel, "sessions/", 9) == 0 &&
	       ((n > 4 && strcmp(rel + n - 4, ".zst") == 0) || (n > 3 && strcmp(rel + n - 3, ".gz") == 0));
}

/* Bytes [offset, offset+limit) of the decompressed text of ROOT/REL into
 * buf, its total size in *size; the count read, or -1 with `err`. */
static ssize_t read_decompressed(const struct tool_ctx *ctx, const char *rel, uint64_t offset,
				 size_t limit, unsigned char *buf, uint64_t *size, struct pl_error *err)
{
	char path[PATH_MAX + 700], real[PATH_MAX];
	struct pl_input in;
	const char *line;
	size_t len, got = 0;
	uint64_t pos = 0;
	int r;

	snprintf(path, sizeof(path), "%s/%s", ctx->artifact_root, rel);
	if (!realpath(path, real) || !realpath(ctx->artifact_root, path) ||
	    strncmp(real, path, strlen(path)) != 0 || real[strlen(path)] != '/') {
		pl_fail(err, PL_ERR_INPUT, "call list_sessions for the sessions on disk", "no artifact '%s'", rel);
		return -1;
	}
	if (pl_input_open(&in, real, &ctx->limits, err))
		return -1;
	while ((r = pl_input_line(&in, &line, &len, err)) == 1) {
		for (size_t i = 0; i <= len; i++, pos++) {
			if (pos >= offset && got < limit)
				buf[got++] = i < len ? (unsigned char)line[i] : '\n';
		}
	}
	pl_input_close(&in);
	if (r < 0)
		return -1;
	*size = pos;
	return (ssize_t)got;
}

enum pl_err tool_read_artifact_page(const struct tool_ctx *ctx, json_t *args,
				    json_t **result, struct pl_error *err)
{
	const char *which = json_string_value(json_object_get(args, "artifact"));
	char bytes[PATH_MAX];
	uint64_t offset = (uint64_t)json_integer_value(json_object_get(args, "offset"));
	size_t limit = (size_t)json_integer_value(json_object_get(args, "limit_bytes"));
	char rel[600];
	unsigned char *buf;
	uint64_t size;
	ssize_t got;
	size_t n;
	int fd;

	/* A path is given in the escaped form results print (docs/paths.md). */
	if (!ctx->artifact_root || !pl_esc_decode(which, bytes, sizeof(bytes)) ||
	    !pl_artifact_rel_path(under_root(ctx->artifact_root, bytes), rel, sizeof(rel)))
		return pl_fail(err, PL_ERR_USAGE,
			       "pass a path or uri as list_artifacts shows it (exports/NAME, perflens://artifacts/exports/NAME), or the absolute path under the artifact root that a tool returned",
			       "'%s' is not an artifact path", which);
	if ((fd = pl_artifact_open(ctx->artifact_root, rel, &size, err)) < 0)
		return err->code;
	buf = pl_xmalloc(limit + 1);
	if (session_compressed(rel)) {
		close(fd);
		if ((got = read_decompressed(ctx, rel, offset, limit, buf, &size, err)) < 0) {
			free(buf);
			return err->code;
		}
		if (offset > size)
			offset = size;
	} else {
		if (offset > size)
			offset = size;
		got = pread(fd, buf, limit, (off_t)offset);
		close(fd);
	}
	if (got < 0) {
		free(buf);
		return pl_fail(err, PL_ERR_INPUT, NULL, "cannot read '%s': %s", rel, strerror(errno));
	}
	n = utf8_boundary(buf, (size_t)got, offset + (uint64_t)got >= size);
	*result = json_pack("{s:s,s:I,s:I,s:I,s:s%,s:o}", "artifact", rel,
		"offset", (json_int_t)offset, "returned_bytes", (json_int_t)n,
		"total_bytes", (json_int_t)size, "text", (const char *)buf, n,
		"next_offset", offset + n < size ? json_integer((json_int_t)(offset + n)) : json_null());
	free(buf);
	if (!*result)
		return pl_fail(err, PL_ERR_MALFORMED, "this artifact is not UTF-8 text",
			       "'%s' holds bytes that are not text at offset %llu", rel,
			       (unsigned long long)offset);
	return PL_OK;
}
