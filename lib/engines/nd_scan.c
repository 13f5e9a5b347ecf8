#include "nd_scan.h"
#include "nd_hash.h"
#include "nd_util.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct nd_scan {
	nd_scan_opts o;
	nd_scan_cb cb;
	nd_nest *nest;
	nd_intern *tls;		/* (source, pid, tid) -> timeline id */
	uint32_t *late;		/* timelines buffered from their first span */
	size_t nlate, caplate;
	size_t nlate0;		/* late before this reading */
	int device_seen;
	int64_t nsrc;		/* sources seen: highest + 1 */
	size_t tlen;		/* strlen(res.type) once known */
	nd_scan_res res;
	/* a small direct-mapped cache in front of tls */
	struct tlc {
		uint32_t src, id1;
		unsigned has;
		int64_t pid, tid;
	} tlc[64];
};

int
nd_scan_timelines(const char *s)
{
	if (strcmp(s, "device") == 0)
		return ND_TL_DEVICE;
	if (strcmp(s, "host") == 0)
		return ND_TL_HOST;
	if (strcmp(s, "all") == 0)
		return ND_TL_ALL;
	return -1;
}

const char *
nd_scan_timelines_name(int tl)
{
	return tl == ND_TL_HOST ? "host" : tl == ND_TL_ALL ? "all" : "device";
}

static uint32_t
timeline_id(nd_scan *s, const nd_event *ev)
{
	unsigned char k[1 + 4 + 16];
	uint32_t src = ev->source;
	int64_t pid = (ev->has & ND_HAS_PID) ? ev->pid : 0;
	int64_t tid = (ev->has & ND_HAS_TID) ? ev->tid : 0;

	unsigned has = ev->has & (ND_HAS_PID | ND_HAS_TID);
	struct tlc *c = &s->tlc[(nd_hash_u64((uint64_t)pid * 31 +
	    (uint64_t)tid + ((uint64_t)src << 40)) >> 58) & 63];

	if (c->id1 != 0 && c->src == src && c->pid == pid && c->tid == tid &&
	    c->has == has)
		return c->id1 - 1;
	k[0] = (unsigned char)has;
	memcpy(k + 1, &src, 4);
	memcpy(k + 5, &pid, 8);
	memcpy(k + 13, &tid, 8);
	c->src = src;
	c->pid = pid;
	c->tid = tid;
	c->has = has;
	c->id1 = nd_intern_id(s->tls, (const char *)k, sizeof k) + 1;
	return c->id1 - 1;
}

static void
new_nest(nd_scan *s)
{
	nd_nest_free(s->nest);
	s->nest = nd_nest_new(s->o.rule, s->cb.done, s->cb.ctx);
	if (s->o.unordered)
		nd_nest_buffer_all(s->nest);
	for (size_t i = 0; i < s->nlate; i++)
		nd_nest_set_buffered(s->nest, s->late[i]);
}

/* Start a reading: nothing counted, the late timelines buffered. */
static void
begin(nd_scan *s)
{
	s->device_seen = 0;
	s->nsrc = 0;
	s->tlen = 0;
	s->res.type[0] = '\0';
	s->res.records = 0;
	s->nlate0 = s->nlate;
	new_nest(s);
}

nd_scan *
nd_scan_new(const nd_scan_opts *opts, const nd_scan_cb *cb)
{
	nd_scan *s = nd_xcalloc(1, sizeof *s);

	s->o = *opts;
	s->cb = *cb;
	s->tls = nd_intern_new();
	s->res.passes = 1;
	begin(s);
	return s;
}

void
nd_scan_free(nd_scan *s)
{
	if (s == NULL)
		return;
	nd_nest_free(s->nest);
	nd_intern_free(s->tls);
	free(s->late);
	free(s);
}

void
nd_scan_restart(nd_scan *s)
{
	s->cb.reset(s->cb.ctx);
	s->res.passes++;
	begin(s);
}

static void
late(nd_scan *s, uint32_t tl)
{
	for (size_t i = 0; i < s->nlate; i++)
		if (s->late[i] == tl)
			return;
	nd_grow(&s->late, &s->caplate, s->nlate + 1, sizeof *s->late);
	s->late[s->nlate++] = tl;
}

/* Is the record of the aggregated type?  The first record with a
 * duration decides it when opts.type does not. */
static int
of_type(nd_scan *s, const nd_event *ev)
{
	char *type = s->res.type;

	if (type[0] == '\0') {
		if (s->o.type != NULL)
			snprintf(type, sizeof s->res.type, "%s", s->o.type);
		else
			snprintf(type, sizeof s->res.type, "%.*s",
			    (int)ev->type_name.n, ev->type_name.p);
	}
	if (s->tlen == 0)
		s->tlen = strlen(type);
	return ev->type_name.n == s->tlen &&
	    memcmp(ev->type_name.p, type, s->tlen) == 0;
}

