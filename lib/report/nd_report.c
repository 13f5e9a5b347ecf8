/*
 * nd_report: see nd_report.h.  Collection (one pass, nd_report_collect.c),
 * then a model of the report (sorted tables, nd_report_model.c; findings,
 * nd_report_findings.c), then the report as a document (nd_report_doc.c,
 * nd_report_charts.c) that nd_doc renders as Markdown or HTML, or the
 * JSON (nd_report_json.c).  This file: new, free, thresholds, helpers of
 * every part.
 */
#include "nd_report_int.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void
mem_commit(void *ctx)
{
	(void)ctx;
}

nd_report *
nd_report_new(const nd_report_opts *o)
{
	nd_report *r = nd_xcalloc(1, sizeof *r);

	r->o = *o;
	for (int i = 0; i < R_NRULES; i++)
		r->thr[i] = nd_rep_rules[i].def;
	nd_rep_init(r, 0);
	return r;
}

/* again: the second reading of an input out of order (nd_report_end),
 * where gaps and memory buffer every timeline. */
void
nd_rep_init(nd_report *r, int again)
{
	const nd_report_opts *o = &r->o;
	nd_steps_opts so;
	nd_gaps_opts go;
	nd_mem_opts mo;

	r->cur = -1;
	r->names = nd_intern_new();
	r->devids = nd_intern_new();
	r->skipped_ix = nd_map64_new();
	r->gs = nd_gapsum_new();
	r->hw_ix = nd_map64_new();
	r->dn = nd_devnames_new();
	memset(&so, 0, sizeof so);
	so.re = o->re;
	r->st_src = nd_steps_new(&so);
	so.per_device = 1;
	r->st_dev = nd_steps_new(&so);
	if (r->scan == NULL)	/* kept from one reading to the next */
		nd_rep_scan_new(r);
	r->leaf = nd_agg_new();
	memset(&go, 0, sizeof go);
	go.level = ND_GAP_DEVICE;
	go.kernel_wait_ns = 30000;	/* trace-gaps(1) default */
	go.unordered = o->unordered || again;
	r->gaps = nd_gaps_new(&go);
	memset(&mo, 0, sizeof mo);
	/* timelines in start order (else --unordered): keep only the spans a
	 * memory sample falls in, not every span */
	mo.ordered = !o->unordered && !again;
	r->mem = nd_mem_new(&mo, &r->membuf, mem_commit, NULL);
	r->launch = nd_launch_new(o->unordered || again);
	{
		nd_roofline_opts ro;
		const char *bad;

		memset(&ro, 0, sizeof ro);
		ro.timelines = ND_ROOF_AUTO;
		ro.device = o->device;
		ro.peak_tflops = o->peak_tflops;
		ro.peak_gbps = o->peak_gbps;
		r->roofby = nd_by_parse("name", NULL, 0, &bad);
		r->roof = nd_roofline_new(&ro, r->roofby);
	}
	{
		nd_pipe_opts po;
		char err[256];

		memset(&po, 0, sizeof po);	/* the default rules */
		if ((r->pipe = nd_pipe_new(&po, err, sizeof err)) == NULL)
			nd_die(ND_EXIT_ERROR, "%s", err);
	}
}

int
nd_report_set_threshold(nd_report *r, const char *spec)
{
	const char *eq = strchr(spec, '=');
	char *end;
	double v;

	if (eq == NULL || eq[1] == '\0')
		return -1;
	v = strtod(eq + 1, &end);
	if (*end != '\0' || !(v >= 0) || v > 1e9)
		return -1;
	for (int i = 0; i < R_NRULES; i++)
		if (strlen(nd_rep_rules[i].id) == (size_t)(eq - spec) &&
		    strncmp(nd_rep_rules[i].id, spec,
		    (size_t)(eq - spec)) == 0) {
			r->thr[i] = v;
			return 0;
		}
	return -1;
}

void
nd_report_free(nd_report *r)
{
	if (r == NULL)
		return;
	nd_rep_fini(r);
	nd_scan_free(r->scan);
	free(r);
}

