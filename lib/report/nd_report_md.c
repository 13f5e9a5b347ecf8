/*
 * nd_report: the Markdown writer, and a trace-diff output rendered as a
 * comparison report.
 */
#include "nd_report_int.h"
#include "nd_cli.h"

#include "nd_name.h"
#include "nd_sort.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* --- Markdown --- */

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
 * tables"). */
static void
put_namen(nd_buf *b, const char *s, size_t n)
{
	nd_buf t = ND_BUF_INIT;

	if (s == NULL) {
		put_txt(b, s);
		return;
	}
	nd_name_short(s, n, ND_NAME_WIDTH, &t);
	put_txtn(b, t.p != NULL ? t.p : "", t.len);
	nd_buf_free(&t);
}

static void
put_name(nd_buf *b, const char *s)
{
	put_namen(b, s, s != NULL ? strlen(s) : 0);
}

/* The report's name id (it may hold NUL), shortened; "-" for none. */
static void
put_nameid(nd_buf *b, const nd_report *r, uint32_t id)
{
	size_t n;
	const char *s = nd_rep_name_ofn(r, id, &n);

	put_namen(b, s, n);
}

static void
more(nd_buf *b, const nd_report *r, size_t n, const char *what)
{
	if (nd_rep_cut(r, n) < n)
		nd_buf_addf(b, "\n%zu more %s not shown (--top %d).\n",
		    n - nd_rep_cut(r, n), what, r->o.top);
}

