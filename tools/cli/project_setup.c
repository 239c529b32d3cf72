/* project_setup.c - `perflens init` and `perflens detach` (agent_setup.h).
 *
 * init writes, per client, project-scoped files only:
 *   codex        .codex/config.toml: a block between SETUP_TOML_BEGIN and
 *                SETUP_TOML_END lines, the rest of the file byte for byte;
 *                .agents/skills/perflens-performance-analysis/
 *   claude-code  .mcp.json: mcpServers.perflens merged with jansson (other
 *                servers kept); .claude/skills/perflens-performance-analysis/
 * and records each item with the SHA-256 of what it wrote in
 * DIR/.perflens/setup.json: a whole file (the Skill's), the block (TOML)
 * or the entry as compact, key-sorted JSON (.mcp.json).  It also records
 * the folders it created, whether a file existed before, the newline it
 * put before an appended block, and a copy of a .mcp.json it found, so
 * that detach gives back the very bytes the user had.
 *
 * Every run first decides, for every item, what to do (the plan), and
 * writes nothing when any item is refused: an item on disk that is not
 * what was recorded (the user edited it) is never overwritten, and one
 * that init did not write is never taken over unless it is identical (then
 * it is kept as "preexisting" and detach leaves it).  Paths are checked
 * component by component: a symbolic link anywhere under DIR is refused,
 * so nothing outside DIR is touched.  Writes are atomic (temp + rename).
 */
#include "agent_setup_int.h"
#include "base/fsatomic.h"
#include "base/sha256.h"
#include "base/version.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define INIT_USAGE "perflens init --project DIR [--client codex|claude-code|all] [--read-only] [--allow-collection] [--update] [--server PATH]"
#define DETACH_USAGE "perflens detach --project DIR [--client codex|claude-code|all] [--dry-run] [--keep-skills]"
#define RECORD_REL SETUP_RECORD_REL
#define BACKUP_REL ".perflens/mcp.json.before"
#define MAX_ITEMS 64
#define MAX_FILE_BYTES (4u << 20)

static const char *const all_clients[] = {"codex", "claude-code"};

/* ------------------------------------------------------------- items */

enum item_kind { ITEM_FILE, ITEM_TOML, ITEM_JSON };
static const char *const kind_names[] = {"file", "toml_block", "json_entry"};

/* What an item is on disk now. */
struct disk {
	bool exists;          /* the file */
	char *bytes;          /* its content (NUL-ended), NULL when missing */
	size_t len;
	bool present;         /* the item itself: the file, the block, the entry */
	char sha[65];         /* of the item when present */
	size_t block_at, block_len; /* TOML: the block's place in bytes */
	bool foreign_table;   /* TOML: [mcp_servers.perflens] outside the block */
	json_t *doc;          /* JSON: the parsed file */
	mode_t mode;
};

/* One thing init writes, and what is decided for it. */
struct item {
	enum item_kind kind;
	char rel[PATH_MAX];
	char *content;        /* FILE: the file; TOML: the block; JSON: compact entry */
	json_t *entry;        /* JSON: the server object */
	char sha[65];
	bool skill;
	struct disk d;
	json_t *rec;          /* its row in the record, borrowed; NULL when new */
	const char *action;   /* "create", "update", "unchanged", "remove", ... */
	bool writes;          /* the action changes the disk */
};

static void disk_release(struct disk *d)
{
	free(d->bytes);
	json_decref(d->doc);
	memset(d, 0, sizeof(*d));
}

static void item_release(struct item *it)
{
	free(it->content);
	json_decref(it->entry);
	disk_release(&it->d);
}

/* A record row's string `key` ("" when absent). */
static const char *rs(json_t *row, const char *key)
{
	const char *s = json_string_value(json_object_get(row, key));

	return s ? s : "";
}

/* ------------------------------------------------------------- paths */

/* Is REL relative and free of empty, "." and ".." components?  The
 * record's paths are read back from a file in the project, which a user
 * (or a cloned repository) may have written: "../x" must not reach out. */
/* Read PROJ/REL into d (missing is fine); cap MAX_FILE_BYTES. */
static enum pl_err read_disk(const char *proj, const char *rel, struct disk *d, struct pl_error *err)
{
	char path[PATH_MAX];
	struct stat st;
	int fd;
	ssize_t n;

	if (setup_inside(proj, rel, path, err))
		return err->code;
	fd = open(path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0) {
		if (errno == ENOENT)
			return PL_OK;
		return pl_fail(err, PL_ERR_INPUT, "check the file's permissions", "cannot read '%s': %s", path, strerror(errno));
	}
	if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode) || st.st_size > MAX_FILE_BYTES) {
		close(fd);
		return pl_fail(err, PL_ERR_OUTPUT, "move it away; init manages only regular files of a few MiB",
			       "'%s' is not a regular file of at most 4 MiB", path);
	}
	d->exists = true;
	d->mode = st.st_mode & 07777;
	d->bytes = pl_xmalloc((size_t)st.st_size + 1);
	while (d->len < (size_t)st.st_size &&
	       (n = read(fd, d->bytes + d->len, (size_t)st.st_size - d->len)) > 0)
		d->len += (size_t)n;
	d->bytes[d->len] = '\0';
	close(fd);
	return PL_OK;
}

/* Make the missing folders of REL's parent, recording each (relative) in
 * `made`; `dry` only records. */
