/*
 * For harnesses whose code under test ends with nd_die on bad input: the
 * die hook longjmps out, and what the code had allocated for that input
 * would leak (a fuzzing run does millions of inputs).  The sanitizer's
 * malloc/free hooks record the blocks allocated and not freed while
 * tracking is on; fz_track_release() frees them.  Only for code with no
 * lazily allocated globals (a freed global would be used after free).
 */
#ifndef FUZZ_TRACK_H
#define FUZZ_TRACK_H

#include <stdint.h>
#include <stdlib.h>

/* From <sanitizer/allocator_interface.h> (clang's; not every compiler
 * ships the header). */
int __sanitizer_install_malloc_and_free_hooks(
    void (*malloc_hook)(const volatile void *, size_t),
    void (*free_hook)(const volatile void *));

#define FZ_SLOTS (1u << 18)
#define FZ_DEAD ((void *)1)

static void *fz_live[FZ_SLOTS];
static uint32_t fz_used[FZ_SLOTS];	/* slots written, to clear them */
static uint32_t fz_nused;
static int fz_on, fz_full;

static uint32_t
fz_slot(const volatile void *p)
{
	uintptr_t h = (uintptr_t)p;

	h ^= h >> 17;
	h *= 0x9e3779b97f4a7c15u;
	return (uint32_t)(h >> 40) & (FZ_SLOTS - 1);
}

static void
fz_on_malloc(const volatile void *p, size_t n)
{
	uint32_t i;

	(void)n;
	if (!fz_on || p == NULL || fz_full)
		return;
	if (fz_nused >= FZ_SLOTS / 2) {
		fz_full = 1;	/* give up on this input: it leaks */
		return;
	}
	for (i = fz_slot(p); fz_live[i] != NULL; i = (i + 1) & (FZ_SLOTS - 1))
		;
	fz_live[i] = (void *)(uintptr_t)p;
	fz_used[fz_nused++] = i;
}

static void
fz_on_free(const volatile void *p)
{
	if (!fz_on || p == NULL)
		return;
	for (uint32_t i = fz_slot(p); fz_live[i] != NULL;
	    i = (i + 1) & (FZ_SLOTS - 1))
		if (fz_live[i] == (void *)(uintptr_t)p) {
			fz_live[i] = FZ_DEAD;
			return;
		}
}

static void
fz_track_start(void)
{
	static int installed;

	if (!installed) {
		__sanitizer_install_malloc_and_free_hooks(fz_on_malloc,
		    fz_on_free);
		installed = 1;
	}
	fz_on = 1;
}

/* Stop tracking; with do_free, free what is still recorded. */
static void
fz_track_stop(int do_free)
{
	fz_on = 0;
	for (uint32_t k = 0; k < fz_nused; k++) {
		uint32_t i = fz_used[k];

		if (do_free && fz_live[i] != NULL && fz_live[i] != FZ_DEAD)
			free(fz_live[i]);
		fz_live[i] = NULL;
	}
	fz_nused = 0;
	fz_full = 0;
}

#endif
