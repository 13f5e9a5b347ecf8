/*
 * nd_rx: the one way a user's or a built-in rule (a POSIX regex) is
 * applied to a name, scope, category or other field value: the pipeline
 * block rules, the class and family rules, --step-regex, trace-context
 * --regex and xplane2ndjson's --planes and --lines.
 *
 * glibc's regexec searches from each position of the subject, so an
 * unanchored pattern such as "x.*y" costs time quadratic in the
 * subject's length (one 1 MiB name took half a minute).  A rule therefore
 * sees at most the first ND_RX_MAX bytes of a value (cut back to a UTF-8
 * character boundary); in a longer value "$" matches nowhere, since the
 * value does not end there.  A value of at most ND_RX_MAX bytes is
 * matched exactly as regexec(3) would, all of it: a NUL byte in a name
 * (JSON's \u0000) is a character like any other, not its end.
 * ndtrace(7), "Rules and long names", is the reference.
 */
#ifndef ND_RX_H
#define ND_RX_H

#include <regex.h>
#include <stddef.h>

#define ND_RX_MAX 4096

/* regexec(re, s, nmatch, m, REG_STARTEND) on the first ND_RX_MAX bytes of
 * s[0..n); offsets in m are offsets in s. */
int nd_rx_exec(const regex_t *re, const char *s, size_t n, size_t nmatch,
    regmatch_t *m);

#endif
