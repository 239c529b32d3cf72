/* pdprefetch.c - symbol tables loaded ahead, in a thread (see pdprefetch.h).
 *
 * Each item moves QUEUED -> LOADING -> DONE in the thread, or QUEUED -> TAKEN
 * when the reader gets there first; DONE -> TAKEN hands the table over.
 * One mutex guards the states; the loads themselves run unlocked.
 */
#include "pdprefetch.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "base/util.h"

enum { QUEUED, LOADING, DONE, TAKEN };

struct item {
	const char *path;      /* the feature's filename (the file outlives us) */
	char build_id[41];
	int state;
	struct pd_symtab syms;
};

struct pd_prefetch {
	pthread_t thread;
	pthread_mutex_t mu;
	pthread_cond_t cv;
	bool stop;
	const char *kallsyms;
	int kx_state;
	bool kx_ok;
	struct pd_kindex kx;
	struct item *items;
	size_t n;
};

/* Claim `*state` for the thread: false when the reader has it. */
static bool claim(struct pd_prefetch *pf, int *state)
{
	bool mine;

	pthread_mutex_lock(&pf->mu);
	mine = !pf->stop && *state == QUEUED;
	if (mine)
		*state = LOADING;
	pthread_mutex_unlock(&pf->mu);
	return mine;
}

static void done(struct pd_prefetch *pf, int *state)
{
	pthread_mutex_lock(&pf->mu);
	*state = DONE;
	pthread_cond_broadcast(&pf->cv);
	pthread_mutex_unlock(&pf->mu);
}

static void *prefetch_main(void *arg)
{
	struct pd_prefetch *pf = arg;

	if (claim(pf, &pf->kx_state)) {
		pf->kx_ok = pd_kindex_open(&pf->kx, pf->kallsyms);
		done(pf, &pf->kx_state);
	}
	for (size_t i = 0; i < pf->n; i++) {
		if (!claim(pf, &pf->items[i].state))
			continue;
		pd_symtab_load_elf(&pf->items[i].syms, pf->items[i].path, pf->items[i].build_id);
		done(pf, &pf->items[i].state);
	}
	return NULL;
}

static bool listed(const struct pd_prefetch *pf, const char *path, const char *hex)
{
	for (size_t i = 0; i < pf->n; i++)
		if (strcmp(pf->items[i].path, path) == 0 && strcmp(pf->items[i].build_id, hex) == 0)
			return true;
	return false;
}

struct pd_prefetch *pd_prefetch_start(const struct pd_file *f, const char *kallsyms)
{
	struct pd_prefetch *pf = pl_xcalloc(1, sizeof(*pf));

	pf->kallsyms = kallsyms;
	pf->kx_state = kallsyms ? QUEUED : TAKEN;
	pf->items = pl_xcalloc(f->nbuild_ids + 1, sizeof(*pf->items));
	for (size_t i = 0; i < f->nbuild_ids; i++) {
		const struct pd_build_id *b = &f->build_ids[i];
		if (!b->filename || b->filename[0] != '/' || listed(pf, b->filename, b->hex))
			continue;
		pf->items[pf->n].path = b->filename;
		memcpy(pf->items[pf->n].build_id, b->hex, sizeof(b->hex));
		pf->items[pf->n].state = QUEUED;
		pf->n++;
	}
	pthread_mutex_init(&pf->mu, NULL);
	pthread_cond_init(&pf->cv, NULL);
	if ((!pf->n && !kallsyms) || pthread_create(&pf->thread, NULL, prefetch_main, pf) != 0) {
		pthread_mutex_destroy(&pf->mu);
		pthread_cond_destroy(&pf->cv);
		free(pf->items);
		free(pf);
		return NULL;
	}
	return pf;
}

/* Wait for the thread to finish `*state` if it started it; true when
 * the result is the caller's to take, false when the caller loads. */
static bool take(struct pd_prefetch *pf, int *state)
{
	bool got;

	pthread_mutex_lock(&pf->mu);
	while (*state == LOADING)
		pthread_cond_wait(&pf->cv, &pf->mu);
	got = *state == DONE;
	*state = TAKEN;
	pthread_mutex_unlock(&pf->mu);
	return got;
}

bool pd_prefetch_take_elf(struct pd_prefetch *pf, const char *path, const char *build_id,
			  struct pd_symtab *t)
{
	if (!pf)
		return false;
	for (size_t i = 0; i < pf->n; i++) {
		struct item *it = &pf->items[i];
		if (strcmp(it->path, path) != 0 || strcmp(it->build_id, build_id) != 0)
			continue;
		if (!take(pf, &it->state))
			return false;
		*t = it->syms;
		memset(&it->syms, 0, sizeof(it->syms));
		return true;
	}
	return false;
}

bool pd_prefetch_take_kindex(struct pd_prefetch *pf, struct pd_kindex *x)
{
	if (!pf || !take(pf, &pf->kx_state) || !pf->kx_ok)
		return false;
	*x = pf->kx;
	memset(&pf->kx, 0, sizeof(pf->kx));
	pf->kx_ok = false;
	return true;
}

void pd_prefetch_end(struct pd_prefetch *pf)
{
	if (!pf)
		return;
	pthread_mutex_lock(&pf->mu);
	pf->stop = true;
	pthread_mutex_unlock(&pf->mu);
	pthread_join(pf->thread, NULL);
	for (size_t i = 0; i < pf->n; i++)
		if (pf->items[i].state == DONE)
			pd_symtab_release(&pf->items[i].syms);
	if (pf->kx_ok)
		pd_kindex_close(&pf->kx);
	pthread_mutex_destroy(&pf->mu);
	pthread_cond_destroy(&pf->cv);
	free(pf->items);
	free(pf);
}
