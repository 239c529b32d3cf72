/* inline_sum.h - a hot loop the compiler inlines into its caller (see
 * inline_sum.c): the test moves this header away after building, as a
 * system or library header whose text is not on the machine. */
static inline unsigned long vec_sum(const unsigned *v, unsigned long n)
{
	unsigned long s = 0;

	for (unsigned long i = 0; i < n; i++)
		s += v[i] * 2654435761u;
	return s;
}
