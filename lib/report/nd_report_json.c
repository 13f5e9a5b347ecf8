/*
 * nd_report: the report's JSON data, part by part (nd_rep_json): the
 * members of the data nodes of the report's document (nd_report_doc.c
 * places them; nd_doc_new_json writes them as one object).
 */
#include "nd_report_int.h"

#include "nd_sort.h"

#include <string.h>


static void
j_stat(nd_jw *w, const char *k, const nd_stat *st)
{
	nd_jw_key(w, k);
	nd_jw_obj(w);
	nd_stepsum_put_stat(w, st, 1);
	nd_jw_obj_end(w);
}

static void
j_bd(nd_jw *w, const nd_breakdown *bd, int64_t tot)
{
	nd_stepsum_put_bd(w, bd, tot);
	/* idle while the host works (host_ns) or with nothing running */
	nd_jw_kint(w, "device_idle_ns", bd->host_ns + bd->idle_ns);
}

static void
j_str(nd_jw *w, const char *k, const char *v)
{
	nd_jw_key(w, k);
	if (v == NULL)
		nd_jw_null(w);
	else
		nd_jw_cstr(w, v);
}

/* key: the name of id, exact (null when none) */
static void
j_name(nd_jw *w, const char *k, const nd_report *r, uint32_t id)
{
	size_t n;
	const char *s = nd_rep_name_ofn(r, id, &n);

	nd_jw_key(w, k);
	if (s == NULL)
		nd_jw_null(w);
	else
		nd_jw_str(w, s, n);
}

static void
j_rows(nd_report *r, nd_jw *w, const char *k, const char *name,
    const struct trow *t, size_t n, int regions)
{
	size_t m = nd_rep_cut(r, n);

	nd_jw_key(w, k);
	nd_jw_arr(w);
	for (size_t i = 0; i < m; i++) {
		nd_jw_obj(w);
		if (t[i].key != NULL)
			nd_jw_kstr(w, name, t[i].key, t[i].keylen);
		else
			nd_jw_kcstr(w, name, NULL);
		nd_jw_kuint(w, "count", t[i].count);
		if (regions) {
			nd_jw_kint(w, "depth", t[i].depth);
			nd_jw_kint(w, "inclusive_ns", t[i].self);
			nd_jw_kint(w, "exclusive_ns", t[i].excl);
		} else {
			nd_jw_kint(w, "self_ns", t[i].self);
			nd_jw_kint(w, "total_ns", t[i].total);
			nd_jw_kint(w, "max_ns", t[i].max);
		}
		nd_jw_kdbl(w, "share", r->self_total > 0 ?
		    (double)t[i].self / (double)r->self_total : 0);
		nd_jw_obj_end(w);
	}
	nd_jw_arr_end(w);
	nd_jw_kuint(w, k[0] == 'o' ? "ops_rows" : k[0] == 'f' ?
	    "families_rows" : k[0] == 'c' ? "collectives_rows" :
	    "regions_rows", n);
}

static void
j_sources(nd_report *r, nd_jw *w)
{
	nd_jw_key(w, "sources");
	nd_jw_arr(w);
	for (size_t i = 0; i < r->nsrc; i++) {
		const struct rsrc *s = &r->src[i];

		nd_jw_obj(w);
		j_str(w, "source", s->path);
		j_str(w, "format", s->format);
		j_str(w, "host", s->host);
		nd_jw_key(w, "rank");
		if (s->has_rank)
			nd_jw_int(w, s->rank);
		else
			nd_jw_null(w);
		j_str(w, "producer", s->producer);
		j_str(w, "sha256", s->sha256);
		nd_jw_kint(w, "origin_ns", s->origin);
		nd_jw_kint(w, "span_ns", s->has_t ? s->tmax - s->tmin : 0);
		const struct { const char *k; uint64_t n; } counts[] = {
			{ "spans", s->spans }, { "instants", s->instants },
			{ "counters", s->counters }, { "flows", s->flows },
			{ "other", s->others },
			{ "spans_without_time", s->bad_spans },
		};
		for (size_t c = 0; c < sizeof counts / sizeof *counts; c++)
			nd_jw_kuint(w, counts[c].k, counts[c].n);
		nd_jw_kbool(w, "has_end", s->has_end);
		nd_jw_key(w, "events");
		if (s->end_events >= 0)
			nd_jw_int(w, s->end_events);
		else
			nd_jw_null(w);
		nd_jw_kuint(w, "skipped", s->skipped);
		nd_jw_kbool(w, "suspected_truncation", s->trunc);
		nd_jw_obj_end(w);
	}
	nd_jw_arr_end(w);
}

