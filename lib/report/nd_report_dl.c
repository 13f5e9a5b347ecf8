/*
 * nd_report: what the findings collect while the stream is read: the
 * union of the data-loading host spans of the current source and the gap
 * time under it, and the gap time before pageable host-to-device copies
 * (struct rfind; nd_report_findings.c uses them for the advice of
 * device_idle and host_bound).
 */
#include "nd_report_int.h"
#include "nd_sort.h"

#include <stdlib.h>
#include <string.h>

/* A span that is not a device op or a step marker, of data loading: of
 * `family` dataloader (nd_classify), or named so (the PyTorch DataLoader's
 * iterator "enumerate(DataLoader)#_...DataLoaderIter.__next__", a region
 * "dataloader"), Kineto record_function ranges included. */
void
nd_rep_find_span(nd_report *r, const nd_event *ev)
{
	struct rfind *f = &r->rf;

	if (ev->dur_ns <= 0 || nd_event_kind(ev) != ND_KIND_HOST ||
	    (!nd_str_eq(ev->family, "dataloader") && (ev->name.p == NULL ||
	    !nd_rep_has_ci(ev->name.p, ev->name.n, "dataloader"))))
		return;
	if (f->ndl > 0 && f->dl_source != ev->source)
		f->ndl = 0;
	f->dl_source = ev->source;
	f->dl_merged = 0;
	nd_grow(&f->dl, &f->capdl, f->ndl + 1, sizeof *f->dl);
	f->dl[f->ndl][0] = ev->ts_ns;
	f->dl[f->ndl][1] = ev->ts_ns + ev->dur_ns;
	f->ndl++;
}

static int
iv_cmp(const void *a, const void *b, void *ctx)
{
	const int64_t *x = a, *y = b;

	(void)ctx;
	return x[0] < y[0] ? -1 : x[0] > y[0];
}

/* The data-loading spans of the source as a sorted union. */
static void
dl_merge(struct rfind *f)
{
	size_t m = 0;

	nd_sort(f->dl, f->ndl, sizeof *f->dl, iv_cmp, NULL);
	for (size_t i = 0; i < f->ndl; i++) {
		if (m > 0 && f->dl[i][0] <= f->dl[m - 1][1]) {
			if (f->dl[i][1] > f->dl[m - 1][1])
				f->dl[m - 1][1] = f->dl[i][1];
			continue;
		}
		f->dl[m][0] = f->dl[i][0];
		f->dl[m][1] = f->dl[i][1];
		m++;
	}
	f->ndl = m;
	f->dl_merged = 1;
}

/* A payload that is a pageable host-to-device copy (Kineto's "Memcpy HtoD
 * (Pageable -> Device)"). */
static int
is_pageable_htod(const char *s)
{
	size_t n = s ? strlen(s) : 0;

	return n > 0 && nd_rep_has_ci(s, n, "pageable") &&
	    (nd_rep_has_ci(s, n, "htod") || nd_rep_has_ci(s, n, "h2d"));
}

/* A gap of the source being finished: its payload, and its overlap with
 * the union of the source's data-loading spans (binary search). */
void
nd_rep_find_gap(nd_report *r, const nd_gap *g)
{
	struct rfind *f = &r->rf;
	int64_t a = g->ts, b = g->ts + g->dur;
	size_t lo = 0, hi;

	if (is_pageable_htod(g->payload.name))
		f->pageable_gap_ns += g->dur;
	if (f->ndl == 0 || f->dl_source != r->cursrc)
		return;
	if (!f->dl_merged)
		dl_merge(f);
	hi = f->ndl;
	while (lo < hi) {	/* the first union piece that ends after a */
		size_t mid = lo + (hi - lo) / 2;

		if (f->dl[mid][1] <= a)
			lo = mid + 1;
		else
			hi = mid;
	}
	for (; lo < f->ndl && f->dl[lo][0] < b; lo++)
		f->dl_gap_ns += (f->dl[lo][1] < b ? f->dl[lo][1] : b) -
		    (f->dl[lo][0] > a ? f->dl[lo][0] : a);
}

void
nd_rep_find_free(nd_report *r)
{
	free(r->rf.dl);
	memset(&r->rf, 0, sizeof r->rf);
}
