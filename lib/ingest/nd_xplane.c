#include "nd_xplane.h"
#include "nd_hash.h"
#include "nd_util.h"

#include <stdlib.h>
#include <string.h>

/* Field numbers (lib/ingest/xplane.proto). */
enum {
	XSPACE_PLANES = 1, XSPACE_ERRORS = 2, XSPACE_WARNINGS = 3,
	XSPACE_HOSTNAMES = 4,
	XPLANE_ID = 1, XPLANE_NAME = 2, XPLANE_LINES = 3, XPLANE_EVMD = 4,
	XPLANE_STATMD = 5, XPLANE_STATS = 6,
	XLINE_ID = 1, XLINE_NAME = 2, XLINE_TS = 3, XLINE_EVENTS = 4,
	XLINE_DUR = 9, XLINE_DISPLAY_ID = 10, XLINE_DISPLAY_NAME = 11,
	XEVENT_MD = 1, XEVENT_OFFSET = 2, XEVENT_DUR = 3, XEVENT_STATS = 4,
	XEVENT_NOCC = 5,
	XSTAT_MD = 1, XSTAT_DOUBLE = 2, XSTAT_UINT = 3, XSTAT_INT = 4,
	XSTAT_STR = 5, XSTAT_BYTES = 6, XSTAT_REF = 7,
	XEVMD_ID = 1, XEVMD_NAME = 2, XEVMD_DISPLAY_NAME = 4, XEVMD_STATS = 5,
	XSTATMD_ID = 1, XSTATMD_NAME = 2,
	MAPENTRY_KEY = 1, MAPENTRY_VALUE = 2
};

/* id -> dense index: a map while the plane is read; then a direct table
 * when the ids are small and dense (the usual 1..N), else the ids sorted
 * for a binary search.  The map goes once the plane is read: it is 4 KiB
 * even when empty, and a file of a million small planes must not keep a
 * million of them. */
struct nd_xp_idpair {
	int64_t id;
	uint32_t idx;
};

struct nd_xp_idmap {
	nd_map64 *map;			/* while reading */
	uint32_t *direct;		/* index + 1, 0 = absent */
	uint64_t ndirect;
	struct nd_xp_idpair *sorted;	/* sparse ids */
	size_t nsorted;
};

static struct nd_xp_idmap *
idmap_new(void)
{
	return nd_xcalloc(1, sizeof(struct nd_xp_idmap));
}

/* Index of id, inserting `next` if absent (*isnew set). */
static uint32_t
idmap_put(struct nd_xp_idmap *m, int64_t id, uint32_t next, int *isnew)
{
	uint64_t *v;

	if (m->map == NULL)	/* made on first use: most planes have none */
		m->map = nd_map64_new();
	v = nd_map64_put(m->map, (uint64_t)id, isnew);

	if (*isnew)
		*v = next;
	return (uint32_t)*v;
}

static int
cmp_idpair(const void *a, const void *b)
{
	const struct nd_xp_idpair *x = a, *y = b;

	return x->id < y->id ? -1 : x->id > y->id;
}

static void
idmap_finish(struct nd_xp_idmap *m, uint32_t n)
{
	uint64_t maxid = 0, key, val;
	size_t pos = 0;
	int dense = 1;

	if (m->map == NULL)
		return;
	while (nd_map64_next(m->map, &pos, &key, &val)) {
		if ((int64_t)key < 0 || key > (uint64_t)n * 4 + 1024) {
			dense = 0;
			break;
		}
		if (key > maxid)
			maxid = key;
	}
	pos = 0;
	if (n == 0) {
		/* nothing to find */
	} else if (dense) {
		m->ndirect = maxid + 1;
		m->direct = nd_xcalloc(m->ndirect, sizeof *m->direct);
		while (nd_map64_next(m->map, &pos, &key, &val))
			m->direct[key] = (uint32_t)val + 1;
	} else {
		m->sorted = nd_xmalloc(n * sizeof *m->sorted);
		while (nd_map64_next(m->map, &pos, &key, &val)) {
			m->sorted[m->nsorted].id = (int64_t)key;
			m->sorted[m->nsorted++].idx = (uint32_t)val;
		}
		qsort(m->sorted, m->nsorted, sizeof *m->sorted, cmp_idpair);
	}
	nd_map64_free(m->map);
	m->map = NULL;
}

