/* pdkindex.c - the kallsyms index (see pdkindex.h).
 *
 * Layout, in this machine's byte order (the file never leaves it): a
 * header, then nsyms struct pd_sym in address order (names as offsets
 * into the names), then the names, each NUL-ended.  The
 * check refuses anything whose sizes, offsets, order or checksum are not
 * what the builder writes, so a lookup in a checked index stays inside
 * the blob and finds what the parsed table finds.
 */
#include "pdkindex.h"

#include <fcntl.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "base/checksum.h"
#include "base/util.h"

#define KX_MAGIC "PLKSYMX1"
#define KX_BYTE_ORDER 0x01020304u
#define KX_VERSION 1u   /* with the layout of struct pd_sym (its size is checked too) */

struct kx_header {
	char magic[8];
	uint32_t byte_order, version, sym_size, header_size;
	struct pd_kindex_source src;
	uint64_t text_addr, delta;
	uint64_t nsyms, names_len;
	uint64_t checksum;   /* of the whole file with this field 0 */
};

void pd_kindex_source_of(const struct stat *st, struct pd_kindex_source *src)
{
	memset(src, 0, sizeof(*src));
	src->size = (uint64_t)st->st_size;
	src->mtime_sec = (uint64_t)st->st_mtim.tv_sec;
	src->mtime_nsec = (uint64_t)st->st_mtim.tv_nsec;
	src->ino = (uint64_t)st->st_ino;
	src->dev = (uint64_t)st->st_dev;
}

bool pd_kindex_path(const char *kallsyms_path, char *out, size_t cap)
{
	if (!kallsyms_path || strncmp(kallsyms_path, "/proc/", 6) == 0)
		return false;
	return snprintf(out, cap, "%s.index", kallsyms_path) < (int)cap;
}

static uint64_t blob_checksum(const unsigned char *p, size_t len)
{
	return pl_checksum_sealed(p, len, sizeof(struct kx_header), offsetof(struct kx_header, checksum));
}

void pd_kindex_seal(void *blob, size_t len)
{
	struct kx_header h;

	if (len < sizeof(h))
		return;
	memcpy(&h, blob, sizeof(h));
	h.checksum = blob_checksum(blob, len);
	memcpy(blob, &h, sizeof(h));
}

void *pd_kindex_build(const char *text, size_t n, uint64_t delta, const struct pd_kindex_source *src,
		      size_t *len)
{
	struct pd_symtab t;
	struct kx_header h = {.byte_order = KX_BYTE_ORDER, .version = KX_VERSION,
			      .sym_size = sizeof(struct pd_sym), .header_size = sizeof(h), .src = *src,
			      .delta = delta};
	size_t names_len = 0;
	unsigned char *blob;

	memcpy(h.magic, KX_MAGIC, 8);
	if (!pd_kallsyms_addr(text, n, "_text", &h.text_addr))
		h.text_addr = 0;
	pd_symtab_load_kallsyms(&t, text, n, delta);
	if (!t.flat || !t.nflat) {
		pd_symtab_release(&t);
		return NULL;
	}
	for (size_t k = 0; k < t.nflat; k++)
		names_len += strlen(pd_sym_name(&t, &t.v[t.flat[k]])) + 1;
	h.nsyms = t.nflat;
	h.names_len = names_len;
	*len = sizeof(h) + t.nflat * sizeof(struct pd_sym) + names_len;
	blob = pl_xcalloc(1, *len);
	struct pd_sym *out = (struct pd_sym *)(blob + sizeof(h));
	char *names = (char *)(out + t.nflat);
	size_t at = 0;
	for (size_t k = 0; k < t.nflat; k++) {
		const struct pd_sym *s = &t.v[t.flat[k]];
		const char *name = pd_sym_name(&t, s);
		size_t nl = strlen(name);
		struct pd_sym o;
		memset(&o, 0, sizeof(o));   /* the padding too: the checksum covers it */
		o.start = s->start;
		o.end = s->end;
		o.name = (uint32_t)at;
		o.binding = s->binding;
		o.type = s->type;
		memcpy(&out[k], &o, sizeof(o));
		memcpy(names + at, name, nl + 1);
		at += nl + 1;
	}
	pd_symtab_release(&t);
	memcpy(blob, &h, sizeof(h));
	pd_kindex_seal(blob, *len);
	return blob;
}

/* An index refused: the reader parses the kallsyms copy instead, and
 * the next analysis makes the index again. */
