#include "nd_run.h"

#include "nd_drive.h"
#include "nd_partial.h"
#include "nd_util.h"

#include <string.h>

struct run {
	nd_engine *const *e;
	size_t n;
	int in_source;		/* a record of cur was seen */
	uint32_t cur;
	uint64_t records;	/* of every reading */
};

/* An engine's error ends the run: the driver prints it (exit 2). */
static void
check(const nd_engine *e)
{
	const nd_err *err;

	if (e->error != NULL && (err = e->error(e->self)) != NULL)
		nd_err_exit(err);
}

static void
end_source(struct run *r)
{
	if (!r->in_source)
		return;
	for (size_t i = 0; i < r->n; i++)
		if (r->e[i]->end_source != NULL) {
			r->e[i]->end_source(r->e[i]->self);
			check(r->e[i]);
		}
	r->in_source = 0;
}

static void
record(void *ctx, const nd_event *ev, const nd_source_info *si)
{
	struct run *r = ctx;

	r->records++;
	if (r->in_source && ev->source != r->cur)
		end_source(r);
	r->in_source = 1;
	r->cur = ev->source;
	for (size_t i = 0; i < r->n; i++) {
		r->e[i]->record(r->e[i]->self, ev, si);
		check(r->e[i]);
	}
}

/* Every engine says its answer is complete. */
static int
done(void *ctx)
{
	struct run *r = ctx;

	for (size_t i = 0; i < r->n; i++)
		if (r->e[i]->done == NULL || !r->e[i]->done(r->e[i]->self))
			return 0;
	return 1;
}

/* The input ended: read it again when any engine asks (every engine
 * restarts, so their answers come from the same reading). */
static int
end_input(void *ctx)
{
	struct run *r = ctx;
	int again = 0;

	end_source(r);
	for (size_t i = 0; i < r->n; i++)
		if (r->e[i]->end_input != NULL) {
			if (r->e[i]->end_input(r->e[i]->self) ==
			    ND_ENGINE_AGAIN)
				again = 1;
			check(r->e[i]);
		}
	if (!again)
		return ND_DRIVE_OK;
	for (size_t i = 0; i < r->n; i++)
		if (r->e[i]->restart != NULL)
			r->e[i]->restart(r->e[i]->self);
	return ND_DRIVE_AGAIN;
}

static void
load(void *ctx, nd_stream *st, const nd_event *ev)
{
	nd_engine *e = ctx;

	e->load(e->self, st, ev);
	check(e);
}

/* The engine that reads path itself, or NULL: a stream. */
static nd_engine *
foreign_of(nd_engine *const *e, size_t n, const char *path)
{
	for (size_t i = 0; i < n; i++)
		if (e[i]->foreign != NULL) {
			int is = e[i]->foreign(e[i]->self, path);

			check(e[i]);
			if (is)
				return e[i];
		}
	return NULL;
}

/* Read paths[0..npaths) in order: each foreign input by its engine, each
 * run of stream inputs as one reading. */
static void
read_inputs(nd_engine *const *e, size_t n, char **paths, int npaths,
    const nd_drive_opts *dopts, nd_drive_cb *cb, nd_run_res *res)
{
	static char *stdin_only[] = { "-" };
	nd_drive_res dres;
	nd_engine *f;
	int i = 0;

	if (npaths == 0) {
		paths = stdin_only;
		npaths = 1;
	}
	/* each path is asked once (trace-mem's peeks at the file) */
	f = foreign_of(e, n, paths[0]);
	while (i < npaths) {
		nd_engine *next = NULL;
		int j = i + 1;

		if (f != NULL) {
			f->read_foreign(f->self, paths[i++]);
			res->foreign++;
			check(f);
			f = i < npaths ? foreign_of(e, n, paths[i]) : NULL;
			continue;
		}
		while (j < npaths && (next = foreign_of(e, n, paths[j])) == NULL)
			j++;
		nd_drive(paths + i, j - i, dopts, cb, &dres);
		res->passes = dres.passes;
		res->sources = dres.sources;
		res->spooled += dres.spooled;
		i = j;
		f = next;
	}
}

void
nd_run(nd_engine *const *e, size_t n, char **paths, int npaths,
    const nd_run_mode *mode, nd_run_res *resp)
{
	nd_run_res res;
	nd_out *o = NULL;
	int can_stop = n > 0, can_restart = 0, foreign = 0;

	memset(&res, 0, sizeof res);
	for (size_t i = 0; i < n; i++) {
		if (e[i]->start != NULL) {
			/* a filter writes as it reads */
			if (o == NULL)
				o = nd_out_open(mode->out);
			e[i]->start(e[i]->self, o);
		}
		if (e[i]->done == NULL)
			can_stop = 0;
		if (e[i]->restart != NULL)
			can_restart = 1;
		if (e[i]->foreign != NULL)
			foreign = 1;
	}
	if (mode->merge) {
		if (n != 1 || e[0]->partial_type == NULL)
			nd_die(ND_EXIT_ERROR, "internal error: --merge needs "
			    "one engine that merges");
		nd_err err;

		nd_err_clear(&err);
		if (nd_partial_read(paths, npaths, e[0]->partial_type,
		    e[0]->partial_body, e[0]->npartial_body, load, e[0],
		    &err) < 0)
			nd_err_exit(&err);	/* the driver prints */
		res.merged = 1;
	} else {
		struct run r = { e, n, 0, 0, 0 };
		/* engines that cannot restart never ask for a second
		 * reading: a pipe is not spooled for them */
		nd_drive_opts dopts = { mode->once || !can_restart,
		    mode->threads };
		nd_drive_cb cb = { &r, record, end_input,
		    can_stop ? done : NULL };
		nd_drive_res dres;

		if (foreign)
			read_inputs(e, n, paths, npaths, &dopts, &cb, &res);
		else {
			nd_drive(paths, npaths, &dopts, &cb, &dres);
			res.passes = dres.passes;
			res.sources = dres.sources;
			res.spooled = dres.spooled;
		}
		/* an empty input is an answer, but rarely the one meant (a
		 * converter that failed upstream of the pipe) */
		res.records = r.records;
		if (r.records == 0 && res.foreign == 0)
			nd_warn("no events: the input holds no records");
	}
	for (size_t i = 0; i < n; i++)
		if (e[i]->finish != NULL) {
			e[i]->finish(e[i]->self, &res);
			check(e[i]);
		}
	if (o == NULL)
		o = nd_out_open(mode->out);
	for (size_t i = 0; i < n; i++)
		if (e[i]->write != NULL)
			e[i]->write(e[i]->self, o);
	nd_out_close(o);
	if (resp != NULL)
		*resp = res;
}