static void
j_quality(nd_report *r, nd_jw *w)
{
	nd_jw_key(w, "quality");
	nd_jw_obj(w);
	nd_jw_key(w, "skipped");
	nd_jw_obj(w);
	for (size_t i = 0; i < r->nskipped; i++) {
		nd_jw_key(w, nd_rep_name_of(r, r->skipped[i].id));
		nd_jw_uint(w, r->skipped[i].n);
	}
	nd_jw_obj_end(w);
	nd_jw_key(w, "warnings");
	nd_jw_arr(w);
	for (size_t i = 0; i < r->nwarn; i++)
		nd_jw_cstr(w, r->warn[i]);
	nd_jw_arr_end(w);
	nd_jw_obj_end(w);
}

static void
j_steps(nd_report *r, nd_jw *w)
{
	nd_jw_key(w, "steps");
	nd_jw_obj(w);
	nd_jw_kuint(w, "count", r->nsteps);
	nd_jw_kcstr(w, "marker", r->nsteps ? nd_sm_name(r->marker) : "none");
	nd_jw_kcstr(w, "step_source", nd_ss_name(r->nsteps ?
	    r->step_source : ND_SS_NONE));
	if (r->nsteps && r->step_what != NULL)
		nd_jw_kcstr(w, "step_what", r->step_what);
	nd_jw_kint(w, "warmup", r->warmup);
	nd_jw_kbool(w, "drop_last", r->o.drop_last);
	nd_jw_kbool(w, "warmup_applied", r->warmup_applied);
	j_stat(w, "all", &r->all);
	j_stat(w, "steady", &r->steady);
	if (r->steady.count > 0) {
		nd_jw_kint(w, "first_step", r->first_step);
		nd_jw_kint(w, "last_step", r->last_step);
		nd_jw_key(w, "classes");
		nd_jw_arr(w);
		for (int c = 0; c < r->cl.nclass; c++) {
			const nd_step_class *k = &r->cl.c[c];

			nd_jw_obj(w);
			nd_jw_kcstr(w, "class", k->name);
			j_stat(w, "stat", &k->st);
			nd_jw_kint(w, "representative_step", k->representative);
			if (k->has_period) {
				nd_jw_kint(w, "period", k->period);
				nd_jw_kint(w, "phase", k->phase);
			}
			nd_jw_obj_end(w);
		}
		nd_jw_arr_end(w);
	}
	nd_jw_key(w, "ranks");
	nd_jw_obj(w);
	nd_jw_kuint(w, "steps_compared", r->rank_steps);
	if (r->rank_steps > 0) {
		nd_jw_kcstr(w, "clock", r->rank_abs ? "absolute" : "relative");
		nd_jw_kint(w, "lag_max_ns", r->lag_max);
		nd_jw_kint(w, "lag_max_rank", r->lag_max_rank);
		nd_jw_kint(w, "lag_max_step", r->lag_max_step);
		nd_jw_kint(w, "spread_max_ns", r->spread_max);
		nd_jw_key(w, "per_rank");
		nd_jw_arr(w);
		for (size_t i = 0; i < r->nranks; i++) {
			nd_jw_obj(w);
			nd_jw_kint(w, "rank", r->ranks[i].rank);
			nd_jw_kuint(w, "straggler", r->ranks[i].straggler);
			nd_jw_kint(w, "lag_max_ns", r->ranks[i].lag_max);
			nd_jw_obj_end(w);
		}
		nd_jw_arr_end(w);
	}
	nd_jw_obj_end(w);
	nd_jw_obj_end(w);
}

