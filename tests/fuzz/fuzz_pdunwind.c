/* fuzz_pdunwind.c - libFuzzer harness for the DWARF unwinder of the
 * native perf.data reader (perfdata/pdunwind.c): a recording's user
 * registers and stack copy are outside bytes, and libdw follows them
 * through real CFI.  The first input byte picks the mode: bit 0 the
 * architecture (x86_64 over this harness's own executable, whose
 * .eh_frame is real compiler CFI; aarch64 over
 * fixtures/dwarf-aarch64/chain at 0x400000), bit 1 puts the pc inside
 * that module's text (else as given), bit 2 the stack pointer at a fixed
 * address (else as given).  Then 33 registers (perf's numbering, u64,
 * zero-filled when short), then the stack copy, handed over in a buffer
 * of its exact size so that ASan sees a read past it.  The chain must
 * stay within the frame cap.  Seed corpus: tests/fuzz/corpus/pdunwind/
 * (the aarch64 test's samples, x86_64 ones taken from a recording). */
#include "fuzz.h"
#include "perfdata/pdunwind.h"

#include <elf.h>
#include <link.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static struct pd_unwind_space *spaces[2];
static uint64_t text_start[2], text_len[2];

static int find_exe(struct dl_phdr_info *info, size_t n, void *arg)
{
	(void)n, (void)arg;
	if (info->dlpi_name && info->dlpi_name[0])
		return 0;   /* the main program comes first, unnamed */
	for (int i = 0; i < info->dlpi_phnum; i++) {
		const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
		if (ph->p_type == PT_LOAD && (ph->p_flags & PF_X)) {
			text_start[0] = info->dlpi_addr + ph->p_vaddr;
			text_len[0] = ph->p_memsz;
			static char exe[4096];
			ssize_t k = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
			if (k <= 0)
				return 1;
			exe[k] = '\0';
			struct pd_unwind_module m = {exe, "", text_start[0] & ~0xfffull,
						     text_start[0] + ph->p_memsz, ph->p_offset & ~0xfffull};
			pd_unwind_space_set_modules(spaces[0], &m, 1, 1);
			return 1;
		}
	}
	return 1;
}

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	(void)argc, (void)argv;
	spaces[0] = pd_unwind_space_new(PD_UW_ARCH_X86_64);
	spaces[1] = pd_unwind_space_new(PD_UW_ARCH_AARCH64);
	dl_iterate_phdr(find_exe, NULL);
	if (access("fixtures/dwarf-aarch64/chain", R_OK) == 0) {
		static char path[4096];
		if (realpath("fixtures/dwarf-aarch64/chain", path)) {
			struct pd_unwind_module m = {path, "", 0x400000, 0x410000, 0};
			pd_unwind_space_set_modules(spaces[1], &m, 1, 1);
			text_start[1] = 0x4000d4;
			text_len[1] = 0x4c;
		}
	}
	return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	unsigned mode = fuzz_take_byte(&data, &size);
	int a = mode & 1;
	uint64_t regs[64] = {0}, pcs[127];
	size_t nregs = a ? 33 : 24;
	enum pd_unwind_stop stop;

	if (!spaces[0])
		LLVMFuzzerInitialize(NULL, NULL);
	size_t take = size < nregs * 8 ? size : nregs * 8;
	memcpy(regs, data, take);
	data += take;
	size -= take;
	int pc = a ? 32 : 8, sp = a ? 31 : 7;
	if ((mode & 2) && text_len[a])
		regs[pc] = text_start[a] + regs[pc] % text_len[a];
	if (mode & 4)
		regs[sp] = 0x7ffffff000ull;
	uint8_t *stack = malloc(size ? size : 1);
	memcpy(stack, data, size);
	struct pd_unwind_sample smp = {100, 100, regs, a ? (1ull << 33) - 1 : 0xff0fffull, stack, size, false};
	size_t n = pd_unwind_sample(spaces[a], &smp, pcs, 127, &stop);
	if (n > 127 || (unsigned)stop >= PD_UW_NSTOPS)
		abort();
	free(stack);
	return 0;
}
