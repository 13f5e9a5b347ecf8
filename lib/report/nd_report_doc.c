/*
 * nd_report: the report as a document (nd_doc): every section of the
 * report, and a trace-diff output as a comparison report.  The writers
 * (nd_doc_markdown, nd_doc_html) render it; the charts and the HTML
 * summary are its figures (nd_report_charts.c).
 */
#include "nd_report_int.h"
#include "nd_cli.h"

#include "nd_name.h"
#include "nd_sort.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void
put_pct(nd_buf *b, int64_t a, int64_t tot)
{
	nd_buf_addf(b, "%.1f %%", nd_rep_pct(a, tot));
}

/* Text in a table cell or a line: | and newlines escaped, and every
 * character Markdown could read as markup or raw HTML (< > & too: "<b"
 * would open a tag, "&lt;" name an entity) backslash-escaped, so that the
 * text reads as written in any viewer and in nd_report_html. */
static void
put_txtn(nd_buf *b, const char *s, size_t n)
{
	nd_buf vis = ND_BUF_INIT;

	/* controls (NUL too) and bidi overrides as visible escapes first:
	 * their backslash is then escaped like any other */
	nd_text_visible(&vis, s, n);
	nd_buf_addc(&vis, '\0');
	for (s = vis.p; *s; s++) {
		switch (*s) {
		case '|':
			nd_buf_adds(b, "\\|");
			break;
		case '`':
		case '*':
		case '_':
		case '\\':
		case '[':
		case ']':
		case '<':
		case '>':
		case '&':
			nd_buf_addc(b, '\\');
			nd_buf_addc(b, *s);
			break;
		default:
			nd_buf_addc(b, *s);
		}
	}
	nd_buf_free(&vis);
}

static void
put_txt(nd_buf *b, const char *s)
{
	if (s == NULL)
		nd_buf_adds(b, "-");
	else
		put_txtn(b, s, strlen(s));
}

/* A name in a table: shortened by nd_name_short (ndtrace(7), "Names in
 * tables"); 1 when what is shown is not the whole name. */
static int
put_namen(nd_buf *b, const char *s, size_t n)
{
	nd_buf t = ND_BUF_INIT;
	int cut;

	if (s == NULL) {
		put_txt(b, s);
		return 0;
	}
	nd_name_short(s, n, ND_NAME_WIDTH, &t);
	put_txtn(b, t.p != NULL ? t.p : "", t.len);
	cut = t.len != n || (n > 0 && memcmp(t.p, s, n) != 0);
	nd_buf_free(&t);
	return cut;
}

static void
put_name(nd_buf *b, const char *s)
{
	put_namen(b, s, s != NULL ? strlen(s) : 0);
}

/* A name in a table cell: shortened by nd_name_short (ndtrace(7), "Names
 * in tables"), its full text kept for the HTML's hover. */
static void
cell_namen(nd_doc *d, const char *s, size_t n)
{
	if (put_namen(nd_doc_cell(d), s, n))
		nd_doc_cell_full(d, s, n);
}

static void
cell_name(nd_doc *d, const char *s)
{
	cell_namen(d, s, s != NULL ? strlen(s) : 0);
}

/* The report's name id (it may hold NUL); "-" for none. */
static void
cell_nameid(nd_doc *d, const nd_report *r, uint32_t id)
{
	size_t n;
	const char *s = nd_rep_name_ofn(r, id, &n);

	cell_namen(d, s, n);
}

static void
cell_txt(nd_doc *d, const char *s)
{
	put_txt(nd_doc_cell(d), s);
}

static void
cell_dur(nd_doc *d, int64_t ns)
{
	nd_fmt_dur_spaced(nd_doc_cell(d), ns);
}

static void
cell_pct(nd_doc *d, int64_t a, int64_t tot)
{
	put_pct(nd_doc_cell(d), a, tot);
}

static void
cell_u64(nd_doc *d, uint64_t v)
{
	nd_buf_addf(nd_doc_cell(d), "%llu", (unsigned long long)v);
}

static void
cell_i64(nd_doc *d, int64_t v)
{
	nd_buf_addf(nd_doc_cell(d), "%lld", (long long)v);
}

static void
more(nd_doc *d, const nd_report *r, size_t n, const char *what)
{
	if (nd_rep_cut(r, n) < n)
		nd_buf_addf(nd_doc_para(d), "%zu more %s not shown (--top %d).",
		    n - nd_rep_cut(r, n), what, r->o.top);
}

/* The devices with device ops and their models (nd_rep_model_gaps). */
static void
doc_hardware(nd_report *r, nd_doc *d)
{
	size_t m = nd_rep_cut(r, r->nhwall);
	nd_buf *b = nd_doc_para(d);

	if (r->ndevices == 0) {
		nd_buf_adds(b, "Devices with device ops: none.");
		return;
	}
	nd_buf_addf(b, "Devices with device ops: %llu",
	    (unsigned long long)r->ndevices);
	if (r->nsrc > 1)
		nd_buf_addf(b, " over %zu sources", r->nsrc);
	if (r->nhwall == 1 && r->hwall[0].model == UINT32_MAX) {
		nd_buf_adds(b, "; the trace does not name their model.");
		return;
	}
	nd_buf_adds(b, r->nhwall == 1 ? "; model: " : "; models: ");
	for (size_t i = 0; i < m; i++) {
		if (i > 0)
			nd_buf_adds(b, ", ");
		if (r->hwall[i].model == UINT32_MAX)
			nd_buf_adds(b, "not named");
		else
			put_txt(b, nd_rep_name_of(r, r->hwall[i].model));
		nd_buf_addf(b, " (%llu)", (unsigned long long)r->hwall[i].n);
	}
	if (m < r->nhwall)
		nd_buf_addf(b, " and %zu more", r->nhwall - m);
	nd_buf_adds(b, ".");
}

static void
doc_sources(nd_report *r, nd_doc *d)
{
	nd_buf_adds(nd_doc_heading(d, 2), "1 Source and provenance");
	if (r->nsrc == 0) {
		nd_buf_adds(nd_doc_para(d), "The input is empty.");
		return;
	}
	nd_doc_table(d, 0, "#", "source", "format", "host", "rank",
	    "producer", "span", "sha256", (char *)NULL);
	for (size_t i = 0; i < r->nsrc; i++) {
		const struct rsrc *s = &r->src[i];

		nd_doc_row(d);
		nd_buf_addf(nd_doc_cell(d), "%zu", i);
		cell_txt(d, s->path);
		cell_txt(d, s->format);
		cell_txt(d, s->host);
		if (s->has_rank)
			cell_i64(d, s->rank);
		else
			cell_txt(d, NULL);
		cell_txt(d, s->producer);
		if (s->has_t)
			cell_dur(d, s->tmax - s->tmin);
		else
			cell_txt(d, NULL);
		if (s->sha256)
			nd_buf_addf(nd_doc_cell(d), "%.16s", s->sha256);
		else
			cell_txt(d, NULL);
	}
	doc_hardware(r, d);
	if (r->o.stamp != NULL)
		put_txt(nd_doc_para(d), r->o.stamp);
}

