/* fuzz_procfs.c - libFuzzer harness for the /proc readers the server and
 * the device agent share (collectors/procfs.c), on bytes a hostile or
 * odd kernel, or a target's mapped files, could hand them.  The first
 * byte picks the reader: 0 a /proc/PID/stat file, 1 a /proc/PID/maps
 * text, 2 an ELF file's build-id (a target maps any file it likes), 3
 * /proc/stat and meminfo style text (cpu lines, "Key: value" lines). */
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "collectors/procfs.h"
#include "fuzz.h"

static void fuzz_stat(const uint8_t *data, size_t size)
{
	struct coll_pid_stat s;
	if (coll_pid_stat_read(fuzz_file("stat", data, size), &s) == 0 && strlen(s.comm) >= sizeof s.comm)
		abort();
}

static void fuzz_maps(const uint8_t *data, size_t size)
{
	char *text = malloc(size + 1), *cur = text;
	struct coll_map m;
	if (!text)
		return;
	memcpy(text, data, size);
	text[size] = '\0';
	while (coll_maps_next(&cur, &m))
		if (!strchr(m.perms, 'x') || strlen(m.path) != m.path_len)
			abort();
	free(text);
}

static void fuzz_build_id(const uint8_t *data, size_t size)
{
	char hex[130];
	int fd = open(fuzz_file("elf", data, size), O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return;
	if (coll_elf_build_id(fd, hex, sizeof hex) == 0 && strspn(hex, "0123456789abcdef") != strlen(hex))
		abort();
	close(fd);
}

static void fuzz_text(const uint8_t *data, size_t size)
{
	char *text = malloc(size + 1);
	struct coll_cpu_times t;
	unsigned long long v[8];
	uint64_t u;
	if (!text)
		return;
	memcpy(text, data, size);
	text[size] = '\0';
	coll_cpu_line(text, &t);
	coll_u64s(text, v, 8);
	coll_key_u64(text, "MemTotal", &u);
	free(text);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	switch (fuzz_take_byte(&data, &size) % 4) {
	case 0: fuzz_stat(data, size); break;
	case 1: fuzz_maps(data, size); break;
	case 2: fuzz_build_id(data, size); break;
	default: fuzz_text(data, size); break;
	}
	return 0;
}