static inline uint32_t
idmap_find(const struct nd_xp_idmap *m, int64_t id)
{
	size_t lo = 0, hi = m->nsorted;

	if (ND_LIKELY(m->direct != NULL)) {
		if ((uint64_t)id < m->ndirect)
			return m->direct[id] - 1;	/* 0 -> UINT32_MAX */
		return UINT32_MAX;
	}
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (m->sorted[mid].id < id)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo < m->nsorted && m->sorted[lo].id == id ?
	    m->sorted[lo].idx : UINT32_MAX;
}

static void
idmap_free(struct nd_xp_idmap *m)
{
	if (m == NULL)
		return;
	nd_map64_free(m->map);
	free(m->direct);
	free(m->sorted);
	free(m);
}

/* ---------- fast paths ----------
 *
 * Events and stats are most of a file: their fields are read with a switch
 * on the one-byte tag and varints decoded without a bounds check per byte
 * when 10 bytes remain; anything else (a long tag, an unknown field, a
 * wrong wire type, the end of the buffer) takes the general nd_pb path,
 * which also produces the error messages. */

static inline uint64_t
fast_varint(nd_pb *r)
{
	const unsigned char *p = r->p;
	size_t avail = (size_t)(r->end - p);
	uint64_t v = 0;

	if (avail > 10)
		avail = 10;
	for (size_t i = 0; i < avail; i++) {
		v |= (uint64_t)(p[i] & 0x7f) << (7 * i);
		if (p[i] < 0x80) {
			r->p = p + i + 1;
			return v;
		}
	}
	return nd_pb_varint_slow(r);	/* reports the error */
}

/* A length-delimited payload at r->p (after its tag); returns its start. */
static inline const unsigned char *
fast_len(nd_pb *r, uint64_t *n, unsigned field)
{
	const unsigned char *lp = r->p, *data;

	*n = fast_varint(r);
	if (ND_UNLIKELY(*n > (uint64_t)(r->end - r->p))) {
		nd_pb_overrun(r, lp, *n, field);
		*n = 0;
		return r->end;
	}
	data = r->p;
	r->p += *n;
	return data;
}

/* ---------- XSpace ---------- */

/* A varint at p: 1 complete (*v, *len), 0 cut short by end, -1 invalid
 * (longer than 10 bytes). */
static int
peek_varint(const unsigned char *p, const unsigned char *end, uint64_t *v,
    size_t *len)
{
	uint64_t x = 0;

	for (size_t i = 0; i < 10; i++) {
		if (p + i >= end)
			return 0;
		x |= (uint64_t)(p[i] & 0x7f) << (7 * i);
		if (p[i] < 0x80) {
			*v = x;
			*len = i + 1;
			return 1;
		}
	}
	return -1;
}

/* The field at p (a tag and what follows), without errors: 1 with its
 * number, wire type, payload and end; 0 cut short; -1 invalid. */
static int
peek_field(const unsigned char *p, const unsigned char *end, uint64_t *num,
    unsigned *wt, const unsigned char **data, uint64_t *plen,
    uint64_t *fend, int depth)
{
	uint64_t tag, v;
	size_t k, k2;
	int rc;

	if ((rc = peek_varint(p, end, &tag, &k)) <= 0)
		return rc;
	*num = tag >> 3;
	*wt = (unsigned)(tag & 7);
	if (*num == 0 || tag >> 32 != 0)
		return -1;
	p += k;
	*fend = k;
	switch (*wt) {
	case ND_PB_VARINT:
		if ((rc = peek_varint(p, end, &v, &k2)) <= 0)
			return rc;
		*fend += k2;
		break;
	case ND_PB_I64:
		*fend += 8;
		break;
	case ND_PB_I32:
		*fend += 4;
		break;
	case ND_PB_LEN:
		if ((rc = peek_varint(p, end, &v, &k2)) <= 0)
			return rc;
		*data = p + k2;
		*plen = v;
		if (v > UINT64_MAX - k - k2)
			return -1;
		*fend += k2 + v;
		break;
	case ND_PB_SGROUP: {
		/* Skipped as nd_pb skips it: to its matching end-group tag,
		 * nesting checked. */
		const unsigned char *q = p;
		uint64_t n2, l2, e2;
		unsigned w2;
		const unsigned char *d2;

		if (depth > ND_PB_MAX_GROUP_DEPTH)
			return -1;
		for (;;) {
			if ((rc = peek_varint(q, end, &tag, &k2)) <= 0)
				return rc;
			if ((tag & 7) == ND_PB_EGROUP) {
				if (tag >> 3 != *num)
					return -1;
				q += k2;
				break;
			}
			if ((rc = peek_field(q, end, &n2, &w2, &d2, &l2, &e2,
			    depth + 1)) <= 0)
				return rc;
			if (e2 > (uint64_t)(end - q))
				return 0;
			q += e2;
		}
		*fend += (uint64_t)(q - p);
		break;
	}
	default:		/* end-group without a group, 6, 7 */
		return -1;
	}
	return 1;
}

