/* perf_data_walk.c - the floor for reading a perf.data: map the file and
 * walk its records in perf's delivery order (ordering, zstd), with no
 * symbols and no profile.  bench/perf_data.sh builds and times it.
 *
 *   perf_data_walk FILE   prints "records N samples N"
 */
#include <fcntl.h>
#include <stdio.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "perfdata/pdread.h"

int main(int argc, char **argv)
{
	struct stat st;
	struct pl_error err;
	uint64_t records, samples;
	int fd;

	if (argc != 2 || (fd = open(argv[1], O_RDONLY)) < 0 || fstat(fd, &st) != 0) {
		fprintf(stderr, "usage: perf_data_walk FILE\n");
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
