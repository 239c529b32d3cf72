/* store.c - the fleet store's HTTP client (see store.h).
 *
 * One statement is one POST to ENDPOINT/?database=DB, its text (and an
 * INSERT's rows) the body, with libcurl kept as debuginfod keeps it: http
 * and https only, no redirects (a store does not move), no signals, a
 * total timeout, and a write callback that stops at FLEET_MAX_ANSWER.
 */
#include "store.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/curl.h"
#include "base/version.h"

#define DEFAULT_TIMEOUT_MS 10000u
#define QUOTED_ERROR 300   /* bytes of the store's refusal an error quotes */

enum pl_err fleet_parse_url(const char *url, char *endpoint, size_t ecap, char *db, size_t dbcap,
			    struct pl_error *err)
{
	const char *host, *slash;
	size_t n;

	if (strncmp(url, "http://", 7) == 0)
		host = url + 7;
	else if (strncmp(url, "https://", 8) == 0)
		host = url + 8;
	else
		host = NULL;
	slash = host ? strchr(host, '/') : NULL;
	if (!host || !slash || slash == host || !slash[1] || strlen(slash + 1) >= dbcap ||
	    (size_t)(slash - url) >= ecap)
		return pl_fail(err, PL_ERR_USAGE, "pass --fleet-store http://HOST:PORT/DATABASE (ClickHouse's "
			       "HTTP port, 8123 by default; https where the store has TLS)",
			       "the fleet store URL '%.200s' is not http(s)://HOST[:PORT]/DATABASE", url);
	for (n = 1; slash[n]; n++)
		if (!isalnum((unsigned char)slash[n]) && slash[n] != '_')
			return pl_fail(err, PL_ERR_USAGE, "name the database with letters, digits and '_'",
				       "the fleet store's database '%.100s' holds '%c'", slash + 1, slash[n]);
	memcpy(endpoint, url, (size_t)(slash - url));
	endpoint[slash - url] = '\0';
	snprintf(db, dbcap, "%s", slash + 1);
	return PL_OK;
}

enum pl_err fleet_read_credentials(const char *path, char *user, char *password,
				   struct pl_error *err)
{
	char line[600];
	FILE *f = fopen(path, "re");
	char *colon;

	if (!f)
		return pl_fail(err, PL_ERR_USAGE, "pass a readable file holding USER:PASSWORD",
			       "cannot read the fleet credentials file %.200s", path);
	if (!fgets(line, sizeof(line), f))
		line[0] = '\0';
	fclose(f);
	line[strcspn(line, "\r\n")] = '\0';
	colon = strchr(line, ':');
	if (!colon || colon == line || colon - line > 255 || strlen(colon + 1) > 255)
		return pl_fail(err, PL_ERR_USAGE, "write USER:PASSWORD on the file's first line",
			       "the fleet credentials file %.200s does not hold USER:PASSWORD", path);
	*colon = '\0';
	memcpy(user, line, strlen(line) + 1);            /* at most 255 bytes and its NUL: checked above */
	memcpy(password, colon + 1, strlen(colon + 1) + 1);
	return PL_OK;
}

bool fleet_label_ok(const char *label)
{
	const char *eq = strchr(label, '=');
	size_t klen, i;

	if (!eq || eq == label || (klen = (size_t)(eq - label)) > 64 || strlen(eq + 1) > 128)
		return false;
	for (i = 0; i < klen; i++)
		if (!isalnum((unsigned char)label[i]) && !strchr("_.-", label[i]))
			return false;
	for (i = 1; eq[i]; i++)
		if (eq[i] < 0x20 || eq[i] > 0x7e)
			return false;
	return true;
}

void fleet_sql_quote(struct pl_buf *b, const char *s)
{
	pl_buf_addc(b, '\'');
	for (; *s; s++) {
		if (*s == '\'' || *s == '\\')
			pl_buf_addc(b, '\\');
		pl_buf_addc(b, *s);
	}
	pl_buf_addc(b, '\'');
}

void fleet_table(const struct fleet_cfg *cfg, const char *base, char *out, size_t cap)
{
	snprintf(out, cap, "%s_%s", base, cfg->cluster ? "all" : "local");
}

struct answer_sink {
	struct pl_buf *buf;   /* NULL: the body is counted, not kept */
	size_t seen;
	bool too_big;
};

static size_t on_answer(char *data, size_t size, size_t nmemb, void *arg)
{
	struct answer_sink *a = arg;
	size_t n = size * nmemb;

	if (a->seen + n > FLEET_MAX_ANSWER) {
		a->too_big = true;
		return 0;
	}
	a->seen += n;
	if (a->buf)
		pl_buf_add(a->buf, data, n);
	return n;
}

