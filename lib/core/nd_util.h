/*
 * nd_util: process-wide helpers shared by every ndtrace program.
 *
 * Errors follow err(3): "prog: message" on stderr, one line.  Exit codes are
 * fixed for the whole toolset (ND_EXIT_*).  Allocation failures are fatal:
 * the programs are filters, so there is nothing sensible to do but stop with
 * a clear message (exit 2) and let nd_out remove any half-written -o file.
 *
 * Ownership rule for the whole library: a function that returns a pointer it
 * allocated says "caller frees" in its comment; everything else is borrowed
 * and stays valid until the next call on the same object.
 */
#ifndef ND_UTIL_H
#define ND_UTIL_H

#include <stddef.h>
#include <stdint.h>

#define ND_VERSION "0.1.0"

enum {
	ND_EXIT_OK = 0,		/* success, nothing found */
	ND_EXIT_FINDING = 1,	/* a finding/regression the user asked to detect */
	ND_EXIT_ERROR = 2	/* usage or input error */
};

#if defined(__GNUC__)
#define ND_PRINTF(a, b) __attribute__((format(printf, a, b)))
#define ND_LIKELY(x) __builtin_expect(!!(x), 1)
#define ND_UNLIKELY(x) __builtin_expect(!!(x), 0)
#else
#define ND_PRINTF(a, b)
#define ND_LIKELY(x) (x)
#define ND_UNLIKELY(x) (x)
#endif

extern const char *nd_progname;

/* Set nd_progname from argv[0], ignore SIGPIPE (EPIPE is handled where the
 * write fails), close stdout with a check at exit and install the cleanup
 * that removes temporary -o files. */
void nd_init(const char *argv0);

/* Flush stdout and check it, as fshut(3) would: a closed pipe (EPIPE) ends
 * the program quietly with status 0, any other write error dies with
 * "prog: <stdout>: write error: ..." (exit 2).  Output written with stdio
 * (--help, -V, listings) ends with it.  nd_init() also registers a check of
 * stdout at exit, so no program's stdout error goes unnoticed. */
void nd_stdout_flush(void);

/* Called by nd_die before exiting when set: the fuzz harnesses longjmp out
 * of it so that an input error is an outcome, not the end of the process. */
extern void (*nd_die_hook)(int code);
/* Set on a helper thread (nd_drive_mt's decoder), whose errors must reach
 * stderr in input order from the main thread: nd_die and nd_die_errno hand
 * it the message (without "prog: ") instead of printing it and exiting.
 * It must not return. */
extern _Thread_local void (*nd_die_defer)(int code, const char *msg);

/* "prog: message\n" on stderr, then exit(code).  Runs atexit cleanups. */
_Noreturn void nd_die(int code, const char *fmt, ...) ND_PRINTF(2, 3);
/* Same as nd_die with ": strerror(errno)" appended. */
_Noreturn void nd_die_errno(int code, const char *fmt, ...) ND_PRINTF(2, 3);
void nd_warn(const char *fmt, ...) ND_PRINTF(1, 2);
/* s[0..n) into dst with what a terminal or a browser would act on as a
 * visible escape: C0 controls (tab and newline too), NUL and DEL as
 * \xNN, C1 and bidirectional controls (U+061C, U+200E, U+200F,
 * U+202A-U+202E, U+2066-U+2069) as \uNNNN, bytes that are not UTF-8 as
 * \xNN (ndtrace(7), "Names for people").  dst holds ND_VISIBLE_MAX(n) + 1
 * bytes; returns the length written, NUL-terminated.  Messages on stderr
 * go through it; nd_text_visible (nd_cli.h) is it for an nd_buf. */
#define ND_VISIBLE_MAX(n) (4 * (n))
size_t nd_visible(char *dst, const char *s, size_t n);

void *nd_xmalloc(size_t n);
void *nd_xcalloc(size_t n, size_t size);
void *nd_xrealloc(void *p, size_t n);
char *nd_xstrdup(const char *s);
char *nd_xstrndup(const char *s, size_t n);

/* Grow *p (holding *cap elements of size `size`) to hold at least `need`. */
void nd_grow(void *pp, size_t *cap, size_t need, size_t size);

/*
 * Absolute time: origin_ns + ts_ns.  ndtrace(7) allows any int64 origin,
 * so the sum can leave int64 (signed overflow: undefined behaviour, and in
 * practice a wrapped, wrong order).  Every comparison of instants of
 * different sources goes through these:
 *   nd_abstime_of / nd_abstime_cmp  the exact sum (65 bits, kept as a
 *                  high and a low word) and its order;
 *   nd_add_sat     a + b clamped to [INT64_MIN, INT64_MAX], for a value
 *                  that must stay an int64 (a displayed time).
 */
typedef struct nd_abstime {
	int64_t hi;		/* -1, 0 or 1 */
	uint64_t lo;
} nd_abstime;

static inline nd_abstime
nd_abstime_of(int64_t origin, int64_t ts)
{
	nd_abstime t;

	t.lo = (uint64_t)origin + (uint64_t)ts;
	/* sign extensions, plus the carry out of the low word */
	t.hi = (origin < 0 ? -1 : 0) + (ts < 0 ? -1 : 0) +
	    (t.lo < (uint64_t)origin ? 1 : 0);
	return t;
}

static inline int
nd_abstime_cmp(nd_abstime a, nd_abstime b)
{
	if (a.hi != b.hi)
		return a.hi < b.hi ? -1 : 1;
	return (a.lo > b.lo) - (a.lo < b.lo);
}

static inline int64_t
nd_add_sat(int64_t a, int64_t b)
{
	int64_t s;

	if (!__builtin_add_overflow(a, b, &s))
		return s;
	return a < 0 ? INT64_MIN : INT64_MAX;
}

#endif
