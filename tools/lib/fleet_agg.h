/* fleet_agg.h - the functions of a fleet selection: what fleet_hotspots
 * ranks and fleet_compare compares.
 *
 * A selection is the fleet tools' arguments (labels, devices, from/to, an
 * event: fleet_common.h).  Loading one asks the store for its samples
 * summed per (stack, device), the stacks those name and their frames, and
 * sums each function's self and inclusive samples and counts the devices
 * it is seen on.  The per-device rows stay, sorted by device, for what
 * needs the spread across devices.
 */
#ifndef PL_FLEET_AGG_H
#define PL_FLEET_AGG_H

#include "fleet_common.h"
#include "view.h"

struct fleet_fn {
	uint64_t self, inclusive, devices;
	size_t last_stack, last_device;  /* +1; 0: none yet */
};

/* One (stack, device) sum by the function its stack ends in: what the
 * spread across devices is taken from. */
struct fleet_leaf {
	size_t device;           /* the device's number (device_names) */
	uint32_t leaf;           /* the leaf function, or PL_NOID */
	uint64_t samples;
};

struct fleet_agg {
	struct pl_strtab keys;   /* "function\0dso" -> fn index */
	struct fleet_fn *fns;
	size_t cap;
	uint64_t *frame_ids;     /* sorted, with frame_fn beside */
	uint32_t *frame_fn;
	size_t nframes;
	uint64_t *stack_ids;     /* sorted, with stack_frames beside */
	json_t **stack_frames;
	size_t nstacks;
	uint64_t total;
	size_t devices;
	json_t *sums, *stacks, *frames;  /* the store's rows (owned) */
	json_t **rows;           /* sums sorted by device (borrowed) */
	size_t *row_device;      /* each row's device number */
	size_t nrows;
	struct fleet_leaf *leaves;  /* the (stack, device) sums by leaf; after a
				     * view, the view's */
	size_t nleaves;
	char **device_names;     /* [devices], sorted (owned) */
};

/* The selection's events, most samples first ([{event, samples}], new);
 * the selection's own event is ignored. */
enum pl_err fleet_events(const struct tool_ctx *ctx, json_t *sel, json_t **events, struct pl_error *err);

/* The selection's events (new, in *events, as fleet_events), and the
 * selection `sel` given the most sampled one when it names none; a
 * selection without samples is PL_ERR_INPUT naming fleet_devices. */
enum pl_err fleet_pick_event(const struct tool_ctx *ctx, json_t *args, json_t *sel, json_t **events,
			     struct pl_error *err);

/* Load the selection (which names its event) into `a` (zeroed by the
 * caller); fleet_agg_release frees it either way. */
enum pl_err fleet_agg_load(const struct tool_ctx *ctx, json_t *sel, struct fleet_agg *a, struct pl_error *err);
void fleet_agg_release(struct fleet_agg *a);

/* The number of device `name` (device_names), or (size_t)-1. */
size_t fleet_agg_device(const struct fleet_agg *a, const char *name);

/* The selection as a profile of `event` (one thread per device, its comm
 * the device's name), as fleet_analyze writes it. */
enum pl_err fleet_agg_profile(const struct fleet_agg *a, const char *event, struct pl_profile *p,
			      struct pl_error *err);

/* The functions' sums, leaves and devices again, from `p` (a profile
 * fleet_agg_profile made, then cut by a view): its threads are the
 * devices. */
void fleet_agg_from_profile(struct fleet_agg *a, const struct pl_profile *p, uint32_t event);

/* A view on fleet rows: view.h's, where a device is a thread named by
 * its device (view.comm) and time is the selection's from_unix/to_unix.
 * view.tid and view.time are PL_ERR_USAGE naming the fields that apply.
 * Release the view even on error. */
#define FLEET_VIEW_FIELDS "comm (a device), focus, under, ignore, hide, show_from, merge, collapse_recursion"
enum pl_err fleet_view_init(struct tool_view *v, json_t *args, struct pl_error *err);

/* Apply an active view to the loaded selection `a` of `event`: its rows
 * as a profile (one thread per device), cut by the view, summed again. */
enum pl_err fleet_agg_view(const struct tool_ctx *ctx, struct fleet_agg *a, struct tool_view *view,
			   const char *event, struct pl_error *err);

/* "function\0dso" of function `id`: its name, and its DSO after the NUL. */
const char *fleet_agg_name(const struct fleet_agg *a, uint32_t id);

#endif
