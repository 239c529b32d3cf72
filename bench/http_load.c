/* http_load.c - a load client for perflens-mcp's Streamable HTTP
 * transport, built and run by bench/mcp.sh (mcp_bench.py --http-client),
 * so that the HTTP figures are not the python client's: this one costs a
 * few tens of microseconds of cpu a call.
 *
 *   http_load --url URL --body JSON [--calls N] [--concurrency K]
 *             [--max-s S] [--warmup W] [--protocol VERSION] [--progress]
 *
 * It opens its own MCP session as the spec orders (initialize, then
 * notifications/initialized, then every request with Mcp-Session-Id and
 * the negotiated MCP-Protocol-Version), and ends it with DELETE.  The
 * bearer token, if the server wants one, comes from $PERFLENS_TOKEN (not
 * argv, which others can read).  Then one libcurl multi handle keeps K
 * requests in flight: K easy handles on a pool of K keep-alive
 * connections (CURLMOPT_MAXCONNECTS, CURLMOPT_MAX_HOST_CONNECTIONS), each
 * handle re-armed with the next call as soon as its answer is in.  W
 * calls per handle warm up first, untimed.  Every call sends the body
 * template with a unique JSON-RPC "id" (set through jansson: 1..N timed,
 * negative for the warm-up, 0 for initialize), and every answer is checked:
 * HTTP 200, application/json, the same id, a "result" object, and for
 * tools/call no "isError": true.  Latency is CLOCK_MONOTONIC from handing
 * the request to the multi handle to reading its completion.
 *
 * Output, on stdout, one JSON object a line: with --progress,
 * {"progress":P,...} when the timed part starts (P = 0) and at every 10%
 * of it (of the count, or of the time cap when that comes first), so that
 * the caller can sample the server then; at the end one line with the
 * counts, calls/s, latency percentiles (nearest rank, as mcp_bench.py)
 * and the client's own cpu over the timed part.  Exit 0 when the run was
 * made (failed calls are counted, not fatal), 1 when it could not start,
 * 2 on a usage error.
 */
#include <errno.h>
#include <getopt.h>
#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>

#include <curl/curl.h>
#include <jansson.h>

#define MAX_CALLS 10000000L         /* latencies are kept, 8 bytes each */
#define MAX_CONCURRENCY 256
#define MAX_ANSWER (1L << 20)       /* a bigger answer is a failure */
#define CALL_TIMEOUT_S 60L          /* one call slower than this fails */
#define POLL_MS 100                 /* progress and the cap are checked this often */

struct opts {
	const char *url;
	const char *body;           /* the JSON-RPC request template */
	const char *protocol;       /* the version asked for in initialize */
	long calls;
	int concurrency;
	double max_s;
	int warmup;                 /* untimed calls per handle */
	bool progress;
};

/* A growing answer buffer, capped at MAX_ANSWER. */
struct buf {
	char *data;
	size_t len, cap;
};

/* One easy handle and the call it carries. */
struct slot {
	CURL *h;
	struct buf answer;
	char *request;              /* the body sent; libcurl does not copy it */
	json_int_t id;
	double t0;
};

/* One phase (warm-up or timed) of the load. */
struct phase {
	long total;
	bool timed;
	double start;
	long issued, done, ok, failures, new_connections;
	bool stopped;               /* by the time cap */
	int mark;                   /* next progress mark, in tenths */
	char first[400];            /* the first failure */
};

struct run {
	const struct opts *o;
	CURLM *multi;
	struct curl_slist *headers;
	json_t *tmpl;               /* the body template; its "id" is rewritten */
	bool is_tool;               /* tools/call: isError must not be true */
	struct slot *slots;
	double *lat_ms;             /* latencies of the timed calls that passed */
	long nlat;
	json_int_t next_warm_id;
};

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static double cpu_s(void)
{
	struct rusage ru;

	getrusage(RUSAGE_SELF, &ru);
	return (double)(ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) +
	       (double)(ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) / 1e6;
}

/* Print one JSON object as a line on stdout; steals `j`. */
static void emit_new(json_t *j)
{
	json_dumpf(j, stdout, JSON_COMPACT | JSON_REAL_PRECISION(6));
	fputc('\n', stdout);
	fflush(stdout);
	json_decref(j);
}

