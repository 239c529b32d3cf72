/* iowait.c - 4 KiB writes each followed by fdatasync on a file of a real
 * file system (the path in argv[1]): the thread sleeps in the block layer,
 * the disk_io candidate of classify_hotspots on sched:sched_switch
 * (test_classify.sh).
 */
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

__attribute__((noinline)) int write_and_sync(int fd, int r)
{
	char buf[4096];

	memset(buf, r, sizeof(buf));
	if (pwrite(fd, buf, sizeof(buf), (off_t)(r % 64) * 4096) != (ssize_t)sizeof(buf))
		return -1;
	return fdatasync(fd);
}

int main(int argc, char **argv)
{
	const char *path = argc > 1 ? argv[1] : "iowait.tmp";
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0600);

	if (fd < 0)
		return 1;
	for (int r = 0; r < 300; r++)
		if (write_and_sync(fd, r))
			return 1;
	close(fd);
	unlink(path);
	return 0;
}