static void
j_breakdown(nd_report *r, nd_jw *w)
{
	char lab[512];

	nd_jw_key(w, "breakdown");
	nd_jw_obj(w);
	nd_jw_kcstr(w, "window", !r->has_device ? "none" :
	    r->window == RW_STEADY ? "steady" : r->window == RW_PROFILE ?
	    "profile" : "none");
	nd_jw_key(w, "devices");
	nd_jw_arr(w);
	for (size_t i = 0; i < r->ndevbd; i++) {
		if (r->devbd[i].total == 0)
			continue;
		nd_jw_obj(w);
		nd_jw_kcstr(w, "device", nd_rep_dev_label(r,
		    r->devbd[i].dev, lab, sizeof lab));
		j_bd(w, &r->devbd[i].bd, r->devbd[i].total);
		nd_jw_obj_end(w);
	}
	nd_jw_arr_end(w);
	nd_jw_key(w, "all_devices");
	nd_jw_obj(w);
	j_bd(w, &r->dbd, r->dbd_total);
	nd_jw_obj_end(w);
	nd_jw_key(w, "step_window");
	nd_jw_obj(w);
	j_bd(w, &r->bd, r->bd_total);
	nd_jw_obj_end(w);
	nd_jw_obj_end(w);
}

/* Exclusive time of each op in each region (scope): nd_rep_model_opreg. */
static void
j_opreg(nd_report *r, nd_jw *w)
{
	nd_jw_key(w, "op_regions");
	nd_jw_arr(w);
	for (size_t i = 0; i < r->nopreg; i++) {
		const struct orow *o = &r->opreg[i];

		nd_jw_obj(w);
		nd_jw_kstr(w, "name", o->op, o->oplen);
		nd_jw_key(w, "region");
		if (o->region != NULL)
			nd_jw_str(w, o->region, o->regionlen);
		else
			nd_jw_null(w);
		nd_jw_kuint(w, "count", o->count);
		nd_jw_kint(w, "exclusive_ns", o->excl);
		nd_jw_kint(w, "total_ns", o->total);
		nd_jw_kdbl(w, "share", r->self_total > 0 ?
		    (double)o->excl / (double)r->self_total : 0);
		nd_jw_obj_end(w);
	}
	nd_jw_arr_end(w);
	nd_jw_kuint(w, "op_regions_rows", r->nopreg_rows);
}

/* Devices with device ops and their models, overall and per source. */
static void
j_models(nd_report *r, nd_jw *w, const struct hwrow *h, size_t n)
{
	nd_jw_key(w, "models");
	nd_jw_arr(w);
	for (size_t i = 0; i < n; i++) {
		nd_jw_obj(w);
		j_str(w, "model", nd_rep_name_of(r, h[i].model));
		nd_jw_kuint(w, "devices", h[i].n);
		nd_jw_obj_end(w);
	}
	nd_jw_arr_end(w);
}

static void
j_hardware(nd_report *r, nd_jw *w)
{
	size_t i = 0;

	nd_jw_key(w, "hardware");
	nd_jw_obj(w);
	nd_jw_kuint(w, "device_count", r->ndevices);
	j_models(r, w, r->hwall, r->nhwall);
	nd_jw_key(w, "per_source");
	nd_jw_arr(w);
	for (uint32_t s = 0; s < r->nsrc; s++) {
		size_t j = i;
		uint64_t n = 0;

		while (j < r->nhw && r->hw[j].source == s)
			n += r->hw[j++].n;
		nd_jw_obj(w);
		nd_jw_kuint(w, "source", s);
		nd_jw_kuint(w, "device_count", n);
		j_models(r, w, r->hw + i, j - i);
		nd_jw_obj_end(w);
		i = j;
	}
	nd_jw_arr_end(w);
	nd_jw_obj_end(w);
}

