#include "nd_diffrun.h"
#include "nd_drive.h"
#include "nd_history.h"
#include "nd_util.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

struct nd_diffrun {
	nd_diffrun_opts o;
	nd_err err;		/* no answer (run_error) */
	int cur;		/* the side of the records; -1: none */
	nd_diff_reader *rd[2];	/* before, after; NULL once read */
	nd_diff_side *side[2];
	int again[2];		/* the side is read again */
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
	if (same && !x->o.allow_same) {
		nd_err_set(&x->err, NULL, ND_ERR_NONE, ND_ERR_NONE, "before "
		    "and after are the same trace (sha256 %.16s...): "
		    "comparing a trace with itself proves nothing "
		    "(--allow-same to do it anyway)", sb[0].sha256);
		return;
	}
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

/* The reading of side i ended: its figures, and its reader freed, unless
 * it must be read again.  1 when it must. */
static int
side_end(nd_diffrun *x, int i)
{
	if (x->rd[i] == NULL)
		return 0;
	if (x->again[i])	/* ended already, at the other side's start */
		return 1;
	if ((x->again[i] = nd_diff_reader_end(x->rd[i])) != 0)
		return 1;
	x->side[i] = nd_diff_reader_finish(x->rd[i], &x->err);
	nd_diff_reader_free(x->rd[i]);
	x->rd[i] = NULL;
	return 0;
}

static void
run_record(void *self, const nd_event *ev, const nd_source_info *si)
{
	nd_diffrun *x = self;
	int i = si != NULL && si->input > 0;

	/* the before side is complete when the after side starts: one
	 * side's reader in memory at a time; what its end finds is of the
	 * before input, not of this record */
	if (i == 1 && x->rd[0] != NULL && !x->again[0]) {
		nd_stream *st = nd_drive_stream();

		nd_stream_at(st, 0, 0);
		(void)side_end(x, 0);
		nd_stream_at(st, 1, nd_stream_lineno(st));
	}
	/* a side already read (a second reading for the other) */
	if (x->rd[i] != NULL) {
		x->cur = i;
		nd_diff_reader_record(x->rd[i], ev, si);
	}
}

/* A source ended: its steps are summed, and what that finds is named by
 * its input, without a line (the record at hand may be the next input's
 * first; the next record read names itself again). */
static void
run_end_source(void *self)
{
	nd_diffrun *x = self;

	if (x->cur >= 0 && x->rd[x->cur] != NULL) {
		nd_stream_at(nd_drive_stream(), x->cur, 0);
		nd_diff_reader_end_source(x->rd[x->cur]);
	}
	x->cur = -1;
}

static int
run_end_input(void *self)
{
	nd_diffrun *x = self;
	int again = 0;

	for (int i = 0; i < 2; i++)
		again |= side_end(x, i);
	return again ? ND_ENGINE_AGAIN : ND_ENGINE_OK;
}

static void
run_restart(void *self)
{
	nd_diffrun *x = self;

	for (int i = 0; i < 2; i++)
		if (x->rd[i] != NULL) {
			nd_diff_reader_restart(x->rd[i]);
			x->again[i] = 0;
		}
}

/* The deltas and the verdict. */
static void
run_finish(void *self, const nd_run_res *res)
{
	nd_diffrun *x = self;
	char err[512];

	(void)res;
	provenance(x);
	if (x->err.code != 0)
		return;
	if (nd_diff_side_steady(x->side[0])->count == 0 ||
	    nd_diff_side_steady(x->side[1])->count == 0)
		add_warn(x, "no steady steps on the %s side%s: no step or "
		    "share deltas (see --warmup, --step-regex)",
		    nd_diff_side_steady(x->side[0])->count == 0 ? "before" :
		    "after", "");
	nd_diff_compute(x->side[0], x->side[1], &x->o.o, &x->d);
	if (nd_diff_verdict(&x->d, x->o.rules, x->o.nrules, &x->v, err,
	    sizeof err) != 0) {
		nd_err_set(&x->err, NULL, ND_ERR_NONE, ND_ERR_NONE, "%s", err);
		return;
	}
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
	x->cur = -1;
	for (int i = 0; i < 2; i++)
		x->rd[i] = nd_diff_reader_new(&x->o.o);
	return x;
}

static const nd_err *
run_error(void *self)
{
	nd_diffrun *x = self;

	return x->err.code != 0 ? &x->err : NULL;
}

nd_engine
nd_diffrun_engine(nd_diffrun *x)
{
	nd_engine e = {
		.name = "diff",
		.self = x,
		.record = run_record,
		.end_source = run_end_source,
		.end_input = run_end_input,
		.restart = run_restart,
		.finish = run_finish,
		.write = run_write,
		.error = run_error,
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
