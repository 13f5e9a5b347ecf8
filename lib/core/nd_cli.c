#include "nd_cli.h"
#include "nd_json.h"
#include "nd_util.h"

#include <csv.h>
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void
nd_cli_help(const char *usage_text)
{
	fputs(usage_text, stdout);
	nd_stdout_flush();
	exit(ND_EXIT_OK);
}

void
nd_cli_usage(const char *usage_text)
{
	/* The first line of the usage text is the synopsis. */
	const char *nl = strchr(usage_text, '\n');
	int n = nl ? (int)(nl - usage_text) : (int)strlen(usage_text);

	fprintf(stderr, "%.*s\n", n, usage_text);
	fprintf(stderr, "Try '%s --help' for more information.\n", nd_progname);
	exit(ND_EXIT_ERROR);
}

void
nd_cli_version(void)
{
	printf("%s (ndtrace) %s\n", nd_progname, ND_VERSION);
	nd_stdout_flush();
	exit(ND_EXIT_OK);
}

void
nd_cli_deprecated(const char *old, const char *now)
{
	nd_warn("%s is deprecated: use %s", old, now);
}

int
nd_parse_duration(const char *s, int64_t *ns)
{
	const char *p = s, *num_end;
	int scale;
	int64_t v;

	if (s == NULL || *s == '\0')
		return -1;
	while (*p == '-' || *p == '+' || *p == '.' || (*p >= '0' && *p <= '9'))
		p++;
	num_end = p;
	if (num_end == s || *s == '-' || *s == '+')
		return -1;
	/* A bare number is refused (is "10" ns or us?), except 0, which is
	 * the same in every unit. */
	if (*p == '\0' && strspn(s, "0.") == (size_t)(p - s))
		scale = 0;
	else if (strcmp(p, "ns") == 0)
		scale = 0;
	else if (strcmp(p, "us") == 0 || strcmp(p, "\xc2\xb5s") == 0)
		scale = 3;
	else if (strcmp(p, "ms") == 0)
		scale = 6;
	else if (strcmp(p, "s") == 0)
		scale = 9;
	else
		return -1;
	/* nd_json_fixed is exact decimal arithmetic; reuse it. */
	{
		nd_jval jv;
		nd_jerr je;
		const char *q = s;

		if (nd_json_value(&q, s, num_end, &jv, &je) != 0 || q != num_end)
			return -1;
	}
	if (nd_json_fixed(s, (size_t)(num_end - s), scale, &v) != 0 || v < 0)
		return -1;
	*ns = v;
	return 0;
}

int64_t
nd_cli_int(const char *opt, const char *s, int64_t min, int64_t max)
{
	char *end;
	long long v;

	errno = 0;
	v = strtoll(s, &end, 10);
	if (errno != 0 || end == s || *end != '\0' || v < min || v > max)
		nd_die(ND_EXIT_ERROR, "invalid value for %s: '%s'", opt, s);
	return v;
}

int64_t
nd_cli_duration(const char *opt, const char *s)
{
	int64_t v;

	if (nd_parse_duration(s, &v) != 0)
		nd_die(ND_EXIT_ERROR, "invalid duration for %s: '%s' "
		    "(a number with a unit: e.g. 500ns, 10us, 1.5ms, 2s)",
		    opt, s);
	return v;
}

double
nd_cli_double(const char *opt, const char *s, double min, double max)
{
	char *end;
	double v;

	errno = 0;
	v = strtod(s, &end);
	if (errno != 0 || end == s || *end != '\0' || isnan(v) || v < min ||
	    v > max)
		nd_die(ND_EXIT_ERROR, "invalid value for %s: '%s'", opt, s);
	return v;
}

void
nd_fmt_dur_f(char *s, size_t n, double v, int sign)
{
	double a = fabs(v);
	const char *sg = v < 0 ? "-" : sign && v > 0 ? "+" : "";

	if (a >= 1e9)
		snprintf(s, n, "%s%.3fs", sg, a / 1e9);
	else if (a >= 1e6)
		snprintf(s, n, "%s%.3fms", sg, a / 1e6);
	else if (a >= 1e3)
		snprintf(s, n, "%s%.3fus", sg, a / 1e3);
	else
		snprintf(s, n, "%s%.0fns", sg, a);
}

void
nd_fmt_dur(char *s, size_t n, int64_t v, int sign)
{
	/* exact below 1 us; above, the three decimals are far coarser than
	 * a double's error */
	if (v < 1000 && v > -1000)
		snprintf(s, n, "%s%lldns", sign && v > 0 ? "+" : "",
		    (long long)v);
	else
		nd_fmt_dur_f(s, n, (double)v, sign);
}

void
nd_fmt_dur_spaced(nd_buf *b, int64_t ns)
{
	int64_t a = ns < 0 ? -ns : ns;

	if (a < 1000)
		nd_buf_addf(b, "%lld ns", (long long)ns);
	else if (a < 1000000)
		nd_buf_addf(b, "%.1f us", (double)ns / 1e3);
	else if (a < 1000000000)
		nd_buf_addf(b, "%.3f ms", (double)ns / 1e6);
	else
		nd_buf_addf(b, "%.3f s", (double)ns / 1e9);
}

const char *
nd_fmt_at_ms(char *buf, size_t n, int64_t ns)
{
	const char *sign = ns < 0 ? "-" : "";
	uint64_t a = ns < 0 ? (uint64_t)0 - (uint64_t)ns : (uint64_t)ns;

	snprintf(buf, n, "%s%" PRIu64 ".%03" PRIu64 " ms", sign, a / 1000000,
	    a % 1000000 / 1000);
	return buf;
}

void
nd_text_visible(nd_buf *b, const char *s, size_t n)
{
	nd_buf_reserve(b, b->len + ND_VISIBLE_MAX(n) + 1);
	b->len += nd_visible(b->p + b->len, s, n);
	b->p[b->len] = '\0';
}

size_t
nd_text_width(const char *s, size_t n)
{
	size_t w = 0;

	for (size_t i = 0; i < n; i++)
		if (((unsigned char)s[i] & 0xc0) != 0x80)
			w++;
	return w;
}

void
nd_csv_field(nd_buf *b, const char *s, size_t n)
{
	size_t need = csv_write(NULL, 0, s, n);

	nd_buf_reserve(b, need + 1);
	csv_write(b->p + b->len, need, s, n);
	b->len += need;
	b->p[b->len] = '\0';
}

void
nd_cli_regex(regex_t *re, const char *opt, const char *s, int flags)
{
	int rc = regcomp(re, s, REG_EXTENDED | flags);

	if (rc != 0) {
		char msg[256];

		regerror(rc, re, msg, sizeof msg);
		nd_die(ND_EXIT_ERROR, "invalid %s '%s': %s", opt, s, msg);
	}
}
