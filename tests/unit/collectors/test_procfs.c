/* test_procfs.c - unit tests for the /proc readers the server and the
 * device agent share (collectors/procfs.c): /proc/PID/stat fields
 * counted from the last ')' (a comm with blanks and parentheses), bounded
 * reads (a long file loses its tail, never overflows), the executable
 * lines of a maps text, and the build-id of this test binary against
 * readelf -n's. */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "collectors/procfs.h"

/* A scratch file holding text; the caller unlinks it. */
static void scratch(char path[64], const char *text, size_t len)
{
	snprintf(path, 64, "/tmp/test_procfs.XXXXXX");
	int fd = mkstemp(path);
	ck_assert_int_ge(fd, 0);
	ck_assert_int_eq(write(fd, text, len), (ssize_t)len);
	close(fd);
}

START_TEST(stat_fields_count_from_the_last_parenthesis)
{
	char line[512], path[64];
	int n = snprintf(line, sizeof line, "4242 (a) b (c) S");
	for (int i = 4; i <= 30; i++)   /* field i holds i * 10, as proc(5) numbers them */
		n += snprintf(line + n, sizeof line - (size_t)n, " %d", i * 10);
	scratch(path, line, (size_t)n);
	struct coll_pid_stat s;
	ck_assert_int_eq(coll_pid_stat_read(path, &s), 0);
	unlink(path);
	ck_assert_str_eq(s.comm, "a) b (c");
	ck_assert_int_eq(s.state, 'S');
	ck_assert_uint_eq(s.minor_faults, 100);
	ck_assert_uint_eq(s.major_faults, 120);
	ck_assert_uint_eq(s.utime, 140);
	ck_assert_uint_eq(s.stime, 150);
	ck_assert_uint_eq(s.threads, 200);
	ck_assert_uint_eq(s.start_time, 220);
	ck_assert_uint_eq(s.vsize, 230);
	ck_assert_uint_eq(s.rss_pages, 240);
}
END_TEST

START_TEST(a_stat_without_its_parenthesis_is_refused)
{
	char path[64];
	struct coll_pid_stat s;
	scratch(path, "12 (cut", 7);
	ck_assert_int_eq(coll_pid_stat_read(path, &s), -1);
	unlink(path);
	ck_assert_int_eq(coll_pid_stat_read("/nonexistent/stat", &s), -1);
	ck_assert_int_eq(coll_pid_stat(-1, &s), -1);
}
END_TEST

START_TEST(reads_are_bounded)
{
	enum { BIG = 200000 };
	char path[64], small[10];
	char *text = malloc(BIG);
	size_t len = 0;
	ck_assert_ptr_nonnull(text);
	for (int i = 0; i < BIG; i++)
		text[i] = (char)('a' + i % 26);
	scratch(path, text, BIG);
	ck_assert_int_eq(coll_read_text(path, small, sizeof small), 9);
	ck_assert_int_eq(small[9], '\0');
	ck_assert_int_eq(memcmp(small, text, 9), 0);
	char *all = coll_read_alloc(path, 1u << 20, &len);
	ck_assert_ptr_nonnull(all);
	ck_assert_uint_eq(len, BIG);
	ck_assert_int_eq(memcmp(all, text, BIG), 0);
	free(all);
	all = coll_read_alloc(path, 100000, &len);   /* the cap: the tail is lost */
	ck_assert_ptr_nonnull(all);
	ck_assert_uint_eq(len, 99999);
	ck_assert_int_eq(all[len], '\0');
	free(all);
	unlink(path);
	free(text);
	ck_assert_int_eq(coll_read_text("/nonexistent", small, sizeof small), -1);
	ck_assert_ptr_null(coll_read_alloc("/nonexistent", 100, &len));
}
END_TEST

