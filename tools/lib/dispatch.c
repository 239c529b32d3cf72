/* dispatch.c - running a tool (registry.h's tool_run_blocks, tool_run,
 * tool_call): the arguments checked against its schema, its handler,
 * then one check of every next step its result proposes (steps.c).
 * Apart from the registry's table and checks, which steps.c reads too,
 * so that neither needs the other.
 */
#include "tools/registry.h"

enum pl_err tool_run_blocks(const struct tool_def *t, const struct tool_ctx *ctx, json_t *args,
			    json_t **result, json_t **blocks, struct pl_error *err)
{
	enum pl_err rc;

	*result = NULL;
	*blocks = NULL;
	pl_error_clear(err);
	rc = t->run(ctx, args, result, err);
	if (rc && *result) {
		json_decref(*result);
		*result = NULL;
	}
	if (!rc)
		tool_steps_check(ctx, *result);
	if (!rc && json_is_array(json_object_get(*result, TOOL_BLOCKS_KEY)))
		*blocks = json_incref(json_object_get(*result, TOOL_BLOCKS_KEY));
	if (!rc)
		json_object_del(*result, TOOL_BLOCKS_KEY);
	return rc;
}

enum pl_err tool_run(const struct tool_def *t, const struct tool_ctx *ctx, json_t *args,
		     json_t **result, struct pl_error *err)
{
	json_t *blocks;
	enum pl_err rc = tool_run_blocks(t, ctx, args, result, &blocks, err);

	json_decref(blocks);
	return rc;
}

enum pl_err tool_call(const struct tool_def *t, const struct tool_ctx *ctx,
		      json_t *args, json_t **result, struct pl_error *err)
{
	enum pl_err rc;

	*result = NULL;
	if ((rc = tool_check_args(t, args, err)))
		return rc;
	return tool_run(t, ctx, args, result, err);
}

enum pl_err tool_call_name(const struct tool_ctx *ctx, const char *name, json_t *args,
			   json_t **result, struct pl_error *err)
{
	const struct tool_def *t = tool_find(name);

	*result = NULL;
	if (!t)
		return pl_fail(err, PL_ERR_USAGE, NULL, "no tool is named '%s'", name);
	return tool_call(t, ctx, args, result, err);
}