static void
j_ops(nd_report *r, nd_jw *w)
{
	nd_jw_key(w, "ops");
	nd_jw_obj(w);
	nd_jw_kcstr(w, "timelines", r->fallback ? "all" : "device");
	nd_jw_kuint(w, "spans", r->ops_spans);
	nd_jw_kint(w, "self_ns", r->self_total);
	j_rows(r, w, "ops", "name", r->ops, r->nops, 0);
	j_rows(r, w, "families", "family", r->fams, r->nfams, 0);
	j_rows(r, w, "collectives", "family", r->colls, r->ncolls, 0);
	if (r->nroof > 0) {
		size_t m = nd_rep_cut(r, r->nroof);

		nd_jw_key(w, "roofline");
		nd_jw_obj(w);
		nd_roofline_sum_json(w, &r->roofsum);
		nd_jw_kuint(w, "shown", m);
		nd_jw_key(w, "top");
		nd_jw_arr(w);
		for (size_t i = 0; i < m; i++) {
			nd_jw_obj(w);
			nd_by_json(r->roofby, w, r->roofrows[i].key,
			    r->roofrows[i].keylen);
			nd_roofline_row_json(w, &r->roofrows[i]);
			nd_jw_obj_end(w);
		}
		nd_jw_arr_end(w);
		nd_jw_obj_end(w);
	}
	j_opreg(r, w);
	nd_jw_obj_end(w);
}

static void
j_launch_rows(nd_report *r, nd_jw *w, int which, const char *k,
    int64_t tot)
{
	const nd_launch_row *row;
	size_t n = nd_launch_rows(r->launch, which, &row), m = nd_rep_cut(r, n);

	nd_jw_key(w, k);
	nd_jw_arr(w);
	for (size_t i = 0; i < m; i++) {
		nd_jw_obj(w);
		j_str(w, "name", row[i].name);
		nd_jw_kuint(w, "device_ops", row[i].ops);
		nd_jw_kint(w, "device_ns", row[i].ns);
		nd_jw_kdbl(w, "share", tot > 0 ?
		    (double)row[i].ns / (double)tot : 0);
		nd_jw_obj_end(w);
	}
	nd_jw_arr_end(w);
	nd_jw_kuint(w, which == ND_LAUNCH_INNER ? "by_op_rows" :
	    "by_top_op_rows", n);
}

/* Device time per launching CPU op (nd_launch). */
static void
j_launch(nd_report *r, nd_jw *w)
{
	nd_launch_sum s;

	nd_launch_totals(r->launch, &s);
	nd_jw_key(w, "launch_ops");
	nd_jw_obj(w);
	nd_jw_kuint(w, "device_ops", s.ops);
	nd_jw_kint(w, "device_ns", s.ns);
	nd_jw_kuint(w, "unmatched_ops", s.unmatched_ops);
	nd_jw_kint(w, "unmatched_ns", s.unmatched_ns);
	nd_jw_kuint(w, "unplaced_ops", s.unplaced);
	j_launch_rows(r, w, ND_LAUNCH_INNER, "by_op", s.ns);
	j_launch_rows(r, w, ND_LAUNCH_TOP, "by_top_op", s.ns);
	nd_jw_obj_end(w);
}