static enum pl_err make_parents(const char *proj, const char *rel, json_t *made, bool dry,
				struct pl_error *err)
{
	char path[PATH_MAX], *p;
	struct stat st;

	if (setup_inside(proj, rel, path, err))
		return err->code;
	for (p = path + strlen(proj) + 1; (p = strchr(p, '/')); p++) {
		*p = '\0';
		if (lstat(path, &st) < 0) {
			if (!dry && mkdir(path, 0755) < 0 && errno != EEXIST) {
				pl_fail(err, PL_ERR_OUTPUT, "check that the project folder is writable",
					"cannot create '%s': %s", path, strerror(errno));
				return err->code;
			}
			json_array_append_new(made, json_string(path + strlen(proj) + 1));
		}
		*p = '/';
	}
	return PL_OK;
}

/* Write PROJ/REL atomically, keeping the old file's mode when it had one. */
static enum pl_err write_file(const char *proj, const char *rel, const char *data, size_t len,
			      const struct disk *old, struct pl_error *err)
{
	char path[PATH_MAX];

	if (setup_inside(proj, rel, path, err) || pl_write_file_atomic(path, data, len, err))
		return err->code;
	if (old && old->exists && old->mode != 0644)
		chmod(path, old->mode);
	return PL_OK;
}

static enum pl_err remove_file(const char *proj, const char *rel, struct pl_error *err)
{
	char path[PATH_MAX];

	if (setup_inside(proj, rel, path, err))
		return err->code;
	if (unlink(path) < 0 && errno != ENOENT)
		return pl_fail(err, PL_ERR_OUTPUT, "check that the project folder is writable",
			       "cannot remove '%s': %s", path, strerror(errno));
	return PL_OK;
}

/* --------------------------------------------------- the items' state */

/* A line of `s` at [at, at + n) starts, after blanks, with `prefix`. */
static bool line_starts(const char *s, size_t at, size_t n, const char *prefix)
{
	size_t k = strlen(prefix);

	while (n && (s[at] == ' ' || s[at] == '\t'))
		at++, n--;
	return n >= k && memcmp(s + at, prefix, k) == 0;
}

enum setup_block_state setup_toml_block(const char *s, size_t len, struct setup_block *b)
{
	size_t bl = strlen(SETUP_TOML_BEGIN), el = strlen(SETUP_TOML_END);
	bool begun = false, ended = false;

	memset(b, 0, sizeof(*b));
	for (size_t at = 0; at < len;) {
		const char *nl = memchr(s + at, '\n', len - at);
		size_t n = nl ? (size_t)(nl - s) - at : len - at, next = at + n + (nl ? 1 : 0);

		if (n == bl && memcmp(s + at, SETUP_TOML_BEGIN, bl) == 0) {
			if (begun)
				return SETUP_BLOCK_TWO;
			begun = true;
			b->at = at;
		} else if (begun && !ended && n == el && memcmp(s + at, SETUP_TOML_END, el) == 0) {
			ended = true;
			b->len = next - b->at;
		} else if ((!begun || ended) && (line_starts(s, at, n, "[mcp_servers.perflens]") ||
						 line_starts(s, at, n, "[mcp_servers.\"perflens\"]"))) {
			b->foreign_table = true;  /* a perflens table of the user's */
		}
		at = next;
	}
	if (begun && !ended)
		return SETUP_BLOCK_UNENDED;
	return begun ? SETUP_BLOCK_FOUND : SETUP_BLOCK_NONE;
}

/* Find the one marked block in `d` (TOML); PL_ERR_OUTPUT when the
 * markers are broken or doubled. */
static enum pl_err find_block(const char *rel, struct disk *d, struct pl_error *err)
{
	struct setup_block b;

	switch (setup_toml_block(d->bytes, d->len, &b)) {
	case SETUP_BLOCK_TWO:
		return pl_fail(err, PL_ERR_OUTPUT, "keep one PerfLens block; remove the other by hand",
			       "'%s' has two PerfLens blocks", rel);
	case SETUP_BLOCK_UNENDED:
		return pl_fail(err, PL_ERR_OUTPUT, "restore the '" SETUP_TOML_END "' line or remove the block",
			       "'%s' has a PerfLens block without its end line", rel);
	case SETUP_BLOCK_FOUND:
		d->present = true;
		d->block_at = b.at;
		d->block_len = b.len;
		pl_sha256_hex(d->bytes + b.at, b.len, d->sha);
		break;
	case SETUP_BLOCK_NONE:
		break;
	}
	d->foreign_table = b.foreign_table;
	return PL_OK;
}

/* The compact, key-sorted text of a JSON value (new string). */
static char *canonical(json_t *v)
{
	return json_dumps(v, JSON_COMPACT | JSON_SORT_KEYS | JSON_ENCODE_ANY);
}

/* Parse `d` as .mcp.json and find mcpServers.perflens. */
static enum pl_err find_entry(const char *rel, struct disk *d, struct pl_error *err)
{
	json_error_t je;
	json_t *servers, *e;
	char *c;

	if (!d->exists || d->len == 0) {
		d->doc = json_object();
		return PL_OK;
	}
	d->doc = json_loadb(d->bytes, d->len, 0, &je);
	servers = json_object_get(d->doc, "mcpServers");
	if (!json_is_object(d->doc) || (servers && !json_is_object(servers)))
		return pl_fail(err, PL_ERR_OUTPUT, "fix the file so that it is a JSON object with an mcpServers object",
			       "'%s' is not a Claude Code MCP config (%s)", rel,
			       d->doc ? "mcpServers is not an object" : je.text);
	if ((e = json_object_get(servers, SETUP_SERVER_NAME))) {
		d->present = true;
		c = canonical(e);
		pl_sha256_hex(c, strlen(c), d->sha);
		free(c);
	}
	return PL_OK;
}