/* Skipped events by reason, and the note on B/E mismatches. */
static void
doc_skipped(nd_report *r, nd_doc *d)
{
	uint64_t skipped = 0;

	for (size_t i = 0; i < r->nskipped; i++)
		skipped += r->skipped[i].n;
	if (r->nskipped == 0) {
		nd_buf_adds(nd_doc_para(d), "Skipped events: none.");
		return;
	}
	nd_buf_addf(nd_doc_para(d), "Skipped events: %llu.",
	    (unsigned long long)skipped);
	nd_doc_table(d, 0, "reason", "events", (char *)NULL);
	for (size_t i = 0; i < r->nskipped; i++) {
		nd_doc_row(d);
		cell_txt(d, nd_rep_name_of(r, r->skipped[i].id));
		cell_u64(d, r->skipped[i].n);
	}
	for (size_t i = 0; i < r->nskipped; i++) {
		const char *why = nd_rep_name_of(r, r->skipped[i].id);

		if (strncmp(why, "unmatched_", 10) == 0) {
			nd_buf_adds(nd_doc_para(d), "B/E mismatches: begin and "
			    "end events without a partner were skipped "
			    "(reasons `unmatched_*`).");
			break;
		}
	}
}

static void
doc_quality(nd_report *r, nd_doc *d)
{
	int trunc = 0;

	nd_buf_adds(nd_doc_heading(d, 2), "2 Trace quality");
	nd_doc_table(d, 0, "#", "spans", "instants", "counters", "flows",
	    "other", "input events", "skipped", "truncated", (char *)NULL);
	for (size_t i = 0; i < r->nsrc; i++) {
		const struct rsrc *s = &r->src[i];

		nd_doc_row(d);
		nd_buf_addf(nd_doc_cell(d), "%zu", i);
		cell_u64(d, s->spans);
		cell_u64(d, s->instants);
		cell_u64(d, s->counters);
		cell_u64(d, s->flows);
		cell_u64(d, s->others);
		if (s->end_events >= 0)
			cell_i64(d, s->end_events);
		else
			cell_txt(d, NULL);
		if (s->has_end) {
			cell_u64(d, s->skipped);
			nd_buf_adds(nd_doc_cell(d), s->trunc ? "**yes**" : "no");
		} else {
			cell_txt(d, NULL);
			nd_buf_adds(nd_doc_cell(d), "no end record");
		}
		trunc |= s->trunc;
	}
	doc_skipped(r, d);
	for (size_t i = 0; i < r->nsrc; i++)
		if (r->src[i].bad_spans > 0)
			nd_buf_addf(nd_doc_para(d), "Source %zu: %llu spans "
			    "without ts_ns or dur_ns were left out.", i,
			    (unsigned long long)r->src[i].bad_spans);
	if (trunc)
		nd_buf_adds(nd_doc_para(d), "**Suspected truncation**: a source "
		    "stops at a known export cap (1,000,000 or 5,000,000 "
		    "events), so the end of the run is missing. Read the XPlane "
		    "(`xplane2ndjson run/`) instead of the trace viewer's "
		    "JSON.");
	else
		nd_buf_adds(nd_doc_para(d), "Truncation: none suspected.");
	if (r->nwarn == 0)
		nd_buf_adds(nd_doc_para(d), "Warnings: none.");
	else {
		size_t n = nd_rep_cut(r, r->nwarn);

		nd_buf_addf(nd_doc_para(d), "Warnings: %zu.", r->nwarn);
		for (size_t i = 0; i < n; i++)
			put_txt(nd_doc_item(d), r->warn[i]);
		more(d, r, r->nwarn, "warnings");
	}
}

/* The step classes of the steady steps (nd_stepsum), a table. */
static void
doc_step_classes(nd_report *r, nd_doc *d)
{
	nd_doc_table(d, 0, "class", "steps", "median", "mean", "share",
	    "representative", "period", (char *)NULL);
	for (int c = 0; c < r->cl.nclass; c++) {
		const nd_step_class *k = &r->cl.c[c];

		nd_doc_row(d);
		nd_buf_adds(nd_doc_cell(d), k->name);
		cell_u64(d, k->st.count);
		cell_dur(d, k->st.median);
		cell_dur(d, k->st.mean);
		cell_pct(d, k->st.total, r->steady.total);
		cell_i64(d, k->representative);
		if (k->has_period)
			nd_buf_addf(nd_doc_cell(d), "every %lld (phase %lld)",
			    (long long)k->period, (long long)k->phase);
		else
			cell_txt(d, NULL);
	}
	nd_buf_addf(nd_doc_para(d), "Class split: r2 %.4f, gap %.4f, ratio "
	    "%.4f (two classes need r2 >= %g, gap >= %g, ratio >= %g).",
	    r->cl.r2, r->cl.gap, r->cl.ratio, ND_CLASS_MIN_R2,
	    ND_CLASS_MIN_GAP, ND_CLASS_MIN_RATIO);
}

/* The steps compared across ranks: stragglers, lag and spread. */
static void
doc_step_ranks(nd_report *r, nd_doc *d)
{
	nd_buf *b = nd_doc_para(d);

	nd_buf_addf(b, "Ranks: %zu step%s compared across ranks "
	    "(%s clock); largest straggler lag ", r->rank_steps,
	    nd_rep_s(r->rank_steps), r->rank_abs ? "absolute" : "relative");
	nd_fmt_dur_spaced(b, r->lag_max);
	nd_buf_addf(b, " (rank %lld, step %lld); largest spread of "
	    "step time ", (long long)r->lag_max_rank,
	    (long long)r->lag_max_step);
	nd_fmt_dur_spaced(b, r->spread_max);
	nd_buf_adds(b, ".");
	nd_doc_table(d, 0, "rank", "straggler in", "largest lag", "mean busy",
	    (char *)NULL);
	for (size_t i = 0; i < r->nranks; i++) {
		nd_doc_row(d);
		cell_i64(d, r->ranks[i].rank);
		cell_u64(d, r->ranks[i].straggler);
		cell_dur(d, r->ranks[i].lag_max);
		if (r->ranks[i].busy_n)
			cell_dur(d, r->ranks[i].busy_sum /
			    (int64_t)r->ranks[i].busy_n);
		else
			cell_txt(d, NULL);
	}
}

/* The first paragraph of the Steps section: where the steps come from
 * (nd_steps: step_source) and the steady state. */