/* Per-line gaps (nd_gaps_lines): one timeline idle, its device maybe not. */
static void
j_lines(nd_report *r, nd_jw *w)
{
	char lab[512];

	nd_jw_key(w, "lines");
	nd_jw_obj(w);
	nd_jw_kuint(w, "timelines", r->nlines);
	nd_jw_kuint(w, "count", r->line_gaps);
	nd_jw_kint(w, "total_ns", r->line_idle);
	nd_jw_kint(w, "max_ns", r->line_max);
	nd_jw_key(w, "rows");
	nd_jw_arr(w);
	for (size_t i = 0; i < nd_rep_cut(r, r->nlines_gap); i++) {
		const struct gline *l = &r->lines[i];

		nd_jw_obj(w);
		nd_jw_kcstr(w, "line", nd_rep_src_label(r, l->source,
		    nd_rep_name_of(r, l->label), lab, sizeof lab));
		nd_jw_kuint(w, "source", l->source);
		nd_jw_kuint(w, "ops", l->ops);
		nd_jw_kuint(w, "count", l->gaps);
		nd_jw_kint(w, "total_ns", l->idle);
		nd_jw_kint(w, "max_ns", l->max);
		nd_jw_kint(w, "active_ns", l->active);
		nd_jw_obj_end(w);
	}
	nd_jw_arr_end(w);
	nd_jw_kuint(w, "rows_with_gaps", r->nlines_gap);
	nd_jw_obj_end(w);
}

static void
j_gaps(nd_report *r, nd_jw *w)
{
	nd_jw_key(w, "gaps");
	nd_jw_obj(w);
	nd_jw_kuint(w, "count", r->ngaps);
	nd_jw_kint(w, "total_ns", r->gap_total);
	nd_jw_kint(w, "max_ns", r->gap_max);
	nd_jw_key(w, "causes");
	nd_jw_arr(w);
	for (size_t i = 0; i < r->ncauses; i++) {
		nd_jw_obj(w);
		nd_jw_kcstr(w, "cause", nd_rep_name_of(r, r->causes[i].id));
		nd_jw_kuint(w, "count", r->causes[i].n);
		nd_jw_kint(w, "dur_ns", r->causes[i].ns);
		nd_jw_obj_end(w);
	}
	nd_jw_arr_end(w);
	nd_jw_key(w, "payloads");
	nd_jw_arr(w);
	for (size_t i = 0; i < nd_rep_cut(r, r->npayids); i++) {
		const struct payload *p = &r->pay[r->payids[i]];

		nd_jw_obj(w);
		j_name(w, "payload", r, r->payids[i]);
		j_name(w, "marker", r, p->marker);
		nd_jw_kuint(w, "count", p->n);
		nd_jw_kint(w, "total_ns", p->total);
		nd_jw_kint(w, "max_ns", p->max);
		j_name(w, "region", r, p->region);
		nd_jw_obj_end(w);
	}
	nd_jw_arr_end(w);
	nd_jw_kuint(w, "payloads_rows", r->npayids);
	nd_jw_key(w, "regions");
	nd_jw_arr(w);
	for (size_t i = 0; i < nd_rep_cut(r, r->ngregs); i++) {
		const struct payload *p = &r->gregs[i];

		nd_jw_obj(w);
		j_name(w, "region", r, p->region);
		nd_jw_kuint(w, "count", p->n);
		nd_jw_kint(w, "total_ns", p->total);
		nd_jw_kint(w, "max_ns", p->max);
		nd_jw_obj_end(w);
	}
	nd_jw_arr_end(w);
	nd_jw_kuint(w, "regions_rows", r->ngregs);
	j_lines(r, w);
	nd_jw_obj_end(w);
}

static void
j_regions(nd_report *r, nd_jw *w)
{
	nd_jw_key(w, "regions");
	nd_jw_obj(w);
	j_rows(r, w, "regions", "path", r->regs, r->nregs, 1);
	nd_jw_obj_end(w);
}

static void
j_memory(nd_report *r, nd_jw *w)
{
	nd_jw_key(w, "memory");
	nd_jw_arr(w);
	for (size_t i = 0; i < r->npeaks; i++) {
		const struct mpeak *p = &r->peaks[i];

		nd_jw_obj(w);
		j_str(w, "source", p->source);
		j_str(w, "device", p->device);
		nd_jw_kint(w, "ts_ns", p->ts);
		nd_jw_kint(w, "allocated_bytes", p->alloc);
		nd_jw_kint(w, "reserved_bytes", p->reserved);
		if (p->has_step)
			nd_jw_kint(w, "step", p->step);
		j_str(w, "op", p->op);
		j_str(w, "scope", p->scope);
		nd_jw_obj_end(w);
	}
	nd_jw_arr_end(w);
}