void
nd_xspace_tally(nd_xp_tally *t, const void *buf, size_t n)
{
	const unsigned char *b = buf, *end = b + n;

	while (!t->bad && t->pos < n) {
		const unsigned char *p = b + t->pos, *data = NULL, *q;
		uint64_t num, plen = 0, fend, pnum, ppl, pfe;
		unsigned wt, pwt;
		int rc = peek_field(p, end, &num, &wt, &data, &plen, &fend, 1);

		t->need = 0;
		if (rc < 0)
			t->bad = 1;
		if (rc <= 0)
			return;
		if (fend > (uint64_t)(end - p)) {
			t->need = t->pos + fend;
			return;
		}
		t->pos += (size_t)fend;
		if (num != XSPACE_PLANES || wt != ND_PB_LEN)
			continue;
		/* A complete plane: count its lines and metadata (its errors
		 * are for nd_xp_plane_load to report). */
		t->planes++;
		for (q = data; q < data + plen; q += pfe) {
			const unsigned char *pd;

			if (peek_field(q, data + plen, &pnum, &pwt, &pd, &ppl,
			    &pfe, 1) <= 0 || pfe > (uint64_t)(data + plen - q))
				break;
			if (pnum == XPLANE_LINES)
				t->lines++;
			else if (pnum == XPLANE_EVMD || pnum == XPLANE_STATMD)
				t->metadata++;
		}
	}
}

static void
add_str(nd_xp_str **a, size_t *n, size_t *cap, const nd_pb_field *f)
{
	nd_grow(a, cap, *n + 1, sizeof **a);
	(*a)[*n].p = (const char *)f->data;
	(*a)[*n].n = (size_t)f->v;
	(*n)++;
}

nd_xspace *
nd_xspace_open(const void *buf, size_t n, const char *name)
{
	nd_xspace *xs = nd_xcalloc(1, sizeof *xs);
	size_t cap_planes = 0, cap_e = 0, cap_w = 0, cap_h = 0;
	nd_pb_field f;

	nd_err_clear(&xs->err);
	nd_pb_init(&xs->r, buf, n, name, &xs->err);
	if (n == 0)
		nd_pb_fail(&xs->r, buf, "empty file (no XSpace in it)");
	while (nd_pb_next(&xs->r, &f)) {
		switch (f.num) {
		case XSPACE_PLANES:
			nd_pb_want(&xs->r, &f, ND_PB_LEN, "XSpace.planes");
			nd_grow(&xs->planes, &cap_planes, xs->nplanes + 1,
			    sizeof *xs->planes);
			xs->planes[xs->nplanes].p = f.data;
			xs->planes[xs->nplanes].n = (size_t)f.v;
			xs->nplanes++;
			break;
		case XSPACE_ERRORS:
			nd_pb_want(&xs->r, &f, ND_PB_LEN, "XSpace.errors");
			add_str(&xs->errors, &xs->nerrors, &cap_e, &f);
			break;
		case XSPACE_WARNINGS:
			nd_pb_want(&xs->r, &f, ND_PB_LEN, "XSpace.warnings");
			add_str(&xs->warnings, &xs->nwarnings, &cap_w, &f);
			break;
		case XSPACE_HOSTNAMES:
			nd_pb_want(&xs->r, &f, ND_PB_LEN, "XSpace.hostnames");
			add_str(&xs->hostnames, &xs->nhostnames, &cap_h, &f);
			break;
		default:
			break;
		}
	}
	return xs;
}

const nd_err *
nd_xspace_err(const nd_xspace *xs)
{
	return xs->err.code != 0 ? &xs->err : NULL;
}

void
nd_xspace_close(nd_xspace *xs)
{
	if (xs == NULL)
		return;
	free(xs->planes);
	free(xs->errors);
	free(xs->warnings);
	free(xs->hostnames);
	free(xs);
}

/* ---------- planes ---------- */

void
nd_xp_plane_peek(const nd_xspace *xs, size_t i, int64_t *id, nd_xp_str *name)
{
	nd_pb r;
	nd_pb_field f;

	nd_pb_slice(&r, &xs->r, xs->planes[i].p, xs->planes[i].n);
	*id = 0;
	name->p = "";
	name->n = 0;
	while (nd_pb_next(&r, &f)) {
		if (f.num == XPLANE_ID) {
			nd_pb_want(&r, &f, ND_PB_VARINT, "XPlane.id");
			*id = nd_pb_i64(&f);
		} else if (f.num == XPLANE_NAME) {
			nd_pb_want(&r, &f, ND_PB_LEN, "XPlane.name");
			name->p = (const char *)f.data;
			name->n = (size_t)f.v;
		}
	}
}

