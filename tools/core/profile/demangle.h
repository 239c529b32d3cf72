/* demangle.h - C++ (Itanium ABI), Rust (legacy and v0) and D symbol names
 * made readable, with libiberty's cplus_demangle as binutils and perf use it.
 *
 * Three forms of one linker symbol:
 *   full:  DMGL_PARAMS | DMGL_ANSI, what `perf report -v` and c++filt print
 *          ("kv::Store::get(std::__cxx11::basic_string<char, ...> const&)");
 *   perf:  DMGL_NO_OPTS, what perf 6.1 prints by default ("kv::Store::get");
 *   short: the perf form with template arguments elided, pprof-style
 *          ("kv::Box::twice"): what a model reads first.
 * A name perf would append "@plt" to is demangled before the suffix, as
 * perf does.  Names longer than PL_DEMANGLE_MAX stay as they are (libiberty
 * sizes its work arrays on the stack from the name's length).
 *
 * Pure functions, thread-safe; results are malloc()ed and the caller
 * frees them; NULL when the name is not mangled or cannot be demangled.
 */
#ifndef PL_DEMANGLE_H
#define PL_DEMANGLE_H

#include <stdbool.h>
#include <stddef.h>

#define PL_DEMANGLE_MAX 8192

enum pl_demangle_form { PL_DM_FULL, PL_DM_PERF };

/* True when `s` (n bytes) has a mangling prefix libiberty reads (_Z, _R,
 * _GLOBAL_, _D), whether or not it demangles. */
bool pl_demangle_looks_mangled(const char *s, size_t n);

/* The demangled form of `s` (n bytes, need not be NUL-terminated). */
char *pl_demangle(const char *s, size_t n, enum pl_demangle_form form);

/* The short form of a demangled name `full` (n bytes): template argument
 * lists and the parameter list elided, "{lambda(...)#N}" and operator
 * names kept whole.  Always returns a new string. */
char *pl_demangle_shorten(const char *full, size_t n);

struct pl_profile;
/* Each function's short name (new array of pl_nfuncs(p) strings, the
 * caller frees each and the array): NULL where it equals the symbol.
 * Functions of one DSO whose different full names shorten alike keep
 * their template arguments (kv::Box<int>::twice, kv::Box<double>::twice),
 * and when that is not enough (overloads) their full names, so grouping
 * by the short name never merges two functions. */
char **pl_profile_short_names(const struct pl_profile *p);
void pl_short_names_free(char **names, size_t n);

/* Which name an export shows for a demangled function. */
enum pl_name_form {
	PL_NAMES_FULL,   /* the full demangled name (the profile's symbol) */
	PL_NAMES_SHORT,  /* pl_profile_short_names' */
	PL_NAMES_PERF,   /* perf 6.1's default (DMGL_NO_OPTS), as `perf script`
			  * prints it: what stackcollapse-perf.pl is given */
	PL_NAMES_INPUT   /* the name as the input gave it (the linkage name) */
};
/* Make each demangled function's symbol the `form` name (its linkage
 * stays): for an export of a profile loaded for it, never one that is
 * stored again. */
void pl_profile_show_names(struct pl_profile *p, enum pl_name_form form);

#endif