/* ------------------------------------------------------------- HTTP */

static size_t on_data(char *ptr, size_t size, size_t n, void *userdata)
{
	struct buf *b = userdata;
	size_t add = size * n;

	if (b->len + add + 1 > b->cap) {
		size_t cap = b->cap ? b->cap : 4096;
		char *p;

		while (cap < b->len + add + 1)
			cap *= 2;
		if (cap > MAX_ANSWER || !(p = realloc(b->data, cap)))
			return 0;   /* libcurl fails the transfer: counted */
		b->data = p;
		b->cap = cap;
	}
	memcpy(b->data + b->len, ptr, add);
	b->len += add;
	b->data[b->len] = '\0';
	return add;
}

/* The header list every request carries; `session` and `version` NULL
 * before there is a session.  NULL when out of memory. */
static struct curl_slist *headers_new(const char *session, const char *version)
{
	const char *token = getenv("PERFLENS_TOKEN");
	struct curl_slist *l = NULL;
	char line[512];

	l = curl_slist_append(l, "Content-Type: application/json");
	l = curl_slist_append(l, "Accept: application/json, text/event-stream");
	l = curl_slist_append(l, "Expect:");   /* never wait for 100-continue */
	if (token && *token) {
		snprintf(line, sizeof line, "Authorization: Bearer %s", token);
		l = curl_slist_append(l, line);
	}
	if (session) {
		snprintf(line, sizeof line, "Mcp-Session-Id: %s", session);
		l = curl_slist_append(l, line);
		snprintf(line, sizeof line, "MCP-Protocol-Version: %s", version);
		l = curl_slist_append(l, line);
	}
	return l;
}

static CURL *easy_new(const char *url, struct curl_slist *headers, struct buf *answer)
{
	CURL *h = curl_easy_init();

	if (!h)
		return NULL;
	curl_easy_setopt(h, CURLOPT_URL, url);
	curl_easy_setopt(h, CURLOPT_PROXY, "");   /* ignore http_proxy */
	curl_easy_setopt(h, CURLOPT_HTTP_VERSION, (long)CURL_HTTP_VERSION_1_1);
	curl_easy_setopt(h, CURLOPT_HTTPHEADER, headers);
	curl_easy_setopt(h, CURLOPT_WRITEFUNCTION, on_data);
	curl_easy_setopt(h, CURLOPT_WRITEDATA, answer);
	curl_easy_setopt(h, CURLOPT_TIMEOUT, CALL_TIMEOUT_S);
	curl_easy_setopt(h, CURLOPT_NOSIGNAL, 1L);
	curl_easy_setopt(h, CURLOPT_TCP_NODELAY, 1L);
	return h;
}

/* One blocking request on its own handle (session set-up and end):
 * the HTTP status, or -1 with `why` filled, starting with `what`. */
static long request_once(CURL *h, const char *what, const char *method, const char *body,
			 struct buf *answer, char *why, size_t whylen)
{
	CURLcode rc;
	long status = 0;

	answer->len = 0;
	curl_easy_setopt(h, CURLOPT_CUSTOMREQUEST, method);
	if (body) {
		curl_easy_setopt(h, CURLOPT_POSTFIELDS, body);
		curl_easy_setopt(h, CURLOPT_POSTFIELDSIZE, (long)strlen(body));
	}
	rc = curl_easy_perform(h);
	if (rc != CURLE_OK) {
		snprintf(why, whylen, "%s: %s", what, curl_easy_strerror(rc));
		return -1;
	}
	curl_easy_getinfo(h, CURLINFO_RESPONSE_CODE, &status);
	return status;
}

/* ---------------------------------------------------------- session */

/* initialize, then notifications/initialized: fills `session` and
 * `version` (the server's protocolVersion).  False with `why` filled. */
