/* fsatomic.c - folders and atomic files (see fsatomic.h).
 *
 * A file is written beside its final name (NAME.tmp-XXXXXX, same folder, so
 * the rename cannot cross a file system), synced, then renamed over the
 * name: a reader sees the old file or the new one, never half of either.
 */
#include "fsatomic.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

enum pl_err pl_make_dirs(const char *path, struct pl_error *err)
{
	char buf[4096];
	size_t n = strlen(path);

	if (n >= sizeof(buf))
		return pl_fail(err, PL_ERR_OUTPUT, "use a shorter path", "path too long: '%s'", path);
	memcpy(buf, path, n + 1);
	for (size_t i = 1; i <= n; i++) {
		if (buf[i] != '/' && buf[i] != '\0')
			continue;
		buf[i] = '\0';
		if (mkdir(buf, 0755) < 0 && errno != EEXIST)
			return pl_fail(err, PL_ERR_OUTPUT, "check that the folder is writable",
				       "cannot create folder '%s': %s", buf, strerror(errno));
		buf[i] = i < n ? '/' : '\0';
	}
	return PL_OK;
}

enum pl_err pl_atomic_open(struct pl_atomic_file *af, const char *path,
			   struct pl_error *err)
{
	char dir[4096];
	const char *slash = strrchr(path, '/');
	int fd;

	memset(af, 0, sizeof(*af));
	if (strlen(path) + 16 >= sizeof(af->tmp))
		return pl_fail(err, PL_ERR_OUTPUT, "use a shorter path", "path too long: '%s'", path);
	snprintf(af->path, sizeof(af->path), "%s", path);
	if (slash && slash != path) {
		snprintf(dir, sizeof(dir), "%.*s", (int)(slash - path), path);
		if (pl_make_dirs(dir, err))
			return err->code;
	}
	snprintf(af->tmp, sizeof(af->tmp), "%s.tmp-XXXXXX", path);
	fd = mkostemp(af->tmp, O_CLOEXEC);
	if (fd < 0)
		return pl_fail(err, PL_ERR_OUTPUT, "check that the artifact root is writable",
			       "cannot create '%s': %s", af->tmp, strerror(errno));
	fchmod(fd, 0644);
	af->fp = fdopen(fd, "w");
	if (!af->fp) {
		close(fd);
		unlink(af->tmp);
		return pl_fail(err, PL_ERR_INTERNAL, NULL, "fdopen failed");
	}
	return PL_OK;
}

void pl_atomic_abort(struct pl_atomic_file *af)
{
	if (af->fp)
		fclose(af->fp);
	if (af->tmp[0])
		unlink(af->tmp);
	af->fp = NULL;
	af->tmp[0] = '\0';
}

int pl_atomic_sync(struct pl_atomic_file *af)
{
	if (fflush(af->fp) != 0 || ferror(af->fp) || fsync(fileno(af->fp)) != 0)
		return -1;
	af->synced = true;
	return 0;
}

enum pl_err pl_atomic_commit(struct pl_atomic_file *af, struct pl_error *err)
{
	bool bad = !af->synced && pl_atomic_sync(af) != 0;

	if (fclose(af->fp) != 0)
		bad = true;
	af->fp = NULL;
	if (bad || rename(af->tmp, af->path) != 0) {
		int e = errno;
		unlink(af->tmp);
		return pl_fail(err, PL_ERR_OUTPUT, "check free space and permissions at the artifact root",
			       "cannot write '%s': %s", af->path, strerror(e));
	}
	return PL_OK;
}

enum pl_err pl_write_file_atomic(const char *path, const void *data,
				 size_t len, struct pl_error *err)
{
	struct pl_atomic_file af;

	if (pl_atomic_open(&af, path, err))
		return err->code;
	if (fwrite(data, 1, len, af.fp) != len) {
		pl_atomic_abort(&af);
		return pl_fail(err, PL_ERR_OUTPUT, "check free space", "cannot write '%s'", path);
	}
	return pl_atomic_commit(&af, err);
}
