/* views.c - a workload whose call paths make every view transform count:
 * one function under two callers, recursion, and a frame worth hiding.
 *
 *   main -> parse_input -> tokenize -> checkpoint
 *                       -> hash_str -> checkpoint
 *   main -> render_page -> hash_str -> checkpoint
 *                       -> walk_tree -> walk_tree -> walk_tree (recursion) -> fmt_num
 *
 * hash_str runs under both parse_input and render_page (view.under), walk_tree
 * recurses three deep (collapse_recursion), checkpoint is a small callee
 * (hide, merge).  Usage: views [SECONDS] (default 1).  Frame pointers
 * (-fno-omit-frame-pointer) keep the callers; noinline keeps the frames.
 */
#include <stdlib.h>
#include <time.h>

static volatile unsigned long sink;

__attribute__((noinline)) unsigned long checkpoint(unsigned long x)
{
	sink += x;
	return x + 1;
}

static unsigned long spin(unsigned long n, unsigned long x)
{
	for (unsigned long i = 0; i < n; i++)
		x = x * 6364136223846793005UL + 1442695040888963407UL;
	return x;
}

__attribute__((noinline)) unsigned long tokenize(unsigned long x)
{
	return checkpoint(spin(3000, x));
}

__attribute__((noinline)) unsigned long hash_str(unsigned long x)
{
	return checkpoint(spin(2000, x));
}

__attribute__((noinline)) unsigned long fmt_num(unsigned long x)
{
	return spin(1500, x);
}

__attribute__((noinline)) unsigned long walk_tree(unsigned long x, int depth)
{
	x = spin(500, x);
	return depth > 0 ? walk_tree(x, depth - 1) + 1 : fmt_num(x);
}

__attribute__((noinline)) unsigned long parse_input(unsigned long x)
{
	return hash_str(tokenize(x));
}

__attribute__((noinline)) unsigned long render_page(unsigned long x)
{
	return walk_tree(hash_str(x), 2);
}

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

int main(int argc, char **argv)
{
	double seconds = argc > 1 ? atof(argv[1]) : 1.0, end = now() + seconds;
	unsigned long x = 1;

	while (now() < end)
		for (int i = 0; i < 50; i++)
			x = render_page(parse_input(x));
	sink += x;
	return 0;
}