static bool session_open(const struct opts *o, char *session, size_t slen,
			 char *version, size_t vlen, char *why, size_t whylen)
{
	struct curl_slist *hdrs = headers_new(NULL, NULL);
	struct buf answer = {0};
	CURL *h = easy_new(o->url, hdrs, &answer);
	json_t *init = json_pack("{s:s,s:i,s:s,s:{s:s,s:{},s:{s:s,s:s}}}", "jsonrpc", "2.0",
				 "id", 0, "method", "initialize", "params", "protocolVersion",
				 o->protocol, "capabilities", "clientInfo", "name",
				 "perflens-http-load", "version", "1");
	char *body = init ? json_dumps(init, JSON_COMPACT) : NULL;
	struct curl_header *sid = NULL;
	json_t *resp = NULL;
	const char *v = NULL;
	bool ok = false;
	long st;

	if (!h || !body) {
		snprintf(why, whylen, "initialize: out of memory");
		goto out;
	}
	st = request_once(h, "initialize", "POST", body, &answer, why, whylen);
	if (st < 0)
		goto out;
	resp = json_loadb(answer.data ? answer.data : "", answer.len, 0, NULL);
	json_unpack(resp, "{s:{s:s}}", "result", "protocolVersion", &v);
	if (st != 200 || !v ||
	    curl_easy_header(h, "Mcp-Session-Id", 0, CURLH_HEADER, -1, &sid) != CURLHE_OK) {
		snprintf(why, whylen, "initialize: HTTP %ld: %.300s", st,
			 answer.data ? answer.data : "");
		goto out;
	}
	snprintf(session, slen, "%s", sid->value);
	snprintf(version, vlen, "%s", v);
	curl_slist_free_all(hdrs);
	hdrs = headers_new(session, version);
	curl_easy_setopt(h, CURLOPT_HTTPHEADER, hdrs);
	st = request_once(h, "notifications/initialized", "POST",
			  "{\"jsonrpc\":\"2.0\",\"method\":\"notifications/initialized\"}",
			  &answer, why, whylen);
	if (st >= 0 && st != 202)
		snprintf(why, whylen, "notifications/initialized: HTTP %ld (want 202): %.300s", st,
			 answer.data ? answer.data : "");
	ok = st == 202;
out:
	json_decref(resp);
	json_decref(init);
	free(body);
	curl_easy_cleanup(h);
	curl_slist_free_all(hdrs);
	free(answer.data);
	return ok;
}

/* DELETE the session (the server has a bounded number of them). */
static void session_close(const struct opts *o, struct curl_slist *headers)
{
	struct buf answer = {0};
	CURL *h = easy_new(o->url, headers, &answer);
	char why[300] = "";
	long st = h ? request_once(h, "DELETE", "DELETE", NULL, &answer, why, sizeof why) : -1;

	if (st != 204)
		fprintf(stderr, "http_load: warning: the session was not ended: %s (HTTP %ld)\n",
			why, st);
	curl_easy_cleanup(h);
	free(answer.data);
}

/* ----------------------------------------------------------- checks */

/* Whether one answer passes; else a reason in `why`. */
static bool answer_ok(const struct run *r, struct slot *s, CURLcode rc, char *why, size_t n)
{
	const char *body = s->answer.data ? s->answer.data : "";
	const char *type = NULL;
	json_t *m, *result;
	long status = 0;
	bool ok = false;

	if (rc != CURLE_OK) {
		snprintf(why, n, "%s", curl_easy_strerror(rc));
		return false;
	}
	curl_easy_getinfo(s->h, CURLINFO_RESPONSE_CODE, &status);
	curl_easy_getinfo(s->h, CURLINFO_CONTENT_TYPE, &type);
	if (status != 200) {
		snprintf(why, n, "HTTP %ld: %.300s", status, body);
		return false;
	}
	if (!type || strncmp(type, "application/json", 16) != 0) {
		snprintf(why, n, "answer of type %s, not application/json (this client reads no SSE)",
			 type ? type : "(none)");
		return false;
	}
	m = json_loadb(body, s->answer.len, 0, NULL);
	result = json_object_get(m, "result");
	if (!m || json_integer_value(json_object_get(m, "id")) != s->id)
		snprintf(why, n, "not the answer to id %lld: %.300s", (long long)s->id, body);
	else if (!json_is_object(result))
		snprintf(why, n, "no result: %.300s", body);
	else if (r->is_tool && json_is_true(json_object_get(result, "isError")))
		snprintf(why, n, "tool error: %.300s", body);
	else
		ok = true;
	json_decref(m);
	return ok;
}

