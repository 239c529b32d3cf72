/* options.c - lookup, the plain setters and --help of option tables
 * (see options.h).  Setters that check more (paths that must exist,
 * FROM=TO maps) live beside their group. */
#include "options.h"
#include "util.h"

#include <string.h>

const struct pl_option *pl_option_find(const struct pl_option *table, const char *name)
{
	for (const struct pl_option *o = table; name && o->name; o++)
		if (strcmp(o->name, name) == 0)
			return o;
	return NULL;
}

static enum pl_err whole_number(const struct pl_option *o, const char *value, uint64_t *out,
				struct pl_error *err)
{
	if (!value || !pl_parse_u64(value, strlen(value), out) || *out == 0 || *out > o->max)
		return pl_fail(err, PL_ERR_USAGE, "pass a whole number from 1 up to the default",
			       "'--%s' takes 1 to %llu; got '%s'", o->name,
			       (unsigned long long)o->max, value ? value : "");
	return PL_OK;
}

enum pl_err pl_option_u64(void *target, const struct pl_option *o, const char *value,
			  struct pl_error *err)
{
	uint64_t x;

	if (whole_number(o, value, &x, err))
		return PL_ERR_USAGE;
	*(uint64_t *)((char *)target + o->offset) = x;
	return PL_OK;
}

enum pl_err pl_option_u32(void *target, const struct pl_option *o, const char *value,
			  struct pl_error *err)
{
	uint64_t x;

	if (whole_number(o, value, &x, err))
		return PL_ERR_USAGE;
	*(uint32_t *)((char *)target + o->offset) = (uint32_t)x;
	return PL_OK;
}

bool pl_option_parse_bool(const char *value, bool *out)
{
	if (value && strcmp(value, "true") == 0)
		*out = true;
	else if (value && strcmp(value, "false") == 0)
		*out = false;
	else
		return false;
	return true;
}

enum pl_err pl_option_bool(void *target, const struct pl_option *o, const char *value,
			   struct pl_error *err)
{
	if (!pl_option_parse_bool(value, (bool *)((char *)target + o->offset)))
		return pl_fail(err, PL_ERR_USAGE, "use --NAME, --NAME=true|false or --no-NAME",
			       "'--%s' is true or false; got '%s'", o->name, value ? value : "");
	return PL_OK;
}

void pl_option_help(FILE *out, const struct pl_option *table)
{
	for (const struct pl_option *o = table; o->name; o++) {
		char flag[64];
		snprintf(flag, sizeof(flag), "--%s%s%s", o->name, o->metavar ? " " : "",
			 o->metavar ? o->metavar : "");
		fprintf(out, "  %-28s %s\n", flag, o->help);
	}
}

/* The row and group of flag `name` (no dashes; "no-NAME" finds a boolean
 * NAME and sets *negated). */
static const struct pl_option *find_in(const struct pl_option_group *groups, size_t n,
				       const char *name, size_t *group, bool *negated)
{
	const struct pl_option *o;

	*negated = false;
	for (size_t g = 0; g < n; g++)
		if ((o = pl_option_find(groups[g].table, name))) {
			*group = g;
			return o;
		}
	if (strncmp(name, "no-", 3) != 0)
		return NULL;
	for (size_t g = 0; g < n; g++)
		if ((o = pl_option_find(groups[g].table, name + 3)) && !o->metavar) {
			*group = g;
			*negated = true;
			return o;
		}
	return NULL;
}

int pl_options_take(const struct pl_option_group *groups, size_t n, int argc, char **argv,
		    int *i, struct pl_error *err)
{
	const char *arg = argv[*i], *eq, *value;
	const struct pl_option *o;
	char name[64];
	size_t g;
	bool negated;

	if (strncmp(arg, "--", 2) != 0)
		return 0;
	eq = strchr(arg, '=');
	snprintf(name, sizeof(name), "%.*s", (int)(eq ? eq - arg - 2 : (long)strlen(arg) - 2), arg + 2);
	for (char *c = name; *c; c++)
		*c = *c == '_' ? '-' : *c;  /* --max_depth is --max-depth */
	if (!(o = find_in(groups, n, name, &g, &negated)))
		return 0;
	value = eq ? eq + 1 : NULL;
	if (negated && value) {
		pl_fail(err, PL_ERR_USAGE, "use --no-NAME alone, or --NAME=false",
			"'--%s' takes no value", name);
		return -1;
	}
	if (!o->metavar)
		value = negated ? "false" : value ? value : "true";
	else if (!value && *i + 1 < argc)
		value = argv[++*i];
	if (!value) {
		pl_fail(err, PL_ERR_USAGE, "give the flag a value (see --help)",
			"'--%s' needs a value (%s)", o->name, o->metavar);
		return -1;
	}
	return o->set(groups[g].target, o, value, err) == PL_OK ? 1 : -1;
}