static void
steps_line(nd_report *r, nd_buf *b)
{
	if (r->nsteps == 0) {
		nd_buf_adds(b, "No steps found (no step markers and no step "
		    "keys on device ops; see --step-regex).");
		return;
	}
	if (r->step_source == ND_SS_MARKER || r->step_what == NULL)
		nd_buf_addf(b, "%zu step%s, marked by %s", r->nsteps,
		    nd_rep_s(r->nsteps), nd_sm_name(r->marker));
	else {
		int xla = r->step_source == ND_SS_XLA_MODULE;

		nd_buf_addf(b, "%zu step%s: the %s of %s ", r->nsteps,
		    nd_rep_s(r->nsteps), xla ? "executions" : "repetitions",
		    xla ? "XLA module" : "span");
		put_name(b, r->step_what);
		nd_buf_adds(b, r->step_source == ND_SS_XLA_MODULE ?
		    " (no step markers)" : " (inferred: no step markers)");
	}
	nd_buf_addf(b, "; steady state: %llu step%s "
	    "(%lld to %lld; warmup %lld%s).",
	    (unsigned long long)r->steady.count, nd_rep_s(r->steady.count),
	    (long long)r->first_step, (long long)r->last_step,
	    (long long)r->warmup, r->o.drop_last && r->warmup_applied ?
	    ", last dropped" : "");
}

static void
doc_steps(nd_report *r, nd_doc *d)
{
	static const char *const names[] = { "mean", "median", "p90", "min",
	    "max", "stddev", "total" };
	const int64_t *va = &r->all.mean, *vs = &r->steady.mean;

	nd_buf_adds(nd_doc_heading(d, 2), "3 Steps");
	steps_line(r, nd_doc_para(d));
	if (r->nsteps == 0)
		return;
	/* too few steps (nd_stepsum_window): every step is steady */
	if (!r->warmup_applied && r->o.drop_last)
		nd_buf_addf(nd_doc_para(d), "Only %zu step%s: neither the "
		    "warmup of %lld nor the last step is left out.", r->nsteps,
		    nd_rep_s(r->nsteps), (long long)r->o.warmup);
	else if (!r->warmup_applied && r->o.warmup > 0)
		nd_buf_addf(nd_doc_para(d), "Only %zu step%s: the warmup of "
		    "%lld is not left out.", r->nsteps, nd_rep_s(r->nsteps),
		    (long long)r->o.warmup);
	nd_doc_table(d, 0, "statistic", "all steps", "steady", (char *)NULL);
	for (int i = 0; i < 7; i++) {
		nd_doc_row(d);
		nd_buf_adds(nd_doc_cell(d), names[i]);
		cell_dur(d, va[i]);
		if (r->steady.count)
			cell_dur(d, vs[i]);
		else
			cell_txt(d, NULL);
	}
	if (r->steady.count > 0)
		doc_step_classes(r, d);
	if (r->rank_steps > 0)
		doc_step_ranks(r, d);
}

static void
doc_bd_row(nd_doc *d, const char *label, const nd_breakdown *bd,
    int64_t tot)
{
	nd_doc_row(d);
	cell_txt(d, label);
	cell_dur(d, tot);
	cell_pct(d, bd->compute_ns, tot);
	cell_pct(d, bd->communication_ns, tot);
	cell_pct(d, bd->overlap_ns, tot);
	cell_pct(d, bd->memory_ns, tot);
	cell_pct(d, bd->host_ns, tot);
	cell_pct(d, bd->idle_ns, tot);
	cell_pct(d, bd->host_ns + bd->idle_ns, tot);
}

/* No device op (a CPU-only profile) but steady steps: what their windows
 * hold is host work or nothing (trace-steps' host_ns and idle_ns). */
static void
doc_breakdown_host(nd_report *r, nd_doc *d)
{
	nd_buf_adds(nd_doc_para(d), "No device ops (a CPU-only profile): the "
	    "steady step windows split into time some host span runs and time "
	    "nothing runs (trace-steps -s).");
	nd_doc_table(d, 0, "window", "step time", "host works", "nothing runs",
	    (char *)NULL);
	nd_doc_row(d);
	nd_buf_adds(nd_doc_cell(d), "steady steps");
	cell_dur(d, r->bd_total);
	cell_pct(d, r->bd.host_ns, r->bd_total);
	cell_pct(d, r->bd.idle_ns, r->bd_total);
}

static void
doc_breakdown(nd_report *r, nd_doc *d)
{
	char lab[512];
	const nd_breakdown *x = &r->dbd;
	nd_buf *b;

	nd_buf_adds(nd_doc_heading(d, 2), "4 Time breakdown per device");
	if (!r->has_device && r->bd_total > 0) {
		doc_breakdown_host(r, d);
		return;
	}
	if (r->window == RW_NONE || r->dbd_total == 0 || !r->has_device) {
		nd_buf_addf(nd_doc_para(d), "%s: no breakdown.", r->has_device ?
		    "No steady steps and no profile window" : "No device ops");
		return;
	}
	if (r->window == RW_PROFILE)
		nd_buf_adds(nd_doc_para(d), "No steps were found: the breakdown "
		    "is over the profile window, from the first to the last "
		    "device op of each device, % of that window[^rules]. \"all "
		    "devices\" sums the devices (what the findings use).");
	else
		nd_buf_adds(nd_doc_para(d), "Steady steps, % of step "
		    "time[^rules]. \"all devices\" sums the devices (what the "
		    "findings use); \"step window\" counts a category when it "
		    "runs on any device of the window (trace-steps -s).");
	nd_doc_table(d, 0, "device", r->window == RW_PROFILE ? "window" :
	    "step time", "compute", "exposed communication", "overlap",
	    "memory", "device idle, host works", "device idle, nothing runs",
	    "device idle", (char *)NULL);
	for (size_t i = 0; i < r->ndevbd; i++)
		if (r->devbd[i].total > 0)
			doc_bd_row(d, nd_rep_dev_label(r, r->devbd[i].dev, lab,
			    sizeof lab), &r->devbd[i].bd, r->devbd[i].total);
	if (r->ndevbd > 1)
		doc_bd_row(d, "all devices", x, r->dbd_total);
	if (r->window == RW_STEADY && r->bd_total > 0)
		doc_bd_row(d, "step window (any device)", &r->bd, r->bd_total);
	b = nd_doc_para(d);
	nd_buf_adds(b, "Device idle, all devices: ");
	put_pct(b, x->host_ns + x->idle_ns, r->dbd_total);
	nd_buf_adds(b, " (");
	nd_fmt_dur_spaced(b, x->host_ns + x->idle_ns);
	nd_buf_adds(b, "): while the host works ");
	put_pct(b, x->host_ns, r->dbd_total);
	nd_buf_adds(b, ", nothing runs ");
	put_pct(b, x->idle_ns, r->dbd_total);
	nd_buf_adds(b, ".");
	nd_buf_adds(nd_doc_note(d, "rules"), "Rules (trace-steps(1), "
	    "BREAKDOWN): a device op is communication when its `class` is "
	    "communication or stall, memory when it is memory, else compute "
	    "(classes from the nd\\_classify rule table: `trace-classify "
	    "--print-rules`). The window is split by precedence compute, "
	    "exposed communication (no compute), memory (neither), device "
	    "idle while the host works (a host span and no device op), device "
	    "idle with nothing running; overlap is compute while communication "
	    "runs, a part of compute. The parts add up to the window; device "
	    "idle is the sum of the two idle parts.");
}