static enum pl_err read_item(const char *proj, struct item *it, struct pl_error *err)
{
	disk_release(&it->d);
	if (read_disk(proj, it->rel, &it->d, err))
		return err->code;
	if (it->kind == ITEM_TOML && it->d.exists)
		return find_block(it->rel, &it->d, err);
	if (it->kind == ITEM_JSON)
		return find_entry(it->rel, &it->d, err);
	if (it->d.exists) {
		it->d.present = true;
		pl_sha256_hex(it->d.bytes, it->d.len, it->d.sha);
	}
	return PL_OK;
}

/* ------------------------------------------------------------- plans */

struct plan {
	const char *client;
	struct item items[MAX_ITEMS];
	size_t n;
	json_t *args;          /* the server's arguments */
};

static struct item *plan_add(struct plan *p, enum item_kind kind, const char *rel, char *content)
{
	struct item *it = &p->items[p->n++];

	memset(it, 0, sizeof(*it));
	it->kind = kind;
	snprintf(it->rel, sizeof(it->rel), "%s", rel);
	it->content = content;
	pl_sha256_hex(content, strlen(content), it->sha);
	return it;
}

/* The client's items: its registration, then the Skill's files. */
static void plan_client(struct plan *p, const char *client, const char *server, json_t *args)
{
	char rel[PATH_MAX];
	const char *frel, *text;

	p->client = client;
	p->args = json_incref(args);
	if (strcmp(client, "codex") == 0) {
		struct pl_buf b = {0};

		pl_buf_adds(&b, SETUP_TOML_BEGIN "\n");
		setup_codex_table(&b, server, args);
		pl_buf_adds(&b, SETUP_TOML_END "\n");
		plan_add(p, ITEM_TOML, ".codex/config.toml", b.data);
	} else {
		json_t *e = setup_claude_entry(server, args);
		struct item *it = plan_add(p, ITEM_JSON, ".mcp.json", canonical(e));

		it->entry = e;
	}
	for (size_t i = 0; p->n < MAX_ITEMS && setup_skill_file(i, &frel, &text); i++) {
		snprintf(rel, sizeof(rel), "%s/%s/%s", setup_skills_dir(client), PL_SKILL_NAME, frel);
		plan_add(p, ITEM_FILE, rel, pl_xstrdup(text))->skill = true;
	}
}

static void plan_release(struct plan *p)
{
	for (size_t i = 0; i < p->n; i++)
		item_release(&p->items[i]);
	json_decref(p->args);
	p->n = 0;
}

/* The record's row for `rel` in client record `crec`, or NULL. */
static json_t *record_row(json_t *crec, const char *rel)
{
	size_t i;
	json_t *row;

	json_array_foreach(json_object_get(crec, "files"), i, row)
		if (strcmp(rs(row, "path"), rel) == 0)
			return row;
	return NULL;
}

/* ------------------------------------------------------- init: decide */

static enum pl_err refuse(struct pl_error *err, const char *hint, const char *rel, const char *why)
{
	return pl_fail(err, PL_ERR_OUTPUT, hint, "refusing to touch '%s': %s", rel, why);
}

/* An item init has not written before: create, take over an identical
 * one as preexisting, or refuse. */
static enum pl_err decide_new(struct item *it, struct pl_error *err)
{
	const struct disk *d = &it->d;

	if (it->kind == ITEM_TOML && d->foreign_table)
		return refuse(err, "remove your [mcp_servers.perflens] table; init then writes its own block",
			      it->rel, "it already registers perflens outside a PerfLens block");
	if (!d->present) {
		it->action = d->exists ? "add" : "create";
		it->writes = true;
	} else if (strcmp(d->sha, it->sha) == 0) {
		/* Ours by its markers (a TOML block), or already identical:
		 * kept, and a file init did not write stays at detach. */
		it->action = it->kind == ITEM_TOML ? "adopted" : "preexisting";
	} else {
		return refuse(err, it->kind == ITEM_FILE ? "move the file away, or keep yours and skip this client" :
			      "remove that perflens server (or its block) first, or keep yours and skip this client",
			      it->rel, it->kind == ITEM_FILE ? "it exists and is not PerfLens's copy" :
			      "it already registers a different perflens server");
	}
	return PL_OK;
}

/* An item init wrote before (row `rec`). */
static enum pl_err decide_recorded(struct item *it, bool update, struct pl_error *err)
{
	bool as_written = it->d.present && strcmp(it->d.sha, rs(it->rec, "sha256")) == 0;
	bool same_plan = strcmp(it->sha, rs(it->rec, "sha256")) == 0;

	if (json_is_true(json_object_get(it->rec, "preexisting")))
		as_written = it->d.present;  /* not ours: never rewritten */
	if (!as_written && update)
		return refuse(err, "undo your edit (or run perflens detach, then init) to let --update rewrite it",
			      it->rel, it->d.present ? "you changed it since init wrote it" : "it was removed since init wrote it");
	if (!as_written) {
		it->action = "changed_by_user";
		return PL_OK;
	}
	if (same_plan) {
		it->action = "unchanged";
		return PL_OK;
	}
	if (!update)
		return pl_fail(err, PL_ERR_OUTPUT, "pass --update to rewrite what init wrote",
			       "'%s' was written with other choices or by another perflens", it->rel);
	if (json_is_true(json_object_get(it->rec, "preexisting")))
		return refuse(err, "remove it to let init write its own", it->rel, "it was there before init");
	it->action = "update";
	it->writes = true;
	return PL_OK;
}