/* -------------------------------------------------------------- load */

/* Put the next call on `s` and hand it to the multi handle. */
static bool slot_arm(struct run *r, struct slot *s, json_int_t id)
{
	free(s->request);
	if (json_object_set_new(r->tmpl, "id", json_integer(id)) != 0 ||
	    !(s->request = json_dumps(r->tmpl, JSON_COMPACT)))
		return false;
	s->id = id;
	s->answer.len = 0;
	curl_easy_setopt(s->h, CURLOPT_POSTFIELDS, s->request);
	curl_easy_setopt(s->h, CURLOPT_POSTFIELDSIZE, (long)strlen(s->request));
	s->t0 = now_s();
	return curl_multi_add_handle(r->multi, s->h) == CURLM_OK;
}

/* Arm `s` with the phase's next call unless the phase is over. */
static bool phase_next(struct run *r, struct phase *p, struct slot *s)
{
	json_int_t id;

	if (p->issued >= p->total)
		return false;
	if (p->timed && now_s() - p->start > r->o->max_s) {
		p->stopped = true;
		return false;
	}
	id = p->timed ? (json_int_t)p->issued + 1 : --r->next_warm_id;
	if (!slot_arm(r, s, id)) {
		fprintf(stderr, "http_load: cannot start a call (out of memory?)\n");
		p->stopped = true;
		return false;
	}
	p->issued++;
	return true;
}

static void record(struct run *r, struct phase *p, struct slot *s, CURLcode rc, double t1)
{
	char why[sizeof p->first];
	long connects = 0;

	curl_easy_getinfo(s->h, CURLINFO_NUM_CONNECTS, &connects);
	p->done++;
	if (answer_ok(r, s, rc, why, sizeof why)) {
		p->ok++;
		if (p->timed) {
			r->lat_ms[r->nlat++] = (t1 - s->t0) * 1e3;
			p->new_connections += connects;
		}
	} else {
		if (!p->failures)
			snprintf(p->first, sizeof p->first, "%s%.380s", p->timed ? "" : "warm-up: ", why);
		p->failures++;
	}
}

/* With --progress: a line at every 10% of the count or of the time cap. */
static void progress(const struct run *r, struct phase *p)
{
	double elapsed = now_s() - p->start;
	double frac = (double)p->done / (double)p->total;

	if (!r->o->progress || !p->timed)
		return;
	if (elapsed / r->o->max_s > frac)
		frac = elapsed / r->o->max_s;
	while (p->mark <= 10 && frac >= p->mark / 10.0 - 1e-9) {
		emit_new(json_pack("{s:i,s:I,s:f}", "progress", p->mark * 10, "done",
				   (json_int_t)p->done, "elapsed_s", elapsed));
		p->mark++;
	}
}

/* Take the finished calls off the multi handle, record them and start
 * the next ones.  Returns how many finished. */
static int drain(struct run *r, struct phase *p, int *in_flight)
{
	CURLMsg *msg;
	int left, n = 0;

	while ((msg = curl_multi_info_read(r->multi, &left))) {
		double t1 = now_s();
		CURL *h = msg->easy_handle;
		CURLcode rc = msg->data.result;
		struct slot *s = NULL;

		if (msg->msg != CURLMSG_DONE)
			continue;
		curl_easy_getinfo(h, CURLINFO_PRIVATE, (char **)&s);
		curl_multi_remove_handle(r->multi, h);
		record(r, p, s, rc, t1);
		(*in_flight)--;
		n++;
		if (phase_next(r, p, s))
			(*in_flight)++;
	}
	return n;
}

