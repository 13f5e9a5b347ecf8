/*
 * nd_end: the `end` record of a source (see nd_end.h).
 */
#include "nd_end.h"

void
nd_end_open(nd_jw *w, nd_buf *b, const nd_end_counts *c)
{
	nd_jw_init(w, b);
	nd_jw_obj(w);
	nd_jw_kcstr(w, "type", "end");
	nd_jw_kuint(w, "events", c->events);
	nd_jw_kuint(w, "spans", c->spans);
	nd_jw_kuint(w, "instants", c->instants);
	nd_jw_kuint(w, "counters", c->counters);
	nd_jw_kuint(w, "flows", c->flows);
}

void
nd_end_skipped(nd_jw *w, const char *const *names, const uint64_t *n,
    size_t nreasons, int keep_zero)
{
	nd_jw_key(w, "skipped");
	nd_jw_obj(w);
	for (size_t r = 0; r < nreasons; r++)
		if (keep_zero || n[r] > 0)
			nd_jw_kuint(w, names[r], n[r]);
	nd_jw_obj_end(w);
}

void
nd_end_tail(nd_jw *w, const char *sha256, int truncated)
{
	nd_jw_kcstr(w, "sha256", sha256);
	nd_jw_kbool(w, "suspected_truncation", truncated);
	nd_jw_key(w, "warnings");
	nd_jw_arr(w);
}

void
nd_end_close(nd_jw *w)
{
	nd_jw_arr_end(w);
	nd_jw_obj_end(w);
	nd_buf_addc(w->b, '\n');
}