static void
parse_line_header(nd_pb *r, const nd_pb_field *lf, nd_xp_line *ln)
{
	nd_pb s;
	nd_pb_field f;

	memset(ln, 0, sizeof *ln);
	ln->name.p = ln->display_name.p = "";
	ln->body.p = lf->data;
	ln->body.n = (size_t)lf->v;
	nd_pb_sub(&s, r, lf);
	while (nd_pb_next(&s, &f)) {
		switch (f.num) {
		case XLINE_ID:
			nd_pb_want(&s, &f, ND_PB_VARINT, "XLine.id");
			ln->id = nd_pb_i64(&f);
			break;
		case XLINE_DISPLAY_ID:
			nd_pb_want(&s, &f, ND_PB_VARINT, "XLine.display_id");
			ln->display_id = nd_pb_i64(&f);
			break;
		case XLINE_NAME:
			nd_pb_want(&s, &f, ND_PB_LEN, "XLine.name");
			ln->name.p = (const char *)f.data;
			ln->name.n = (size_t)f.v;
			break;
		case XLINE_DISPLAY_NAME:
			nd_pb_want(&s, &f, ND_PB_LEN, "XLine.display_name");
			ln->display_name.p = (const char *)f.data;
			ln->display_name.n = (size_t)f.v;
			break;
		case XLINE_TS:
			nd_pb_want(&s, &f, ND_PB_VARINT, "XLine.timestamp_ns");
			ln->timestamp_ns = nd_pb_i64(&f);
			break;
		case XLINE_DUR:
			nd_pb_want(&s, &f, ND_PB_VARINT, "XLine.duration_ps");
			ln->duration_ps = nd_pb_i64(&f);
			break;
		case XLINE_EVENTS:
			nd_pb_want(&s, &f, ND_PB_LEN, "XLine.events");
			if (ln->first_event == NULL)
				ln->first_event = f.at;
			/* The rest is mostly events: skip them quickly. */
			while (s.p < s.end &&
			    *s.p == (XLINE_EVENTS << 3 | ND_PB_LEN)) {
				uint64_t n;

				s.p++;
				fast_len(&s, &n, XLINE_EVENTS);
			}
			break;
		default:
			break;
		}
	}
}

static void
parse_evmd(nd_pb *r, const nd_pb_field *vf, nd_xp_evmd *md)
{
	nd_pb s;
	nd_pb_field f;

	md->body.p = vf->data;
	md->body.n = (size_t)vf->v;
	nd_pb_sub(&s, r, vf);
	while (nd_pb_next(&s, &f)) {
		switch (f.num) {
		case XEVMD_ID:
			nd_pb_want(&s, &f, ND_PB_VARINT, "XEventMetadata.id");
			break;
		case XEVMD_NAME:
			nd_pb_want(&s, &f, ND_PB_LEN, "XEventMetadata.name");
			md->name.p = (const char *)f.data;
			md->name.n = (size_t)f.v;
			break;
		case XEVMD_DISPLAY_NAME:
			nd_pb_want(&s, &f, ND_PB_LEN,
			    "XEventMetadata.display_name");
			md->display_name.p = (const char *)f.data;
			md->display_name.n = (size_t)f.v;
			break;
		case XEVMD_STATS:
			nd_pb_want(&s, &f, ND_PB_LEN, "XEventMetadata.stats");
			md->has_stats = 1;
			break;
		default:
			break;
		}
	}
}

static void
parse_statmd(nd_pb *r, const nd_pb_field *vf, nd_xp_statmd *md)
{
	nd_pb s;
	nd_pb_field f;

	nd_pb_sub(&s, r, vf);
	while (nd_pb_next(&s, &f)) {
		switch (f.num) {
		case XSTATMD_ID:
			nd_pb_want(&s, &f, ND_PB_VARINT, "XStatMetadata.id");
			break;
		case XSTATMD_NAME:
			nd_pb_want(&s, &f, ND_PB_LEN, "XStatMetadata.name");
			md->name.p = (const char *)f.data;
			md->name.n = (size_t)f.v;
			break;
		default:
			break;
		}
	}
}

/* A map<int64, Message> entry: {1 key, 2 value}; the value's slice is
 * returned in *vf (length 0 when absent: an empty message). */