static enum pl_err refuse(struct pl_error *err, const char *what)
{
	return pl_fail(err, PL_ERR_MALFORMED, "remove the index: the next analysis makes it again", "%s", what);
}

enum pl_err pd_kindex_check(const void *blob, size_t len, const struct pd_kindex_source *src,
			    struct pd_kindex *x, struct pl_error *err)
{
	const unsigned char *p = blob;
	struct kx_header h;

	memset(x, 0, sizeof(*x));
	if (len < sizeof(h))
		return refuse(err, "shorter than its header");
	memcpy(&h, p, sizeof(h));
	if (memcmp(h.magic, KX_MAGIC, 8) != 0)
		return refuse(err, "not a kallsyms index");
	if (h.byte_order != KX_BYTE_ORDER || h.version != KX_VERSION || h.sym_size != sizeof(struct pd_sym) ||
	    h.header_size != sizeof(h))
		return refuse(err, "another format version");
	if (src && memcmp(&h.src, src, sizeof(*src)) != 0)
		return refuse(err, "made from another kallsyms copy");
	/* Sizes first, without overflow: then every offset below is inside. */
	if (h.nsyms == 0 || h.nsyms > (len - sizeof(h)) / sizeof(struct pd_sym) || h.nsyms > UINT32_MAX ||
	    h.names_len == 0 || h.names_len != len - sizeof(h) - h.nsyms * sizeof(struct pd_sym) ||
	    h.names_len > UINT32_MAX)
		return refuse(err, "truncated or resized");
	const struct pd_sym *v = (const struct pd_sym *)(p + sizeof(h));
	const char *names = (const char *)(v + h.nsyms);
	if (names[h.names_len - 1] != '\0')
		return refuse(err, "unterminated names");
	for (size_t k = 0; k < h.nsyms; k++) {
		if (v[k].name >= h.names_len)
			return refuse(err, "a symbol whose name is outside the names");
		if (k && v[k - 1].end > v[k].start)
			return refuse(err, "symbols out of order or overlapping");
	}
	if (blob_checksum(p, len) != h.checksum)
		return refuse(err, "checksum mismatch (corrupt)");
	x->map = (void *)blob;
	x->len = len;
	x->text_addr = h.text_addr;
	x->delta = h.delta;
	x->nsyms = (size_t)h.nsyms;
	return PL_OK;
}

bool pd_kindex_open(struct pd_kindex *x, const char *kallsyms_path)
{
	char path[4200];
	struct pl_error err;
	struct stat ks, st;
	struct pd_kindex_source src;
	void *map;
	int fd;

	memset(x, 0, sizeof(*x));
	if (!pd_kindex_path(kallsyms_path, path, sizeof(path)) || stat(kallsyms_path, &ks) != 0)
		return false;
	if ((fd = open(path, O_RDONLY | O_CLOEXEC)) < 0)
		return false;
	if (fstat(fd, &st) != 0 || st.st_size < (off_t)sizeof(struct kx_header) || st.st_size > (256 << 20)) {
		close(fd);
		return false;
	}
	map = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_PRIVATE | MAP_POPULATE, fd, 0);
	close(fd);
	if (map == MAP_FAILED)
		return false;
	pd_kindex_source_of(&ks, &src);
	if (pd_kindex_check(map, (size_t)st.st_size, &src, x, &err) != PL_OK) {
		munmap(map, (size_t)st.st_size);
		return false;
	}
	x->mapped = true;
	return true;
}

void pd_kindex_adopt(struct pd_kindex *x, struct pd_symtab *t)
{
	const unsigned char *p = x->map;
	struct kx_header h;

	memcpy(&h, p, sizeof(h));
	memset(t, 0, sizeof(*t));
	t->root = PD_NIL;
	t->v = (struct pd_sym *)(p + sizeof(h));
	t->n = t->cap = x->nsyms;
	t->names = (char *)(t->v + x->nsyms);
	t->names_len = t->names_cap = (size_t)h.names_len;
	t->flat_all = true;
	t->nflat = x->nsyms;
	t->external = true;
	t->loaded = true;
	snprintf(t->source, sizeof(t->source), "kallsyms");
	if (x->mapped) {
		t->map = x->map;   /* t's now */
		t->map_len = x->len;
	}
	x->map = NULL;
	x->mapped = false;
}

void pd_kindex_close(struct pd_kindex *x)
{
	if (x->map && x->mapped)
		munmap(x->map, x->len);
	memset(x, 0, sizeof(*x));
}
