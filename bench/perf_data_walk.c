/* perf_data_walk.c - the floor for reading a perf.data: map the file and
 * walk its records in perf's delivery order (ordering, zstd), with no
 * symbols and no profile.  bench/perf_data.sh builds and times it.
 *
 *   perf_data_walk FILE            prints "records N samples N"
 *   perf_data_walk --counts FILE   reads FILE natively into a profile and
 *                                  prints "stacks N address_chains N": the
 *                                  distinct stacks (functions) and the
 *                                  distinct raw call chains (the caller
 *                                  check's sites), what peak RSS is bounded
 *                                  by, for the RSS lines of the bench
 */
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "perfdata/pdread.h"

static int counts(const char *path)
{
	struct pl_limits lim;
	struct pl_profile p;
	struct pl_error err;

	pl_limits_default(&lim);
	pl_profile_init(&p, &lim);
	if (pd_read_profile(&p, path, NULL, NULL, &err) != PL_OK) {
		fprintf(stderr, "%s\n", err.text);
		return 1;
	}
	printf("stacks %zu address_chains %zu\n", pl_nstacks(&p), pl_nsites(&p));
	pl_profile_release(&p);
	return 0;
}

int main(int argc, char **argv)
{
	struct stat st;
	struct pl_error err;
	uint64_t records, samples;
	int fd;

	if (argc == 3 && strcmp(argv[1], "--counts") == 0)
		return counts(argv[2]);
	if (argc != 2 || (fd = open(argv[1], O_RDONLY)) < 0 || fstat(fd, &st) != 0) {
		fprintf(stderr, "usage: perf_data_walk [--counts] FILE\n");
		return 2;
	}
	void *p = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_PRIVATE, fd, 0);
	if (p == MAP_FAILED)
		return 2;
	if (pd_walk_image(p, (size_t)st.st_size, &records, &samples, &err) != PL_OK) {
		fprintf(stderr, "%s\n", err.text);
		return 1;
	}
	printf("records %llu samples %llu\n", (unsigned long long)records, (unsigned long long)samples);
	return 0;
}