static void
j_findings(nd_report *r, nd_jw *w)
{
	nd_jw_key(w, "findings");
	nd_jw_arr(w);
	for (size_t i = 0; i < r->nfnd; i++) {
		const struct finding *f = &r->fnd[i];

		nd_jw_obj(w);
		nd_jw_kcstr(w, "rule", nd_rep_rules[f->rule].id);
		nd_jw_kdbl(w, "value", f->value);
		nd_jw_kdbl(w, "threshold", r->thr[f->rule]);
		nd_jw_kint(w, "explains_ns", f->explains_ns);
		nd_jw_kdbl(w, "explains_pct", f->explains_pct);
		nd_jw_kcstr(w, "statement", f->statement);
		nd_jw_key(w, "evidence");
		nd_jw_raw(w, f->ev_json, strlen(f->ev_json));
		nd_jw_kcstr(w, "suggestion", f->suggestion);
		nd_jw_obj_end(w);
	}
	nd_jw_arr_end(w);
}

static void
j_thresholds(nd_report *r, nd_jw *w)
{
	int fired;

	nd_jw_key(w, "thresholds");
	nd_jw_arr(w);
	for (int i = 0; i < R_NRULES; i++) {
		nd_jw_obj(w);
		nd_jw_kcstr(w, "rule", nd_rep_rules[i].id);
		nd_jw_kcstr(w, "measures", nd_rep_rules[i].what);
		nd_jw_kdbl(w, "threshold", r->thr[i]);
		nd_jw_key(w, "value");
		if (r->has_val[i] && r->notrun[i] == NULL)
			nd_jw_dbl(w, r->val[i]);
		else
			nd_jw_null(w);
		fired = 0;
		for (size_t j = 0; j < r->nfnd; j++)
			fired |= r->fnd[j].rule == i;
		nd_jw_kbool(w, "fired", fired);
		j_str(w, "not_run", r->notrun[i]);
		nd_jw_obj_end(w);
	}
	nd_jw_arr_end(w);
}

void
nd_rep_json(nd_report *r, nd_jw *w, int part)
{
	switch (part) {
	case RJ_HEAD:
		nd_jw_kcstr(w, "schema", ND_REPORT_SCHEMA);
		if (nd_rep_is_comparison(r)) {
			/* the trace-diff records as they came, in order */
			nd_jw_kcstr(w, "kind", "comparison");
			nd_jw_key(w, "records");
			nd_jw_arr(w);
			for (size_t i = 0; i < r->ndiff; i++)
				nd_jw_raw(w, r->diff[i], strlen(r->diff[i]));
			nd_jw_arr_end(w);
			return;
		}
		nd_jw_kcstr(w, "kind", "report");
		if (r->o.stamp)
			nd_jw_kcstr(w, "stamp", r->o.stamp);
		return;
	case RJ_SOURCES:
		j_sources(r, w);
		j_hardware(r, w);
		return;
	case RJ_QUALITY:
		j_quality(r, w);
		return;
	case RJ_STEPS:
		j_steps(r, w);
		return;
	case RJ_BREAKDOWN:
		j_breakdown(r, w);
		return;
	case RJ_OPS:
		j_ops(r, w);
		j_launch(r, w);
		return;
	case RJ_GAPS:
		j_gaps(r, w);
		return;
	case RJ_REGIONS:
		j_regions(r, w);
		return;
	case RJ_MEMORY:
		j_memory(r, w);
		return;
	case RJ_PIPELINE:
		nd_rep_pipe_json(r, w);
		return;
	case RJ_FINDINGS:
		j_findings(r, w);
		j_thresholds(r, w);
		return;
	}
}