static int64_t
parse_map_entry(nd_pb *r, const nd_pb_field *ef, nd_pb_field *vf,
    const char *what)
{
	nd_pb s;
	nd_pb_field f;
	int64_t key = 0;

	memset(vf, 0, sizeof *vf);
	vf->data = ef->data;
	vf->at = ef->at;
	nd_pb_sub(&s, r, ef);
	while (nd_pb_next(&s, &f)) {
		if (f.num == MAPENTRY_KEY) {
			nd_pb_want(&s, &f, ND_PB_VARINT, what);
			key = nd_pb_i64(&f);
		} else if (f.num == MAPENTRY_VALUE) {
			nd_pb_want(&s, &f, ND_PB_LEN, what);
			*vf = f;
		}
	}
	return key;
}

/* Check the stats of the metadata and of the plane now, so that a bad
 * reference is reported before any event is. */
static void
check_stats(const nd_xp_plane *pl)
{
	nd_xp_statit si;
	nd_xp_stat st;

	for (uint32_t k = 0; k < pl->nevmd; k++) {
		if (!pl->evmd[k].has_stats)
			continue;
		nd_xp_evmd_stats(&si, pl, &pl->evmd[k]);
		while (nd_xp_stat_next(&si, &st))
			;
	}
	nd_xp_plane_stats(&si, pl);
	while (nd_xp_stat_next(&si, &st))
		;
}

nd_xp_plane *
nd_xp_plane_load(const nd_xspace *xs, size_t i, int want_metadata)
{
	nd_xp_plane *pl = nd_xcalloc(1, sizeof *pl);
	size_t cap_lines = 0, cap_ev = 0, cap_st = 0;
	nd_pb r;
	nd_pb_field f, vf;

	pl->index = i;
	pl->name.p = "";
	pl->body = xs->planes[i];
	nd_pb_slice(&r, &xs->r, pl->body.p, pl->body.n);
	pl->r = r;
	if (want_metadata) {
		pl->ev_map = idmap_new();
		pl->st_map = idmap_new();
	}
	while (nd_pb_next(&r, &f)) {
		switch (f.num) {
		case XPLANE_ID:
			nd_pb_want(&r, &f, ND_PB_VARINT, "XPlane.id");
			pl->id = nd_pb_i64(&f);
			break;
		case XPLANE_NAME:
			nd_pb_want(&r, &f, ND_PB_LEN, "XPlane.name");
			pl->name.p = (const char *)f.data;
			pl->name.n = (size_t)f.v;
			break;
		case XPLANE_LINES:
			nd_pb_want(&r, &f, ND_PB_LEN, "XPlane.lines");
			nd_grow(&pl->lines, &cap_lines, pl->nlines + 1,
			    sizeof *pl->lines);
			parse_line_header(&r, &f, &pl->lines[pl->nlines++]);
			break;
		case XPLANE_EVMD: {
			int64_t key;
			uint32_t k;
			int isnew;

			nd_pb_want(&r, &f, ND_PB_LEN, "XPlane.event_metadata");
			if (!want_metadata)
				break;
			key = parse_map_entry(&r, &f, &vf,
			    "XPlane.event_metadata entry");
			if (pl->nevmd == UINT32_MAX - 1) {
				nd_pb_fail(&r, f.at, "too many metadata");
				break;
			}
			k = idmap_put(pl->ev_map, key, pl->nevmd, &isnew);
			if (isnew) {
				nd_grow(&pl->evmd, &cap_ev, pl->nevmd + 1,
				    sizeof *pl->evmd);
				k = pl->nevmd++;
			}
			/* A repeated key: the last entry wins (map semantics). */
			memset(&pl->evmd[k], 0, sizeof pl->evmd[k]);
			pl->evmd[k].id = key;
			pl->evmd[k].name.p = pl->evmd[k].display_name.p = "";
			parse_evmd(&r, &vf, &pl->evmd[k]);
			break;
		}
		case XPLANE_STATMD: {
			int64_t key;
			uint32_t k;
			int isnew;

			nd_pb_want(&r, &f, ND_PB_LEN, "XPlane.stat_metadata");
			if (!want_metadata)
				break;
			key = parse_map_entry(&r, &f, &vf,
			    "XPlane.stat_metadata entry");
			if (pl->nstatmd == UINT32_MAX - 1) {
				nd_pb_fail(&r, f.at, "too many metadata");
				break;
			}
			k = idmap_put(pl->st_map, key, pl->nstatmd, &isnew);
			if (isnew) {
				nd_grow(&pl->statmd, &cap_st, pl->nstatmd + 1,
				    sizeof *pl->statmd);
				k = pl->nstatmd++;
			}
			memset(&pl->statmd[k], 0, sizeof pl->statmd[k]);
			pl->statmd[k].id = key;
			pl->statmd[k].name.p = "";
			parse_statmd(&r, &vf, &pl->statmd[k]);
			break;
		}
		case XPLANE_STATS:
			nd_pb_want(&r, &f, ND_PB_LEN, "XPlane.stats");
			pl->has_stats = 1;
			break;
		default:
			break;
		}
	}
	if (!want_metadata)
		return pl;
	idmap_finish(pl->ev_map, pl->nevmd);
	idmap_finish(pl->st_map, pl->nstatmd);
	check_stats(pl);
	return pl;
}

