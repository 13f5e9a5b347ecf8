/*
 * nd_cli: conventions every program's main() shares.
 *
 *   static const char usage_text[] = "usage: prog [-h] ... FILE...\n";
 *   ...
 *   nd_init(argv[0]);
 *   while ((c = getopt_long(argc, argv, "hV...", opts, NULL)) != -1)
 *       switch (c) {
 *       case 'h': nd_cli_help(usage_text);          // stdout, exit 0
 *       case 'V': nd_cli_version();                 // stdout, exit 0
 *       ...
 *       default:  nd_cli_usage(usage_text);         // stderr, exit 2
 *       }
 *
 * Long options --help and --version are spelled ND_CLI_STD_LONGOPTS.
 * Durations on the command line take a unit suffix: ns, us, ms, s (and
 * decimals: "1.5ms"); a bare number is an error, except 0.
 *
 * One meaning, one option letter across the programs; an old letter that
 * meant something else still works, with nd_cli_deprecated's warning.
 */
#ifndef ND_CLI_H
#define ND_CLI_H

#include "nd_buf.h"

#include <getopt.h>
#include <regex.h>
#include <stddef.h>
#include <stdint.h>

#define ND_CLI_STD_LONGOPTS \
	{ "help", no_argument, NULL, 'h' }, \
	{ "version", no_argument, NULL, 'V' }

_Noreturn void nd_cli_help(const char *usage_text);
_Noreturn void nd_cli_usage(const char *usage_text);
_Noreturn void nd_cli_version(void);

/* "prog: OLD is deprecated: use NOW" on stderr (NOW e.g. "-K
 * (--kernel-wait)"); the caller then does what NOW does. */
void nd_cli_deprecated(const char *old, const char *now);
/* Parse a duration into ns; 0 ok, -1 malformed or out of range. */
int nd_parse_duration(const char *s, int64_t *ns);
/* Parse a non-negative integer option value or die with
 * "prog: invalid value for OPT: 'S'" (exit 2). */
int64_t nd_cli_int(const char *opt, const char *s, int64_t min, int64_t max);
int64_t nd_cli_duration(const char *opt, const char *s);
double nd_cli_double(const char *opt, const char *s, double min, double max);
/* Compile the option value s (a POSIX ERE, with flags besides
 * REG_EXTENDED) into re or die with "prog: invalid OPT 'S': WHY"
 * (exit 2). */
void nd_cli_regex(regex_t *re, const char *opt, const char *s, int flags);

/* Durations as text: the one rule, in two styles.  Compact, for tables
 * and records: "950ns", "12.500us", "3.250ms", "1.200s" (three decimals
 * above 1 us); with sign, a positive value gets a '+'.  nd_fmt_dur_f is the
 * same for a figure that may have a fraction (a mean, a per-step delta),
 * rounded to the ns below 1 us.  Spaced, for prose (the report's
 * Markdown, HTML and SVG): "950 ns", "12.5 us", "3.250 ms", "1.200 s". */
void nd_fmt_dur(char *s, size_t n, int64_t ns, int sign);
void nd_fmt_dur_f(char *s, size_t n, double ns, int sign);
void nd_fmt_dur_spaced(nd_buf *b, int64_t ns);
/* A point in time, as an offset from the start (trace-mem's tables): in
 * milliseconds always, three decimals truncated to the microsecond
 * ("0.025 ms"), so that a column of times lines up.  Returns buf. */
const char *nd_fmt_at_ms(char *buf, size_t n, int64_t ns);
/* Text for people (tables, Markdown, HTML, SVG): s[0..n) appended to b
 * with what a terminal or a browser would act on shown as a visible
 * escape instead: C0 controls (tab and newline too), NUL and DEL as
 * \xNN, C1 controls and the bidirectional controls (U+061C, U+200E,
 * U+200F, U+202A-U+202E, U+2066-U+2069) as \uNNNN, and bytes that are
 * not UTF-8 as \xNN (ndtrace(7), "Names for people").  JSON output keeps
 * names exact instead. */
void nd_text_visible(nd_buf *b, const char *s, size_t n);
/* Display width of UTF-8 text: its code points (tables align by it). */
size_t nd_text_width(const char *s, size_t n);
/* Append s[0..n) as one CSV field, quoted as RFC 4180 needs (libcsv). */
void nd_csv_field(nd_buf *b, const char *s, size_t n);

#endif