static void
doc_trow_table(nd_report *r, nd_doc *d, const char *what,
    const struct trow *t, size_t n, int64_t tot)
{
	size_t m = nd_rep_cut(r, n);

	nd_doc_table(d, 0, "#", what, "count", "exclusive", "share", "total",
	    "mean", "max", (char *)NULL);
	for (size_t i = 0; i < m; i++) {
		nd_doc_row(d);
		nd_buf_addf(nd_doc_cell(d), "%zu", i + 1);
		cell_namen(d, t[i].key, t[i].keylen);
		cell_u64(d, t[i].count);
		cell_dur(d, t[i].self);
		cell_pct(d, t[i].self, tot);
		cell_dur(d, t[i].total);
		cell_dur(d, t[i].count ? t[i].total / (int64_t)t[i].count : 0);
		cell_dur(d, t[i].max);
	}
	more(d, r, n, "rows");
}

/* The paragraph over the roofline table: what carries flops, and the one
 * peak when every row has the same. */
static void
roofline_line(nd_report *r, nd_buf *b)
{
	const nd_roofline_sum *s = &r->roofsum;
	const nd_roofline_row *first = &r->roofrows[0];
	int uniform = nd_roofline_uniform(r->roofrows, r->nroof) &&
	    nd_roofline_ridge(first->peak_tflops, first->peak_gbps) > 0;

	nd_buf_addf(b, "%llu of %llu spans on %s timelines (",
	    (unsigned long long)s->flops_spans,
	    (unsigned long long)s->spans, s->timelines);
	nd_fmt_dur_spaced(b, s->flops_ns);
	nd_buf_adds(b, " of ");
	nd_fmt_dur_spaced(b, s->total_ns);
	nd_buf_adds(b, ") carry flops; ops by time with flops");
	if (uniform) {
		nd_buf_addf(b, ", against %g TFLOP/s and %g GB/s (ridge %.1f "
		    "FLOP/byte", first->peak_tflops, first->peak_gbps,
		    nd_roofline_ridge(first->peak_tflops, first->peak_gbps));
		if (first->device_name != NULL) {
			nd_buf_adds(b, ", ");
			put_txt(b, first->device_name);
		}
		nd_buf_adds(b, ")");
	} else
		nd_buf_adds(b, "; no single device peak is known "
		    "(--device, --peak-tflops, --peak-gbps)");
	nd_buf_adds(b, ".");
}

/* The roofline of the top ops (trace-roofline by name), when the spans
 * carry flops. */
static void
doc_roofline(nd_report *r, nd_doc *d)
{
	size_t m = nd_rep_cut(r, r->nroof);

	if (r->nroof == 0)
		return;
	nd_buf_adds(nd_doc_heading(d, 3), "Roofline");
	roofline_line(r, nd_doc_para(d));
	nd_doc_table(d, 0, "#", "op", "count", "time", "TFLOP/s", "GB/s",
	    "FLOP/byte", "bound", "% of roofline", (char *)NULL);
	for (size_t i = 0; i < m; i++) {
		const nd_roofline_row *x = &r->roofrows[i];
		nd_roofline_fig f;
		int tag;
		const char *k;
		size_t kl;

		nd_roofline_figures(x, &f);
		nd_doc_row(d);
		nd_buf_addf(nd_doc_cell(d), "%zu", i + 1);
		if (nd_by_field(x->key, x->keylen, 0, &tag, &k, &kl)) {
			char *name = nd_xstrndup(k, kl);

			cell_name(d, name);
			free(name);
		} else
			cell_txt(d, NULL);
		cell_u64(d, x->flops_count);
		cell_dur(d, x->flops_ns);
		nd_buf_addf(nd_doc_cell(d), "%.3f", f.tflops);
		if (f.has_bytes) {
			nd_buf_addf(nd_doc_cell(d), "%.1f", f.gbps);
			nd_buf_addf(nd_doc_cell(d), "%.2f", f.intensity);
		} else {
			cell_txt(d, NULL);
			cell_txt(d, NULL);
		}
		if (f.has_roof) {
			nd_buf_adds(nd_doc_cell(d), f.bound);
			nd_buf_addf(nd_doc_cell(d), "%.1f%%", f.pct);
		} else {
			cell_txt(d, NULL);
			cell_txt(d, NULL);
		}
	}
	more(d, r, r->nroof, "rows");
}

static void
doc_launch_table(nd_report *r, nd_doc *d, int which, int64_t tot)
{
	const nd_launch_row *row;
	size_t n = nd_launch_rows(r->launch, which, &row), m = nd_rep_cut(r, n);

	nd_doc_table(d, 0, "#", "CPU op", "device ops", "device time", "share",
	    (char *)NULL);
	for (size_t i = 0; i < m; i++) {
		nd_doc_row(d);
		nd_buf_addf(nd_doc_cell(d), "%zu", i + 1);
		if (row[i].name != NULL)
			cell_name(d, row[i].name);
		else
			nd_buf_adds(nd_doc_cell(d), "(no CPU op)");
		cell_u64(d, row[i].ops);
		cell_dur(d, row[i].ns);
		cell_pct(d, row[i].ns, tot);
	}
	more(d, r, n, "rows");
}

/* Device time per launching CPU op (nd_launch), when device ops carry
 * correlation ids. */
static void
doc_launch(nd_report *r, nd_doc *d)
{
	nd_launch_sum s;
	nd_buf *b;

	nd_launch_totals(r->launch, &s);
	if (s.ops == 0 && s.unmatched_ops == 0 && s.unplaced == 0)
		return;
	nd_buf_adds(nd_doc_heading(d, 3), "Device time per launching CPU op");
	b = nd_doc_para(d);
	nd_buf_addf(b, "%llu device ops (", (unsigned long long)s.ops);
	nd_fmt_dur_spaced(b, s.ns);
	nd_buf_adds(b, ") matched to their launch call by correlation id, "
	    "under the innermost CPU op around the launch (ndtrace(7), "
	    "\"Launching CPU ops\")");
	if (s.unmatched_ops > 0) {
		nd_buf_addf(b, "; %llu (", (unsigned long long)s.unmatched_ops);
		nd_fmt_dur_spaced(b, s.unmatched_ns);
		nd_buf_adds(b, ") whose launch is not in the trace");
	}
	if (s.unplaced > 0)
		nd_buf_addf(b, "; %llu launched on a thread out of order, not "
		    "attributed", (unsigned long long)s.unplaced);
	nd_buf_adds(b, ".");
	if (s.ops == 0)
		return;
	doc_launch_table(r, d, ND_LAUNCH_INNER, s.ns);
	nd_buf_adds(nd_doc_para(d), "The same device time under the top-level "
	    "CPU op around each launch:");
	doc_launch_table(r, d, ND_LAUNCH_TOP, s.ns);
}