void
nd_xp_plane_free(nd_xp_plane *pl)
{
	if (pl == NULL)
		return;
	free(pl->lines);
	free(pl->evmd);
	free(pl->statmd);
	idmap_free(pl->ev_map);
	idmap_free(pl->st_map);
	free(pl);
}

uint32_t
nd_xp_evmd_find(const nd_xp_plane *pl, int64_t id)
{
	return idmap_find(pl->ev_map, id);
}

uint32_t
nd_xp_statmd_find(const nd_xp_plane *pl, int64_t id)
{
	return idmap_find(pl->st_map, id);
}

/* ---------- events ---------- */

void
nd_xp_events(nd_xp_evit *it, const nd_xp_plane *pl, const nd_xp_line *ln)
{
	nd_pb_slice(&it->r, &pl->r, ln->first_event != NULL ? ln->first_event :
	    ln->body.p + ln->body.n, ln->first_event != NULL ?
	    (size_t)(ln->body.p + ln->body.n - ln->first_event) : 0);
	it->pl = pl;
}

void
nd_xp_events_at(nd_xp_evit *it, const nd_xp_plane *pl, const nd_xp_line *ln,
    const unsigned char *at)
{
	nd_pb_slice(&it->r, &pl->r, at, (size_t)(ln->body.p + ln->body.n - at));
	it->pl = pl;
}

static void
missing_plane_name(const nd_xp_plane *pl, char *buf, size_t n)
{
	size_t k = pl->name.n < n - 1 ? pl->name.n : n - 1;

	memcpy(buf, pl->name.p, k);
	buf[k] = '\0';
	for (size_t j = 0; j < k; j++)
		if ((unsigned char)buf[j] < 0x20)
			buf[j] = '?';
}

static void
event_field(nd_pb *s, nd_pb_field *f, nd_xp_event *ev, int64_t *mdid)
{
	switch (f->num) {
	case XEVENT_MD:
		nd_pb_want(s, f, ND_PB_VARINT, "XEvent.metadata_id");
		*mdid = nd_pb_i64(f);
		break;
	case XEVENT_OFFSET:
		nd_pb_want(s, f, ND_PB_VARINT, "XEvent.offset_ps");
		ev->offset_ps = nd_pb_i64(f);
		ev->has_time = 1;
		break;
	case XEVENT_DUR:
		nd_pb_want(s, f, ND_PB_VARINT, "XEvent.duration_ps");
		ev->duration_ps = nd_pb_i64(f);
		break;
	case XEVENT_STATS:
		nd_pb_want(s, f, ND_PB_LEN, "XEvent.stats");
		if (ev->first_stat == NULL)
			ev->first_stat = f->at;
		break;
	case XEVENT_NOCC:
		nd_pb_want(s, f, ND_PB_VARINT, "XEvent.num_occurrences");
		ev->num_occurrences = nd_pb_i64(f);
		ev->has_time = 0;
		break;
	default:
		break;
	}
}

