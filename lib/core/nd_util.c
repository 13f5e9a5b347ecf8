#include "nd_util.h"
#include "nd_out.h"

#include <errno.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

const char *nd_progname = "ndtrace";
void (*nd_die_hook)(int code);
_Thread_local void (*nd_die_defer)(int code, const char *msg);

/* Set once an error has been reported: the exit-time check of stdout then
 * adds no second message. */
static int reported;

/* The errno of stdout's pending or past write failure, 0 if none. */
static int
stdout_error(void)
{
	struct stat st;

	errno = 0;
	if (fflush(stdout) == 0 && !ferror(stdout))
		return 0;
	if (errno != 0)
		return errno;
	/* stdio dropped the failed buffer and errno is gone: a pipe or
	 * socket can only have lost its reader. */
	if (fstat(STDOUT_FILENO, &st) == 0 &&
	    (S_ISFIFO(st.st_mode) || S_ISSOCK(st.st_mode)))
		return EPIPE;
	return EIO;
}

void
nd_stdout_flush(void)
{
	int e = stdout_error();

	if (e == 0)
		return;
	if (e == EPIPE)
		exit(ND_EXIT_OK);	/* the reader went away: quiet */
	errno = e;
	nd_die_errno(ND_EXIT_ERROR, "<stdout>: write error");
}

/* At exit: flush and close stdout so that a full disk is never silent.  It
 * cannot call exit() again, so it keeps the status on EPIPE (the program
 * ends as it meant to) and _exits 2 on any other error, after the -o
 * temporaries are gone (nd_out's cleanup was registered later, so it ran
 * first). */
static void
close_stdout(void)
{
	int e;

	if (reported)
		return;
	e = stdout_error();
	/* EBADF: stdout was closed (>&-) and nothing was written to it. */
	if (e == 0 && fclose(stdout) != 0 && errno != EBADF)
		e = errno != 0 ? errno : EIO;
	if (e == 0 || e == EPIPE)
		return;
	fprintf(stderr, "%s: <stdout>: write error: %s\n", nd_progname,
	    strerror(e));
	_exit(ND_EXIT_ERROR);
}

void
nd_init(const char *argv0)
{
	const char *s;

	if (argv0 != NULL && *argv0 != '\0') {
		s = strrchr(argv0, '/');
		nd_progname = s != NULL ? s + 1 : argv0;
	}
	signal(SIGPIPE, SIG_IGN);
	{
		static int done;

		if (!done)
			atexit(close_stdout);
		done = 1;
	}
	nd_out_install_cleanup();
}

/* The length of the UTF-8 sequence at s[0..n) and its code point in *cp;
 * 0 when it is not one (overlong, a surrogate, beyond U+10FFFF, cut). */
static size_t
utf8_seq(const unsigned char *s, size_t n, uint32_t *cp)
{
	size_t len = s[0] >= 0xf0 ? 4 : s[0] >= 0xe0 ? 3 : s[0] >= 0xc0 ? 2 : 0;
	uint32_t c;

	if (len == 0 || s[0] > 0xf4 || len > n)
		return 0;
	c = s[0] & (0x7f >> len);
	for (size_t i = 1; i < len; i++) {
		if ((s[i] & 0xc0) != 0x80)
			return 0;
		c = c << 6 | (s[i] & 0x3f);
	}
	if ((len == 2 && c < 0x80) || (len == 3 && c < 0x800) ||
	    (len == 4 && c < 0x10000) || c > 0x10ffff ||
	    (c >= 0xd800 && c <= 0xdfff))
		return 0;
	*cp = c;
	return len;
}

static int
is_bidi(uint32_t c)
{
	return c == 0x061c || c == 0x200e || c == 0x200f ||
	    (c >= 0x202a && c <= 0x202e) || (c >= 0x2066 && c <= 0x2069);
}