/* The devices with device ops and their models (nd_rep_model_gaps). */
static void
md_hardware(nd_report *r, nd_buf *b)
{
	size_t m = nd_rep_cut(r, r->nhwall);

	if (r->ndevices == 0) {
		nd_buf_adds(b, "Devices with device ops: none.\n\n");
		return;
	}
	nd_buf_addf(b, "Devices with device ops: %llu",
	    (unsigned long long)r->ndevices);
	if (r->nsrc > 1)
		nd_buf_addf(b, " over %zu sources", r->nsrc);
	if (r->nhwall == 1 && r->hwall[0].model == UINT32_MAX) {
		nd_buf_adds(b, "; the trace does not name their model.\n\n");
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
	nd_buf_adds(b, ".\n\n");
}

static void
md_sources(nd_report *r, nd_buf *b)
{
	nd_buf_adds(b, "## 1 Source and provenance\n\n");
	if (r->nsrc == 0) {
		nd_buf_adds(b, "The input is empty.\n\n");
		return;
	}
	nd_buf_adds(b, "| # | source | format | host | rank | producer | "
	    "span | sha256 |\n|---|---|---|---|---|---|---|---|\n");
	for (size_t i = 0; i < r->nsrc; i++) {
		const struct rsrc *s = &r->src[i];

		nd_buf_addf(b, "| %zu | ", i);
		put_txt(b, s->path);
		nd_buf_adds(b, " | ");
		put_txt(b, s->format);
		nd_buf_adds(b, " | ");
		put_txt(b, s->host);
		if (s->has_rank)
			nd_buf_addf(b, " | %lld | ", (long long)s->rank);
		else
			nd_buf_adds(b, " | - | ");
		put_txt(b, s->producer);
		nd_buf_adds(b, " | ");
		if (s->has_t)
			nd_fmt_dur_spaced(b, s->tmax - s->tmin);
		else
			nd_buf_adds(b, "-");
		nd_buf_adds(b, " | ");
		if (s->sha256)
			nd_buf_addf(b, "%.16s", s->sha256);
		else
			nd_buf_adds(b, "-");
		nd_buf_adds(b, " |\n");
	}
	nd_buf_adds(b, "\n");
	md_hardware(r, b);
	if (r->o.stamp != NULL) {
		put_txt(b, r->o.stamp);
		nd_buf_adds(b, "\n\n");
	}
}

static void
md_quality(nd_report *r, nd_buf *b)
{
	int trunc = 0;
	uint64_t skipped = 0;

	nd_buf_adds(b, "## 2 Trace quality\n\n");
	nd_buf_adds(b, "| # | spans | instants | counters | flows | other | "
	    "input events | skipped | truncated |\n"
	    "|---|---|---|---|---|---|---|---|---|\n");
	for (size_t i = 0; i < r->nsrc; i++) {
		const struct rsrc *s = &r->src[i];

		nd_buf_addf(b, "| %zu | %llu | %llu | %llu | %llu | %llu | ",
		    i, (unsigned long long)s->spans,
		    (unsigned long long)s->instants,
		    (unsigned long long)s->counters,
		    (unsigned long long)s->flows,
		    (unsigned long long)s->others);
		if (s->end_events >= 0)
			nd_buf_addf(b, "%lld", (long long)s->end_events);
		else
			nd_buf_adds(b, "-");
		if (s->has_end)
			nd_buf_addf(b, " | %llu | %s |\n",
			    (unsigned long long)s->skipped,
			    s->trunc ? "**yes**" : "no");
		else
			nd_buf_adds(b, " | - | no end record |\n");
		trunc |= s->trunc;
	}
	nd_buf_adds(b, "\n");
	for (size_t i = 0; i < r->nskipped; i++)
		skipped += r->skipped[i].n;
	if (r->nskipped == 0)
		nd_buf_adds(b, "Skipped events: none.\n\n");
	else {
		nd_buf_addf(b, "Skipped events: %llu.\n\n| reason | events |\n"
		    "|---|---|\n", (unsigned long long)skipped);
		for (size_t i = 0; i < r->nskipped; i++) {
			const char *why = nd_rep_name_of(r, r->skipped[i].id);

			nd_buf_adds(b, "| ");
			put_txt(b, why);
			nd_buf_addf(b, " | %llu |\n",
			    (unsigned long long)r->skipped[i].n);
		}
		nd_buf_adds(b, "\n");
		for (size_t i = 0; i < r->nskipped; i++) {
			const char *why = nd_rep_name_of(r, r->skipped[i].id);

			if (strncmp(why, "unmatched_", 10) == 0) {
				nd_buf_adds(b, "B/E mismatches: begin and end "
				    "events without a partner were skipped "
				    "(reasons `unmatched_*`).\n\n");
				break;
			}
		}
	}
	for (size_t i = 0; i < r->nsrc; i++)
		if (r->src[i].bad_spans > 0)
			nd_buf_addf(b, "Source %zu: %llu spans without ts_ns "
			    "or dur_ns were left out.\n\n", i,
			    (unsigned long long)r->src[i].bad_spans);
	if (trunc)
		nd_buf_adds(b, "**Suspected truncation**: a source stops at "
		    "a known export cap (1,000,000 or 5,000,000 events), so "
		    "the end of the run is missing. Read the XPlane "
		    "(`xplane2ndjson run/`) instead of the trace viewer's "
		    "JSON.\n\n");
	else
		nd_buf_adds(b, "Truncation: none suspected.\n\n");
	if (r->nwarn == 0)
		nd_buf_adds(b, "Warnings: none.\n\n");
	else {
		size_t n = nd_rep_cut(r, r->nwarn);

		nd_buf_addf(b, "Warnings: %zu.\n\n", r->nwarn);
		for (size_t i = 0; i < n; i++) {
			nd_buf_adds(b, "- ");
			put_txt(b, r->warn[i]);
			nd_buf_adds(b, "\n");
		}
		more(b, r, r->nwarn, "warnings");
		nd_buf_adds(b, "\n");
	}
}

/* The step classes of the steady steps (nd_stepsum), a table. */
static void
md_step_classes(nd_report *r, nd_buf *b)
{
	nd_buf_adds(b, "| class | steps | median | mean | share | "
	    "representative | period |\n"
	    "|---|---|---|---|---|---|---|\n");
	for (int c = 0; c < r->cl.nclass; c++) {
		const nd_step_class *k = &r->cl.c[c];

		nd_buf_addf(b, "| %s | %llu | ", k->name,
		    (unsigned long long)k->st.count);
		nd_fmt_dur_spaced(b, k->st.median);
		nd_buf_adds(b, " | ");
		nd_fmt_dur_spaced(b, k->st.mean);
		nd_buf_adds(b, " | ");
		put_pct(b, k->st.total, r->steady.total);
		nd_buf_addf(b, " | %lld | ", (long long)k->representative);
		if (k->has_period)
			nd_buf_addf(b, "every %lld (phase %lld)",
			    (long long)k->period, (long long)k->phase);
		else
			nd_buf_adds(b, "-");
		nd_buf_adds(b, " |\n");
	}
	nd_buf_addf(b, "\nClass split: r2 %.4f, gap %.4f, ratio %.4f "
	    "(two classes need r2 >= %g, gap >= %g, ratio >= %g).\n\n",
	    r->cl.r2, r->cl.gap, r->cl.ratio, ND_CLASS_MIN_R2,
	    ND_CLASS_MIN_GAP, ND_CLASS_MIN_RATIO);
}

/* The steps compared across ranks: stragglers, lag and spread. */
static void
md_step_ranks(nd_report *r, nd_buf *b)
{
	nd_buf_addf(b, "Ranks: %zu steps compared across ranks "
	    "(%s clock); largest straggler lag ", r->rank_steps,
	    r->rank_abs ? "absolute" : "relative");
	nd_fmt_dur_spaced(b, r->lag_max);
	nd_buf_addf(b, " (rank %lld, step %lld); largest spread of "
	    "step time ", (long long)r->lag_max_rank,
	    (long long)r->lag_max_step);
	nd_fmt_dur_spaced(b, r->spread_max);
	nd_buf_adds(b, ".\n\n| rank | straggler in | largest lag | "
	    "mean busy |\n|---|---|---|---|\n");
	for (size_t i = 0; i < r->nranks; i++) {
		nd_buf_addf(b, "| %lld | %llu | ",
		    (long long)r->ranks[i].rank,
		    (unsigned long long)r->ranks[i].straggler);
		nd_fmt_dur_spaced(b, r->ranks[i].lag_max);
		nd_buf_adds(b, " | ");
		if (r->ranks[i].busy_n)
			nd_fmt_dur_spaced(b, r->ranks[i].busy_sum /
			    (int64_t)r->ranks[i].busy_n);
		else
			nd_buf_adds(b, "-");
		nd_buf_adds(b, " |\n");
	}
	nd_buf_adds(b, "\n");
}

static void
md_steps(nd_report *r, nd_buf *b)
{
	static const char *const names[] = { "mean", "median", "p90", "min",
	    "max", "stddev", "total" };
	const int64_t *va = &r->all.mean, *vs = &r->steady.mean;

	nd_buf_adds(b, "## 3 Steps\n\n");
	if (r->nsteps == 0) {
		nd_buf_adds(b, "No steps found (no step markers and no step "
		    "keys on device ops; see --step-regex).\n\n");
		return;
	}
	/* where the steps come from (nd_steps: step_source) */
	if (r->step_source == ND_SS_MARKER || r->step_what == NULL)
		nd_buf_addf(b, "%zu steps, marked by %s", r->nsteps,
		    nd_sm_name(r->marker));
	else {
		nd_buf_addf(b, "%zu steps: the %s of %s ", r->nsteps,
		    r->step_source == ND_SS_XLA_MODULE ? "executions" :
		    "repetitions", r->step_source == ND_SS_XLA_MODULE ?
		    "XLA module" : "span");
		put_name(b, r->step_what);
		nd_buf_adds(b, r->step_source == ND_SS_XLA_MODULE ?
		    " (no step markers)" : " (inferred: no step markers)");
	}
	nd_buf_addf(b, "; steady state: %llu steps "
	    "(%lld to %lld; warmup %lld%s).\n\n",
	    (unsigned long long)r->steady.count,
	    (long long)r->first_step, (long long)r->last_step,
	    (long long)r->warmup, r->o.drop_last && r->warmup_applied ?
	    ", last dropped" : "");
	/* too few steps (nd_stepsum_window): every step is steady */
	if (!r->warmup_applied && r->o.drop_last)
		nd_buf_addf(b, "Only %zu steps: neither the warmup of %lld nor "
		    "the last step is left out.\n\n", r->nsteps,
		    (long long)r->o.warmup);
	else if (!r->warmup_applied && r->o.warmup > 0)
		nd_buf_addf(b, "Only %zu steps: the warmup of %lld is not left "
		    "out.\n\n", r->nsteps, (long long)r->o.warmup);
	nd_buf_adds(b, "| statistic | all steps | steady |\n|---|---|---|\n");
	for (int i = 0; i < 7; i++) {
		nd_buf_addf(b, "| %s | ", names[i]);
		nd_fmt_dur_spaced(b, va[i]);
		nd_buf_adds(b, " | ");
		if (r->steady.count)
			nd_fmt_dur_spaced(b, vs[i]);
		else
			nd_buf_adds(b, "-");
		nd_buf_adds(b, " |\n");
	}
	nd_buf_adds(b, "\n");
	if (r->steady.count > 0)
		md_step_classes(r, b);
	if (r->rank_steps > 0)
		md_step_ranks(r, b);
}

static void
md_bd_row(nd_buf *b, const char *label, const nd_breakdown *bd,
    int64_t tot)
{
	nd_buf_adds(b, "| ");
	put_txt(b, label);
	nd_buf_adds(b, " | ");
	nd_fmt_dur_spaced(b, tot);
	nd_buf_adds(b, " | ");
	put_pct(b, bd->compute_ns, tot);
	nd_buf_adds(b, " | ");
	put_pct(b, bd->communication_ns, tot);
	nd_buf_adds(b, " | ");
	put_pct(b, bd->overlap_ns, tot);
	nd_buf_adds(b, " | ");
	put_pct(b, bd->memory_ns, tot);
	nd_buf_adds(b, " | ");
	put_pct(b, bd->host_ns, tot);
	nd_buf_adds(b, " | ");
	put_pct(b, bd->idle_ns, tot);
	nd_buf_adds(b, " | ");
	put_pct(b, bd->host_ns + bd->idle_ns, tot);
	nd_buf_adds(b, " |\n");
}

/* No device op (a CPU-only profile) but steady steps: what their windows
 * hold is host work or nothing (trace-steps' host_ns and idle_ns). */
static void
md_breakdown_host(nd_report *r, nd_buf *b)
{
	nd_buf_adds(b, "No device ops (a CPU-only profile): the steady step "
	    "windows split into time some host span runs and time nothing "
	    "runs (trace-steps -s).\n\n| window | step time | host works | "
	    "nothing runs |\n|---|---|---|---|\n| steady steps | ");
	nd_fmt_dur_spaced(b, r->bd_total);
	nd_buf_adds(b, " | ");
	put_pct(b, r->bd.host_ns, r->bd_total);
	nd_buf_adds(b, " | ");
	put_pct(b, r->bd.idle_ns, r->bd_total);
	nd_buf_adds(b, " |\n\n");
}

static void
md_breakdown(nd_report *r, nd_buf *b)
{
	char lab[512];
	const nd_breakdown *d = &r->dbd;

	nd_buf_adds(b, "## 4 Time breakdown per device\n\n");
	if (!r->has_device && r->bd_total > 0) {
		md_breakdown_host(r, b);
		return;
	}
	if (r->window == RW_NONE || r->dbd_total == 0 || !r->has_device) {
		nd_buf_addf(b, "%s: no breakdown.\n\n", r->has_device ?
		    "No steady steps and no profile window" : "No device ops");
		return;
	}
	if (r->window == RW_PROFILE)
		nd_buf_adds(b, "No steps were found: the breakdown is over the "
		    "profile window, from the first to the last device op of "
		    "each device, % of that window[^rules]. \"all devices\" "
		    "sums the devices (what the findings use).\n\n");
	else
		nd_buf_adds(b, "Steady steps, % of step time[^rules]. \"all "
		    "devices\" sums the devices (what the findings use); \"step "
		    "window\" counts a category when it runs on any device of "
		    "the window (trace-steps -s).\n\n");
	nd_buf_addf(b, "| device | %s | compute | exposed communication | "
	    "overlap | memory | device idle, host works | device idle, "
	    "nothing runs | device idle |\n"
	    "|---|---|---|---|---|---|---|---|---|\n", r->window ==
	    RW_PROFILE ? "window" : "step time");
	for (size_t i = 0; i < r->ndevbd; i++)
		if (r->devbd[i].total > 0)
			md_bd_row(b, nd_rep_dev_label(r, r->devbd[i].dev, lab,
			    sizeof lab), &r->devbd[i].bd, r->devbd[i].total);
	if (r->ndevbd > 1)
		md_bd_row(b, "all devices", d, r->dbd_total);
	if (r->window == RW_STEADY && r->bd_total > 0)
		md_bd_row(b, "step window (any device)", &r->bd, r->bd_total);
	nd_buf_adds(b, "\nDevice idle, all devices: ");
	put_pct(b, d->host_ns + d->idle_ns, r->dbd_total);
	nd_buf_adds(b, " (");
	nd_fmt_dur_spaced(b, d->host_ns + d->idle_ns);
	nd_buf_adds(b, "): while the host works ");
	put_pct(b, d->host_ns, r->dbd_total);
	nd_buf_adds(b, ", nothing runs ");
	put_pct(b, d->idle_ns, r->dbd_total);
	nd_buf_adds(b, ".\n");
	nd_buf_adds(b, "\n[^rules]: Rules (trace-steps(1), BREAKDOWN): a "
	    "device op is communication when its `class` is communication or "
	    "stall, memory when it is memory, else compute (classes from the "
	    "nd\\_classify rule table: `trace-classify --print-rules`). The "
	    "window is split by precedence compute, exposed communication "
	    "(no compute), memory (neither), device idle while the host works "
	    "(a host span and no device op), device idle with nothing "
	    "running; overlap is compute while communication runs, a part of "
	    "compute. The parts add up to the window; device idle is the sum "
	    "of the two idle parts.\n\n");
}

static void
md_trow_table(nd_report *r, nd_buf *b, const char *what,
    const struct trow *t, size_t n, int64_t tot)
{
	size_t m = nd_rep_cut(r, n);

	nd_buf_addf(b, "| # | %s | count | exclusive | share | total | "
	    "mean | max |\n|---|---|---|---|---|---|---|---|\n", what);
	for (size_t i = 0; i < m; i++) {
		nd_buf_addf(b, "| %zu | ", i + 1);
		put_namen(b, t[i].key, t[i].keylen);
		nd_buf_addf(b, " | %llu | ", (unsigned long long)t[i].count);
		nd_fmt_dur_spaced(b, t[i].self);
		nd_buf_adds(b, " | ");
		put_pct(b, t[i].self, tot);
		nd_buf_adds(b, " | ");
		nd_fmt_dur_spaced(b, t[i].total);
		nd_buf_adds(b, " | ");
		nd_fmt_dur_spaced(b, t[i].count ?
		    t[i].total / (int64_t)t[i].count : 0);
		nd_buf_adds(b, " | ");
		nd_fmt_dur_spaced(b, t[i].max);
		nd_buf_adds(b, " |\n");
	}
	more(b, r, n, "rows");
	nd_buf_adds(b, "\n");
}

/* The roofline of the top ops (trace-roofline by name), when the spans
 * carry flops. */
static void
md_roofline(nd_report *r, nd_buf *b)
{
	const nd_roofline_sum *s = &r->roofsum;
	const nd_roofline_row *first = r->nroof > 0 ? &r->roofrows[0] : NULL;
	size_t m = nd_rep_cut(r, r->nroof);
	int uniform = nd_roofline_uniform(r->roofrows, r->nroof) &&
	    nd_roofline_ridge(first->peak_tflops, first->peak_gbps) > 0;

	if (r->nroof == 0)
		return;
	nd_buf_adds(b, "### Roofline\n\n");
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
	nd_buf_adds(b, ".\n\n| # | op | count | time | TFLOP/s | GB/s | "
	    "FLOP/byte | bound | % of roofline |\n"
	    "|---|---|---|---|---|---|---|---|---|\n");
	for (size_t i = 0; i < m; i++) {
		const nd_roofline_row *x = &r->roofrows[i];
		nd_roofline_fig f;
		int tag;
		const char *k;
		size_t kl;
		char *name;

		nd_roofline_figures(x, &f);
		nd_buf_addf(b, "| %zu | ", i + 1);
		if (nd_by_field(x->key, x->keylen, 0, &tag, &k, &kl)) {
			name = nd_xstrndup(k, kl);
			put_name(b, name);
			free(name);
		} else
			nd_buf_adds(b, "-");
		nd_buf_addf(b, " | %llu | ", (unsigned long long)x->flops_count);
		nd_fmt_dur_spaced(b, x->flops_ns);
		nd_buf_addf(b, " | %.3f | ", f.tflops);
		if (f.has_bytes)
			nd_buf_addf(b, "%.1f | %.2f | ", f.gbps, f.intensity);
		else
			nd_buf_adds(b, "- | - | ");
		if (f.has_roof)
			nd_buf_addf(b, "%s | %.1f%% |\n", f.bound, f.pct);
		else
			nd_buf_adds(b, "- | - |\n");
	}
	more(b, r, r->nroof, "rows");
	nd_buf_adds(b, "\n");
}

static void
md_launch_table(nd_report *r, nd_buf *b, int which, int64_t tot)
{
	const nd_launch_row *row;
	size_t n = nd_launch_rows(r->launch, which, &row), m = nd_rep_cut(r, n);

	nd_buf_adds(b, "| # | CPU op | device ops | device time | share |\n"
	    "|---|---|---|---|---|\n");
	for (size_t i = 0; i < m; i++) {
		nd_buf_addf(b, "| %zu | ", i + 1);
		if (row[i].name != NULL)
			put_name(b, row[i].name);
		else
			nd_buf_adds(b, "(no CPU op)");
		nd_buf_addf(b, " | %llu | ", (unsigned long long)row[i].ops);
		nd_fmt_dur_spaced(b, row[i].ns);
		nd_buf_adds(b, " | ");
		put_pct(b, row[i].ns, tot);
		nd_buf_adds(b, " |\n");
	}
	more(b, r, n, "rows");
	nd_buf_adds(b, "\n");
}

/* Device time per launching CPU op (nd_launch), when device ops carry
 * correlation ids. */
static void
md_launch(nd_report *r, nd_buf *b)
{
	nd_launch_sum s;

	nd_launch_totals(r->launch, &s);
	if (s.ops == 0 && s.unmatched_ops == 0 && s.unplaced == 0)
		return;
	nd_buf_adds(b, "### Device time per launching CPU op\n\n");
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
	nd_buf_adds(b, ".\n\n");
	if (s.ops == 0)
		return;
	md_launch_table(r, b, ND_LAUNCH_INNER, s.ns);
	nd_buf_adds(b, "The same device time under the top-level CPU op "
	    "around each launch:\n\n");
	md_launch_table(r, b, ND_LAUNCH_TOP, s.ns);
}

static void
md_ops(nd_report *r, nd_buf *b)
{
	nd_buf_adds(b, "## 5 Top ops by exclusive time\n\n");
	if (r->nops == 0) {
		nd_buf_adds(b, "No spans.\n\n");
		return;
	}
	nd_buf_addf(b, "%s: %llu spans, ", r->fallback ? "All timelines "
	    "(no device ops)" : "Device ops", (unsigned long long)r->ops_spans);
	nd_fmt_dur_spaced(b, r->self_total);
	nd_buf_adds(b, " exclusive in total.\n\n### Ops\n\n");
	md_trow_table(r, b, "op", r->ops, r->nops, r->self_total);
	nd_buf_adds(b, "### Families\n\n");
	md_trow_table(r, b, "family", r->fams, r->nfams, r->self_total);
	nd_buf_adds(b, "### Collectives by kind\n\n");
	if (r->ncolls == 0)
		nd_buf_adds(b, "No communication ops.\n\n");
	else
		md_trow_table(r, b, "collective", r->colls, r->ncolls,
		    r->self_total);
	md_roofline(r, b);
	md_launch(r, b);
}

/* Per-line gaps: a line idle while its device may be busy on another. */
static void
md_lines(nd_report *r, nd_buf *b)
{
	size_t m = nd_rep_cut(r, r->nlines_gap);
	char lab[512];

	if (r->line_gaps == 0)
		return;
	nd_buf_addf(b, "### Idle per line\n\nLine idle: %llu gaps where one "
	    "line (a GPU stream, an XPlane line) runs no op while its device "
	    "may be busy on another (trace-gaps -l timeline), ",
	    (unsigned long long)r->line_gaps);
	nd_fmt_dur_spaced(b, r->line_idle);
	nd_buf_addf(b, " in total on %zu of %zu lines. Lines of a device "
	    "overlap: this is not device idle time.\n\n| # | line | ops | "
	    "gaps | idle | of the line's span | largest |\n"
	    "|---|---|---|---|---|---|---|\n", r->nlines_gap, r->nlines);
	for (size_t i = 0; i < m; i++) {
		const struct gline *l = &r->lines[i];

		nd_buf_addf(b, "| %zu | ", i + 1);
		put_name(b, nd_rep_src_label(r, l->source,
		    nd_rep_name_of(r, l->label), lab, sizeof lab));
		nd_buf_addf(b, " | %llu | %llu | ", (unsigned long long)l->ops,
		    (unsigned long long)l->gaps);
		nd_fmt_dur_spaced(b, l->idle);
		nd_buf_adds(b, " | ");
		put_pct(b, l->idle, l->active);
		nd_buf_adds(b, " | ");
		nd_fmt_dur_spaced(b, l->max);
		nd_buf_adds(b, " |\n");
	}
	more(b, r, r->nlines_gap, "lines");
	nd_buf_adds(b, "\n");
}

static void
md_gaps(nd_report *r, nd_buf *b)
{
	size_t m;
	char lab[512];

	nd_buf_adds(b, "## 6 Idle gaps\n\n");
	if (r->ngaps == 0) {
		nd_buf_adds(b, "No idle gaps on the devices.\n\n");
		md_lines(r, b);
		return;
	}
	nd_sort(r->causes, r->ncauses, sizeof *r->causes, nd_rep_cause_cmp, r);
	nd_sort(r->payids, r->npayids, sizeof *r->payids, nd_rep_pay_cmp, r);
	nd_buf_addf(b, "Device idle: %llu gaps where no op runs on any line "
	    "of a device (trace-gaps(1), device level), ",
	    (unsigned long long)r->ngaps);
	nd_fmt_dur_spaced(b, r->gap_total);
	nd_buf_adds(b, " in total; the largest ");
	nd_fmt_dur_spaced(b, r->gap_max);
	nd_buf_adds(b, " on ");
	put_txt(b, nd_rep_src_label(r, r->gap_max_src, nd_rep_name_of(r,
	    r->gap_max_dev), lab, sizeof lab));
	nd_buf_addf(b, " at ts_ns %lld.\n\n", (long long)r->gap_max_ts);
	nd_buf_adds(b, "| cause | gaps | time | share |\n|---|---|---|---|\n");
	for (size_t i = 0; i < r->ncauses; i++) {
		nd_buf_adds(b, "| ");
		put_txt(b, nd_rep_name_of(r, r->causes[i].id));
		nd_buf_addf(b, " | %llu | ", (unsigned long long)r->causes[i].n);
		nd_fmt_dur_spaced(b, r->causes[i].ns);
		nd_buf_adds(b, " | ");
		put_pct(b, r->causes[i].ns, r->gap_total);
		nd_buf_adds(b, " |\n");
	}
	nd_buf_adds(b, "\n### Payload ops after gaps\n\n| # | payload | "
	    "marker | gaps | total gap | max gap | region |\n"
	    "|---|---|---|---|---|---|---|\n");
	m = nd_rep_cut(r, r->npayids);
	for (size_t i = 0; i < m; i++) {
		const struct payload *p = &r->pay[r->payids[i]];

		nd_buf_addf(b, "| %zu | ", i + 1);
		put_nameid(b, r, r->payids[i]);
		nd_buf_adds(b, " | ");
		put_nameid(b, r, p->marker);
		nd_buf_addf(b, " | %llu | ", (unsigned long long)p->n);
		nd_fmt_dur_spaced(b, p->total);
		nd_buf_adds(b, " | ");
		nd_fmt_dur_spaced(b, p->max);
		nd_buf_adds(b, " | ");
		put_nameid(b, r, p->region);
		nd_buf_adds(b, " |\n");
	}
	more(b, r, r->npayids, "payload ops");
	nd_buf_adds(b, "\n");
	md_lines(r, b);
}

static void
md_regions(nd_report *r, nd_buf *b)
{
	size_t m;

	nd_buf_adds(b, "## 7 Regions\n\n");
	if (r->nregs == 0) {
		nd_buf_adds(b, "No named scopes (`scope`) on the spans.\n\n");
		return;
	}
	nd_buf_adds(b, "Named-scope tree (`scope`), by inclusive exclusive-"
	    "time of the ops below each region.\n\n| region | depth | ops | "
	    "inclusive | exclusive | share |\n|---|---|---|---|---|---|\n");
	m = nd_rep_cut(r, r->nregs);
	for (size_t i = 0; i < m; i++) {
		nd_buf_adds(b, "| ");
		put_name(b, r->regs[i].key);
		nd_buf_addf(b, " | %d | %llu | ", r->regs[i].depth,
		    (unsigned long long)r->regs[i].count);
		nd_fmt_dur_spaced(b, r->regs[i].self);
		nd_buf_adds(b, " | ");
		nd_fmt_dur_spaced(b, r->regs[i].excl);
		nd_buf_adds(b, " | ");
		put_pct(b, r->regs[i].self, r->self_total);
		nd_buf_adds(b, " |\n");
	}
	more(b, r, r->nregs, "regions");
	nd_buf_adds(b, "\n");
}

static void
md_memory(nd_report *r, nd_buf *b)
{
	nd_buf_adds(b, "## 8 Memory\n\n");
	if (r->npeaks == 0) {
		nd_buf_adds(b, "The stream has no memory counters.\n\n");
		return;
	}
	nd_buf_adds(b, "The op running at the peak is the innermost span of the "
	    "sample's own timeline that contains it (as trace-mem).\n\n");
	nd_buf_adds(b, "| source | device | peak allocated | reserved | "
	    "at ts_ns | step | op | scope |\n"
	    "|---|---|---|---|---|---|---|---|\n");
	for (size_t i = 0; i < r->npeaks; i++) {
		const struct mpeak *p = &r->peaks[i];

		nd_buf_adds(b, "| ");
		put_txt(b, p->source);
		nd_buf_adds(b, " | ");
		put_txt(b, p->device);
		nd_buf_addf(b, " | %.1f MiB | %.1f MiB | %lld | ",
		    (double)p->alloc / 1048576.0,
		    (double)p->reserved / 1048576.0, (long long)p->ts);
		if (p->has_step)
			nd_buf_addf(b, "%lld", (long long)p->step);
		else
			nd_buf_adds(b, "-");
		nd_buf_adds(b, " | ");
		put_name(b, p->op);
		nd_buf_adds(b, " | ");
		put_name(b, p->scope);
		nd_buf_adds(b, " |\n");
	}
	nd_buf_adds(b, "\n");
}

/* The rules that could not run, and why: "a and b (no steps), c (one
 * rank)"; 0 when every rule ran. */
static int
md_notrun(const nd_report *r, nd_buf *b)
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

static void
md_verdict(nd_report *r, nd_buf *b)
{
	nd_buf nr = ND_BUF_INIT;
	int notrun = md_notrun(r, &nr);

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
	nd_buf_adds(b, "\n\n");
	nd_buf_free(&nr);
}

static void
md_findings(nd_report *r, nd_buf *b)
{
	nd_buf_adds(b, "## 9 Findings\n\n");
	md_verdict(r, b);
	for (size_t i = 0; i < r->nfnd; i++) {
		const struct finding *f = &r->fnd[i];

		nd_buf_addf(b, "### %s\n\n", nd_rep_rules[f->rule].id);
		put_txt(b, f->statement);
		nd_buf_adds(b, ".\n\n- Explains: ");
		nd_fmt_dur_spaced(b, f->explains_ns);
		nd_buf_addf(b, ", %.1f %% %s.\n- Evidence: ", f->explains_pct,
		    f->rule == R_STRAGGLER ? "of the median step" :
		    f->rule == R_VARIANCE ? "of steady step time" :
		    r->window == RW_PROFILE ? "of the profile window" :
		    r->window == RW_STEADY ? "of steady step time" :
		    "of exclusive time");
		put_txt(b, f->evidence);
		nd_buf_adds(b, ".\n- Suggestion: ");
		put_txt(b, f->suggestion);
		nd_buf_adds(b, ".\n\n");
	}
	nd_buf_adds(b, "### Thresholds\n\n| rule | measures | threshold | "
	    "value | fired |\n|---|---|---|---|---|\n");
	for (int i = 0; i < R_NRULES; i++) {
		int fired = 0;

		for (size_t j = 0; j < r->nfnd; j++)
			fired |= r->fnd[j].rule == i;
		nd_buf_addf(b, "| %s | %s | %g %% | ", nd_rep_rules[i].id,
		    nd_rep_rules[i].what, r->thr[i]);
		if (r->has_val[i] && r->notrun[i] == NULL)
			nd_buf_addf(b, "%.1f %%", r->val[i]);
		else
			nd_buf_adds(b, "-");
		if (r->notrun[i] != NULL)
			nd_buf_addf(b, " | not run: %s |\n", r->notrun[i]);
		else
			nd_buf_addf(b, " | %s |\n", fired ? "yes" : "no");
	}
	nd_buf_adds(b, "\nThe window: ");
	nd_buf_adds(b, r->window == RW_PROFILE ? "the profile window of each "
	    "device (first to last device op; no steps were found), summed "
	    "over devices" : "the steady steps, summed over devices");
	nd_buf_adds(b, ". Set a threshold with `--threshold ID=PERCENT`.\n");
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
	char *s = nd_rep_jstrdup(nd_event_get(ev, k));

	put_name(b, s);
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
cmp_fired(nd_buf *b, const nd_event *ev, const nd_jval *f)
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
				rule = nd_rep_jstrdup(&x);
			else if (nd_jstr_eq(&k, "level"))
				level = nd_rep_jstrdup(&x);
			else if (nd_jstr_eq(&k, "unit"))
				unit = nd_rep_jstrdup(&x);
			else if (nd_jstr_eq(&k, "measured") &&
			    x.type == ND_JNUM)
				meas = nd_json_double(&x);
			else if (nd_jstr_eq(&k, "threshold") &&
			    x.type == ND_JNUM)
				thr = nd_json_double(&x);
		}
		nd_buf_adds(b, "| ");
		put_txt(b, rule);
		nd_buf_adds(b, " | ");
		put_txt(b, level);
		nd_buf_addf(b, " | %.2f %s | %g %s |\n", meas,
		    unit ? unit : "", thr, unit ? unit : "");
		free(rule);
		free(level);
		free(unit);
	}
}