static void run_phase(struct run *r, struct phase *p)
{
	int in_flight = 0, running;

	p->start = now_s();
	progress(r, p);
	for (int k = 0; k < r->o->concurrency && phase_next(r, p, &r->slots[k]); k++)
		in_flight++;
	while (in_flight > 0) {
		if (curl_multi_perform(r->multi, &running) != CURLM_OK)
			break;
		/* A call that finished starts the next at once: perform again
		 * before waiting. */
		if (drain(r, p, &in_flight) == 0)
			curl_multi_poll(r->multi, NULL, 0, POLL_MS, NULL);
		progress(r, p);
	}
}

/* ---------------------------------------------------------- results */

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

/* Nearest rank, as mcp_bench.py's pct() (nearbyint rounds half to even,
 * as python's round()). */
static double pct(const double *sorted, long n, double p)
{
	long k;

	if (n == 0)
		return 0.0;
	k = (long)nearbyint(p / 100.0 * (double)n + 0.5) - 1;
	k = k < 0 ? 0 : k >= n ? n - 1 : k;
	return sorted[k];
}

static void report(const struct run *r, const struct phase *warm, const struct phase *p,
		   const char *session, double elapsed, double cpu)
{
	double sum = 0.0;

	qsort(r->lat_ms, (size_t)r->nlat, sizeof *r->lat_ms, cmp_double);
	for (long i = 0; i < r->nlat; i++)
		sum += r->lat_ms[i];
	emit_new(json_pack("{s:I,s:I,s:I,s:I,s:s?,s:I,s:b,s:f,s:f,s:f,s:f,s:f,s:f,s:f,s:f,"
			   "s:I,s:i,s:s}",
			   "calls", (json_int_t)p->done, "ok", (json_int_t)p->ok,
			   "failures", (json_int_t)p->failures,
			   "warmup_failures", (json_int_t)warm->failures,
			   "first_failure", warm->failures ? warm->first : p->failures ? p->first : NULL,
			   "planned", (json_int_t)p->total, "stopped_by_cap", p->stopped,
			   "elapsed_s", elapsed,
			   "calls_per_s", elapsed > 0 ? (double)p->ok / elapsed : 0.0,
			   "p50_ms", pct(r->lat_ms, r->nlat, 50), "p90_ms", pct(r->lat_ms, r->nlat, 90),
			   "p99_ms", pct(r->lat_ms, r->nlat, 99),
			   "max_ms", r->nlat ? r->lat_ms[r->nlat - 1] : 0.0,
			   "mean_ms", r->nlat ? sum / (double)r->nlat : 0.0,
			   "client_cpu_s", cpu,
			   "new_connections", (json_int_t)p->new_connections,
			   "concurrency", r->o->concurrency, "session", session));
}

/* ------------------------------------------------------------- main */

static void usage(void)
{
	fprintf(stderr,
		"usage: http_load --url URL --body JSON [--calls N] [--concurrency K] [--max-s S]\n"
		"                 [--warmup W] [--protocol VERSION] [--progress]\n"
		"  the bearer token, if any, is read from $PERFLENS_TOKEN\n");
}

static bool parse_opts(int argc, char **argv, struct opts *o)
{
	static const struct option longs[] = {
		{"url", required_argument, NULL, 'u'},      {"body", required_argument, NULL, 'b'},
		{"calls", required_argument, NULL, 'n'},    {"concurrency", required_argument, NULL, 'k'},
		{"max-s", required_argument, NULL, 't'},    {"warmup", required_argument, NULL, 'w'},
		{"protocol", required_argument, NULL, 'p'}, {"progress", no_argument, NULL, 'P'},
		{NULL, 0, NULL, 0},
	};
	int c;

	*o = (struct opts){.protocol = "2025-11-25", .calls = 1000, .concurrency = 8,
			   .max_s = 60, .warmup = 3};
	while ((c = getopt_long(argc, argv, "", longs, NULL)) != -1) {
		switch (c) {
		case 'u': o->url = optarg; break;
		case 'b': o->body = optarg; break;
		case 'n': o->calls = strtol(optarg, NULL, 10); break;
		case 'k': o->concurrency = (int)strtol(optarg, NULL, 10); break;
		case 't': o->max_s = strtod(optarg, NULL); break;
		case 'w': o->warmup = (int)strtol(optarg, NULL, 10); break;
		case 'p': o->protocol = optarg; break;
		case 'P': o->progress = true; break;
		default: return false;
		}
	}
	return optind == argc && o->url && o->body && o->calls >= 1 && o->calls <= MAX_CALLS &&
	       o->concurrency >= 1 && o->concurrency <= MAX_CONCURRENCY && o->max_s > 0 &&
	       o->warmup >= 0 && o->warmup <= 1000;
}