/* Rows of the record the new plan no longer has: removed on --update
 * when still as written. */
static enum pl_err decide_dropped(const char *proj, struct plan *p, json_t *crec, bool update,
				  json_t *dropped, struct pl_error *err)
{
	size_t i, k;
	json_t *row;

	json_array_foreach(json_object_get(crec, "files"), i, row) {
		bool kept = false;
		struct disk d = {0};

		for (k = 0; k < p->n && !kept; k++)
			kept = strcmp(p->items[k].rel, rs(row, "path")) == 0;
		if (kept)
			continue;
		if (!update)
			return pl_fail(err, PL_ERR_OUTPUT, "pass --update to rewrite what init wrote",
				       "'%s' was written by another perflens", rs(row, "path"));
		if (read_disk(proj, rs(row, "path"), &d, err))
			return err->code;
		if (d.exists) {
			char sha[65];

			pl_sha256_hex(d.bytes, d.len, sha);
			if (strcmp(sha, rs(row, "sha256")) != 0) {
				disk_release(&d);
				return refuse(err, "undo your edit or remove the file yourself", rs(row, "path"),
					      "you changed it, and this perflens no longer writes it");
			}
			json_array_append_new(dropped, json_string(rs(row, "path")));
		}
		disk_release(&d);
	}
	return PL_OK;
}

/* ------------------------------------------------------- init: write */

/* The new text of a TOML file: the block put in place of the old one, or
 * appended (after a newline when the file does not end with one); *len
 * gets its length (the user's bytes may hold a NUL). */
static char *toml_text(const struct item *it, const char **sep, size_t *len)
{
	const struct disk *d = &it->d;
	struct pl_buf b = {0};

	*sep = "";
	if (d->present) {
		pl_buf_add(&b, d->bytes, d->block_at);
		pl_buf_adds(&b, it->content);
		pl_buf_add(&b, d->bytes + d->block_at + d->block_len, d->len - d->block_at - d->block_len);
	} else {
		if (d->exists)
			pl_buf_add(&b, d->bytes, d->len);
		if (d->len && d->bytes[d->len - 1] != '\n') {
			*sep = "\n";
			pl_buf_addc(&b, '\n');
		}
		pl_buf_adds(&b, it->content);
	}
	*len = b.len;
	pl_buf_addc(&b, '\0');
	return b.data;
}

/* .mcp.json with the entry set, as indented JSON (key order kept). */
static char *json_text(const struct item *it)
{
	json_t *doc = json_deep_copy(it->d.doc), *servers = json_object_get(doc, "mcpServers");
	char *text;
	struct pl_buf b = {0};

	if (!servers) {
		servers = json_object();
		json_object_set_new(doc, "mcpServers", servers);
	}
	json_object_set(servers, SETUP_SERVER_NAME, it->entry);
	text = json_dumps(doc, JSON_INDENT(2));
	pl_buf_adds(&b, text);
	pl_buf_adds(&b, "\n");
	pl_buf_addc(&b, '\0');
	free(text);
	json_decref(doc);
	return b.data;
}

/* Carry out one item's action; its new record row goes to `rows`. */
static enum pl_err write_item(const char *proj, struct item *it, json_t *made, json_t *rows,
			      struct pl_error *err)
{
	json_t *row = it->rec ? json_deep_copy(it->rec) : json_object();
	const char *sep = "";
	char *text = NULL;
	size_t len = 0;
	enum pl_err rc = PL_OK;

	if (!it->rec) {
		json_object_set_new(row, "path", json_string(it->rel));
		json_object_set_new(row, "kind", json_string(kind_names[it->kind]));
		json_object_set_new(row, "created", json_boolean(!it->d.exists));
		if (strcmp(it->action, "preexisting") == 0)
			json_object_set_new(row, "preexisting", json_true());
	}
	if (it->writes || !it->rec)
		json_object_set_new(row, "sha256", json_string(it->sha));
	if (it->writes) {
		if (it->kind == ITEM_TOML)
			text = toml_text(it, &sep, &len);
		else
			len = strlen(text = it->kind == ITEM_JSON ? json_text(it) : pl_xstrdup(it->content));
		if (it->kind == ITEM_TOML && !it->d.present)
			json_object_set_new(row, "separator", json_string(sep));
		if (it->kind == ITEM_JSON && it->d.exists && !it->rec)
			rc = write_file(proj, BACKUP_REL, it->d.bytes, it->d.len, NULL, err);
		if (it->kind == ITEM_JSON && it->d.exists && !it->rec && rc == PL_OK)
			json_object_set_new(row, "backup", json_string(BACKUP_REL));
		if (rc == PL_OK)
			rc = make_parents(proj, it->rel, made, false, err);
		if (rc == PL_OK)
			rc = write_file(proj, it->rel, text, len, &it->d, err);
	}
	free(text);
	if (rc == PL_OK)
		json_array_append_new(rows, row);
	else
		json_decref(row);
	return rc;
}

/* ------------------------------------------------------- the record */

