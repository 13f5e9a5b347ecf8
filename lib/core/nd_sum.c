#include "nd_sum.h"
#include "nd_in.h"
#include "nd_util.h"

#include <stdio.h>

/* One reading at a time, on the thread that runs the analysis. */
static uint64_t derived;
static const char *at_path;	/* NULL: no record yet */
static uint64_t at_line;	/* 0: after the last record */
static char ended[4096];	/* at_path, once its reading ended */

void
nd_sum_begin(void)
{
	derived = 0;
	at_path = NULL;
	at_line = 0;
}

void
nd_sum_at(const char *path, uint64_t line)
{
	at_path = path;
	at_line = line;
}

void
nd_sum_end(void)
{
	if (at_path != NULL && at_path != ended) {
		snprintf(ended, sizeof ended, "%s", nd_in_path_name(at_path));
		at_path = ended;
	}
	at_line = 0;
}

/* "FILE:LINE: ", "FILE: " or "" for the record the analysis has. */
static const char *
where(char *buf, size_t size)
{
	const char *f = at_path == NULL ? NULL : at_path == ended ? ended :
	    nd_in_path_name(at_path);

	if (f == NULL)
		buf[0] = '\0';
	else if (at_line > 0)
		snprintf(buf, size, "%s:%llu: ", f,
		    (unsigned long long)at_line);
	else
		snprintf(buf, size, "%s: ", f);
	return buf;
}

int64_t
nd_sum_add(const char *what, int64_t v)
{
	uint64_t a = v < 0 ? -(uint64_t)v : (uint64_t)v;
	char buf[sizeof ended + 32];

	if (a > (uint64_t)ND_SUM_MAX - derived)
		nd_die(ND_EXIT_ERROR, "%s%s of %lld ns, and the gaps, steps "
		    "and windows the run finds add up past 2^60 (36 years in "
		    "ns)", where(buf, sizeof buf), what, (long long)v);
	derived += a;
	return v;
}

int64_t
nd_sum_apart(const char *what, int64_t origin, int64_t ts, int64_t borigin,
    int64_t bts)
{
	nd_abstime a = nd_abstime_of(origin, ts), b = nd_abstime_of(borigin, bts);
	uint64_t lo = a.lo - b.lo;
	int64_t hi = a.hi - b.hi - (a.lo < b.lo);
	char buf[sizeof ended + 32], ta[48], tb[48];

	if (hi == 0 && lo <= (uint64_t)ND_CLOCK_MAX)
		return (int64_t)lo;
	if (ts == 0 && bts == 0) {
		snprintf(ta, sizeof ta, "%lld", (long long)borigin);
		snprintf(tb, sizeof tb, "%lld", (long long)origin);
	} else {
		snprintf(ta, sizeof ta, "%lld%+lld", (long long)borigin,
		    (long long)bts);
		snprintf(tb, sizeof tb, "%lld%+lld", (long long)origin,
		    (long long)ts);
	}
	nd_die(ND_EXIT_ERROR, "%s%s %s and %s are more than 2^61 ns (73 "
	    "years) apart: not the times of one run", where(buf, sizeof buf),
	    what, ta, tb);
}
