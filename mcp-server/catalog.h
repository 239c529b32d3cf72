/* catalog.h - what perflens-mcp offers besides tools: artifacts as
 * resources, investigation prompts that follow the Skill's workflow, and
 * argument completion.  Results are new references; on failure the
 * functions return a JSON-RPC error code and set *err_data (new).
 */
#ifndef MCP_CATALOG_H
#define MCP_CATALOG_H

#include <stdbool.h>

#include <jansson.h>

#include "tools/registry.h"

int catalog_list(const struct tool_ctx *ctx, const char *cursor, bool has_cursor,
		 json_t **result, json_t **err_data);
int catalog_read(const struct tool_ctx *ctx, const char *uri, json_t **result,
		 json_t **err_data);
json_t *catalog_templates(void);
json_t *catalog_prompts(void);
int catalog_prompt_get(const char *name, json_t *args, json_t **result,
		       json_t **err_data);
json_t *catalog_complete(const struct tool_ctx *ctx, json_t *ref, json_t *argument,
			 json_t *context);

#endif