json_t *setup_load_record(const char *proj, bool *exists, struct pl_error *err)
{
	struct disk d = {0};
	json_error_t je;
	json_t *r = NULL;

	if (read_disk(proj, RECORD_REL, &d, err))
		return NULL;
	*exists = d.exists;
	if (!d.exists) {
		disk_release(&d);
		return json_pack("{s:i,s:{}}", "format", 1, "clients");
	}
	r = json_loadb(d.bytes, d.len, 0, &je);
	if (!json_is_object(r) || !json_is_object(json_object_get(r, "clients"))) {
		json_decref(r);
		r = NULL;
		pl_fail(err, PL_ERR_INPUT, "move it away: perflens init then starts afresh (and forgets what it wrote)",
			"'%s/" RECORD_REL "' is not a PerfLens setup record", proj);
	}
	disk_release(&d);
	return r;
}

static json_t *load_record(const char *proj, struct pl_error *err)
{
	bool exists;

	return setup_load_record(proj, &exists, err);
}

/* The item of a recorded row, read from disk (release it). */
static enum pl_err read_row(const char *proj, json_t *row, struct item *it, struct pl_error *err)
{
	const char *kind = rs(row, "kind");

	memset(it, 0, sizeof(*it));
	snprintf(it->rel, sizeof(it->rel), "%s", rs(row, "path"));
	it->kind = strcmp(kind, "toml_block") == 0 ? ITEM_TOML : strcmp(kind, "json_entry") == 0 ? ITEM_JSON : ITEM_FILE;
	it->skill = strstr(it->rel, "/skills/" PL_SKILL_NAME "/") != NULL;
	return read_item(proj, it, err);
}

const char *setup_row_state(const char *proj, json_t *row)
{
	struct pl_error err;
	struct item it;
	const char *state;

	if (read_row(proj, row, &it, &err))
		state = "unreadable";
	else if (!it.d.present)
		state = "missing";
	else
		state = strcmp(it.d.sha, rs(row, "sha256")) == 0 ? "as_written" : "changed";
	disk_release(&it.d);
	return state;
}

static enum pl_err store_record(const char *proj, json_t *rec, struct pl_error *err)
{
	json_t *made = json_array();
	char *text;
	struct pl_buf b = {0};
	enum pl_err rc;

	json_object_set_new(rec, "written_by", json_string("perflens " PL_VERSION));
	text = json_dumps(rec, JSON_INDENT(2) | JSON_SORT_KEYS);
	pl_buf_adds(&b, text);
	pl_buf_adds(&b, "\n");
	free(text);
	rc = make_parents(proj, RECORD_REL, made, false, err);
	if (rc == PL_OK)
		rc = write_file(proj, RECORD_REL, b.data, b.len, NULL, err);
	pl_buf_release(&b);
	json_decref(made);
	return rc;
}

/* The clients a --client value names (all when NULL). */
static enum pl_err pick_clients(const char *given, const char **out, size_t *n, struct pl_error *err)
{
	*n = 0;
	for (size_t i = 0; i < PL_ARRAY_LEN(all_clients); i++)
		if (!given || strcmp(given, "all") == 0 || strcmp(given, all_clients[i]) == 0)
			out[(*n)++] = all_clients[i];
	if (*n == 0)
		return pl_fail(err, PL_ERR_USAGE, "use --client codex, claude-code or all",
			       "unknown client '%s'", given);
	return PL_OK;
}

/* ------------------------------------------------------------- init */

struct init_opts {
	const char *project, *client, *server;
	struct setup_choices choices;
	bool update, table;
};

static void init_usage(FILE *out)
{
	fprintf(out,
		"usage: " INIT_USAGE " [--format table|json]\n\n"
		"Register the PerfLens MCP server and install the Skill for Codex and/or Claude Code,\n"
		"in project-scoped files only (never a global client config):\n"
		"  codex        .codex/config.toml (a marked block; the rest of the file is kept)\n"
		"               .agents/skills/" PL_SKILL_NAME "/\n"
		"  claude-code  .mcp.json (merged: other servers kept)\n"
		"               .claude/skills/" PL_SKILL_NAME "/\n"
		"What was written is recorded with each file's SHA-256 in DIR/" RECORD_REL ".\n"
		"Running it again changes nothing; --update rewrites only files still as written\n"
		"and refuses, naming the file, where you edited one.\n\n"
		"  --project DIR       the project root (must exist)\n"
		"  --client CLIENT     codex, claude-code or all (default all)\n"
		"  --read-only         the server gets no --allow-writes\n"
		"  --allow-collection  the server may run perf and collect (--allow-process-execution\n"
		"                      --allow-collection; each collection still needs its phrase)\n"
		"  --update            rewrite what init wrote, for new choices or a new perflens\n"
		"  --server PATH       the MCP server binary (default: " SETUP_MCP_BINARY " beside this perflens)\n"
		"  --format table|json the result as a table or as JSON (default)\n");
}

static void init_table(json_t *r, FILE *out)
{
	size_t i, k;
	json_t *c, *f;

	fprintf(out, "project %s (%s)\n", rs(r, "project"),
		json_is_true(json_object_get(r, "changed")) ? "changed" : "nothing to change");
	json_array_foreach(json_object_get(r, "clients"), i, c) {
		fprintf(out, "%s: server %s\n", rs(c, "client"), rs(c, "server"));
		json_array_foreach(json_object_get(c, "files"), k, f)
			fprintf(out, "  %-16s %s\n", rs(f, "action"), rs(f, "path"));
	}
	fprintf(out, "record %s\n", rs(r, "record"));
	json_array_foreach(json_object_get(r, "notes"), i, c)
		fprintf(out, "note: %s\n", json_string_value(c));
}