int
nd_xp_event_next(nd_xp_evit *it, nd_xp_event *ev)
{
	nd_pb_field lf;

	for (;;) {
		nd_pb s;
		nd_pb_field f;
		int64_t mdid = 0;
		const unsigned char *data;
		uint64_t n;

		if (it->r.p >= it->r.end || nd_pb_failed(&it->r))
			return 0;
		if (*it->r.p == (XLINE_EVENTS << 3 | ND_PB_LEN)) {
			ev->at = it->r.p++;
			data = fast_len(&it->r, &n, XLINE_EVENTS);
		} else {
			if (!nd_pb_next(&it->r, &lf))
				return 0;
			if (lf.num != XLINE_EVENTS)
				continue;
			nd_pb_want(&it->r, &lf, ND_PB_LEN, "XLine.events");
			ev->at = lf.at;
			data = lf.data;
			n = lf.v;
		}
		ev->body.p = data;
		ev->body.n = (size_t)n;
		ev->has_time = 1;
		ev->offset_ps = ev->duration_ps = ev->num_occurrences = 0;
		ev->first_stat = NULL;
		nd_pb_slice(&s, &it->r, data, (size_t)n);
		while (s.p < s.end) {
			switch (*s.p) {
			case XEVENT_MD << 3:
				s.p++;
				mdid = (int64_t)fast_varint(&s);
				continue;
			case XEVENT_OFFSET << 3:
				s.p++;
				ev->offset_ps = (int64_t)fast_varint(&s);
				ev->has_time = 1;
				continue;
			case XEVENT_DUR << 3:
				s.p++;
				ev->duration_ps = (int64_t)fast_varint(&s);
				continue;
			case XEVENT_STATS << 3 | ND_PB_LEN: {
				const unsigned char *at = s.p++;

				fast_len(&s, &n, XEVENT_STATS);
				if (ev->first_stat == NULL)
					ev->first_stat = at;
				continue;
			}
			default:
				break;
			}
			if (!nd_pb_next(&s, &f))
				break;
			event_field(&s, &f, ev, &mdid);
		}
		if (ND_UNLIKELY(nd_pb_failed(&it->r)))
			return 0;	/* an error inside the event */
		ev->md = idmap_find(it->pl->ev_map, mdid);
		if (ND_UNLIKELY(ev->md == UINT32_MAX)) {
			char pn[128];

			missing_plane_name(it->pl, pn, sizeof pn);
			nd_pb_fail(&it->r, ev->at, "event metadata id %lld is "
			    "not defined in plane '%s'", (long long)mdid, pn);
			return 0;
		}
		return 1;
	}
}

/* ---------- stats ---------- */

static void
stats_init(nd_xp_statit *it, const nd_xp_plane *pl, const unsigned char *p,
    const unsigned char *end, uint32_t field)
{
	nd_pb_slice(&it->r, &pl->r, p, (size_t)(end - p));
	it->pl = pl;
	it->field = field;
}

void
nd_xp_event_stats(nd_xp_statit *it, const nd_xp_plane *pl,
    const nd_xp_event *ev)
{
	const unsigned char *end = ev->body.p + ev->body.n;

	stats_init(it, pl, ev->first_stat != NULL ? ev->first_stat : end, end,
	    XEVENT_STATS);
}

void
nd_xp_evmd_stats(nd_xp_statit *it, const nd_xp_plane *pl,
    const nd_xp_evmd *md)
{
	const unsigned char *end = md->body.p + md->body.n;

	stats_init(it, pl, md->has_stats ? md->body.p : end, end, XEVMD_STATS);
}

void
nd_xp_plane_stats(nd_xp_statit *it, const nd_xp_plane *pl)
{
	const unsigned char *end = pl->body.p + pl->body.n;

	stats_init(it, pl, pl->has_stats ? pl->body.p : end, end,
	    XPLANE_STATS);
}

static const char *
stats_owner(uint32_t field)
{
	return field == XEVENT_STATS ? "XEvent.stats" :
	    field == XEVMD_STATS ? "XEventMetadata.stats" : "XPlane.stats";
}

static void
stat_field(nd_pb *s, nd_pb_field *f, nd_xp_stat *st, int64_t *mdid,
    int *has_ref, uint64_t *ref)
{
	switch (f->num) {
	case XSTAT_MD:
		nd_pb_want(s, f, ND_PB_VARINT, "XStat.metadata_id");
		*mdid = nd_pb_i64(f);
		break;
	case XSTAT_DOUBLE:
		nd_pb_want(s, f, ND_PB_I64, "XStat.double_value");
		st->kind = ND_XP_DOUBLE;
		st->v.d = nd_pb_double(f);
		*has_ref = 0;
		break;
	case XSTAT_UINT:
		nd_pb_want(s, f, ND_PB_VARINT, "XStat.uint64_value");
		st->kind = ND_XP_UINT;
		st->v.u = f->v;
		*has_ref = 0;
		break;
	case XSTAT_INT:
		nd_pb_want(s, f, ND_PB_VARINT, "XStat.int64_value");
		st->kind = ND_XP_INT;
		st->v.i = nd_pb_i64(f);
		*has_ref = 0;
		break;
	case XSTAT_STR:
	case XSTAT_BYTES:
		nd_pb_want(s, f, ND_PB_LEN, f->num == XSTAT_STR ?
		    "XStat.str_value" : "XStat.bytes_value");
		st->kind = f->num == XSTAT_STR ? ND_XP_STR : ND_XP_BYTES;
		st->s.p = (const char *)f->data;
		st->s.n = (size_t)f->v;
		*has_ref = 0;
		break;
	case XSTAT_REF:
		nd_pb_want(s, f, ND_PB_VARINT, "XStat.ref_value");
		st->kind = ND_XP_REF;
		*ref = f->v;
		*has_ref = 1;
		break;
	default:
		break;
	}
}