START_TEST(maps_lists_executable_lines_without_leading_zeros)
{
	char text[] =
		"00400000-00401000 r--p 00000000 fe:01 1234                       /usr/bin/x\n"
		"00401000-00402000 r-xp 00001000 fe:01 1234                       /usr/bin/x\n"
		"7f0000000000-7f0000001000 rw-p 00000000 00:00 0 \n"
		"garbage line\n"
		"7f0000001000-7f0000002000 r-xp 00000000 00:00 0                  [vdso]\n"
		"7f0000003000-7f0000004000 r-xp 00002000 fe:01 99  /tmp/a b (deleted)";
	char *cur = text;
	struct coll_map m;
	ck_assert_int_eq(coll_maps_next(&cur, &m), 1);
	ck_assert_str_eq(m.start, "401000");
	ck_assert_str_eq(m.end, "402000");
	ck_assert_str_eq(m.offset, "1000");
	ck_assert_str_eq(m.perms, "r-xp");
	ck_assert_str_eq(m.dev, "fe:01");
	ck_assert_uint_eq(m.inode, 1234);
	ck_assert_str_eq(m.path, "/usr/bin/x");
	ck_assert_str_eq(m.line, "00401000-00402000 r-xp 00001000 fe:01 1234                       /usr/bin/x");
	ck_assert_int_eq(coll_maps_next(&cur, &m), 1);
	ck_assert_str_eq(m.path, "[vdso]");
	ck_assert_str_eq(m.offset, "0");
	ck_assert_uint_eq(m.inode, 0);
	ck_assert_int_eq(coll_maps_next(&cur, &m), 1);
	ck_assert_str_eq(m.path, "/tmp/a b (deleted)");
	ck_assert_uint_eq(m.path_len, strlen("/tmp/a b (deleted)"));
	ck_assert_int_eq(coll_maps_next(&cur, &m), 0);
}
END_TEST

START_TEST(this_binary_has_the_build_id_readelf_prints)
{
	char want[130] = "", got[130], exe[4096];
	ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
	ck_assert_int_gt(n, 0);
	exe[n] = '\0';
	char cmd[4200];
	snprintf(cmd, sizeof cmd, "readelf -n '%s' 2>/dev/null | sed -n 's/.*Build ID: //p'", exe);
	FILE *p = popen(cmd, "r");
	ck_assert_ptr_nonnull(p);
	if (!fgets(want, sizeof want, p))
		want[0] = '\0';
	pclose(p);
	want[strcspn(want, "\n")] = '\0';
	if (!want[0]) {
		fprintf(stderr, "# skip build-id check: readelf -n gave no build-id for %s\n", exe);
		return;
	}
	char *maps = coll_maps_read(getpid()), *cur = maps;
	struct coll_map m;
	int found = 0;
	ck_assert_ptr_nonnull(maps);
	while (!found && coll_maps_next(&cur, &m))
		if (m.path_len == (size_t)n && memcmp(m.path, exe, (size_t)n) == 0) {
			ck_assert_int_eq(coll_map_build_id(getpid(), &m, got, sizeof got), 0);
			ck_assert_str_eq(got, want);
			ck_assert_int_eq(coll_map_build_id(getpid(), &m, got, 8), -1); /* no room */
			found = 1;
		}
	free(maps);
	ck_assert_int_eq(found, 1);
}
END_TEST

START_TEST(cmdline_has_blanks_for_nuls)
{
	char buf[4096], want[4096];
	ck_assert_int_gt(coll_proc_cmdline(getpid(), buf, sizeof buf), 0);
	FILE *f = fopen("/proc/self/cmdline", "r");
	size_t n = fread(want, 1, sizeof want - 1, f);
	fclose(f);
	while (n > 0 && want[n - 1] == '\0')
		n--;
	for (size_t i = 0; i < n; i++)
		if (want[i] == '\0')
			want[i] = ' ';
	want[n] = '\0';
	ck_assert_str_eq(buf, want);
}
END_TEST

Suite *suite_procfs(void)
{
	Suite *s = suite_create("procfs");
	TCase *tc = tcase_create("core");

	tcase_add_test(tc, stat_fields_count_from_the_last_parenthesis);
	tcase_add_test(tc, a_stat_without_its_parenthesis_is_refused);
	tcase_add_test(tc, reads_are_bounded);
	tcase_add_test(tc, maps_lists_executable_lines_without_leading_zeros);
	tcase_add_test(tc, this_binary_has_the_build_id_readelf_prints);
	tcase_add_test(tc, cmdline_has_blanks_for_nuls);
	suite_add_tcase(s, tc);
	return s;
}