static void
doc_ops(nd_report *r, nd_doc *d)
{
	nd_buf *b;

	nd_buf_adds(nd_doc_heading(d, 2), "5 Top ops by exclusive time");
	if (r->nops == 0) {
		nd_buf_adds(nd_doc_para(d), "No spans.");
		return;
	}
	b = nd_doc_para(d);
	nd_buf_addf(b, "%s: %llu spans, ", r->fallback ? "All timelines "
	    "(no device ops)" : "Device ops", (unsigned long long)r->ops_spans);
	nd_fmt_dur_spaced(b, r->self_total);
	nd_buf_adds(b, " exclusive in total.");
	nd_buf_adds(nd_doc_heading(d, 3), "Ops");
	doc_trow_table(r, d, "op", r->ops, r->nops, r->self_total);
	nd_buf_adds(nd_doc_heading(d, 3), "Families");
	doc_trow_table(r, d, "family", r->fams, r->nfams, r->self_total);
	nd_buf_adds(nd_doc_heading(d, 3), "Collectives by kind");
	if (r->ncolls == 0)
		nd_buf_adds(nd_doc_para(d), "No communication ops.");
	else
		doc_trow_table(r, d, "collective", r->colls, r->ncolls,
		    r->self_total);
	doc_roofline(r, d);
	doc_launch(r, d);
}

/* Per-line gaps: a line idle while its device may be busy on another. */
static void
doc_lines(nd_report *r, nd_doc *d)
{
	size_t m = nd_rep_cut(r, r->nlines_gap);
	char lab[512];
	nd_buf *b;

	if (r->line_gaps == 0)
		return;
	nd_buf_adds(nd_doc_heading(d, 3), "Idle per line");
	b = nd_doc_para(d);
	nd_buf_addf(b, "Line idle: %llu gap%s where one line (a GPU stream, "
	    "an XPlane line) runs no op while its device may be busy on "
	    "another (trace-gaps -l timeline), ",
	    (unsigned long long)r->line_gaps, nd_rep_s(r->line_gaps));
	nd_fmt_dur_spaced(b, r->line_idle);
	nd_buf_addf(b, " in total on %zu of %zu lines. Lines of a device "
	    "overlap: this is not device idle time.", r->nlines_gap, r->nlines);
	nd_doc_table(d, 0, "#", "line", "ops", "gaps", "idle",
	    "of the line's span", "largest", (char *)NULL);
	for (size_t i = 0; i < m; i++) {
		const struct gline *l = &r->lines[i];

		nd_doc_row(d);
		nd_buf_addf(nd_doc_cell(d), "%zu", i + 1);
		cell_name(d, nd_rep_src_label(r, l->source,
		    nd_rep_name_of(r, l->label), lab, sizeof lab));
		cell_u64(d, l->ops);
		cell_u64(d, l->gaps);
		cell_dur(d, l->idle);
		cell_pct(d, l->idle, l->active);
		cell_dur(d, l->max);
	}
	more(d, r, r->nlines_gap, "lines");
}

/* The paragraph over the gap tables: how many, how long, the largest. */
static void
gaps_line(nd_report *r, nd_buf *b)
{
	char lab[512];

	nd_buf_addf(b, "Device idle: %llu gap%s where no op runs on any line "
	    "of a device (trace-gaps(1), device level), ",
	    (unsigned long long)r->ngaps, nd_rep_s(r->ngaps));
	nd_fmt_dur_spaced(b, r->gap_total);
	nd_buf_adds(b, " in total; the largest ");
	nd_fmt_dur_spaced(b, r->gap_max);
	nd_buf_adds(b, " on ");
	put_txt(b, nd_rep_src_label(r, r->gap_max_src, nd_rep_name_of(r,
	    r->gap_max_dev), lab, sizeof lab));
	nd_buf_addf(b, " at ts_ns %lld.", (long long)r->gap_max_ts);
}

static void
doc_gaps(nd_report *r, nd_doc *d)
{
	size_t m;

	nd_buf_adds(nd_doc_heading(d, 2), "6 Idle gaps");
	if (r->ngaps == 0) {
		nd_buf_adds(nd_doc_para(d), "No idle gaps on the devices.");
		doc_lines(r, d);
		return;
	}
	gaps_line(r, nd_doc_para(d));
	nd_doc_table(d, 0, "cause", "gaps", "time", "share", (char *)NULL);
	for (size_t i = 0; i < r->ncauses; i++) {
		nd_doc_row(d);
		cell_txt(d, nd_rep_name_of(r, r->causes[i].id));
		cell_u64(d, r->causes[i].n);
		cell_dur(d, r->causes[i].ns);
		cell_pct(d, r->causes[i].ns, r->gap_total);
	}
	nd_buf_adds(nd_doc_heading(d, 3), "Payload ops after gaps");
	nd_doc_table(d, 0, "#", "payload", "marker", "gaps", "total gap",
	    "max gap", "region", (char *)NULL);
	m = nd_rep_cut(r, r->npayids);
	for (size_t i = 0; i < m; i++) {
		const struct payload *p = &r->pay[r->payids[i]];

		nd_doc_row(d);
		nd_buf_addf(nd_doc_cell(d), "%zu", i + 1);
		cell_nameid(d, r, r->payids[i]);
		cell_nameid(d, r, p->marker);
		cell_u64(d, p->n);
		cell_dur(d, p->total);
		cell_dur(d, p->max);
		cell_nameid(d, r, p->region);
	}
	more(d, r, r->npayids, "payload ops");
	doc_lines(r, d);
}

static void
doc_regions(nd_report *r, nd_doc *d)
{
	size_t m;

	nd_buf_adds(nd_doc_heading(d, 2), "7 Regions");
	if (r->nregs == 0) {
		nd_buf_adds(nd_doc_para(d), "No named scopes (`scope`) on the "
		    "spans.");
		return;
	}
	nd_buf_adds(nd_doc_para(d), "Named-scope tree (`scope`), by inclusive "
	    "exclusive-time of the ops below each region.");
	nd_doc_table(d, 0, "region", "depth", "ops", "inclusive", "exclusive",
	    "share", (char *)NULL);
	m = nd_rep_cut(r, r->nregs);
	for (size_t i = 0; i < m; i++) {
		nd_doc_row(d);
		cell_name(d, r->regs[i].key);
		nd_buf_addf(nd_doc_cell(d), "%d", r->regs[i].depth);
		cell_u64(d, r->regs[i].count);
		cell_dur(d, r->regs[i].self);
		cell_dur(d, r->regs[i].excl);
		cell_pct(d, r->regs[i].self, r->self_total);
	}
	more(d, r, r->nregs, "regions");
}