/* The request's options: bounded, http(s) only, basic auth when set. */
static CURLcode set_options(const struct pl_curl_api *c, CURL *h, const struct fleet_cfg *cfg,
			    const char *url, const struct pl_buf *body, struct answer_sink *sink,
			    char *errbuf)
{
	uint32_t t = cfg->timeout_ms ? cfg->timeout_ms : DEFAULT_TIMEOUT_MS;
	CURLcode rc = CURLE_OK;

#define OPT(o, v) if (rc == CURLE_OK) rc = c->easy_setopt(h, o, v)
	OPT(CURLOPT_URL, url);
	OPT(CURLOPT_PROTOCOLS_STR, "http,https");
	OPT(CURLOPT_NOSIGNAL, 1L);
	OPT(CURLOPT_TIMEOUT_MS, (long)t);
	OPT(CURLOPT_CONNECTTIMEOUT_MS, (long)t);
	OPT(CURLOPT_POST, 1L);
	OPT(CURLOPT_POSTFIELDS, body->data);
	OPT(CURLOPT_POSTFIELDSIZE_LARGE, (curl_off_t)body->len);
	OPT(CURLOPT_WRITEFUNCTION, on_answer);
	OPT(CURLOPT_WRITEDATA, sink);
	OPT(CURLOPT_ERRORBUFFER, errbuf);
	OPT(CURLOPT_USERAGENT, "perflens/" PL_VERSION);
	if (cfg->user) {
		OPT(CURLOPT_USERNAME, cfg->user);
		OPT(CURLOPT_PASSWORD, cfg->password ? cfg->password : "");
	}
#undef OPT
	return rc;
}

/* The error for a request that did not answer 200. */
static enum pl_err failed(const struct pl_curl_api *c, CURLcode rc, long status, const char *endpoint,
			  const struct answer_sink *sink, const char *errbuf, struct pl_error *err)
{
	if (sink->too_big)
		return pl_fail(err, PL_ERR_LIMIT, "narrow the query (a shorter time range, fewer devices)",
			       "the fleet store's answer is over %u MB", FLEET_MAX_ANSWER >> 20);
	if (rc == CURLE_OPERATION_TIMEDOUT)
		return pl_fail(err, PL_ERR_TIMEOUT, "check that the store is up, or narrow the query",
			       "the fleet store at %.200s did not answer in time", endpoint);
	if (rc != CURLE_OK)
		return pl_fail(err, PL_ERR_EXTERNAL, "check --fleet-store and that ClickHouse runs there",
			       "the fleet store at %.200s cannot be reached: %s", endpoint,
			       errbuf[0] ? errbuf : c->easy_strerror(rc));
	return pl_fail(err, PL_ERR_EXTERNAL, "see the store's words; `perflens fleet-init` creates the tables",
		       "the fleet store at %.200s answered HTTP %ld: %.*s", endpoint, status,
		       (int)(sink->buf->len < QUOTED_ERROR ? sink->buf->len : QUOTED_ERROR),
		       sink->buf->data ? sink->buf->data : "");
}

enum pl_err fleet_exec(const struct fleet_cfg *cfg, const char *sql, const char *rows, size_t rows_len,
		       struct pl_buf *answer, struct pl_error *err)
{
	const struct pl_curl_api *c;
	char endpoint[512], db[128], url[700], errbuf[CURL_ERROR_SIZE] = "";
	struct pl_buf body = {0}, scratch = {0};
	struct answer_sink sink = {answer ? answer : &scratch, 0, false};
	long status = 0;
	CURLcode rc;
	CURL *h;
	enum pl_err e;

	if (!cfg->url)
		return pl_fail(err, PL_ERR_UNSUPPORTED, "start perflens-mcp with --fleet-store URL",
			       "no fleet store is configured");
	if ((e = fleet_parse_url(cfg->url, endpoint, sizeof(endpoint), db, sizeof(db), err)) ||
	    (e = pl_curl_ready("the fleet store", &c, err)))
		return e;
	snprintf(url, sizeof(url), "%s/?database=%s%s", endpoint, db,
		 cfg->cluster ? "&insert_distributed_sync=1" : "");
	pl_buf_adds(&body, sql);
	if (rows) {
		pl_buf_addc(&body, '\n');
		pl_buf_add(&body, rows, rows_len);
	}
	if (!(h = c->easy_init())) {
		pl_buf_release(&body);
		return pl_fail(err, PL_ERR_EXTERNAL, NULL, "libcurl cannot start a request");
	}
	rc = set_options(c, h, cfg, url, &body, &sink, errbuf);
	if (rc == CURLE_OK)
		rc = c->easy_perform(h);
	c->easy_getinfo(h, CURLINFO_RESPONSE_CODE, &status);
	c->easy_cleanup(h);
	pl_buf_release(&body);
	e = rc == CURLE_OK && status == 200 ? PL_OK : failed(c, rc, status, endpoint, &sink, errbuf, err);
	pl_buf_release(&scratch);
	return e;
}
