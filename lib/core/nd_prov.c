/*
 * nd_prov: the provenance of aggregated results (see nd_prov.h).
 */
#include "nd_prov.h"

#include "nd_partial.h"
#include "nd_util.h"

#include <stdlib.h>
#include <string.h>

void
nd_prov_scanned(nd_prov *p, const nd_scan_opts *so, const nd_scan_res *res)
{
	p->timelines = nd_scan_timelines_name(so->timelines);
	p->fallback = res->fallback;
	p->sources = res->sources;
	free(p->rule);
	p->rule = nd_xstrdup(so->rule == ND_NEST_REPARENT ? "reparent" :
	    "clip");
}

void
nd_prov_header(nd_prov *p, nd_stream *st, const nd_event *ev)
{
	const nd_jval *v;
	char *s = nd_jstr_dup(nd_stream_need(st, ev, "rule", ND_JSTR));
	int64_t n;

	if (p->rule != NULL && strcmp(s, p->rule) != 0)
		nd_stream_fail(st, "partial results made with --overrun %s and "
		    "%s cannot be merged", s, p->rule);
	free(p->rule);
	p->rule = s;
	s = nd_jstr_dup(nd_stream_need(st, ev, "timelines", ND_JSTR));
	if (p->nheaders > 0 && strcmp(s, p->timelines) != 0)
		nd_stream_fail(st, "partial results of --timelines %s and %s "
		    "cannot be merged", s, p->timelines);
	if (nd_scan_timelines(s) < 0)
		nd_stream_fail(st, "unknown timelines '%s'", s);
	if (nd_stream_failed(st)) {
		free(s);
		return;
	}
	p->timelines = nd_scan_timelines_name(nd_scan_timelines(s));
	free(s);
	v = nd_event_get(ev, "fallback");
	p->fallback = v != NULL && v->type == ND_JTRUE;
	p->nfallback += p->fallback;
	n = nd_partial_sum("sources", nd_stream_need_int(st, ev, "sources"));
	if (n < 0 || (uint64_t)n > UINT32_MAX - p->sources)
		nd_stream_fail(st, "\"sources\" must be an integer >= 0, with "
		    "those of the partials before at most %lu",
		    (unsigned long)UINT32_MAX);
	if (nd_stream_failed(st))
		return;
	p->sources += (uint32_t)n;
	p->nheaders++;
}

void
nd_prov_merged(nd_prov *p)
{
	p->fallback = p->nheaders > 0 && p->nfallback == p->nheaders;
	if (p->rule == NULL)
		p->rule = nd_xstrdup("clip");
}

void
nd_prov_write(const nd_prov *p, nd_jw *w)
{
	nd_jw_kcstr(w, "timelines", p->timelines);
	nd_jw_kbool(w, "fallback", p->fallback);
	nd_jw_kcstr(w, "rule", p->rule);
}

void
nd_prov_free(nd_prov *p)
{
	free(p->rule);
	p->rule = NULL;
}

void
nd_prov_args_init(nd_prov_args *a)
{
	memset(a, 0, sizeof *a);
	a->so.timelines = ND_TL_DEVICE;
	a->so.rule = ND_NEST_CLIP;
}

int
nd_prov_getopt(nd_prov_args *a, int c, const char *arg)
{
	switch (c) {
	case ND_PROV_OPT_TIMELINES:
		if ((a->so.timelines = nd_scan_timelines(arg)) < 0)
			nd_die(ND_EXIT_ERROR, "invalid value for --timelines: "
			    "'%s' (device, host or all)", arg);
		break;
	case ND_PROV_OPT_OVERRUN:
		if (strcmp(arg, "clip") == 0)
			a->so.rule = ND_NEST_CLIP;
		else if (strcmp(arg, "reparent") == 0)
			a->so.rule = ND_NEST_REPARENT;
		else
			nd_die(ND_EXIT_ERROR, "invalid value for --overrun: "
			    "'%s' (clip or reparent)", arg);
		break;
	case 'u':
	case ND_PROV_OPT_UNORDERED:
		a->so.unordered = 1;
		break;
	case ND_PROV_OPT_MERGE:
		a->merge = 1;
		return 1;
	default:
		return 0;
	}
	a->scanopt = 1;
	return 1;
}