static void
doc_memory(nd_report *r, nd_doc *d)
{
	nd_buf_adds(nd_doc_heading(d, 2), "8 Memory");
	if (r->npeaks == 0) {
		nd_buf_adds(nd_doc_para(d), "The stream has no memory counters.");
		return;
	}
	nd_buf_adds(nd_doc_para(d), "The op running at the peak is the "
	    "innermost span of the sample's own timeline that contains it (as "
	    "trace-mem).");
	nd_doc_table(d, 0, "source", "device", "peak allocated", "reserved",
	    "at ts_ns", "step", "op", "scope", (char *)NULL);
	for (size_t i = 0; i < r->npeaks; i++) {
		const struct mpeak *p = &r->peaks[i];

		nd_doc_row(d);
		cell_txt(d, p->source);
		cell_txt(d, p->device);
		nd_buf_addf(nd_doc_cell(d), "%.1f MiB",
		    (double)p->alloc / 1048576.0);
		nd_buf_addf(nd_doc_cell(d), "%.1f MiB",
		    (double)p->reserved / 1048576.0);
		cell_i64(d, p->ts);
		if (p->has_step)
			cell_i64(d, p->step);
		else
			cell_txt(d, NULL);
		cell_name(d, p->op);
		cell_name(d, p->scope);
	}
}

/* The rules that could not run, and why: "a and b (no steps), c (one
 * rank)"; 0 when every rule ran. */
static int
notrun_list(const nd_report *r, nd_buf *b)
{
	int n = 0, done[R_NRULES] = { 0 };

	for (int i = 0; i < R_NRULES; i++) {
		if (r->notrun[i] == NULL || done[i])
			continue;
		nd_buf_adds(b, n ? ", " : "");
		for (int j = i, k = 0; j < R_NRULES; j++) {
			if (r->notrun[j] == NULL || strcmp(r->notrun[j],
			    r->notrun[i]) != 0)
				continue;
			nd_buf_addf(b, "%s%s", k++ ? ", " : "",
			    nd_rep_rules[j].id);
			done[j] = 1;
		}
		nd_buf_addf(b, " (%s)", r->notrun[i]);
		n++;
	}
	return n;
}

/* The verdict: the first paragraph of the findings. */
static void
verdict_line(nd_report *r, nd_buf *b)
{
	nd_buf nr = ND_BUF_INIT;
	int notrun = notrun_list(r, &nr);

	if (r->nfnd > 0)
		nd_buf_addf(b, "%zu finding%s, ranked by the share %s each "
		    "explains.", r->nfnd, r->nfnd > 1 ? "s" : "",
		    r->window == RW_PROFILE ? "of the profile window" :
		    "of steady step time");
	else if (notrun == 0)
		nd_buf_adds(b, "No single bottleneck dominates");
	else
		nd_buf_adds(b, "No rule fired, but not every rule could run, "
		    "so a bottleneck they measure is not ruled out");
	if (r->nfnd == 0 && r->dbd_total > 0 && r->window != RW_NONE) {
		nd_buf_adds(b, ": compute ");
		put_pct(b, r->dbd.compute_ns, r->dbd_total);
		nd_buf_adds(b, ", exposed communication ");
		put_pct(b, r->dbd.communication_ns, r->dbd_total);
		nd_buf_adds(b, ", memory ");
		put_pct(b, r->dbd.memory_ns, r->dbd_total);
		nd_buf_adds(b, ", host ");
		put_pct(b, r->dbd.host_ns, r->dbd_total);
		nd_buf_adds(b, ", idle ");
		put_pct(b, r->dbd.idle_ns, r->dbd_total);
		nd_buf_addf(b, " %s, all devices", r->window == RW_PROFILE ?
		    "of the profile window" : "of steady step time");
	}
	if (r->nfnd == 0)
		nd_buf_adds(b, ".");
	if (notrun)
		nd_buf_addf(b, " Not run: %.*s.", (int)nr.len, nr.p);
	nd_buf_free(&nr);
}

static void
doc_finding(nd_report *r, nd_doc *d, const struct finding *f)
{
	nd_buf *b;

	nd_buf_adds(nd_doc_heading(d, 3), nd_rep_rules[f->rule].id);
	b = nd_doc_para(d);
	put_txt(b, f->statement);
	nd_buf_adds(b, ".");
	b = nd_doc_item(d);
	nd_buf_adds(b, "Explains: ");
	nd_fmt_dur_spaced(b, f->explains_ns);
	nd_buf_addf(b, ", %.1f %% %s.", f->explains_pct,
	    f->rule == R_STRAGGLER ? "of the median step" :
	    f->rule == R_VARIANCE ? "of steady step time" :
	    r->window == RW_PROFILE ? "of the profile window" :
	    r->window == RW_STEADY ? "of steady step time" :
	    "of exclusive time");
	b = nd_doc_item(d);
	nd_buf_adds(b, "Evidence: ");
	put_txt(b, f->evidence);
	nd_buf_adds(b, ".");
	b = nd_doc_item(d);
	nd_buf_adds(b, "Suggestion: ");
	put_txt(b, f->suggestion);
	nd_buf_adds(b, ".");
}

/* The findings; marks[i] the mark of finding i's subsection. */
static void
doc_findings(nd_report *r, nd_doc *d, size_t *marks)
{
	nd_buf_adds(nd_doc_heading(d, 2), "9 Findings");
	verdict_line(r, nd_doc_para(d));
	for (size_t i = 0; i < r->nfnd; i++) {
		marks[i] = nd_doc_mark(d);
		doc_finding(r, d, &r->fnd[i]);
	}
	nd_buf_adds(nd_doc_heading(d, 3), "Thresholds");
	nd_doc_table(d, 0, "rule", "measures", "threshold", "value", "fired",
	    (char *)NULL);
	for (int i = 0; i < R_NRULES; i++) {
		int fired = 0;

		for (size_t j = 0; j < r->nfnd; j++)
			fired |= r->fnd[j].rule == i;
		nd_doc_row(d);
		nd_buf_adds(nd_doc_cell(d), nd_rep_rules[i].id);
		nd_buf_adds(nd_doc_cell(d), nd_rep_rules[i].what);
		nd_buf_addf(nd_doc_cell(d), "%g %%", r->thr[i]);
		if (r->has_val[i] && r->notrun[i] == NULL)
			nd_buf_addf(nd_doc_cell(d), "%.1f %%", r->val[i]);
		else
			cell_txt(d, NULL);
		if (r->notrun[i] != NULL)
			nd_buf_addf(nd_doc_cell(d), "not run: %s", r->notrun[i]);
		else
			nd_buf_adds(nd_doc_cell(d), fired ? "yes" : "no");
	}
	nd_buf_addf(nd_doc_para(d), "The window: %s. Set a threshold with "
	    "`--threshold ID=PERCENT`.", r->window == RW_PROFILE ? "the "
	    "profile window of each device (first to last device op; no steps "
	    "were found), summed over devices" : "the steady steps, summed "
	    "over devices");
}