/* The figures of a delta record of kind kd (0 step, 1 share, 2 key), after
 * its metric or key. */
static void
cmp_delta(nd_buf *b, const nd_event *ev, int kd)
{
	int64_t bn, an, dn;
	double pc;
	int has, hp;

	if (kd == 1) {
		nd_buf_addf(b, " | %.1f %% | %.1f %% | %+.1f pp |\n",
		    100 * jdbl(ev, "before", &has),
		    100 * jdbl(ev, "after", &has),
		    100 * jdbl(ev, "delta", &has));
		return;
	}
	bn = jint(ev, "before_ns", &has);
	an = jint(ev, "after_ns", &has);
	dn = jint(ev, "delta_ns", &has);
	pc = jdbl(ev, "pct", &hp);
	if (!has) {	/* a count, not a duration */
		nd_buf_addf(b, " | %g | %g | %+g | %+.1f %% |\n",
		    jdbl(ev, "before", &has), jdbl(ev, "after", &has),
		    jdbl(ev, "delta", &has), pc);
		return;
	}
	nd_buf_adds(b, " | ");
	nd_fmt_dur_spaced(b, bn);
	nd_buf_adds(b, " | ");
	nd_fmt_dur_spaced(b, an);
	nd_buf_adds(b, " | ");
	if (dn > 0)
		nd_buf_addc(b, '+');
	nd_fmt_dur_spaced(b, dn);
	if (hp)
		nd_buf_addf(b, " | %+.1f %%", pc);
	else
		nd_buf_adds(b, " | -");
	if (kd == 2) {
		nd_buf_adds(b, " | ");
		put_jstr(b, ev, "status");
	}
	nd_buf_adds(b, " |\n");
}

