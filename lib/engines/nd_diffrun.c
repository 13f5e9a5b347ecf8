#include "nd_diffrun.h"
#include "nd_history.h"
#include "nd_util.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

struct nd_diffrun {
	nd_diffrun_opts o;
	nd_diff_reader *rd[2];	/* before, after */
	nd_diff_side *side[2];
	nd_diff d;
	nd_verdict v;
	char **warn;
	size_t nwarn;
	int computed;
};

/* A warning: on stderr now, and in the verdict record. */
static void
add_warn(nd_diffrun *x, const char *fmt, const char *a, const char *b)
{
	char msg[1024];

	snprintf(msg, sizeof msg, fmt, a, b);
	nd_warn("%s", msg);
	x->warn = nd_xrealloc(x->warn, (x->nwarn + 1) * sizeof *x->warn);
	x->warn[x->nwarn++] = nd_xstrdup(msg);
}

/* Provenance: refuse identical inputs, warn about the same path or run. */
static void
provenance(nd_diffrun *x)
{
	const nd_diff_src *sb, *sa;
	size_t nb = nd_diff_side_sources(x->side[0], &sb);
	size_t na = nd_diff_side_sources(x->side[1], &sa);
	int same = nb > 0 && nb == na;

	for (size_t i = 0; same && i < nb; i++)
		if (sb[i].sha256 == NULL || sa[i].sha256 == NULL ||
		    strcmp(sb[i].sha256, sa[i].sha256) != 0)
			same = 0;
	if (same && !x->o.allow_same)
		nd_die(ND_EXIT_ERROR, "before and after are the same trace "
		    "(sha256 %.16s...): comparing a trace with itself proves "
		    "nothing (--allow-same to do it anyway)", sb[0].sha256);
	if (same)
		add_warn(x, "before and after are the same trace (sha256 "
		    "%.16s...%s)", sb[0].sha256, "");
	for (size_t i = 0; i < nb; i++)
		for (size_t j = 0; j < na; j++) {
			if (!same && sb[i].path != NULL && sa[j].path != NULL &&
			    strcmp(sb[i].path, sa[j].path) == 0)
				add_warn(x, "same source path on both sides: "
				    "%s%s", sb[i].path, "");
			if (sb[i].run_id != NULL && sa[j].run_id != NULL &&
			    strcmp(sb[i].run_id, sa[j].run_id) == 0)
				add_warn(x, "same run id on both sides: %s%s",
				    sb[i].run_id, "");
		}
}

static void
run_record(void *self, const nd_event *ev, const nd_source_info *si)
{
	nd_diffrun *x = self;

	nd_diff_reader_record(x->rd[si != NULL && si->input > 0], ev, si);
}

static int
run_end_input(void *self)
{
	nd_diffrun *x = self;
	int again = 0;

	for (int i = 0; i < 2; i++)
		again |= nd_diff_reader_end(x->rd[i]);
	return again ? ND_ENGINE_AGAIN : ND_ENGINE_OK;
}

static void
run_restart(void *self)
{
	nd_diffrun *x = self;

	for (int i = 0; i < 2; i++)
		nd_diff_reader_restart(x->rd[i]);
}

/* The deltas and the verdict. */
static void
run_finish(void *self, const nd_run_res *res)
{
	nd_diffrun *x = self;
	char err[512];

	(void)res;
	for (int i = 0; i < 2; i++)
		x->side[i] = nd_diff_reader_finish(x->rd[i]);
	provenance(x);
	if (nd_diff_side_steady(x->side[0])->count == 0 ||
	    nd_diff_side_steady(x->side[1])->count == 0)
		add_warn(x, "no steady steps on the %s side%s: no step or "
		    "share deltas (see --warmup, --step-regex)",
		    nd_diff_side_steady(x->side[0])->count == 0 ? "before" :
		    "after", "");
	nd_diff_compute(x->side[0], x->side[1], &x->o.o, &x->d);
	if (nd_diff_verdict(&x->d, x->o.rules, x->o.nrules, &x->v, err,
	    sizeof err) != 0)
		nd_die(ND_EXIT_ERROR, "%s", err);
	for (size_t i = 0; i < x->v.nmissing; i++)
		add_warn(x, "rule %s not evaluated: metric not available%s",
		    x->v.missing[i], "");
	x->computed = 1;
}

static void
run_write(void *self, nd_out *o)
{
	nd_diffrun *x = self;

	if (x->o.table)
		nd_diff_write_table(nd_out_buf(o), &x->d, &x->v, x->o.top);
	else {
		nd_diff_write_deltas(nd_out_buf(o), &x->d);
		nd_diff_write_verdict(nd_out_buf(o), &x->d, &x->v, x->o.rules,
		    x->o.nrules, x->side[0], x->side[1], x->warn, x->nwarn);
	}
}

nd_diffrun *
nd_diffrun_new(const nd_diffrun_opts *o)
{
	nd_diffrun *x = nd_xcalloc(1, sizeof *x);

	x->o = *o;
	for (int i = 0; i < 2; i++)
		x->rd[i] = nd_diff_reader_new(&x->o.o);
	return x;
}

nd_engine
nd_diffrun_engine(nd_diffrun *x)
{
	nd_engine e = {
		.name = "diff",
		.self = x,
		.record = run_record,
		.end_input = run_end_input,
		.restart = run_restart,
		.finish = run_finish,
		.write = run_write,
	};

	return e;
}

int
nd_diffrun_done(nd_diffrun *x)
{
	if (x->o.history != NULL) {
		nd_buf hb = ND_BUF_INIT;

		nd_history_line(&hb, x->o.label, (long long)time(NULL), &x->d,
		    &x->v, x->side[0], x->side[1]);
		if (nd_history_append(x->o.history, hb.p, hb.len) != 0)
			nd_die_errno(ND_EXIT_ERROR, "%s", x->o.history);
		nd_buf_free(&hb);
	}
	return x->v.status == ND_RULE_FAIL ? ND_EXIT_FINDING : ND_EXIT_OK;
}

void
nd_diffrun_free(nd_diffrun *x)
{
	if (x == NULL)
		return;
	if (x->computed) {
		nd_verdict_free(&x->v);
		nd_diff_free(&x->d);
	}
	for (int i = 0; i < 2; i++) {
		nd_diff_side_free(x->side[i]);
		nd_diff_reader_free(x->rd[i]);
	}
	for (size_t i = 0; i < x->nwarn; i++)
		free(x->warn[i]);
	free(x->warn);
	free(x);
}