/* --- a trace-diff output as a comparison report --- */

static int64_t
jint(const nd_event *ev, const char *k, int *has)
{
	const nd_jval *v = nd_event_get(ev, k);
	int64_t x = 0;

	*has = v != NULL && nd_json_int64(v, &x) == 0;
	return x;
}

static double
jdbl(const nd_event *ev, const char *k, int *has)
{
	const nd_jval *v = nd_event_get(ev, k);

	*has = v != NULL && v->type == ND_JNUM;
	return *has ? nd_json_double(v) : 0;
}

static void
put_jstr(nd_buf *b, const nd_event *ev, const char *k)
{
	char *s = nd_jstr_dup(nd_event_get(ev, k));

	put_name(b, s);
	free(s);
}

static void
cell_jstr(nd_doc *d, const nd_event *ev, const char *k)
{
	char *s = nd_jstr_dup(nd_event_get(ev, k));

	cell_name(d, s);
	free(s);
}

static int
is_kind(const nd_event *ev, const char *kind)
{
	const nd_jval *v = nd_event_get(ev, "kind");

	return v != NULL && v->type == ND_JSTR && nd_jstr_eq(v, kind);
}

/* The rules a verdict fired (its "fired" array), as table rows. */
static void
cmp_fired(nd_doc *d, const nd_event *ev, const nd_jval *f)
{
	nd_jiter it;
	nd_jval v;
	nd_jerr e;

	nd_jaiter_init(&it, f, ev->line);
	while (nd_jaiter_next(&it, &v, &e) == 1) {
		nd_jiter mi;
		nd_jval k, x;
		char *rule = NULL, *level = NULL, *unit = NULL;
		double meas = 0, thr = 0;

		if (v.type != ND_JOBJ)
			continue;
		nd_jiter_init(&mi, &v, ev->line);
		while (nd_jiter_next(&mi, &k, &x, &e) == 1) {
			if (nd_jstr_eq(&k, "rule"))
				rule = nd_jstr_dup(&x);
			else if (nd_jstr_eq(&k, "level"))
				level = nd_jstr_dup(&x);
			else if (nd_jstr_eq(&k, "unit"))
				unit = nd_jstr_dup(&x);
			else if (nd_jstr_eq(&k, "measured") &&
			    x.type == ND_JNUM)
				meas = nd_json_double(&x);
			else if (nd_jstr_eq(&k, "threshold") &&
			    x.type == ND_JNUM)
				thr = nd_json_double(&x);
		}
		nd_doc_row(d);
		cell_txt(d, rule);
		cell_txt(d, level);
		nd_buf_addf(nd_doc_cell(d), "%.2f %s", meas, unit ? unit : "");
		nd_buf_addf(nd_doc_cell(d), "%g %s", thr, unit ? unit : "");
		free(rule);
		free(level);
		free(unit);
	}
}

/* The figures of a delta record of kind kd (0 step, 1 share, 2 key), after
 * its metric or key. */
static void
cmp_delta(nd_doc *d, const nd_event *ev, int kd)
{
	int64_t bn, an, dn;
	double pc;
	int has, hp;
	nd_buf *b;

	if (kd == 1) {
		nd_buf_addf(nd_doc_cell(d), "%.1f %%",
		    100 * jdbl(ev, "before", &has));
		nd_buf_addf(nd_doc_cell(d), "%.1f %%",
		    100 * jdbl(ev, "after", &has));
		nd_buf_addf(nd_doc_cell(d), "%+.1f pp",
		    100 * jdbl(ev, "delta", &has));
		return;
	}
	bn = jint(ev, "before_ns", &has);
	an = jint(ev, "after_ns", &has);
	dn = jint(ev, "delta_ns", &has);
	pc = jdbl(ev, "pct", &hp);
	if (!has) {	/* a count, not a duration */
		nd_buf_addf(nd_doc_cell(d), "%g", jdbl(ev, "before", &has));
		nd_buf_addf(nd_doc_cell(d), "%g", jdbl(ev, "after", &has));
		nd_buf_addf(nd_doc_cell(d), "%+g", jdbl(ev, "delta", &has));
		nd_buf_addf(nd_doc_cell(d), "%+.1f %%", pc);
		return;
	}
	cell_dur(d, bn);
	cell_dur(d, an);
	b = nd_doc_cell(d);
	if (dn > 0)
		nd_buf_addc(b, '+');
	nd_fmt_dur_spaced(b, dn);
	if (hp)
		nd_buf_addf(nd_doc_cell(d), "%+.1f %%", pc);
	else
		cell_txt(d, NULL);
	if (kd == 2)
		cell_jstr(d, ev, "status");
}

/* The verdict records: their status and the rules they fired. */
static void
cmp_verdict(nd_report *r, nd_doc *d, nd_event *ev, nd_buf *scratch)
{
	nd_everr err;

	for (size_t i = 0; i < r->ndiff; i++) {
		const nd_jval *f;
		nd_buf *b;

		if (nd_event_decode(ev, r->diff[i], strlen(r->diff[i]),
		    scratch, &err) != 0 || !nd_str_eq(ev->type_name, "verdict"))
			continue;
		b = nd_doc_para(d);
		nd_buf_adds(b, "Status: **");
		put_jstr(b, ev, "status");
		nd_buf_adds(b, "**.");
		f = nd_event_get(ev, "fired");
		if (f == NULL || f->type != ND_JARR)
			continue;
		nd_doc_table(d, 0, "rule", "level", "measured", "threshold",
		    (char *)NULL);
		cmp_fired(d, ev, f);
	}
}

static void
cmp_table(nd_doc *d, int kd)
{
	if (kd == 0) {
		nd_buf_adds(nd_doc_heading(d, 2), "2 Steps");
		nd_doc_table(d, 0, "metric", "before", "after", "delta",
		    "change", (char *)NULL);
	} else if (kd == 1) {
		nd_buf_adds(nd_doc_heading(d, 2), "3 Shares of step time");
		nd_doc_table(d, 0, "metric", "before", "after", "delta",
		    (char *)NULL);
	} else {
		nd_buf_adds(nd_doc_heading(d, 2), "4 Per-key exclusive time");
		nd_doc_table(d, 0, "#", "key", "before", "after", "delta",
		    "change", "status", (char *)NULL);
	}
}

