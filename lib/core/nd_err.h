/*
 * nd_err: an input error as a value.  A reader that meets bad input fills
 * an nd_err and returns; the program (through nd_run or its own loop)
 * prints the one line and exits with the code.  So the library can be
 * called by code that must survive bad input: the fuzzers, an embedding
 * program.
 *
 * The first error wins: later ones (a reader that went on to its end
 * after the first) leave it alone.  msg is the whole line as a program
 * prints it after "prog: ", e.g. "t.pb: byte 17: truncated varint ...";
 * file, off and line repeat its parts for a caller that wants them.
 */
#ifndef ND_ERR_H
#define ND_ERR_H

#include "nd_util.h"

#include <stdarg.h>
#include <stdint.h>

#define ND_ERR_NONE UINT64_MAX	/* off or line: not known */

typedef struct nd_err {
	int code;		/* 0: no error; else the exit status (2) */
	uint64_t off;		/* byte offset the message names (1-based in
				 * Chrome JSON, 0-based in protobuf), or
				 * ND_ERR_NONE */
	uint64_t line;		/* 1-based line, or ND_ERR_NONE */
	char file[256];		/* the input's name (cut to fit) */
	char msg[4096];		/* the message, without "prog: " */
} nd_err;

void nd_err_clear(nd_err *e);
/* Fill e unless it holds an error already; msg is the formatted text.
 * Returns -1, for "return nd_err_set(...)". */
int nd_err_set(nd_err *e, const char *file, uint64_t off, uint64_t line,
    const char *fmt, ...) ND_PRINTF(5, 6);
/* "FILE:LINE: message" and "FILE: byte OFF: message", the two places an
 * input error names (file, line and off kept too). */
int nd_err_line(nd_err *e, const char *file, uint64_t line,
    const char *fmt, ...) ND_PRINTF(4, 5);
int nd_err_vline(nd_err *e, const char *file, uint64_t line,
    const char *fmt, va_list ap);
int nd_err_byte(nd_err *e, const char *file, uint64_t off,
    const char *fmt, ...) ND_PRINTF(4, 5);
int nd_err_vbyte(nd_err *e, const char *file, uint64_t off,
    const char *fmt, va_list ap);
/* The same with ": strerror(errno)" appended. */
int nd_err_errno(nd_err *e, const char *file, const char *fmt, ...)
    ND_PRINTF(3, 4);
/* Copy src into dst unless dst holds an error already. */
void nd_err_copy(nd_err *dst, const nd_err *src);
/* "prog: msg" on stderr and exit(code), as nd_die does. */
_Noreturn void nd_err_exit(const nd_err *e);

#endif
