/* fuzz_agent_json.c - libFuzzer harness for the device agent's JSON
 * reader (agent/json.c): any bytes, parsed with the agent's limits; an
 * accepted document is walked whole and written back with the agent's
 * writer, which must then parse again to the same shape. */
// fuzz-link: agent/json.c
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "agent/json.h"

static void rewrite(const struct json_doc *d, const struct json_node *n, struct jw *w)
{
	switch (n->type) {
	case AJ_NULL: jw_null(w); break;
	case AJ_TRUE: jw_bool(w, 1); break;
	case AJ_FALSE: jw_bool(w, 0); break;
	case AJ_INT: jw_int(w, n->i); break;
	case AJ_REAL: jw_real(w, n->d, 3); break;
	case AJ_STRING: jw_str(w, n->str, n->len); break;
	case AJ_ARRAY:
	case AJ_OBJECT:
		if (n->type == AJ_ARRAY)
			jw_arr(w);
		else
			jw_obj(w);
		for (const struct json_node *c = aj_first(d, n); c; c = aj_next(d, c)) {
			if (n->type == AJ_OBJECT)
				jw_key(w, c->key);
			rewrite(d, c, w);
		}
		if (n->type == AJ_ARRAY)
			jw_arr_end(w);
		else
			jw_obj_end(w);
		break;
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct json_doc d, again;
	if (aj_parse(&d, (const char *)data, size, 4096, AJ_ANY_VALUE) == 0) {
		struct jw w;
		jw_init(&w, 1u << 20);
		rewrite(&d, aj_root(&d), &w);
		/* Keys with NUL cannot exist (\u0000 is refused), so the rewrite
		 * of an accepted document must parse again, unless it overflowed
		 * or duplicated a key through escaping (it cannot: keys are kept). */
		if (!w.overflow && aj_parse(&again, w.buf, w.len, 1u << 20, AJ_ANY_VALUE) != 0)
			__builtin_trap();
		if (!w.overflow)
			aj_free(&again);
		jw_free(&w);
	}
	aj_free(&d);
	return 0;
}