/* Does the span count under opts.timelines?  At the first device op under
 * ND_TL_DEVICE, forget what the other spans counted. */
static int
counts(nd_scan *s, const nd_event *ev)
{
	int kind = nd_event_kind(ev);

	if (s->o.timelines == ND_TL_HOST)
		return kind == ND_KIND_HOST;
	if (s->o.timelines != ND_TL_DEVICE)
		return 1;
	if (kind == ND_KIND_DEVICE && !s->device_seen) {
		s->device_seen = 1;
		if (s->res.records > 0 || nd_nest_held(s->nest) > 0) {
			s->cb.reset(s->cb.ctx);
			s->nlate = s->nlate0;
			new_nest(s);
			s->res.records = 0;
		}
		return 1;
	}
	return kind == ND_KIND_DEVICE || !s->device_seen;
}

int
nd_scan_feed(nd_scan *s, const nd_event *ev,
    const nd_source_info *si)
{
	int is_span;
	uint64_t user;

	/* the caller ends each source (nd_scan_end_source) */
	if ((int64_t)ev->source >= s->nsrc)
		s->nsrc = (int64_t)ev->source + 1;
	if (ev->type == ND_EV_META || ev->type == ND_EV_END ||
	    !(ev->has & ND_HAS_DUR) || !of_type(s, ev))
		return ND_SCAN_OK;
	is_span = ev->type == ND_EV_SPAN;
	if (is_span && (!(ev->has & ND_HAS_TS) || !counts(s, ev)))
		return ND_SCAN_OK;
	user = s->cb.record(s->cb.ctx, ev, si);
	if (user == ND_SCAN_SKIP)
		return ND_SCAN_OK;
	s->res.records++;
	if (is_span) {
		uint32_t tl = timeline_id(s, ev);

		if (nd_nest_add(s->nest, tl, ev->ts_ns, ev->dur_ns, user) ==
		    ND_NEST_LATE) {
			late(s, tl);
			return ND_SCAN_LATE;
		}
	} else {
		nd_nest_span d;

		memset(&d, 0, sizeof d);
		d.ts_ns = ev->ts_ns;
		d.dur_ns = ev->dur_ns;
		d.self_ns = ev->dur_ns;
		d.user = user;
		d.timeline = UINT32_MAX;
		s->cb.done(s->cb.ctx, &d);
	}
	return ND_SCAN_OK;
}

void
nd_scan_end_source(nd_scan *s)
{
	nd_nest_flush_all(s->nest);
}

void
nd_scan_end_reading(nd_scan *s, nd_scan_res *res)
{
	nd_nest_flush_all(s->nest);
	if (nd_nest_held_max(s->nest) > s->res.held_max)
		s->res.held_max = nd_nest_held_max(s->nest);
	s->res.reordered += nd_nest_reordered(s->nest);
	s->res.fallback = s->o.timelines == ND_TL_DEVICE && !s->device_seen;
	s->res.sources = (uint32_t)s->nsrc;
	*res = s->res;
}

int
nd_scan_again(const nd_scan *s)
{
	return s->nlate > s->nlate0;
}

/* ---- for the engines built on nd_scan (nd_engine.h) ---- */

int
nd_scan_end_input(nd_scan *sc)
{
	nd_scan_res res;

	if (!nd_scan_again(sc))
		return ND_ENGINE_OK;
	/* the figures of this reading (held_max, reordered) stay */
	nd_scan_end_reading(sc, &res);
	return ND_ENGINE_AGAIN;
}

void
nd_scan_result(nd_scan *sc, const nd_run_res *rr, nd_scan_res *res)
{
	nd_scan_end_reading(sc, res);
	res->sources = rr->sources;
	res->passes = rr->passes;
}

/* self starts with its nd_scan * (nd_scan.h) */
#define SCAN_OF(self) (*(nd_scan **)(self))

void
nd_scan_eng_record(void *self, const nd_event *ev, const nd_source_info *si)
{
	(void)nd_scan_feed(SCAN_OF(self), ev, si);
}

void
nd_scan_eng_end_source(void *self)
{
	nd_scan_end_source(SCAN_OF(self));
}

int
nd_scan_eng_end_input(void *self)
{
	return nd_scan_end_input(SCAN_OF(self));
}

void
nd_scan_eng_restart(void *self)
{
	nd_scan_restart(SCAN_OF(self));
}