/* Everything nd_rep_init made and the collection and model added, but
 * the scan engine. */
void
nd_rep_fini(nd_report *r)
{
	for (size_t i = 0; i < r->nsrc; i++) {
		free(r->src[i].path);
		free(r->src[i].format);
		free(r->src[i].host);
		free(r->src[i].producer);
		free(r->src[i].sha256);
	}
	free(r->src);
	for (size_t i = 0; i < r->nwarn; i++)
		free(r->warn[i]);
	free(r->warn);
	free(r->skipped);
	for (size_t i = 0; i < r->ndevs; i++)
		free(r->devs[i].key);
	free(r->devs);
	nd_intern_free(r->devids);
	nd_map64_free(r->skipped_ix);
	nd_stepsum_free(r->ss);	/* and r->cl */
	nd_steps_free(r->st_src);
	nd_steps_free(r->st_dev);
	nd_agg_free(r->leaf);
	nd_buf_free(&r->key);
	nd_gaps_free(r->gaps);
	free(r->causes);
	free(r->pay);
	free(r->payids);
	free(r->gregs);
	nd_gapsum_free(r->gs);
	free(r->lines);
	free(r->hw);
	free(r->hwall);
	nd_map64_free(r->hw_ix);
	nd_devnames_free(r->dn);
	free(r->opreg);
	nd_mem_free(r->mem);
	nd_buf_free(&r->membuf);
	for (size_t i = 0; i < r->npeaks; i++) {
		free(r->peaks[i].source);
		free(r->peaks[i].device);
		free(r->peaks[i].op);
		free(r->peaks[i].scope);
	}
	free(r->peaks);
	nd_roofline_free(r->roof);
	nd_by_free(r->roofby);
	nd_launch_free(r->launch);
	free(r->cl_num);
	free(r->step_what);
	free(r->cl_dur);
	free(r->devbd);
	free(r->ranks);
	free(r->ops);
	free(r->fams);
	free(r->colls);
	free(r->regs);
	free(r->reg_pos);
	for (size_t i = 0; i < r->nreg_own; i++)
		free(r->reg_own[i]);
	free(r->reg_own);
	for (size_t i = 0; i < r->nfnd; i++) {
		free(r->fnd[i].statement);
		free(r->fnd[i].evidence);
		free(r->fnd[i].suggestion);
		free(r->fnd[i].ev_json);
	}
	nd_rep_find_free(r);
	if (r->k_ops) {
		nd_intern_free(r->k_ops);
		nd_intern_free(r->k_fams);
		nd_intern_free(r->k_colls);
		nd_rtree_free(r->rtree);
	}
	for (size_t i = 0; i < r->ndiff; i++)
		free(r->diff[i]);
	free(r->diff);
	nd_rep_strip_free(r);
	nd_pipe_free(r->pipe);
	nd_intern_free(r->names);
}

int
nd_report_end(nd_report *r)
{
	return nd_scan_again(r->scan) || r->gaps_late ||
	    nd_mem_disordered(r->mem) || nd_launch_disordered(r->launch);
}

void
nd_report_restart(nd_report *r)
{
	nd_scan_res res;

	/* the spans still held go to the leaf table about to be freed */
	nd_scan_end_reading(r->scan, &res);
	nd_rep_fini(r);
	{
		nd_report_opts o = r->o;
		double thr[R_NRULES];
		nd_scan *scan = r->scan;

		memcpy(thr, r->thr, sizeof thr);
		memset(r, 0, sizeof *r);
		r->o = o;
		memcpy(r->thr, thr, sizeof thr);
		r->scan = scan;
	}
	nd_rep_init(r, 1);
	nd_scan_restart(r->scan);
}

void
nd_report_finish(nd_report *r)
{
	if (r->finished)
		return;
	nd_rep_end_source(r);
	r->finished = 1;
	nd_rep_model(r);
	r->nroof = nd_roofline_finish(r->roof, &r->roofrows, &r->roofsum);
	nd_rep_model_findings(r);
	nd_rep_pipe_model(r);
}