/* Decide every item of every plan; PL_OK when nothing is refused. */
static enum pl_err init_decide(const char *proj, struct plan *plans, size_t nplans, json_t *record,
			       bool update, json_t **dropped, struct pl_error *err)
{
	for (size_t c = 0; c < nplans; c++) {
		json_t *crec = json_object_get(json_object_get(record, "clients"), plans[c].client);

		dropped[c] = json_array();
		for (size_t i = 0; i < plans[c].n; i++) {
			struct item *it = &plans[c].items[i];

			it->rec = record_row(crec, it->rel);
			if (read_item(proj, it, err) ||
			    (it->rec ? decide_recorded(it, update, err) : decide_new(it, err)))
				return err->code;
		}
		if (crec && decide_dropped(proj, &plans[c], crec, update, dropped[c], err))
			return err->code;
	}
	return PL_OK;
}

/* Carry out the plans and build the result; *changed when anything was
 * written. */
static enum pl_err init_write(const char *proj, const char *server, const struct init_opts *o,
			      struct plan *plans, size_t nplans, json_t *record, json_t **dropped,
			      json_t *out, bool *changed, struct pl_error *err)
{
	json_t *clients = json_object_get(record, "clients");

	*changed = false;
	for (size_t c = 0; c < nplans; c++) {
		json_t *crec = json_object_get(clients, plans[c].client);
		json_t *made = json_array(), *rows = json_array(), *files = json_array(), *s;
		size_t i;

		json_array_extend(made, json_object_get(crec, "dirs"));
		for (i = 0; i < plans[c].n; i++) {
			struct item *it = &plans[c].items[i];

			if (write_item(proj, it, made, rows, err)) {
				json_decref(made), json_decref(rows), json_decref(files);
				return err->code;
			}
			*changed |= it->writes;
			json_array_append_new(files, json_pack("{s:s,s:s}", "path", it->rel, "action", it->action));
		}
		json_array_foreach(dropped[c], i, s) {
			if (remove_file(proj, json_string_value(s), err)) {
				json_decref(made), json_decref(rows), json_decref(files);
				return err->code;
			}
			*changed = true;
			json_array_append_new(files, json_pack("{s:O,s:s}", "path", s, "action", "removed"));
		}
		json_object_set_new(clients, plans[c].client,
			json_pack("{s:s,s:O,s:{s:b,s:b},s:o,s:o}", "server", server, "args", plans[c].args,
				  "choices", "read_only", o->choices.read_only, "allow_collection",
				  o->choices.allow_collection, "files", rows, "dirs", made));
		json_array_append_new(out, json_pack("{s:s,s:s,s:O,s:o}", "client", plans[c].client,
						     "server", server, "args", plans[c].args, "files", files));
	}
	return PL_OK;
}

/* What the user still has to do in each client (new). */
static json_t *init_notes(const char **clients, size_t n)
{
	json_t *notes = json_array();

	for (size_t c = 0; c < n; c++)
		json_array_append_new(notes, json_string(strcmp(clients[c], "codex") == 0 ?
			"codex reads .codex/config.toml only in a trusted project: trust it when codex asks (or in ~/.codex/config.toml)" :
			"claude code asks once to approve the project's .mcp.json server: approve perflens when it asks"));
	return notes;
}

static int run_init(const struct init_opts *o)
{
	char proj[PATH_MAX], server[PATH_MAX];
	const char *clients[PL_ARRAY_LEN(all_clients)];
	struct plan *plans = NULL;
	json_t *record = NULL, *args = NULL, *dropped[PL_ARRAY_LEN(all_clients)] = {0}, *out = NULL;
	struct pl_error err;
	size_t n = 0;
	bool changed = false;
	int code = 0;

	pl_error_clear(&err);
	if (!o->project) {
		pl_fail(&err, PL_ERR_USAGE, "usage: " INIT_USAGE, "'--project' is required");
		return cli_fail(&err);
	}
	if (setup_resolve_dir("project", o->project, "pass an existing folder: " INIT_USAGE, proj, &err) ||
	    pick_clients(o->client, clients, &n, &err) || setup_server_path(o->server, server, &err))
		return cli_fail(&err);
	if (!setup_valid_utf8(proj) || !setup_valid_utf8(server)) {
		pl_fail(&err, PL_ERR_USAGE, "use paths that are valid UTF-8 (TOML and JSON cannot hold others)",
			"'%s' is not valid UTF-8", setup_valid_utf8(proj) ? server : proj);
		return cli_fail(&err);
	}
	if (!(record = load_record(proj, &err)))
		return cli_fail(&err);
	args = setup_server_args(proj, &o->choices);
	plans = pl_xcalloc(n, sizeof(*plans));
	for (size_t c = 0; c < n; c++)
		plan_client(&plans[c], clients[c], server, args);
	out = json_array();
	if (init_decide(proj, plans, n, record, o->update, dropped, &err) ||
	    init_write(proj, server, o, plans, n, record, dropped, out, &changed, &err) ||
	    (changed && store_record(proj, record, &err)))
		code = cli_fail(&err);
	else
		code = setup_emit(json_pack("{s:s,s:b,s:O,s:s,s:o}", "project", proj, "changed", changed,
					    "clients", out, "record", RECORD_REL, "notes", init_notes(clients, n)),
				  o->table, init_table);
	for (size_t c = 0; c < n; c++) {
		plan_release(&plans[c]);
		json_decref(dropped[c]);
	}
	free(plans);
	json_decref(out);
	json_decref(args);
	json_decref(record);
	return code;
}