static void
doc_comparison(nd_report *r, nd_doc *d)
{
	nd_event ev;
	nd_buf scratch = { 0 };
	nd_everr err;
	size_t shown = 0, keys = 0;
	static const char *const kinds[] = { "step", "share", "key" };

	nd_event_init(&ev);
	nd_buf_adds(nd_doc_heading(d, 1), "Comparison report");
	nd_doc_toc(d);
	nd_buf_adds(nd_doc_para(d), "The input is the output of "
	    "trace-diff(1): before/after deltas and a verdict.");
	nd_buf_adds(nd_doc_heading(d, 2), "1 Verdict");
	cmp_verdict(r, d, &ev, &scratch);
	for (int kd = 0; kd < 3; kd++) {
		int h2 = 0;

		for (size_t i = 0; i < r->ndiff; i++) {
			if (nd_event_decode(&ev, r->diff[i], strlen(r->diff[i]),
			    &scratch, &err) != 0 ||
			    !nd_str_eq(ev.type_name, "delta") ||
			    !is_kind(&ev, kinds[kd]))
				continue;
			if (!h2)
				cmp_table(d, kd);
			h2 = 1;
			if (kd == 2) {
				keys++;
				if (r->o.top > 0 && shown >= (size_t)r->o.top)
					continue;
				shown++;
				nd_doc_row(d);
				nd_buf_addf(nd_doc_cell(d), "%zu", shown);
				cell_jstr(d, &ev, "key");
			} else {
				nd_doc_row(d);
				cell_jstr(d, &ev, "metric");
			}
			cmp_delta(d, &ev, kd);
		}
		if (kd == 2 && keys > shown)
			nd_buf_addf(nd_doc_para(d), "%zu more keys not shown "
			    "(--top %d).", keys - shown, r->o.top);
	}
	nd_event_free(&ev);
	nd_buf_free(&scratch);
}

/* The summary at the top of the HTML page: the verdict, the first
 * findings, the steps, where the time went; marks of the findings'
 * subsections and of the breakdown section. */
static void
doc_summary(nd_report *r, nd_doc *d, const size_t *fmarks, size_t bdmark)
{
	/* copies: an id lives until the next node is added */
	char idbuf[4][32];
	const char *ids[3] = { NULL, NULL, NULL };
	const char *bd = nd_doc_id(d, bdmark);

	snprintf(idbuf[3], sizeof idbuf[3], "%s", bd != NULL ? bd : "");
	for (size_t i = 0; i < r->nfnd && i < 3; i++) {
		const char *id = nd_doc_id(d, fmarks[i]);

		if (id != NULL) {
			snprintf(idbuf[i], sizeof idbuf[i], "%s", id);
			ids[i] = idbuf[i];
		}
	}
	nd_doc_box(d, "summary", "Summary");
	verdict_line(r, nd_doc_para_html(d, "verdict", "Verdict:"));
	nd_rep_html_findings(r, nd_doc_figure(d), ids);
	steps_line(r, nd_doc_para_html(d, NULL, "Steps:"));
	if (r->dbd_total > 0)
		nd_rep_svg_sum(r, nd_doc_figure(d), bd != NULL ? idbuf[3] :
		    NULL, "4 Time breakdown per device");
	else
		nd_buf_addf(nd_doc_para_html(d, NULL, "Time breakdown:"),
		    "none: %s.", r->has_device ? "no steady steps" :
		    "no device ops");
	nd_doc_box_end(d);
}

/* The JSON data of a part of the report (nd_rep_json), in a document
 * that is JSON. */
static void
data(nd_report *r, nd_doc *d, int part)
{
	nd_jw *w = nd_doc_data(d);

	if (w != NULL)
		nd_rep_json(r, w, part);
}

/* The report into document d: its text, its figures when d keeps them,
 * and its data when d is JSON. */
static nd_doc *
report_doc(nd_report *r, nd_doc *d)
{
	int figures = nd_doc_figures(d);
	size_t fmarks[R_NRULES], top, bdmark, from;

	nd_report_finish(r);
	data(r, d, RJ_HEAD);
	if (nd_rep_is_comparison(r)) {
		doc_comparison(r, d);
		return d;
	}
	nd_buf_adds(nd_doc_heading(d, 1), "Trace report");
	top = nd_doc_mark(d);
	doc_sources(r, d);
	data(r, d, RJ_SOURCES);
	doc_quality(r, d);
	data(r, d, RJ_QUALITY);
	doc_steps(r, d);
	data(r, d, RJ_STEPS);
	if (figures)
		nd_rep_svg_steps(r, nd_doc_figure(d));
	bdmark = nd_doc_mark(d);
	doc_breakdown(r, d);
	data(r, d, RJ_BREAKDOWN);
	if (figures)
		nd_rep_svg_breakdown(r, nd_doc_figure(d));
	doc_ops(r, d);
	data(r, d, RJ_OPS);
	doc_gaps(r, d);
	data(r, d, RJ_GAPS);
	if (figures)
		nd_rep_svg_strip(r, nd_doc_figure(d));
	doc_regions(r, d);
	data(r, d, RJ_REGIONS);
	if (figures)
		nd_rep_svg_regions(r, nd_doc_figure(d));
	doc_memory(r, d);
	data(r, d, RJ_MEMORY);
	/* ndtrace-report/1 has the pipeline's data before the findings;
	 * its section comes last */
	data(r, d, RJ_PIPELINE);
	doc_findings(r, d, fmarks);
	data(r, d, RJ_FINDINGS);
	nd_rep_pipe_doc(r, d);
	if (figures && r->pipe_st != NULL)
		nd_rep_pipe_svg(r, nd_doc_figure(d));
	if (figures) {
		from = nd_doc_mark(d);
		doc_summary(r, d, fmarks, bdmark);
		nd_doc_toc(d);
		nd_doc_move(d, from, top);
	}
	return d;
}

static void
commit(void *ctx)
{
	nd_out_commit(ctx);
}

void
nd_report_write(nd_report *r, int format, nd_out *o)
{
	nd_doc *d;

	if (format == ND_REPORT_JSON) {
		/* written as it is built */
		d = report_doc(r, nd_doc_new_json(nd_out_buf(o), commit, o));
		nd_doc_json_end(d);
	} else if (format == ND_REPORT_HTML) {
		d = report_doc(r, nd_doc_new(1));
		nd_doc_html(d, "Trace report", nd_out_buf(o), commit, o);
	} else {
		/* written as it is built */
		d = report_doc(r, nd_doc_new_markdown(nd_out_buf(o), commit,
		    o));
		nd_doc_markdown(d, nd_out_buf(o), commit, o);
	}
	nd_doc_free(d);
}
