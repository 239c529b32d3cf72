/* fleet_common.c - the fleet tools' selection and answers (see
 * fleet_common.h). */
#include "fleet_common.h"
#include "collectors/fleet/schema.h"

#include <stdlib.h>
#include <string.h>

static enum pl_err add_labels(json_t *labels, struct pl_buf *sql, const char **glue, struct pl_error *err)
{
	size_t i;
	json_t *l;

	json_array_foreach(labels, i, l) {
		const char *s = json_string_value(l);
		if (!s || !fleet_label_ok(s))
			return pl_fail(err, PL_ERR_USAGE, "labels are KEY=VALUE, as fleet_devices lists them",
				       "label %zu is not KEY=VALUE", i);
		pl_buf_addf(sql, "%shas(labels, ", *glue);
		fleet_sql_quote(sql, s);
		pl_buf_addc(sql, ')');
		*glue = " AND ";
	}
	return PL_OK;
}

static void add_devices(json_t *devices, struct pl_buf *sql, const char **glue)
{
	size_t i;
	json_t *d;

	if (!json_array_size(devices))
		return;
	pl_buf_addf(sql, "%sdevice IN (", *glue);
	json_array_foreach(devices, i, d) {
		if (i)
			pl_buf_addc(sql, ',');
		fleet_sql_quote(sql, json_string_value(d) ? json_string_value(d) : "");
	}
	pl_buf_addc(sql, ')');
	*glue = " AND ";
}

enum pl_err fleet_where(json_t *args, bool samples, const char *time_column, struct pl_buf *sql,
			struct pl_error *err)
{
	const char *glue = " WHERE ";
	json_t *from = json_object_get(args, "from_unix"), *to = json_object_get(args, "to_unix");
	const char *event = json_string_value(json_object_get(args, "event"));
	enum pl_err e;

	if ((e = add_labels(json_object_get(args, "labels"), sql, &glue, err)))
		return e;
	add_devices(json_object_get(args, "devices"), sql, &glue);
	if (json_is_integer(from)) {
		pl_buf_addf(sql, "%s%s >= toDateTime(%lld)", glue, time_column, (long long)json_integer_value(from));
		glue = " AND ";
	}
	if (json_is_integer(to)) {
		pl_buf_addf(sql, "%s%s < toDateTime(%lld)", glue, time_column, (long long)json_integer_value(to));
		glue = " AND ";
	}
	if (samples && event) {
		pl_buf_addf(sql, "%sevent = ", glue);
		fleet_sql_quote(sql, event);
	}
	return PL_OK;
}

enum pl_err fleet_rows_query(const struct tool_ctx *ctx, const char *sql, size_t max_rows,
			     const char *narrow, json_t **rows, struct pl_error *err)
{
	struct pl_buf answer = {0};
	enum pl_err e = fleet_exec(&ctx->fleet, sql, NULL, 0, &answer, err);
	size_t at = 0;

	*rows = NULL;
	if (e) {
		pl_buf_release(&answer);
		return e;
	}
	*rows = json_array();
	while (at < answer.len) {
		char *nl = memchr(answer.data + at, '\n', answer.len - at);
		size_t end = nl ? (size_t)(nl - answer.data) : answer.len;
		json_t *row = end > at ? json_loadb(answer.data + at, end - at, 0, NULL) : NULL;
		at = end + 1;
		if (!row)
			continue;
		if (json_array_size(*rows) >= max_rows) {
			json_decref(row);
			json_decref(*rows);
			*rows = NULL;
			pl_buf_release(&answer);
			return pl_fail(err, PL_ERR_LIMIT, narrow, "the selection holds more than %zu rows", max_rows);
		}
		json_array_append_new(*rows, row);
	}
	pl_buf_release(&answer);
	return PL_OK;
}

uint64_t fleet_u64(json_t *v)
{
	if (json_is_integer(v))
		return (uint64_t)json_integer_value(v);
	if (json_is_string(v))
		return strtoull(json_string_value(v), NULL, 10);
	return 0;
}

enum pl_err fleet_ready(const struct tool_ctx *ctx, struct pl_error *err)
{
	return fleet_schema_check(&ctx->fleet, err);
}