static void
md_comparison(nd_report *r, nd_buf *b)
{
	nd_event ev;
	nd_buf scratch = { 0 };
	nd_everr err;
	int h2;
	size_t shown = 0, keys = 0;
	static const char *const kinds[] = { "step", "share", "key" };
	static const char *const heads[] = {
	    "## 2 Steps\n\n| metric | before | after | delta | change |\n"
	    "|---|---|---|---|---|\n",
	    "## 3 Shares of step time\n\n| metric | before | after | delta |\n"
	    "|---|---|---|---|\n",
	    "## 4 Per-key exclusive time\n\n| # | key | before | after | "
	    "delta | change | status |\n|---|---|---|---|---|---|---|\n" };

	nd_event_init(&ev);
	nd_buf_adds(b, "# Comparison report\n\nThe input is the output of "
	    "trace-diff(1): before/after deltas and a verdict.\n\n"
	    "## 1 Verdict\n\n");
	for (size_t i = 0; i < r->ndiff; i++) {
		const nd_jval *f;

		if (nd_event_decode(&ev, r->diff[i], strlen(r->diff[i]),
		    &scratch, &err) != 0 || !nd_str_eq(ev.type_name, "verdict"))
			continue;
		nd_buf_adds(b, "Status: **");
		put_jstr(b, &ev, "status");
		nd_buf_adds(b, "**.\n\n");
		f = nd_event_get(&ev, "fired");
		if (f == NULL || f->type != ND_JARR)
			continue;
		nd_buf_adds(b, "| rule | level | measured | threshold |\n"
		    "|---|---|---|---|\n");
		cmp_fired(b, &ev, f);
		nd_buf_adds(b, "\n");
	}
	for (int kd = 0; kd < 3; kd++) {
		h2 = 0;
		for (size_t i = 0; i < r->ndiff; i++) {
			if (nd_event_decode(&ev, r->diff[i], strlen(r->diff[i]),
			    &scratch, &err) != 0 ||
			    !nd_str_eq(ev.type_name, "delta") ||
			    !is_kind(&ev, kinds[kd]))
				continue;
			if (!h2)
				nd_buf_adds(b, heads[kd]);
			h2 = 1;
			if (kd == 2) {
				keys++;
				if (r->o.top > 0 && shown >= (size_t)r->o.top)
					continue;
				shown++;
				nd_buf_addf(b, "| %zu | ", shown);
				put_jstr(b, &ev, "key");
			} else {
				nd_buf_adds(b, "| ");
				put_jstr(b, &ev, "metric");
			}
			cmp_delta(b, &ev, kd);
		}
		if (kd == 2 && keys > shown)
			nd_buf_addf(b, "\n%zu more keys not shown (--top %d).\n",
			    keys - shown, r->o.top);
		if (h2)
			nd_buf_adds(b, "\n");
	}
	nd_event_free(&ev);
	nd_buf_free(&scratch);
}

void
nd_report_markdown(nd_report *r, nd_buf *b)
{
	nd_report_finish(r);
	if (nd_rep_is_comparison(r)) {
		md_comparison(r, b);
		return;
	}
	nd_buf_adds(b, "# Trace report\n\n");
	md_sources(r, b);
	md_quality(r, b);
	md_steps(r, b);
	md_breakdown(r, b);
	md_ops(r, b);
	md_gaps(r, b);
	md_regions(r, b);
	md_memory(r, b);
	md_findings(r, b);
	nd_rep_pipe_md(r, b);
}