/* The body template (new reference), or NULL with a message. */
static json_t *template_new(const char *body, bool *is_tool)
{
	json_error_t jerr;
	const char *method = NULL;
	json_t *t = json_loads(body, 0, &jerr);

	if (json_unpack_ex(t, &jerr, 0, "{s:s}", "method", &method) != 0) {
		fprintf(stderr, "http_load: --body is not a JSON-RPC request: %s\n", jerr.text);
		json_decref(t);
		return NULL;
	}
	*is_tool = strcmp(method, "tools/call") == 0;
	return t;
}

/* The headers, the multi handle and the K slots; takes `tmpl`. */
static bool run_init(struct run *r, const struct opts *o, json_t *tmpl, bool is_tool,
		     const char *session, const char *version)
{
	*r = (struct run){.o = o, .tmpl = tmpl, .is_tool = is_tool};
	r->headers = headers_new(session, version);
	r->multi = curl_multi_init();
	r->slots = calloc((size_t)o->concurrency, sizeof *r->slots);
	r->lat_ms = malloc((size_t)o->calls * sizeof *r->lat_ms);
	if (!r->headers || !r->multi || !r->slots || !r->lat_ms)
		return false;
	curl_multi_setopt(r->multi, CURLMOPT_MAXCONNECTS, (long)o->concurrency);
	curl_multi_setopt(r->multi, CURLMOPT_MAX_HOST_CONNECTIONS, (long)o->concurrency);
	curl_multi_setopt(r->multi, CURLMOPT_PIPELINING, (long)CURLPIPE_NOTHING);
	for (int k = 0; k < o->concurrency; k++) {
		struct slot *s = &r->slots[k];

		if (!(s->h = easy_new(o->url, r->headers, &s->answer)))
			return false;
		curl_easy_setopt(s->h, CURLOPT_PRIVATE, (char *)s);
	}
	return true;
}

static void run_release(struct run *r)
{
	for (int k = 0; r->slots && k < r->o->concurrency; k++) {
		curl_easy_cleanup(r->slots[k].h);
		free(r->slots[k].answer.data);
		free(r->slots[k].request);
	}
	free(r->slots);
	free(r->lat_ms);
	curl_multi_cleanup(r->multi);
	curl_slist_free_all(r->headers);
	json_decref(r->tmpl);
}

int main(int argc, char **argv)
{
	struct opts o;
	struct run r;
	char session[256], version[64], why[500] = "";
	struct phase warm = {0}, timed = {0};
	json_t *tmpl;
	bool is_tool;
	double cpu0;
	int rc = 1;

	if (!parse_opts(argc, argv, &o)) {
		usage();
		return 2;
	}
	if (!(tmpl = template_new(o.body, &is_tool)))
		return 2;
	if (curl_global_init(CURL_GLOBAL_DEFAULT) != CURLE_OK) {
		json_decref(tmpl);
		return 1;
	}
	if (!session_open(&o, session, sizeof session, version, sizeof version, why, sizeof why)) {
		fprintf(stderr, "http_load: %s\n", why);
		json_decref(tmpl);
		curl_global_cleanup();
		return 1;
	}
	if (run_init(&r, &o, tmpl, is_tool, session, version)) {
		warm.total = (long)o.warmup * o.concurrency;
		run_phase(&r, &warm);
		timed = (struct phase){.total = o.calls, .timed = true};
		cpu0 = cpu_s();
		run_phase(&r, &timed);
		report(&r, &warm, &timed, session, now_s() - timed.start, cpu_s() - cpu0);
		session_close(&o, r.headers);
		rc = 0;
	} else {
		fprintf(stderr, "http_load: cannot set up the run: out of memory\n");
	}
	run_release(&r);
	curl_global_cleanup();
	return rc;
}