int
nd_xp_stat_next(nd_xp_statit *it, nd_xp_stat *st)
{
	nd_pb_field sf;
	const unsigned char stag = (unsigned char)(it->field << 3 | ND_PB_LEN);

	for (;;) {
		nd_pb s;
		nd_pb_field f;
		int64_t mdid = 0;
		int has_ref = 0;
		uint64_t ref = 0, n;
		const unsigned char *data;

		if (it->r.p >= it->r.end || nd_pb_failed(&it->r))
			return 0;
		if (*it->r.p == stag) {
			st->at = it->r.p++;
			data = fast_len(&it->r, &n, it->field);
		} else {
			if (!nd_pb_next(&it->r, &sf))
				return 0;
			if (sf.num != it->field)
				continue;
			nd_pb_want(&it->r, &sf, ND_PB_LEN, stats_owner(it->field));
			st->at = sf.at;
			data = sf.data;
			n = sf.v;
		}
		st->kind = ND_XP_NONE;
		nd_pb_slice(&s, &it->r, data, (size_t)n);
		while (s.p < s.end) {
			switch (*s.p) {
			case XSTAT_MD << 3:
				s.p++;
				mdid = (int64_t)fast_varint(&s);
				continue;
			case XSTAT_UINT << 3:
				s.p++;
				st->kind = ND_XP_UINT;
				st->v.u = fast_varint(&s);
				has_ref = 0;
				continue;
			case XSTAT_INT << 3:
				s.p++;
				st->kind = ND_XP_INT;
				st->v.i = (int64_t)fast_varint(&s);
				has_ref = 0;
				continue;
			case XSTAT_REF << 3:
				s.p++;
				st->kind = ND_XP_REF;
				ref = fast_varint(&s);
				has_ref = 1;
				continue;
			case XSTAT_STR << 3 | ND_PB_LEN:
				s.p++;
				st->kind = ND_XP_STR;
				st->s.p = (const char *)fast_len(&s, &n, XSTAT_STR);
				st->s.n = (size_t)n;
				has_ref = 0;
				continue;
			default:
				break;
			}
			if (!nd_pb_next(&s, &f))
				break;
			stat_field(&s, &f, st, &mdid, &has_ref, &ref);
		}
		if (ND_UNLIKELY(nd_pb_failed(&it->r)))
			return 0;	/* an error inside the stat */
		st->md = idmap_find(it->pl->st_map, mdid);
		if (ND_UNLIKELY(st->md == UINT32_MAX)) {
			char pn[128];

			missing_plane_name(it->pl, pn, sizeof pn);
			nd_pb_fail(&it->r, st->at, "stat metadata id %lld is not "
			    "defined in plane '%s'", (long long)mdid, pn);
			return 0;
		}
		if (has_ref) {
			st->v.ref = idmap_find(it->pl->st_map, (int64_t)ref);
			if (ND_UNLIKELY(st->v.ref == UINT32_MAX)) {
				char pn[128];

				missing_plane_name(it->pl, pn, sizeof pn);
				nd_pb_fail(&it->r, st->at, "stat ref_value %llu "
				    "is not a stat metadata id of plane '%s'",
				    (unsigned long long)ref, pn);
				return 0;
			}
		}
		return 1;
	}
}

/* ---------- naming conventions ---------- */

static int
has_prefix(nd_xp_str s, const char *pfx, size_t n)
{
	return s.n >= n && memcmp(s.p, pfx, n) == 0;
}

int
nd_xp_is_device_plane(nd_xp_str plane)
{
	return has_prefix(plane, "/device:", 8);
}

int
nd_xp_device_of(nd_xp_str plane, nd_xp_str *device)
{
	if (has_prefix(plane, "/device:CUSTOM:", 15)) {
		device->p = plane.p + 15;
		device->n = plane.n - 15;
	} else if (has_prefix(plane, "/device:", 8)) {
		device->p = plane.p + 8;
		device->n = plane.n - 8;
	} else if (has_prefix(plane, "/host:", 6)) {
		device->p = plane.p + 6;
		device->n = plane.n - 6;
	} else
		return 0;
	return device->n > 0;
}
