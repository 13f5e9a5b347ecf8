#include "nd_err.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

void
nd_err_clear(nd_err *e)
{
	e->code = 0;
	e->off = e->line = ND_ERR_NONE;
	e->file[0] = e->msg[0] = '\0';
}

/* The first error wins: 0 when e already holds one. */
static int
vset(nd_err *e, const char *file, uint64_t off, uint64_t line,
    const char *fmt, va_list ap)
{
	if (e->code != 0)
		return 0;
	e->code = ND_EXIT_ERROR;
	e->off = off;
	e->line = line;
	snprintf(e->file, sizeof e->file, "%s", file != NULL ? file : "");
	vsnprintf(e->msg, sizeof e->msg, fmt, ap);
	return 1;
}

int
nd_err_set(nd_err *e, const char *file, uint64_t off, uint64_t line,
    const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vset(e, file, off, line, fmt, ap);
	va_end(ap);
	return -1;
}

/* "FILE<where>: message": where is ":LINE" or ": byte OFF". */
static int
vwhere(nd_err *e, const char *file, uint64_t off, uint64_t line,
    const char *fmt, va_list ap)
{
	int n;

	if (e->code != 0)
		return -1;
	nd_err_set(e, file, off, line, "%s", "");
	if (file == NULL)
		file = "";
	if (line != ND_ERR_NONE)
		n = snprintf(e->msg, sizeof e->msg, "%s:%llu: ", file,
		    (unsigned long long)line);
	else
		n = snprintf(e->msg, sizeof e->msg, "%s: byte %llu: ", file,
		    (unsigned long long)off);
	if (n > 0 && (size_t)n < sizeof e->msg)
		vsnprintf(e->msg + n, sizeof e->msg - (size_t)n, fmt, ap);
	return -1;
}

int
nd_err_vline(nd_err *e, const char *file, uint64_t line, const char *fmt,
    va_list ap)
{
	return vwhere(e, file, ND_ERR_NONE, line, fmt, ap);
}

int
nd_err_line(nd_err *e, const char *file, uint64_t line, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vwhere(e, file, ND_ERR_NONE, line, fmt, ap);
	va_end(ap);
	return -1;
}

int
nd_err_vbyte(nd_err *e, const char *file, uint64_t off, const char *fmt,
    va_list ap)
{
	return vwhere(e, file, off, ND_ERR_NONE, fmt, ap);
}

int
nd_err_byte(nd_err *e, const char *file, uint64_t off, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vwhere(e, file, off, ND_ERR_NONE, fmt, ap);
	va_end(ap);
	return -1;
}

int
nd_err_errno(nd_err *e, const char *file, const char *fmt, ...)
{
	int saved = errno, fresh;
	va_list ap;
	size_t n;

	va_start(ap, fmt);
	fresh = vset(e, file, ND_ERR_NONE, ND_ERR_NONE, fmt, ap);
	va_end(ap);
	n = strlen(e->msg);
	if (fresh)
		snprintf(e->msg + n, sizeof e->msg - n, ": %s",
		    strerror(saved));
	return -1;
}

void
nd_err_copy(nd_err *dst, const nd_err *src)
{
	if (dst->code == 0 && src->code != 0)
		*dst = *src;
}

void
nd_err_exit(const nd_err *e)
{
	nd_die(e->code != 0 ? e->code : ND_EXIT_ERROR, "%s", e->msg);
}
