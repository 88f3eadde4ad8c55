/*
 * buildid — the running program's GNU build id, read from its own program
 * headers (dl_iterate_phdr): no file is opened.
 */
#define _GNU_SOURCE
#include "core/buildid.h"

#include <elf.h>
#include <link.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>

static char hex[2 * 64 + 1];

/* The first object dl_iterate_phdr reports is the program itself. */
static int first_object(struct dl_phdr_info *info, size_t size, void *ctx)
{
	(void)size;
	(void)ctx;
	for (int i = 0; i < info->dlpi_phnum; i++) {
		const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
		if (ph->p_type != PT_NOTE)
			continue;
		const unsigned char *p = (const unsigned char *)(info->dlpi_addr + ph->p_vaddr);
		const unsigned char *end = p + ph->p_memsz;
		while (p + sizeof(ElfW(Nhdr)) <= end) {
			const ElfW(Nhdr) *n = (const ElfW(Nhdr) *)(const void *)p;
			size_t name = (n->n_namesz + 3) & ~(size_t)3;
			size_t desc = (n->n_descsz + 3) & ~(size_t)3;
			const unsigned char *d = p + sizeof(*n) + name;
			if (d + n->n_descsz > end)
				break;
			if (n->n_type == NT_GNU_BUILD_ID && n->n_namesz == 4 &&
			    !memcmp(p + sizeof(*n), "GNU", 4) && n->n_descsz > 0 &&
			    n->n_descsz <= 64) {
				for (size_t k = 0; k < n->n_descsz; k++)
					snprintf(hex + 2 * k, 3, "%02x", d[k]);
				return 1;
			}
			p = d + desc;
		}
	}
	return 1;
}

static void read_once(void)
{
	dl_iterate_phdr(first_object, NULL);
}

const char *build_id(void)
{
	static pthread_once_t once = PTHREAD_ONCE_INIT;
	pthread_once(&once, read_once);
	return hex[0] ? hex : NULL;
}
