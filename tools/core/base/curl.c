/* curl.c - libcurl loaded with dlopen() on first need (see curl.h).
 *
 * RTLD_NOW binds everything at load, so nothing is looked up later in a
 * confined worker; RTLD_LOCAL (pl_dl_load) keeps its symbols out of the
 * global namespace.  It is never unloaded: OpenSSL does not like that.
 */
#include "curl.h"

#include <pthread.h>
#include <stdio.h>

#include "util.h"

#define LIBCURL_SONAME "libcurl.so.4"

static struct pl_curl_api api;
static pthread_once_t load_once = PTHREAD_ONCE_INIT;
static bool loaded;
static char load_error[400];  /* why not, when !loaded */

static pthread_once_t init_once = PTHREAD_ONCE_INIT;
static CURLcode init_rc = CURLE_FAILED_INIT;

static void load(void)
{
	const struct pl_dl_sym syms[] = {
		{"curl_global_init", &api.global_init},
		{"curl_easy_init", &api.easy_init},
		{"curl_easy_setopt", &api.easy_setopt},
		{"curl_easy_perform", &api.easy_perform},
		{"curl_easy_getinfo", &api.easy_getinfo},
		{"curl_easy_cleanup", &api.easy_cleanup},
		{"curl_easy_strerror", &api.easy_strerror},
		{"curl_slist_append", &api.slist_append},
		{"curl_slist_free_all", &api.slist_free_all},
	};

	loaded = pl_dl_load(LIBCURL_SONAME, syms, PL_ARRAY_LEN(syms), load_error,
			    sizeof(load_error)) != NULL;
}

bool pl_curl_preload(void)
{
	pthread_once(&load_once, load);
	return loaded;
}

static void global_init(void)
{
	init_rc = api.global_init(CURL_GLOBAL_DEFAULT);
}

enum pl_err pl_curl_ready(const char *what, const struct pl_curl_api **out, struct pl_error *err)
{
	if (!pl_curl_preload())
		return pl_fail(err, PL_ERR_UNSUPPORTED, "install libcurl (Debian: apt-get install libcurl4)",
			       "%s needs libcurl, which cannot be loaded (install libcurl4: "
			       "apt-get install libcurl4): %s", what, load_error);
	pthread_once(&init_once, global_init);
	if (init_rc != CURLE_OK)
		return pl_fail(err, PL_ERR_EXTERNAL, NULL, "libcurl cannot start: %s",
			       api.easy_strerror(init_rc));
	*out = &api;
	return PL_OK;
}