int cli_init(int argc, char **argv)
{
	struct init_opts o = {0};
	const struct setup_flag flags[] = {
		{"project", &o.project, NULL}, {"client", &o.client, NULL}, {"server", &o.server, NULL},
		{"read-only", NULL, &o.choices.read_only},
		{"allow-collection", NULL, &o.choices.allow_collection},
		{"update", NULL, &o.update}, {NULL, NULL, NULL},
	};
	struct pl_error err;
	bool help;

	pl_error_clear(&err);
	if (setup_parse_flags(argc, argv, "usage: " INIT_USAGE, flags, &o.table, &help, &err))
		return cli_fail(&err);
	if (help) {
		init_usage(stdout);
		return 0;
	}
	if (o.choices.read_only && o.choices.allow_collection) {
		pl_fail(&err, PL_ERR_USAGE, "drop --read-only: collection writes its recordings",
			"--allow-collection needs writes");
		return cli_fail(&err);
	}
	return run_init(&o);
}

/* ------------------------------------------------------------ detach */

struct detach_opts {
	const char *project, *client;
	bool dry_run, keep_skills, table;
};

static void detach_usage(FILE *out)
{
	fprintf(out,
		"usage: " DETACH_USAGE " [--format table|json]\n\n"
		"Remove exactly what perflens init wrote (as recorded in DIR/" RECORD_REL "):\n"
		"a file, block or entry you changed since is reported and kept, and so is anything\n"
		"you added; analyses and artifacts (perflens-results/) are kept.\n\n"
		"  --project DIR     the project root\n"
		"  --client CLIENT   codex, claude-code or all (default all)\n"
		"  --dry-run         say what would be removed, remove nothing\n"
		"  --keep-skills     leave the installed Skills in place\n"
		"  --format table|json\n");
}

static void detach_table(json_t *r, FILE *out)
{
	size_t i;
	json_t *f;

	fprintf(out, "project %s%s\n", rs(r, "project"),
		json_is_true(json_object_get(r, "dry_run")) ? " (dry run: nothing removed)" : "");
	json_array_foreach(json_object_get(r, "files"), i, f)
		fprintf(out, "  %-12s %-26s %s\n", rs(f, "client"), rs(f, "action"), rs(f, "path"));
}

/* The bytes the user had: the .mcp.json backed up at init, or NULL. */
static json_t *backup_doc(const char *proj, json_t *row, struct disk *bk, struct pl_error *err)
{
	if (!*rs(row, "backup") || read_disk(proj, rs(row, "backup"), bk, err) || !bk->exists)
		return NULL;
	return json_loadb(bk->bytes, bk->len, 0, NULL);
}

/* Remove our .mcp.json entry: back to the user's own bytes when what is
 * left equals what they had, else the rest re-serialised; the file goes
 * when init created it and nothing is left. */
static enum pl_err detach_json(const char *proj, json_t *row, struct item *it, bool dry,
			       struct pl_error *err)
{
	json_t *doc = json_deep_copy(it->d.doc), *servers = json_object_get(doc, "mcpServers"), *had;
	struct disk bk = {0};
	enum pl_err rc = PL_OK;
	char *text;

	json_object_del(servers, SETUP_SERVER_NAME);
	had = backup_doc(proj, row, &bk, err);
	if (had && json_equal(had, doc)) {
		it->action = "removed_entry";
		if (!dry)
			rc = write_file(proj, it->rel, bk.bytes, bk.len, &it->d, err);
	} else if (json_is_true(json_object_get(row, "created")) && json_object_size(servers) == 0 &&
		   json_object_size(doc) == 1) {
		it->action = "removed";
		if (!dry)
			rc = remove_file(proj, it->rel, err);
	} else {
		it->action = "removed_entry";
		text = json_dumps(doc, JSON_INDENT(2));
		if (!dry) {
			struct pl_buf b = {0};

			pl_buf_adds(&b, text);
			pl_buf_adds(&b, "\n");
			rc = write_file(proj, it->rel, b.data, b.len, &it->d, err);
			pl_buf_release(&b);
		}
		free(text);
	}
	json_decref(had);
	json_decref(doc);
	disk_release(&bk);
	return rc;
}

/* Remove our TOML block and the newline init put before it; the file
 * goes when init created it and nothing is left. */
static enum pl_err detach_toml(const char *proj, json_t *row, struct item *it, bool dry,
			       struct pl_error *err)
{
	const struct disk *d = &it->d;
	const char *sep = rs(row, "separator");
	size_t at = d->block_at, seplen = strlen(sep);
	struct pl_buf b = {0};
	enum pl_err rc = PL_OK;

	if (seplen && at >= seplen && memcmp(d->bytes + at - seplen, sep, seplen) == 0)
		at -= seplen;
	pl_buf_add(&b, d->bytes, at);
	pl_buf_add(&b, d->bytes + d->block_at + d->block_len, d->len - d->block_at - d->block_len);
	if (b.len == 0 && json_is_true(json_object_get(row, "created"))) {
		it->action = "removed";
		if (!dry)
			rc = remove_file(proj, it->rel, err);
	} else {
		it->action = "removed_block";
		if (!dry)
			rc = write_file(proj, it->rel, b.data ? b.data : "", b.len, d, err);
	}
	pl_buf_release(&b);
	return rc;
}

