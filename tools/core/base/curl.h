/* curl.h - libcurl, loaded on first need, for the clients that speak HTTP
 * (debuginfod, the fleet store).
 *
 * libcurl is not linked: it is dlopen()ed (pl_curl_preload) and its few
 * functions are called through the table below.  Linked, it and its ~20
 * dependencies (OpenSSL, Kerberos, LDAP, ...) would be mapped and
 * relocated in every process and copied at every worker fork, for the
 * few calls that use the network.  <curl/curl.h> still gives the types
 * and constants.  A sandboxed worker that may use the network calls
 * pl_curl_preload() before confinement, since once confined it could not
 * read the library's files.
 */
#ifndef PL_CURL_H
#define PL_CURL_H

#include <stdbool.h>

#include <curl/curl.h>

#include "error.h"

/* The libcurl functions PerfLens calls, resolved by name.  The field
 * names differ from curl's own: <curl/curl.h> makes curl_easy_setopt and
 * curl_easy_getinfo macros under gcc. */
struct pl_curl_api {
	CURLcode (*global_init)(long flags);
	CURL *(*easy_init)(void);
	CURLcode (*easy_setopt)(CURL *c, CURLoption opt, ...);
	CURLcode (*easy_perform)(CURL *c);
	CURLcode (*easy_getinfo)(CURL *c, CURLINFO info, ...);
	void (*easy_cleanup)(CURL *c);
	const char *(*easy_strerror)(CURLcode rc);
	struct curl_slist *(*slist_append)(struct curl_slist *list, const char *s);
	void (*slist_free_all)(struct curl_slist *list);
};

/* Load libcurl now (once per process; later calls only report): true when
 * it is usable.  Thread-safe; reads no input. */
bool pl_curl_preload(void);

/* libcurl loaded and initialised (*api borrowed for the process), or
 * PL_ERR_UNSUPPORTED naming the package (for `what`, e.g. "debuginfod"),
 * or PL_ERR_EXTERNAL when it cannot start. */
enum pl_err pl_curl_ready(const char *what, const struct pl_curl_api **api, struct pl_error *err);

#endif