size_t
nd_visible(char *dst, const char *s, size_t n)
{
	const unsigned char *p = (const unsigned char *)s;
	size_t o = 0;

	for (size_t i = 0; i < n;) {
		uint32_t cp;
		size_t k;

		if (p[i] >= 0x20 && p[i] < 0x7f) {
			dst[o++] = (char)p[i++];
			continue;
		}
		if (p[i] < 0x80) {
			o += (size_t)sprintf(dst + o, "\\x%02x", p[i++]);
			continue;
		}
		if ((k = utf8_seq(p + i, n - i, &cp)) == 0) {
			o += (size_t)sprintf(dst + o, "\\x%02x", p[i++]);
			continue;
		}
		if (cp < 0xa0 || is_bidi(cp))
			o += (size_t)sprintf(dst + o, "\\u%04x", (unsigned)cp);
		else {
			memcpy(dst + o, s + i, k);
			o += k;
		}
		i += k;
	}
	dst[o] = '\0';
	return o;
}

/* defer_code: nd_die's exit code, -1 for a warning. */
static void
vmsg(const char *fmt, va_list ap, const char *suffix, int defer_code)
{
	char line[4096];
	int n;

	/* Build the whole line first so it reaches stderr in one write. */
	n = snprintf(line, sizeof line, "%s: ", nd_progname);
	if (n < 0)
		n = 0;
	vsnprintf(line + n, sizeof line - (size_t)n, fmt, ap);
	n = (int)strlen(line);
	if (suffix != NULL)
		snprintf(line + n, sizeof line - (size_t)n, ": %s", suffix);
	if (defer_code >= 0 && nd_die_defer != NULL)
		nd_die_defer(defer_code, line + strlen(nd_progname) + 2);
	fflush(stdout);
	{
		/* names and paths in it reach a terminal: made visible */
		static char vis[ND_VISIBLE_MAX(sizeof line) + 1];

		nd_visible(vis, line, strlen(line));
		fprintf(stderr, "%s\n", vis);
	}
}

void
nd_die(int code, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vmsg(fmt, ap, NULL, code);
	va_end(ap);
	if (nd_die_hook != NULL)
		nd_die_hook(code);
	reported = 1;
	exit(code);
}

void
nd_die_errno(int code, const char *fmt, ...)
{
	va_list ap;
	const char *e = strerror(errno);

	va_start(ap, fmt);
	vmsg(fmt, ap, e, code);
	va_end(ap);
	if (nd_die_hook != NULL)
		nd_die_hook(code);
	reported = 1;
	exit(code);
}

void
nd_warn(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vmsg(fmt, ap, NULL, -1);
	va_end(ap);
}

void *
nd_xmalloc(size_t n)
{
	void *p = malloc(n ? n : 1);

	if (p == NULL)
		nd_die(ND_EXIT_ERROR, "out of memory (allocating %zu bytes)", n);
	return p;
}

void *
nd_xcalloc(size_t n, size_t size)
{
	void *p = calloc(n ? n : 1, size ? size : 1);

	if (p == NULL)
		nd_die(ND_EXIT_ERROR, "out of memory (allocating %zu x %zu bytes)",
		    n, size);
	return p;
}

void *
nd_xrealloc(void *p, size_t n)
{
	void *q = realloc(p, n ? n : 1);

	if (q == NULL)
		nd_die(ND_EXIT_ERROR, "out of memory (allocating %zu bytes)", n);
	return q;
}

char *
nd_xstrdup(const char *s)
{
	return nd_xstrndup(s, strlen(s));
}

char *
nd_xstrndup(const char *s, size_t n)
{
	char *p = nd_xmalloc(n + 1);

	memcpy(p, s, n);
	p[n] = '\0';
	return p;
}

void
nd_grow(void *pp, size_t *cap, size_t need, size_t size)
{
	void **p = pp;
	size_t c = *cap;

	if (need <= c)
		return;
	if (c < 16)
		c = 16;
	while (c < need) {
		if (c > SIZE_MAX / 2 / size)
			nd_die(ND_EXIT_ERROR, "out of memory (array of %zu)", need);
		c *= 2;
	}
	*p = nd_xrealloc(*p, c * size);
	*cap = c;
}