/* One recorded row: decide and (unless dry) do. */
static enum pl_err detach_row(const char *proj, json_t *row, const struct detach_opts *o,
			      json_t *files, const char *client, struct pl_error *err)
{
	struct item it = {0};
	bool skill = strstr(rs(row, "path"), "/skills/" PL_SKILL_NAME "/") != NULL;
	enum pl_err rc = PL_OK;

	snprintf(it.rel, sizeof(it.rel), "%s", rs(row, "path"));
	if (json_is_true(json_object_get(row, "preexisting")))
		it.action = "kept_preexisting";
	else if (skill && o->keep_skills)
		it.action = "kept_skill";
	else if ((rc = read_row(proj, row, &it, err)))
		;
	else if (!it.d.present)
		it.action = "already_gone";
	else if (strcmp(it.d.sha, rs(row, "sha256")) != 0)
		it.action = "kept_changed";
	else if (it.kind == ITEM_JSON)
		rc = detach_json(proj, row, &it, o->dry_run, err);
	else if (it.kind == ITEM_TOML)
		rc = detach_toml(proj, row, &it, o->dry_run, err);
	else {
		it.action = "removed";
		if (!o->dry_run)
			rc = remove_file(proj, it.rel, err);
	}
	if (rc == PL_OK)
		json_array_append_new(files, json_pack("{s:s,s:s,s:s}", "client", client, "path", it.rel,
						       "action", it.action));
	disk_release(&it.d);
	return rc;
}

/* rmdir the folders init made, deepest first (only the empty ones go). */
static void remove_dirs(const char *proj, json_t *dirs)
{
	char path[PATH_MAX];
	struct pl_error ignored;

	for (size_t i = json_array_size(dirs); i-- > 0;)
		if (setup_inside(proj, json_string_value(json_array_get(dirs, i)), path, &ignored) == PL_OK)
			rmdir(path);
}

static enum pl_err detach_clients(const char *proj, json_t *record, const char **clients, size_t n,
				  const struct detach_opts *o, json_t *files, struct pl_error *err)
{
	json_t *all = json_object_get(record, "clients");

	for (size_t c = 0; c < n; c++) {
		json_t *crec = json_object_get(all, clients[c]), *row;
		size_t i;

		if (!crec)
			continue;
		json_array_foreach(json_object_get(crec, "files"), i, row)
			if (detach_row(proj, row, o, files, clients[c], err))
				return err->code;
		if (o->dry_run)
			continue;
		remove_dirs(proj, json_object_get(crec, "dirs"));
		json_object_del(all, clients[c]);
	}
	return PL_OK;
}

/* The record without the detached clients, or none at all. */
static enum pl_err detach_record(const char *proj, json_t *record, struct pl_error *err)
{
	char path[PATH_MAX];

	if (json_object_size(json_object_get(record, "clients")))
		return store_record(proj, record, err);
	if (remove_file(proj, RECORD_REL, err) || remove_file(proj, BACKUP_REL, err))
		return err->code;
	if (setup_inside(proj, ".perflens", path, err) == PL_OK)
		rmdir(path);
	return PL_OK;
}

static int run_detach(const struct detach_opts *o)
{
	char proj[PATH_MAX], path[PATH_MAX];
	const char *clients[PL_ARRAY_LEN(all_clients)];
	struct pl_error err;
	json_t *record = NULL, *files;
	size_t n = 0;
	struct stat st;
	int code;

	pl_error_clear(&err);
	if (!o->project) {
		pl_fail(&err, PL_ERR_USAGE, "usage: " DETACH_USAGE, "'--project' is required");
		return cli_fail(&err);
	}
	if (setup_resolve_dir("project", o->project, "pass an existing folder: " DETACH_USAGE, proj, &err) ||
	    pick_clients(o->client, clients, &n, &err) || setup_inside(proj, RECORD_REL, path, &err))
		return cli_fail(&err);
	if (lstat(path, &st) < 0) {
		pl_fail(&err, PL_ERR_INPUT, "nothing to detach: perflens init did not set this project up",
			"'%s' has no " RECORD_REL, proj);
		return cli_fail(&err);
	}
	if (!(record = load_record(proj, &err)))
		return cli_fail(&err);
	files = json_array();
	if (detach_clients(proj, record, clients, n, o, files, &err) ||
	    (!o->dry_run && detach_record(proj, record, &err)))
		code = cli_fail(&err);
	else
		code = setup_emit(json_pack("{s:s,s:b,s:O}", "project", proj, "dry_run", o->dry_run,
					    "files", files), o->table, detach_table);
	json_decref(files);
	json_decref(record);
	return code;
}

int cli_detach(int argc, char **argv)
{
	struct detach_opts o = {0};
	const struct setup_flag flags[] = {
		{"project", &o.project, NULL}, {"client", &o.client, NULL},
		{"dry-run", NULL, &o.dry_run}, {"keep-skills", NULL, &o.keep_skills}, {NULL, NULL, NULL},
	};
	struct pl_error err;
	bool help;

	pl_error_clear(&err);
	if (setup_parse_flags(argc, argv, "usage: " DETACH_USAGE, flags, &o.table, &help, &err))
		return cli_fail(&err);
	if (help) {
		detach_usage(stdout);
		return 0;
	}
	return run_detach(&o);
}
