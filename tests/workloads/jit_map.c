/* jit_map.c - a tiny "JIT" for the perf map tests (test_jit_map.sh).
 *
 * Copies one x86-64 leaf loop into two anonymous executable mappings,
 * writes /tmp/perf-PID.map naming them as Node's --perf-basic-prof and
 * the JVM's perf map agent do ("START SIZE name", hex), with lines perf
 * skips or reads oddly (a 0x prefix, too short, no name), and runs both
 * so that each is a hotspot.  x86-64 only.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

/* long loop(long n): h = h * 31 + n for n down to 1 */
static const unsigned char code[] = {
	0x31, 0xc0,                   /* xor eax, eax */
	0x48, 0x85, 0xff,             /* 1: test rdi, rdi */
	0x74, 0x0c,                   /* jz done */
	0x48, 0x6b, 0xc0, 0x1f,       /* imul rax, rax, 31 */
	0x48, 0x01, 0xf8,             /* add rax, rdi */
	0x48, 0xff, 0xcf,             /* dec rdi */
	0xeb, 0xef,                   /* jmp 1b */
	0xc3,                         /* done: ret */
};

int main(int argc, char **argv)
{
	long n = argc > 1 ? atol(argv[1]) : 3000, acc = 0;
	char path[64];
	unsigned char *a = mmap(NULL, 4096, PROT_READ | PROT_WRITE | PROT_EXEC, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	unsigned char *b = mmap(NULL, 4096, PROT_READ | PROT_WRITE | PROT_EXEC, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	FILE *f;

	if (a == MAP_FAILED || b == MAP_FAILED)
		return 1;
	memcpy(a, code, sizeof(code));
	memcpy(b + 64, code, sizeof(code));
	memcpy(b + 256, code, sizeof(code));
	snprintf(path, sizeof(path), "/tmp/perf-%d.map", (int)getpid());
	if (!(f = fopen(path, "w")))
		return 1;
	fprintf(f, "%lx %zx LazyCompile:*hot_a /srv/app.js:10\n", (unsigned long)a, sizeof(code));
	fprintf(f, "0x%lx 0x40 Interpreted:b_prefix\n", (unsigned long)(b + 64));
	fprintf(f, "%lx %zx InterpretedFunction:slow /srv/app.js:20\n", (unsigned long)(b + 256), sizeof(code));
	fprintf(f, "%lx %zx Ljava/lang/String;::hashCode\n", (unsigned long)(b + 64), sizeof(code));
	fprintf(f, "%lx 10\n", (unsigned long)b);
	fprintf(f, "zz\n\n");
	fclose(f);
	for (long i = 0; i < n; i++) {
		acc += ((long (*)(long))a)(20000);
		acc += ((long (*)(long))(b + 64))(10000);
		acc += ((long (*)(long))(b + 256))(5000);
	}
	printf("%ld\n", acc);
	if (argc > 2)
		unlink(path);
	return 0;
}
