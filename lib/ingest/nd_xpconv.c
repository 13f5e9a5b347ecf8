/*
 * nd_xpconv: the XPlane (TensorFlow, JAX, XLA: *.xplane.pb) -> ndtrace
 * stream engine (xplane2ndjson(1) is its program): per file a `meta`, the
 * spans and instants of every selected line, and an `end`.
 *
 * A file is read whole into memory (gunzipped when needed) and walked with
 * nd_xplane in three passes: line headers (origin, ids), a validating pass
 * (every field, every metadata reference, the order of each line) and the
 * writing pass; so a damaged file is refused before anything of it is
 * written.  Nothing is allocated per event: the JSON pieces of each event
 * metadata, stat metadata and line are built once per plane and copied into
 * the output; the writing pass cuts the lines into jobs that renderer
 * threads turn into text, written out in order.  The rules of every key are
 * in xplane2ndjson(1).
 */
#include "nd_xpconv.h"
#include "nd_classify.h"
#include "nd_end.h"
#include "nd_event.h"
#include "nd_hash.h"
#include "nd_in.h"
#include "nd_json.h"
#include "nd_out.h"
#include "nd_rx.h"
#include "nd_scope.h"
#include "nd_sha256.h"
#include "nd_util.h"
#include "nd_xplane.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <regex.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#define SAFE_INT ND_JSON_MAX_SAFE_INT		/* 2^53 */
#define RELATIVE_BEFORE 946684800000000000LL	/* 2000-01-01 in ns */

/* ---------- categories (from the line name) ---------- */

enum cat {
	C_XLA_OP, C_XLA_ASYNC, C_XLA_MODULE, C_STEP, C_FRAMEWORK,
	C_NAME_SCOPE, C_SOURCE, C_TRACEME, C_KERNEL, C_MEMCPY, C_MEMSET,
	C_HOST, C_PYTHON, C_DEVICE, C_N
};

static const char *const cat_names[C_N] = {
	"xla_op", "xla_async_op", "xla_module", "step", "framework_op",
	"name_scope", "source", "xla_traceme", "kernel", "gpu_memcpy",
	"gpu_memset", "host", "python_function", "device"
};

static int
str_is(nd_xp_str s, const char *c)
{
	size_t n = strlen(c);

	return s.n == n && memcmp(s.p, c, n) == 0;
}

static int
str_starts(nd_xp_str s, const char *c)
{
	size_t n = strlen(c);

	return s.n >= n && memcmp(s.p, c, n) == 0;
}

/* A line's category from its name (Stream #N: kernel); -1 none. */
static int
kind_of_name(nd_xp_str n)
{
	static const struct {
		const char *name;
		int kind;
	} names[] = {
		{ "XLA Ops", C_XLA_OP }, { "Async XLA Ops", C_XLA_ASYNC },
		{ "XLA Modules", C_XLA_MODULE }, { "Steps", C_STEP },
		{ "Framework Ops", C_FRAMEWORK }, { "TensorFlow Ops", C_FRAMEWORK },
		{ "Framework Name Scope", C_NAME_SCOPE },
		{ "TensorFlow Name Scope", C_NAME_SCOPE },
		{ "Source code", C_SOURCE }, { "XLA TraceMe", C_TRACEME },
	};

	for (size_t i = 0; i < sizeof names / sizeof names[0]; i++)
		if (str_is(n, names[i].name))
			return names[i].kind;
	if (str_starts(n, "Stream #"))
		return C_KERNEL;
	return -1;
}

static int
line_kind(const nd_xp_plane *pl, const nd_xp_line *ln)
{
	int k = kind_of_name(ln->name);

	if (k < 0)
		k = kind_of_name(ln->display_name);
	if (k >= 0)
		return k;
	return str_starts(pl->name, "/host:") ? C_HOST : C_DEVICE;
}

/* ---------- per-source state ---------- */

#define CHUNK 4096	/* events per rendering job */

struct linfo {
	int64_t tid;
	int selected, sorted;
	uint64_t nev;			/* XEvents in the line */
	const unsigned char **chunk;	/* the first event of every CHUNK */
	size_t nchunk;
};

struct pinfo {
	nd_xp_plane *pl;	/* loaded with metadata when selected */
	int64_t pid;
	int selected;
	size_t nlines;
	struct linfo *lines;
};

struct counts {
	uint64_t events, spans, instants, nocc, negdur, range;
	uint64_t planes, lines, fplanes, flines;
	uint64_t clipped;	/* strings cut to MAX_STR */
	uint64_t noargs;	/* records written without their args */
	uint64_t nodev;		/* device models left out of the meta */
};

struct src {
	const char *path;
	const nd_xpconv_opts *o;
	nd_xspace *xs;
	int64_t origin, origin_ns;
	int origin_relative, has_start;
	struct pinfo *pi;
	struct counts n;
	int filtering;
	nd_buf devs;		/* the meta's "devices" members (see note_device) */
	nd_intern *devkeys;	/* the device keys in devs */
};

/* ---------- per-plane caches for the writing pass ----------
 *
 * Everything an event's record is made of that does not change from event
 * to event is built once per plane, before any record of it is written:
 * the JSON of each stat key, each event metadata's name, args and scope,
 * the scope of each stat metadata's name (for tf_op and name refs).  The
 * renderers (threads) then only read it; the one thing built on demand,
 * the cat/class/family of a (metadata, line), is looked up under a lock
 * and cached per renderer.
 */

enum role { R_NONE, R_TFOP, R_NAME, R_GROUP, R_STEPNUM, R_MEMCPY };

struct smc {			/* per stat metadata */
	uint32_t cid;		/* canonical id: same name, same cid */
	uint8_t role;
	uint32_t key_off, key_len;	/* "\"name\":" in the arena */
	uint32_t scope_off, scope_len;	/* ",\"scope\":..." of the name as a path */
};

struct frag {			/* one "key":value of metadata args */
	uint32_t cid, off, len;
};

/* A path for the scope: a stat metadata's name (ref) or bytes. */
struct path {
	int kind;		/* 0 none, 1 ref (sm index), 2 string */
	uint32_t sm;
	const char *p;
	size_t n;
};

struct emc {			/* per event metadata */
	uint8_t memcpy, memset, python;
	int has_step;
	int64_t step;
	int step_prio;		/* 2 step_num, 1 group_id */
	uint32_t name_off, name_len;	/* ",\"name\":\"...\"" */
	uint32_t args_off, args_len;	/* the metadata's args, joined */
	uint32_t frag0, nfrag;
	struct path tfop, namestat;	/* from the metadata's stats */
	uint32_t scope_off, scope_len;	/* scope from the metadata alone */
	int scope_from_tfop;		/* that scope came from a usable tf_op */
	uint32_t own_off, own_len;	/* scope from its own name */
};

struct estat {
	nd_xp_stat st;
	uint32_t cid;
	int dup;
};

struct cls {			/* ",\"cat\":..,\"class\":..,\"family\":.." */
	char *p;
	uint32_t n;
};

struct plane_ctx {
	nd_xp_plane *pl;
	const nd_xpconv_opts *o;
	struct smc *smc;
	struct emc *emc;
	struct frag *frags;
	size_t nfrags, cap_frags;
	uint32_t ncid, longname_cid;
	uint32_t *mark;		/* building only */
	uint32_t stamp;
	nd_buf arena;		/* read-only once built */
	char *process;		/* NUL-terminated plane name */
	nd_buf scope_tmp;
	uint64_t clipped;	/* strings cut while building */
	struct clsstate *cs;	/* apart: the renderers write it */
};

/* The classification of (line, metadata, cat), shared by the renderers,
 * under mu. */
struct clsstate {
	pthread_mutex_t mu;
	nd_map64 *map;
	struct cls *v;
	size_t n, cap;
	nd_buf tmp;
};

/* One line, as the renderers see it (read-only). */
struct line_ctx {
	const nd_xp_line *ln;
	size_t idx;		/* in the plane */
	uint64_t key;		/* unique in the file */
	int kind;
	int64_t base;		/* timestamp_ns - origin */
	int base_ok;
	char *thread;
	nd_buf ident;		/* ,"pid":..,"tid":..,"process":..,... */
	struct sortkey *keys;	/* out of order: its timed events, sorted */
	size_t nkeys;
};

struct sortkey {
	int64_t ts, dur;
	uint64_t seq;
	const unsigned char *at;
};

/* One renderer's state: a thread's, or the main thread's. */
struct rctx {
	struct plane_ctx *pc;
	nd_buf *out;
	struct estat *est;
	size_t cap_est;
	uint32_t *mark;		/* per cid */
	uint32_t stamp;
	nd_buf scratch, scope_tmp;
	struct ccent {		/* per event metadata: last class looked up */
		uint64_t line;
		int cat;
		const char *p;
		uint32_t n;
	} *cc;
	struct counts n;
};

/* ---------- small writers ---------- */

/* Bounds on what one record can be: a stream line must stay well under
 * the 64 MiB that every reader takes (nd_lines).  A string of the file is
 * written cut to MAX_STR bytes (at a character boundary), which keeps the
 * fixed keys of a record under 40 MiB even when every byte needs a 6-byte
 * escape; a record still longer than MAX_RECORD with its args (many large
 * stats) is written without them.  Both are counted in the end record. */
#define MAX_STR ((size_t)1 << 20)
#define MAX_RECORD ((size_t)32 << 20)

static size_t
clip_len(const char *p, size_t n, uint64_t *clipped)
{
	if (ND_LIKELY(n <= MAX_STR))
		return n;
	(*clipped)++;
	n = MAX_STR;
	while (n > 0 && ((unsigned char)p[n] & 0xc0) == 0x80)
		n--;		/* not inside a UTF-8 sequence */
	return n;
}

static void
put_jstr(nd_buf *b, const char *p, size_t n, uint64_t *clipped)
{
	nd_json_put_str(b, p, clip_len(p, n, clipped));
}

static inline void
put_raw(nd_buf *b, const char *s, size_t n)
{
	memcpy(b->p + b->len, s, n);
	b->len += n;
}

#define PUT_LIT(b, lit) put_raw((b), (lit), sizeof(lit) - 1)

static const char digits2[201] =
    "00010203040506070809101112131415161718192021222324252627282930313233"
    "34353637383940414243444546474849505152535455565758596061626364656667"
    "6869707172737475767778798081828384858687888990919293949596979899";

/* Decimal digits two at a time (the integer formatting was a third of the
 * time spent writing a record). */
static inline void
put_i64(nd_buf *b, int64_t v)
{
	char t[24];
	int i = 24;
	uint64_t u = v < 0 ? (uint64_t)0 - (uint64_t)v : (uint64_t)v;

	while (u >= 100) {
		unsigned r = (unsigned)(u % 100);

		u /= 100;
		i -= 2;
		memcpy(t + i, digits2 + 2 * r, 2);
	}
	if (u >= 10) {
		i -= 2;
		memcpy(t + i, digits2 + 2 * u, 2);
	} else
		t[--i] = (char)('0' + u);
	if (v < 0)
		t[--i] = '-';
	put_raw(b, t + i, (size_t)(24 - i));
}

static void
put_base64(nd_buf *b, const unsigned char *p, size_t n)
{
	static const char tab[] =
	    "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
	size_t i;

	nd_buf_reserve(b, (n + 2) / 3 * 4 + 2);
	b->p[b->len++] = '"';
	for (i = 0; i + 2 < n; i += 3) {
		uint32_t v = (uint32_t)p[i] << 16 | (uint32_t)p[i + 1] << 8 | p[i + 2];

		b->p[b->len++] = tab[v >> 18];
		b->p[b->len++] = tab[v >> 12 & 63];
		b->p[b->len++] = tab[v >> 6 & 63];
		b->p[b->len++] = tab[v & 63];
	}
	if (i < n) {
		uint32_t v = (uint32_t)p[i] << 16 |
		    (i + 1 < n ? (uint32_t)p[i + 1] << 8 : 0);

		b->p[b->len++] = tab[v >> 18];
		b->p[b->len++] = tab[v >> 12 & 63];
		b->p[b->len++] = i + 1 < n ? tab[v >> 6 & 63] : '=';
		b->p[b->len++] = '=';
	}
	b->p[b->len++] = '"';
	b->p[b->len] = '\0';
}

/* A stat value as JSON: integers beyond +-2^53 as decimal strings, bytes
 * as base64, refs as the referenced stat metadata's name. */
static void
put_stat_value(nd_buf *b, const struct plane_ctx *pc, const nd_xp_stat *st,
    uint64_t *clipped)
{
	switch (st->kind) {
	case ND_XP_DOUBLE:
		nd_json_put_double(b, st->v.d);
		break;
	case ND_XP_UINT:
	case ND_XP_INT: {
		/* beyond 2^53 (not exact as a double): a string */
		int big = st->kind == ND_XP_UINT ?
		    st->v.u > (uint64_t)SAFE_INT :
		    st->v.i > SAFE_INT || st->v.i < -SAFE_INT;

		if (big)
			nd_buf_addc(b, '"');
		if (st->kind == ND_XP_UINT)
			nd_json_put_u64(b, st->v.u);
		else
			nd_json_put_i64(b, st->v.i);
		if (big)
			nd_buf_addc(b, '"');
		break;
	}
	case ND_XP_STR:
		put_jstr(b, st->s.p, st->s.n, clipped);
		break;
	case ND_XP_BYTES:
		put_base64(b, (const unsigned char *)st->s.p, st->s.n > MAX_STR ?
		    (++*clipped, MAX_STR) : st->s.n);
		break;
	case ND_XP_REF: {
		const struct smc *r = &pc->smc[st->v.ref];

		/* The key "name": without its colon is the JSON string.
		 * b may be the arena itself: make room before taking the
		 * source pointer (found by fuzz_xplane2ndjson). */
		nd_buf_reserve(b, r->key_len);
		nd_buf_add(b, pc->arena.p + r->key_off, r->key_len - 1);
		break;
	}
	default:
		nd_buf_add(b, "null", 4);
	}
}

/* ---------- plane caches ---------- */

static int
role_of(nd_xp_str n)
{
	if (str_is(n, "tf_op"))
		return R_TFOP;
	if (str_is(n, "name"))
		return R_NAME;
	if (str_is(n, "group_id"))
		return R_GROUP;
	if (str_is(n, "step_num"))
		return R_STEPNUM;
	if (str_is(n, "memcpy_details"))
		return R_MEMCPY;
	return R_NONE;
}

static uint32_t
next_stamp(uint32_t *stamp, uint32_t *mark, uint32_t n)
{
	if (++*stamp == 0) {
		memset(mark, 0, n * sizeof *mark);
		*stamp = 1;
	}
	return *stamp;
}

/* tf_op is a usable path unless empty or only "XlaModule:..." (GPU kernels
 * of XLA carry that; their JAX path is in the `name` stat). */
static int
tfop_usable(const char *p, size_t n)
{
	return n > 0 && !(n >= 10 && memcmp(p, "XlaModule:", 10) == 0);
}

static void
path_bytes(const struct plane_ctx *pc, const struct path *pa, const char **p,
    size_t *n)
{
	if (pa->kind == 1) {
		*p = pc->pl->statmd[pa->sm].name.p;
		*n = pc->pl->statmd[pa->sm].name.n;
	} else {
		*p = pa->p;
		*n = pa->n;
	}
}

/* Append ",\"scope\":\"...\"" for a path to out; 0 if it has no scope. */
static size_t
scope_frag(nd_buf *tmp, const char *p, size_t n, nd_buf *out,
    uint64_t *clipped)
{
	size_t before = out->len;

	nd_buf_reset(tmp);
	if (nd_scope_normalize(p, clip_len(p, n, clipped), 1, tmp) == 0)
		return 0;
	nd_buf_add(out, ",\"scope\":", 9);
	put_jstr(out, tmp->p, tmp->len, clipped);
	return out->len - before;
}

static void
note_stat(struct path *tfop, struct path *namestat, int *has_step,
    int64_t *step, int *prio, int *memcpy_, const struct smc *s,
    const nd_xp_stat *st)
{
	struct path *pa = NULL;

	switch (s->role) {
	case R_TFOP:
		pa = tfop;
		break;
	case R_NAME:
		pa = namestat;
		break;
	case R_GROUP:
	case R_STEPNUM: {
		int pr = s->role == R_STEPNUM ? 2 : 1;
		int64_t v;

		if (st->kind == ND_XP_INT)
			v = st->v.i;
		else if (st->kind == ND_XP_UINT && st->v.u <= (uint64_t)SAFE_INT)
			v = (int64_t)st->v.u;
		else
			break;
		if (v < -SAFE_INT || v > SAFE_INT || pr < *prio)
			break;
		*has_step = 1;
		*step = v;
		*prio = pr;
		break;
	}
	case R_MEMCPY:
		*memcpy_ = 1;
		break;
	}
	if (pa != NULL) {
		if (st->kind == ND_XP_REF) {
			pa->kind = 1;
			pa->sm = st->v.ref;
		} else if (st->kind == ND_XP_STR) {
			pa->kind = 2;
			pa->p = st->s.p;
			pa->n = st->s.n;
		}
	}
}

static void
add_frag(struct plane_ctx *pc, uint32_t cid, size_t off)
{
	nd_grow(&pc->frags, &pc->cap_frags, pc->nfrags + 1, sizeof *pc->frags);
	pc->frags[pc->nfrags].cid = cid;
	pc->frags[pc->nfrags].off = (uint32_t)off;
	pc->frags[pc->nfrags].len = (uint32_t)(pc->arena.len - off);
	pc->nfrags++;
}

static void
md_prepare(struct plane_ctx *pc, uint32_t k, int own_scope)
{
	struct emc *m = &pc->emc[k];
	const nd_xp_evmd *md = &pc->pl->evmd[k];
	nd_xp_str disp = md->display_name.n > 0 ? md->display_name : md->name;
	nd_buf *a = &pc->arena;
	nd_xp_statit si;
	nd_xp_stat st;
	uint32_t stamp;
	int memcpy_ = 0;
	size_t f0 = pc->nfrags, off;

	m->name_off = (uint32_t)a->len;
	nd_buf_add(a, ",\"name\":", 8);
	put_jstr(a, disp.p, disp.n, &pc->clipped);
	m->name_len = (uint32_t)(a->len - m->name_off);
	m->memcpy = str_starts(md->name, "Memcpy") ||
	    str_starts(md->name, "memcpy");
	m->memset = str_starts(md->name, "Memset") ||
	    str_starts(md->name, "memset");
	m->python = md->name.n > 0 && md->name.p[0] == '$';

	/* Fragments: long_name first, then each stat; a later one with the
	 * same key replaces an earlier one. */
	if (md->display_name.n > 0 && !(md->display_name.n == md->name.n &&
	    memcmp(md->display_name.p, md->name.p, md->name.n) == 0)) {
		off = a->len;
		nd_buf_add(a, "\"long_name\":", 12);
		put_jstr(a, md->name.p, md->name.n, &pc->clipped);
		add_frag(pc, pc->longname_cid, off);
	}
	nd_xp_evmd_stats(&si, pc->pl, md);
	while (nd_xp_stat_next(&si, &st)) {
		const struct smc *s = &pc->smc[st.md];

		note_stat(&m->tfop, &m->namestat, &m->has_step, &m->step,
		    &m->step_prio, &memcpy_, s, &st);
		off = a->len;
		nd_buf_reserve(a, s->key_len);	/* the source is in a too */
		nd_buf_add(a, a->p + s->key_off, s->key_len);
		put_stat_value(a, pc, &st, &pc->clipped);
		add_frag(pc, s->cid, off);
	}
	if (memcpy_)
		m->memcpy = 1;
	/* Drop the earlier of two fragments with the same key. */
	stamp = next_stamp(&pc->stamp, pc->mark, pc->ncid);
	for (size_t i = pc->nfrags; i-- > f0;) {
		if (pc->mark[pc->frags[i].cid] == stamp)
			pc->frags[i].len = 0;
		pc->mark[pc->frags[i].cid] = stamp;
	}
	{
		size_t w = f0;

		for (size_t i = f0; i < pc->nfrags; i++)
			if (pc->frags[i].len > 0)
				pc->frags[w++] = pc->frags[i];
		pc->nfrags = w;
	}
	m->frag0 = (uint32_t)f0;
	m->nfrag = (uint32_t)(pc->nfrags - f0);
	m->args_off = (uint32_t)a->len;
	for (uint32_t i = 0; i < m->nfrag; i++) {
		const struct frag *f = &pc->frags[m->frag0 + i];

		if (i > 0)
			nd_buf_addc(a, ',');
		nd_buf_reserve(a, f->len);	/* the source is in a too */
		nd_buf_add(a, a->p + f->off, f->len);
	}
	m->args_len = (uint32_t)(a->len - m->args_off);

	/* Scope from the metadata alone: its tf_op, else its name stat; and
	 * from its own name, for framework op lines. */
	m->scope_off = (uint32_t)a->len;
	m->scope_len = 0;
	{
		const char *p;
		size_t n;

		if (m->tfop.kind != 0) {
			path_bytes(pc, &m->tfop, &p, &n);
			if (tfop_usable(p, n)) {
				m->scope_len = (uint32_t)scope_frag(&pc->scope_tmp,
				    p, n, a, &pc->clipped);
				m->scope_from_tfop = 1;
			}
		}
		if (!m->scope_from_tfop && m->namestat.kind != 0) {
			path_bytes(pc, &m->namestat, &p, &n);
			m->scope_len = (uint32_t)scope_frag(&pc->scope_tmp, p, n,
			    a, &pc->clipped);
		}
	}
	m->own_off = (uint32_t)a->len;
	if (own_scope)
		m->own_len = (uint32_t)scope_frag(&pc->scope_tmp, md->name.p,
		    md->name.n, a, &pc->clipped);
}

/* own_scope: the plane has framework op lines, whose ops take their scope
 * from their own name when they have no tf_op or name stat. */
static int
plane_ctx_init(struct plane_ctx *pc, nd_xp_plane *pl, int own_scope,
    nd_err *err)
{
	nd_intern *names = nd_intern_new();
	uint32_t ln;

	memset(pc, 0, sizeof *pc);
	pc->pl = pl;
	pc->smc = nd_xcalloc(pl->nstatmd + 1, sizeof *pc->smc);
	pc->emc = nd_xcalloc(pl->nevmd + 1, sizeof *pc->emc);
	for (uint32_t k = 0; k < pl->nstatmd; k++) {
		struct smc *s = &pc->smc[k];
		nd_xp_str nm = pl->statmd[k].name;

		s->cid = nd_intern_id(names, nm.p, nm.n);
		s->role = (uint8_t)role_of(nm);
		s->key_off = (uint32_t)pc->arena.len;
		put_jstr(&pc->arena, nm.p, nm.n, &pc->clipped);
		nd_buf_addc(&pc->arena, ':');
		s->key_len = (uint32_t)(pc->arena.len - s->key_off);
	}
	ln = nd_intern_find(names, "long_name", 9);
	pc->ncid = nd_intern_count(names) + 1;
	pc->longname_cid = ln != UINT32_MAX ? ln : pc->ncid - 1;
	pc->mark = nd_xcalloc(pc->ncid, sizeof *pc->mark);
	pc->process = nd_xstrndup(pl->name.p, pl->name.n);
	nd_intern_free(names);
	/* The scope of every stat metadata's name, for tf_op/name refs (not
	 * counted when cut: the name's key was, and most are never used). */
	for (uint32_t k = 0; k < pl->nstatmd; k++) {
		nd_xp_str nm = pl->statmd[k].name;
		uint64_t uncounted = 0;

		pc->smc[k].scope_off = (uint32_t)pc->arena.len;
		pc->smc[k].scope_len = (uint32_t)scope_frag(&pc->scope_tmp,
		    nm.p, nm.n, &pc->arena, &uncounted);
	}
	pc->cs = nd_xcalloc(1, sizeof *pc->cs);
	pthread_mutex_init(&pc->cs->mu, NULL);
	pc->cs->map = nd_map64_new();
	for (uint32_t k = 0; k < pl->nevmd; k++) {
		md_prepare(pc, k, own_scope);
		/* The caches' offsets are 32-bit. */
		if (pc->arena.len > UINT32_MAX)
			return nd_err_set(err, pl->r.name, ND_ERR_NONE,
			    ND_ERR_NONE, "%s: plane '%s': its metadata make "
			    "more than 4 GiB of JSON", pl->r.name, pc->process);
	}
	return 0;
}

static void
plane_ctx_free(struct plane_ctx *pc)
{
	struct clsstate *cs = pc->cs;
	void *mem[] = {
		cs->v, cs, pc->smc, pc->emc, pc->frags, pc->mark, pc->process
	};

	for (size_t i = 0; i < cs->n; i++)
		free(cs->v[i].p);
	nd_map64_free(cs->map);
	pthread_mutex_destroy(&cs->mu);
	nd_buf_free(&cs->tmp);
	for (size_t i = 0; i < sizeof mem / sizeof mem[0]; i++)
		free(mem[i]);
	nd_buf_free(&pc->arena);
	nd_buf_free(&pc->scope_tmp);
}

/* The cat/class/family fragment of metadata k, as cat, on a line: from the
 * renderer's cache, else (under the lock) from the plane's table, else
 * classified now. */
static void
md_class(struct rctx *r, const struct line_ctx *lc, uint32_t k, int cat,
    const char **frag, uint32_t *len)
{
	struct plane_ctx *pc = r->pc;
	struct clsstate *cs = pc->cs;
	struct ccent *c = &r->cc[k];
	uint64_t key = (uint64_t)lc->idx << 36 | (uint64_t)k << 4 |
	    (uint64_t)cat;
	uint64_t *v;
	int isnew;

	if (c->p != NULL && c->line == lc->key && c->cat == cat) {
		*frag = c->p;
		*len = c->n;
		return;
	}
	pthread_mutex_lock(&cs->mu);
	v = nd_map64_put(cs->map, key, &isnew);
	if (isnew) {
		const nd_xp_evmd *md = &pc->pl->evmd[k];
		nd_xp_str disp = md->display_name.n > 0 ? md->display_name :
		    md->name;
		nd_buf *t = &cs->tmp;
		nd_class_in in;
		nd_class_out out;

		in.name.p = disp.p != NULL ? disp.p : "";
		in.name.n = disp.n;
		in.long_name.p = md->name.p != NULL ? md->name.p : "";
		in.long_name.n = md->name.n;
		in.cat = nd_str_c(cat_names[cat]);
		in.process = nd_str_c(pc->process);
		in.thread = nd_str_c(lc->thread);
		out.cls = out.family = NULL;
		nd_classify(r->pc->o->rules, &in, &out);
		nd_buf_reset(t);
		nd_buf_add(t, ",\"cat\":\"", 8);
		nd_buf_adds(t, cat_names[cat]);
		nd_buf_addc(t, '"');
		if (out.cls != NULL) {
			nd_buf_add(t, ",\"class\":", 9);
			nd_json_put_str(t, out.cls, strlen(out.cls));
		}
		if (out.family != NULL) {
			nd_buf_add(t, ",\"family\":", 10);
			nd_json_put_str(t, out.family, strlen(out.family));
		}
		nd_grow(&cs->v, &cs->cap, cs->n + 1, sizeof *cs->v);
		cs->v[cs->n].p = nd_xstrndup(t->p, t->len);
		cs->v[cs->n].n = (uint32_t)t->len;
		*v = cs->n++;
	}
	c->p = cs->v[*v].p;
	c->n = cs->v[*v].n;
	pthread_mutex_unlock(&cs->mu);
	c->line = lc->key;
	c->cat = cat;
	*frag = c->p;
	*len = c->n;
}

/* ---------- time ---------- */

static inline int64_t
floordiv1000(int64_t x)
{
	int64_t q = x / 1000;

	return (x % 1000 < 0) ? q - 1 : q;
}

/* ts and dur in ns of a timed event on a line at `base` ns from the origin
 * (round down: floor of the start and of the end in ps).  0 ok, -1 when a
 * value leaves +-2^53 (or int64). */
static inline int
ev_time(int64_t base, const nd_xp_event *ev, int64_t *ts, int64_t *dur)
{
	int64_t end_ps, s, e;

	if (__builtin_add_overflow(ev->offset_ps, ev->duration_ps, &end_ps))
		return -1;
	s = floordiv1000(ev->offset_ps);
	e = floordiv1000(end_ps);
	if (__builtin_add_overflow(base, s, ts) ||
	    __builtin_add_overflow(base, e, &e))
		return -1;
	if (*ts > SAFE_INT || *ts < -SAFE_INT || e > SAFE_INT || e < -SAFE_INT)
		return -1;
	*dur = e - *ts;		/* up to 2^54: a reader takes 2^53 at most */
	return *dur > SAFE_INT ? -1 : 0;
}

/* What becomes of an event: 0 timed (ts, dur set), else a skip. */
enum { EV_TIMED, EV_NOCC, EV_NEGDUR, EV_RANGE };

static inline int
ev_status(const struct line_ctx *lc, const nd_xp_event *ev, int64_t *ts,
    int64_t *dur)
{
	if (!ev->has_time)
		return EV_NOCC;
	if (ev->duration_ps < 0)
		return EV_NEGDUR;
	if (!lc->base_ok || ev_time(lc->base, ev, ts, dur) != 0)
		return EV_RANGE;
	return EV_TIMED;
}

static void
count_status(struct counts *c, int s)
{
	c->events++;
	if (s == EV_NOCC)
		c->nocc++;
	else if (s == EV_NEGDUR)
		c->negdur++;
	else if (s == EV_RANGE)
		c->range++;
}

/* ---------- one record ---------- */

/* Does a key occur twice among the metadata's args and the event's stats? */
static int
args_clash(struct rctx *r, const struct emc *m, size_t nst)
{
	const struct plane_ctx *pc = r->pc;
	const struct estat *est = r->est;

	if (nst > 16) {
		uint32_t stamp = next_stamp(&r->stamp, r->mark, pc->ncid);

		for (uint32_t i = 0; i < m->nfrag; i++)
			r->mark[pc->frags[m->frag0 + i].cid] = stamp;
		for (size_t i = 0; i < nst; i++) {
			if (r->mark[est[i].cid] == stamp)
				return 1;
			r->mark[est[i].cid] = stamp;
		}
		return 0;
	}
	for (size_t i = 0; i < nst; i++) {
		uint32_t c = est[i].cid;

		for (uint32_t k = 0; k < m->nfrag; k++)
			if (pc->frags[m->frag0 + k].cid == c)
				return 1;
		for (size_t j = 0; j < i; j++)
			if (est[j].cid == c)
				return 1;
	}
	return 0;
}

/* ,"key":value of an event stat (no comma when first). */
static inline void
put_stat(nd_buf *b, const struct plane_ctx *pc, const nd_xp_stat *st,
    int first, uint64_t *clipped)
{
	const struct smc *s = &pc->smc[st->md];

	nd_buf_reserve(b, s->key_len + 32);
	if (!first)
		b->p[b->len++] = ',';
	put_raw(b, pc->arena.p + s->key_off, s->key_len);
	if (st->kind == ND_XP_INT && st->v.i <= SAFE_INT && st->v.i >= -SAFE_INT)
		put_i64(b, st->v.i);
	else if (st->kind == ND_XP_UINT && st->v.u <= (uint64_t)SAFE_INT)
		put_i64(b, (int64_t)st->v.u);
	else
		put_stat_value(b, pc, st, clipped);
}

/* The args of an event whose stats repeat a key of its metadata's args:
 * the event's stats win over the metadata's; of two with one key, the
 * later wins. */
static void
put_merged_args(struct rctx *r, const struct emc *m, size_t nst)
{
	const struct plane_ctx *pc = r->pc;
	nd_buf *b = r->out;
	uint32_t stamp = next_stamp(&r->stamp, r->mark,
	    pc->ncid);
	int first = 1;

	for (size_t i = nst; i-- > 0;) {
		r->est[i].dup = r->mark[r->est[i].cid] == stamp;
		r->mark[r->est[i].cid] = stamp;
	}
	for (uint32_t i = 0; i < m->nfrag; i++) {
		const struct frag *f = &pc->frags[m->frag0 + i];

		if (r->mark[f->cid] == stamp)
			continue;
		if (!first)
			nd_buf_addc(b, ',');
		first = 0;
		nd_buf_add(b, pc->arena.p + f->off, f->len);
	}
	for (size_t i = 0; i < nst; i++) {
		if (r->est[i].dup)
			continue;
		put_stat(b, pc, &r->est[i].st, first,
		    &r->n.clipped);
		first = 0;
	}
}

/* The scope of an event: the first usable of the event's tf_op, the
 * metadata's tf_op, the event's name stat, the metadata's name stat, and
 * on framework op lines the op's own name; *snp its length. */
static const char *
event_scope(struct rctx *r, const struct line_ctx *lc, const struct emc *m,
    struct path *tfop_, struct path *namestat_, size_t *snp)
{
	const struct plane_ctx *pc = r->pc;
	const char *sp;
	size_t sn;
	struct path tfop = *tfop_, namestat = *namestat_;

	sp = pc->arena.p + m->scope_off;
	sn = m->scope_len;
	if (tfop.kind != 0 || (namestat.kind != 0 && !m->scope_from_tfop)) {
		const char *p;
		size_t n;
		struct path *pa = NULL;

		if (tfop.kind != 0) {
			path_bytes(pc, &tfop, &p, &n);
			if (tfop_usable(p, n))
				pa = &tfop;
		}
		if (pa == NULL && !m->scope_from_tfop && namestat.kind != 0)
			pa = &namestat;
		if (pa != NULL && pa->kind == 1) {
			sp = pc->arena.p + pc->smc[pa->sm].scope_off;
			sn = pc->smc[pa->sm].scope_len;
		} else if (pa != NULL) {
			nd_buf_reset(&r->scratch);
			sn = scope_frag(&r->scope_tmp, pa->p, pa->n, &r->scratch,
			    &r->n.clipped);
			sp = r->scratch.p;
		}
	}
	if (sn == 0 && lc->kind == C_FRAMEWORK) {
		sp = pc->arena.p + m->own_off;
		sn = m->own_len;
	}
	*snp = sn;
	return sp;
}

static void
render_event(struct rctx *r, const struct line_ctx *lc, const nd_xp_event *ev,
    int64_t ts, int64_t dur, int with_args)
{
	const struct plane_ctx *pc = r->pc;
	nd_buf *b = r->out;
	const struct emc *m = &pc->emc[ev->md];
	size_t nst = 0;
	int has_step = m->has_step, prio = m->step_prio, memcpy_ = 0, cat;
	int64_t step = m->step;
	struct path tfop = { 0, 0, NULL, 0 }, namestat = { 0, 0, NULL, 0 };
	const char *sp, *cp;
	size_t sn;
	uint32_t cn;

	/* The event's own stats. */
	if (ev->first_stat != NULL) {
		nd_xp_statit si;

		nd_xp_event_stats(&si, pc->pl, ev);
		for (;;) {
			if (nst == r->cap_est)
				nd_grow(&r->est, &r->cap_est, nst + 1,
				    sizeof *r->est);
			if (!nd_xp_stat_next(&si, &r->est[nst].st))
				break;
			r->est[nst].cid = pc->smc[r->est[nst].st.md].cid;
			note_stat(&tfop, &namestat, &has_step, &step, &prio,
			    &memcpy_, &pc->smc[r->est[nst].st.md], &r->est[nst].st);
			nst++;
		}
	}
	/* cat, class, family */
	cat = lc->kind;
	if (cat == C_KERNEL) {
		if (m->memcpy || memcpy_)
			cat = C_MEMCPY;
		else if (m->memset)
			cat = C_MEMSET;
	} else if (cat == C_HOST && m->python)
		cat = C_PYTHON;
	md_class(r, lc, ev->md, cat, &cp, &cn);
	sp = event_scope(r, lc, m, &tfop, &namestat, &sn);

	/* The fixed part, in the key order of nd_event_write. */
	nd_buf_reserve(b, 96 + m->name_len + lc->ident.len + cn + sn +
	    m->args_len);
	if (ev->duration_ps == 0) {
		PUT_LIT(b, "{\"type\":\"instant\",\"ts_ns\":");
		put_i64(b, ts);
		r->n.instants++;
	} else {
		PUT_LIT(b, "{\"type\":\"span\",\"ts_ns\":");
		put_i64(b, ts);
		PUT_LIT(b, ",\"dur_ns\":");
		put_i64(b, dur);
		r->n.spans++;
	}
	put_raw(b, pc->arena.p + m->name_off, m->name_len);
	put_raw(b, lc->ident.p, lc->ident.len);
	if (has_step) {
		PUT_LIT(b, ",\"step\":");
		put_i64(b, step);
	}
	put_raw(b, cp, cn);
	if (sn > 0)
		put_raw(b, sp, sn);
	if (with_args && (m->nfrag > 0 || nst > 0)) {
		PUT_LIT(b, ",\"args\":{");
		if (nst == 0)
			put_raw(b, pc->arena.p + m->args_off, m->args_len);
		else if (!args_clash(r, m, nst)) {
			/* The usual case: no key twice, so the metadata's args
			 * go as one piece. */
			put_raw(b, pc->arena.p + m->args_off, m->args_len);
			for (size_t i = 0; i < nst; i++)
				put_stat(b, pc, &r->est[i].st,
				    i == 0 && m->nfrag == 0, &r->n.clipped);
		} else
			put_merged_args(r, m, nst);
		nd_buf_add(b, "}}\n", 3);
	} else
		nd_buf_add(b, "}\n", 2);
}

static void
write_event(struct rctx *r, const struct line_ctx *lc, const nd_xp_event *ev,
    int64_t ts, int64_t dur)
{
	size_t at = r->out->len;
	struct counts n = r->n;

	render_event(r, lc, ev, ts, dur, !r->pc->o->no_args);
	if (r->out->len - at > MAX_RECORD && !r->pc->o->no_args) {
		r->out->len = at;
		r->n = n;
		render_event(r, lc, ev, ts, dur, 0);
		r->n.noargs++;
	}
}

/* ---------- the writing pass: jobs and renderers ----------
 *
 * A plane's selected lines are cut into jobs of CHUNK events (of the file's
 * order, or of the sorted order for a line that is not in order).  Renderer
 * threads take jobs in order and write each into its own buffer; the main
 * thread writes the buffers out in job order.  At most WINDOW jobs are
 * between taken and written, so the buffers are reused and the memory is
 * bounded (WINDOW buffers of about CHUNK records).  With one CPU, or one
 * job, the main thread renders and writes by itself.
 */

#define WINDOW 4
#define MAX_RENDERERS ND_XPCONV_MAX_THREADS

struct job {
	const struct line_ctx *lc;
	const unsigned char *at;	/* in order: the first event */
	size_t count;			/* events, or sort keys */
	const struct sortkey *keys;	/* out of order: the keys */
	struct counts n;
	int done;
};

struct jobs {
	struct plane_ctx *pc;
	struct job *v;
	size_t n, next, written;
	nd_buf buf[WINDOW];
	pthread_mutex_t mu;
	pthread_cond_t cv;
};

static void
rctx_init(struct rctx *r, struct plane_ctx *pc)
{
	memset(r, 0, sizeof *r);
	r->pc = pc;
	r->mark = nd_xcalloc(pc->ncid, sizeof *r->mark);
	r->cc = nd_xcalloc(pc->pl->nevmd + 1, sizeof *r->cc);
}

static void
rctx_free(struct rctx *r)
{
	free(r->est);
	free(r->mark);
	free(r->cc);
	nd_buf_free(&r->scratch);
	nd_buf_free(&r->scope_tmp);
}

static void
run_job(struct rctx *r, struct job *j)
{
	const struct line_ctx *lc = j->lc;
	const nd_xp_plane *pl = r->pc->pl;
	nd_xp_evit it;
	nd_xp_event ev;
	int64_t ts = 0, dur = 0;

	memset(&r->n, 0, sizeof r->n);
	if (j->keys == NULL) {
		nd_xp_events_at(&it, pl, lc->ln, j->at);
		for (size_t i = 0; i < j->count; i++) {
			int st;

			if (!nd_xp_event_next(&it, &ev))
				break;
			st = ev_status(lc, &ev, &ts, &dur);
			count_status(&r->n, st);
			if (st == EV_TIMED)
				write_event(r, lc, &ev, ts, dur);
		}
	} else {
		for (size_t i = 0; i < j->count; i++) {
			nd_xp_events_at(&it, pl, lc->ln, j->keys[i].at);
			nd_xp_event_next(&it, &ev);
			ev_time(lc->base, &ev, &ts, &dur);
			write_event(r, lc, &ev, ts, dur);
		}
	}
	j->n = r->n;
}

static void *
renderer(void *arg)
{
	struct jobs *q = arg;
	struct rctx r;
	nd_buf own = ND_BUF_INIT, tmp;

	rctx_init(&r, q->pc);
	for (;;) {
		size_t k;

		pthread_mutex_lock(&q->mu);
		while (q->next < q->n && q->next >= q->written + WINDOW)
			pthread_cond_wait(&q->cv, &q->mu);
		if (q->next >= q->n) {
			pthread_mutex_unlock(&q->mu);
			break;
		}
		k = q->next++;
		pthread_mutex_unlock(&q->mu);
		/* Render into this thread's own buffer (two threads writing
		 * into neighbouring nd_bufs shared their cache lines: 70% more
		 * CPU), then swap it with the slot of job k, free since job
		 * k - WINDOW is written. */
		nd_buf_reset(&own);
		r.out = &own;
		run_job(&r, &q->v[k]);
		pthread_mutex_lock(&q->mu);
		tmp = q->buf[k % WINDOW];
		q->buf[k % WINDOW] = own;
		own = tmp;
		q->v[k].done = 1;
		pthread_cond_broadcast(&q->cv);
		pthread_mutex_unlock(&q->mu);
	}
	nd_buf_free(&own);
	rctx_free(&r);
	return NULL;
}

static void
add_counts(struct counts *to, const struct counts *c)
{
	to->events += c->events;
	to->spans += c->spans;
	to->instants += c->instants;
	to->nocc += c->nocc;
	to->negdur += c->negdur;
	to->range += c->range;
	to->clipped += c->clipped;
	to->noargs += c->noargs;
}

/* How many renderers: o->threads, else one per CPU (up to
 * ND_XPCONV_MAX_THREADS), but one only when the CPUs are busy anyway (load average
 * >= CPUs - 0.5, as make -l judges): on a loaded 2-CPU machine two
 * renderers measured 10-30% slower than one, the threads then only adding
 * their coordination.  The output is the same whatever the number. */
static int
renderers(const nd_xpconv_opts *o)
{
	static int n;

	if (o->one_thread)
		return 1;
	if (o->threads > 0)
		return o->threads < MAX_RENDERERS ? o->threads : MAX_RENDERERS;
	if (n == 0) {
		long c = sysconf(_SC_NPROCESSORS_ONLN);
		double load;

		n = c < 1 ? 1 : c > MAX_RENDERERS ? MAX_RENDERERS : (int)c;
		if (n > 1 && getloadavg(&load, 1) == 1 && load >= n - 0.5)
			n = 1;
	}
	return n;
}

static void
run_jobs(nd_out *o, struct jobs *q, struct counts *total)
{
	pthread_t th[MAX_RENDERERS];
	int nth = 0, want = renderers(q->pc->o);

	if (want > 1 && q->n > 1) {
		pthread_mutex_init(&q->mu, NULL);
		pthread_cond_init(&q->cv, NULL);
		for (int i = 0; i < want && (size_t)i < q->n; i++) {
			if (pthread_create(&th[nth], NULL, renderer, q) != 0)
				break;
			nth++;
		}
		if (nth == 0) {
			pthread_cond_destroy(&q->cv);
			pthread_mutex_destroy(&q->mu);
		}
	}
	if (nth == 0) {
		/* One renderer: this thread, job after job. */
		struct rctx r;

		rctx_init(&r, q->pc);
		r.out = &q->buf[0];
		for (size_t k = 0; k < q->n; k++) {
			nd_buf_reset(r.out);
			run_job(&r, &q->v[k]);
			nd_out_write(o, r.out->p, r.out->len);
			add_counts(total, &q->v[k].n);
		}
		rctx_free(&r);
		return;
	}
	for (size_t k = 0; k < q->n; k++) {
		pthread_mutex_lock(&q->mu);
		while (!q->v[k].done)
			pthread_cond_wait(&q->cv, &q->mu);
		pthread_mutex_unlock(&q->mu);
		nd_out_write(o, q->buf[k % WINDOW].p, q->buf[k % WINDOW].len);
		add_counts(total, &q->v[k].n);
		pthread_mutex_lock(&q->mu);
		q->written = k + 1;
		pthread_cond_broadcast(&q->cv);
		pthread_mutex_unlock(&q->mu);
	}
	for (int i = 0; i < nth; i++)
		pthread_join(th[i], NULL);
	pthread_cond_destroy(&q->cv);
	pthread_mutex_destroy(&q->mu);
}

static int
cmp_sortkey(const void *a, const void *b)
{
	const struct sortkey *x = a, *y = b;
	int c = nd_span_order(x->ts, x->dur, y->ts, y->dur);

	if (c != 0)
		return c;
	return x->seq < y->seq ? -1 : x->seq > y->seq;
}

static void
line_ctx_init(struct line_ctx *lc, const struct src *s,
    const nd_xp_plane *pl, size_t j, uint64_t *clipped)
{
	const nd_xp_line *ln = &pl->lines[j];
	nd_xp_str th = ln->display_name.n > 0 ? ln->display_name : ln->name;
	nd_xp_str dev;

	memset(lc, 0, sizeof *lc);
	lc->ln = ln;
	lc->idx = j;
	lc->key = (uint64_t)(pl->index + 1) << 32 | (uint64_t)j;
	lc->kind = line_kind(pl, ln);
	lc->base_ok = !__builtin_sub_overflow(ln->timestamp_ns, s->origin,
	    &lc->base);
	lc->thread = nd_xstrndup(th.p, th.n);
	nd_buf_add(&lc->ident, ",\"pid\":", 7);
	nd_json_put_i64(&lc->ident, s->pi[pl->index].pid);
	nd_buf_add(&lc->ident, ",\"tid\":", 7);
	nd_json_put_i64(&lc->ident, s->pi[pl->index].lines[j].tid);
	nd_buf_add(&lc->ident, ",\"process\":", 11);
	put_jstr(&lc->ident, pl->name.p, pl->name.n, clipped);
	nd_buf_add(&lc->ident, ",\"thread\":", 10);
	put_jstr(&lc->ident, th.p, th.n, clipped);
	if (nd_xp_device_of(pl->name, &dev)) {
		nd_buf_add(&lc->ident, ",\"device\":", 10);
		put_jstr(&lc->ident, dev.p, dev.n, clipped);
	}
}

/* Out of order: the line's timed events, sorted (only this line's events
 * are held in memory, 32 bytes each); the skipped ones are counted here. */
static void
sort_line(struct line_ctx *lc, const nd_xp_plane *pl, struct counts *n)
{
	nd_xp_evit it;
	nd_xp_event ev;
	int64_t ts = 0, dur = 0;
	size_t cap = 0;

	nd_xp_events(&it, pl, lc->ln);
	while (nd_xp_event_next(&it, &ev)) {
		int st = ev_status(lc, &ev, &ts, &dur);

		if (st != EV_TIMED) {
			count_status(n, st);
			continue;
		}
		n->events++;
		nd_grow(&lc->keys, &cap, lc->nkeys + 1, sizeof *lc->keys);
		lc->keys[lc->nkeys].ts = ts;
		/* instants after the spans that start with them */
		lc->keys[lc->nkeys].dur = ev.duration_ps == 0 ? -1 : dur;
		lc->keys[lc->nkeys].seq = lc->nkeys;
		lc->keys[lc->nkeys].at = ev.at;
		lc->nkeys++;
	}
	if (lc->nkeys > 1)
		qsort(lc->keys, lc->nkeys, sizeof *lc->keys, cmp_sortkey);
}

/* Write the selected lines of plane i. */
static int
write_plane(nd_out *o, struct src *s, size_t i, nd_err *err)
{
	struct pinfo *p = &s->pi[i];
	nd_xp_plane *pl = p->pl;
	struct plane_ctx pc;
	struct line_ctx *lcs = nd_xcalloc(pl->nlines + 1, sizeof *lcs);
	struct jobs q;
	size_t cap = 0;
	int own = 0;

	for (size_t j = 0; j < pl->nlines; j++)
		if (p->lines[j].selected &&
		    line_kind(pl, &pl->lines[j]) == C_FRAMEWORK)
			own = 1;
	if (plane_ctx_init(&pc, pl, own, err) != 0) {
		plane_ctx_free(&pc);
		free(lcs);
		return -1;
	}
	pc.o = s->o;
	memset(&q, 0, sizeof q);
	q.pc = &pc;
	for (size_t j = 0; j < pl->nlines; j++) {
		struct linfo *li = &p->lines[j];
		struct line_ctx *lc = &lcs[j];

		if (!li->selected)
			continue;
		line_ctx_init(lc, s, pl, j, &s->n.clipped);
		if (!li->sorted)
			sort_line(lc, pl, &s->n);
		for (size_t c = 0; ; c++) {
			struct job *jb;
			size_t first = c * CHUNK, total = li->sorted ? li->nev :
			    lc->nkeys;

			if (first >= total)
				break;
			nd_grow(&q.v, &cap, q.n + 1, sizeof *q.v);
			jb = &q.v[q.n++];
			memset(jb, 0, sizeof *jb);
			jb->lc = lc;
			jb->count = total - first < CHUNK ? total - first : CHUNK;
			if (li->sorted)
				jb->at = li->chunk[c];
			else
				jb->keys = lc->keys + first;
		}
	}
	run_jobs(o, &q, &s->n);
	for (size_t j = 0; j < pl->nlines; j++) {
		free(lcs[j].thread);
		free(lcs[j].keys);
		nd_buf_free(&lcs[j].ident);
	}
	free(lcs);
	free(q.v);
	for (int k = 0; k < WINDOW; k++)
		nd_buf_free(&q.buf[k]);
	s->n.clipped += pc.clipped;
	plane_ctx_free(&pc);
	return 0;
}

/* ---------- the validating pass ---------- */

/* Walk every event and stat of a line (the walker checks the wire format
 * and every metadata reference), note whether the line is in order and
 * where its chunks of CHUNK events start. */
static int
check_line(const struct src *s, const nd_xp_plane *pl, size_t j,
    struct linfo *li)
{
	struct line_ctx lc;
	nd_xp_evit it;
	nd_xp_event ev;
	nd_xp_statit si;
	nd_xp_stat st;
	int64_t ts, dur, lts = INT64_MIN, ldur = 0;
	size_t cap = 0;

	memset(&lc, 0, sizeof lc);
	lc.base_ok = !__builtin_sub_overflow(pl->lines[j].timestamp_ns,
	    s->origin, &lc.base);
	li->sorted = 1;
	nd_xp_events(&it, pl, &pl->lines[j]);
	while (nd_xp_event_next(&it, &ev)) {
		if (li->nev % CHUNK == 0) {
			nd_grow(&li->chunk, &cap, li->nchunk + 1,
			    sizeof *li->chunk);
			li->chunk[li->nchunk++] = ev.at;
		}
		li->nev++;
		if (ev.first_stat != NULL) {
			nd_xp_event_stats(&si, pl, &ev);
			while (nd_xp_stat_next(&si, &st))
				;
		}
		if (ev_status(&lc, &ev, &ts, &dur) != EV_TIMED)
			continue;
		if (ev.duration_ps == 0)
			dur = -1;	/* instants after spans */
		if (ts < lts || (ts == lts && dur > ldur))
			li->sorted = 0;
		lts = ts;
		ldur = dur;
	}
	return nd_xspace_err(s->xs) != NULL ? -1 : 0;
}

/* ---------- input ---------- */

/* The bytes of one input.  A regular file of 32 MiB or more that is not
 * gzip is mapped (MAP_POPULATE: one call faults it all in) and hashed by a
 * second thread while it is converted.  Measured on the 1 GiB benchmark
 * file: 9.2 s CPU mapped, 10 s read into a huge-page buffer (the kernel
 * zeroes 1 GiB first), 13 s read into 4 KiB pages (a fault per page).
 * Anything else (stdin, gzip, smaller files, for which a thread costs more
 * than it saves) is read whole with nd_in. */
struct input {
	const unsigned char *p;
	size_t n;
	void *map;
	size_t maplen;
	nd_in *in;
	nd_buf buf;
	const char *name;
	pthread_t th;
	int threaded;
	nd_sha256 h;
	char sha[65];
	nd_xp_tally tally;
	int cut;		/* not read to the end: an invalid field */
	int one_thread;		/* hash on this thread */
};

/* The hashing thread stops early when the program exits on an error: an
 * atexit handler (registered after libcrypto's, so it runs first) asks it
 * to stop and waits for it. */
static struct input *hashing;
static atomic_int hash_stop;

static void *
hash_thread(void *arg)
{
	struct input *x = arg;
	size_t off = 0;

	while (off < x->n && !atomic_load(&hash_stop)) {
		size_t k = x->n - off < ((size_t)1 << 22) ? x->n - off :
		    (size_t)1 << 22;

		nd_sha256_update(&x->h, x->p + off, k);
		off += k;
	}
	nd_sha256_hex(&x->h, x->sha);
	nd_sha256_free(&x->h);
	return NULL;
}

static void
stop_hashing(void)
{
	if (hashing != NULL && hashing->threaded) {
		atomic_store(&hash_stop, 1);
		pthread_join(hashing->th, NULL);
		hashing->threaded = 0;
	}
}

static void
start_hashing(struct input *x)
{
	static int registered;

	/* libcrypto initialises (and registers its exit handler) here, in
	 * this thread, before ours. */
	nd_sha256_init(&x->h);
	if (!registered) {
		atexit(stop_hashing);
		registered = 1;
	}
	atomic_store(&hash_stop, 0);
	hashing = x;
	if (!x->one_thread &&
	    pthread_create(&x->th, NULL, hash_thread, x) == 0)
		x->threaded = 1;
	else {
		hashing = NULL;	/* nothing for stop_hashing to stop */
		hash_thread(x);
	}
}

#define BIG_INPUT ((off_t)32 << 20)
#ifdef ND_IN_BLOCK
#define READ_BLOCK ND_IN_BLOCK	/* the fuzz build: small reads */
#else
#define READ_BLOCK ((size_t)1 << 20)
#endif

/* The memory the tables built from each plane, line and metadata entry take
 * (nd_xspace, nd_xp_plane, pinfo, linfo, the writing pass's line_ctx and
 * caches), growing arrays' doubling included: with the file itself, they
 * must fit the input cap (an XSpace of a billion empty planes is a 2 GiB
 * file that would need 100 GiB). */
#define PLANE_COST 128
#define LINE_COST 640
#define MD_COST 384

/* held: the bytes read so far; growing: more may come, of a size not
 * known (a pipe, gzip data), so that a field longer than the cap is
 * refused now rather than when the cap is reached. */
static int
check_tally(const char *name, const nd_xp_tally *t, uint64_t held,
    int growing, nd_err *err)
{
	uint64_t tables = t->planes * PLANE_COST + t->lines * LINE_COST +
	    t->metadata * MD_COST;
	char why[160];

	if (growing && t->need > held) {
		snprintf(why, sizeof why, "the field at byte %zu claims %llu "
		    "bytes", t->pos, (unsigned long long)(t->need - t->pos));
		if (nd_in_check_held(name, t->need, why, err) != 0)
			return -1;
	}
	snprintf(why, sizeof why, "the file and the tables of its %llu "
	    "planes, %llu lines and %llu metadata",
	    (unsigned long long)t->planes, (unsigned long long)t->lines,
	    (unsigned long long)t->metadata);
	return nd_in_check_held(name, held + tables, tables > 0 ? why : NULL,
	    err);
}

static int input_read(struct input *, int, nd_err *);

static int
input_open(struct input *x, const char *path, int one_thread, nd_err *err)
{
	int fd, growing = 1;
	struct stat sb;
	unsigned char magic[2];

	memset(x, 0, sizeof *x);
	x->name = path;
	x->one_thread = one_thread;
	if (strcmp(path, "-") != 0 && (fd = open(path, O_RDONLY)) >= 0) {
		int reg = fstat(fd, &sb) == 0 && S_ISREG(sb.st_mode) &&
		    sb.st_size >= 0;

		if (reg && nd_in_check_held(path, (uint64_t)sb.st_size, NULL,
		    err) != 0) {
			close(fd);
			return -1;
		}
		if (reg)
			growing = 0;	/* its size is known */
		if (reg && sb.st_size >= BIG_INPUT &&
		    (uint64_t)sb.st_size < SIZE_MAX / 2 &&
		    pread(fd, magic, 2, 0) == 2 &&
		    !(magic[0] == 0x1f && magic[1] == 0x8b)) {
			x->maplen = (size_t)sb.st_size;
			x->map = mmap(NULL, x->maplen, PROT_READ,
			    MAP_PRIVATE | MAP_POPULATE, fd, 0);
			if (x->map == MAP_FAILED)
				x->map = NULL;
		}
		close(fd);
		if (x->map != NULL) {
			x->p = x->map;
			x->n = x->maplen;
			start_hashing(x);
			return 0;
		}
	}
	if (strcmp(path, "-") == 0 && fstat(STDIN_FILENO, &sb) == 0 &&
	    S_ISREG(sb.st_mode))
		growing = 0;
	x->in = nd_in_open_hashed(path);
	return input_read(x, growing, err);
}

/* Read x->in whole, the top level checked and its tables counted as it
 * arrives: an invalid field (/dev/zero: at byte 0) stops the reading once
 * the bytes its error message looks at are in, and a file too big for the
 * cap is refused before it is all held. */
static int
input_read(struct input *x, int growing, nd_err *err)
{
	x->name = nd_in_name(x->in);
	for (;;) {
		size_t r;

		nd_buf_reserve(&x->buf, READ_BLOCK);
		r = nd_in_read(x->in, x->buf.p + x->buf.len,
		    x->buf.cap - x->buf.len - 1);
		if (r == 0 && nd_in_err(x->in) != NULL) {
			nd_err_copy(err, nd_in_err(x->in));
			return -1;
		}
		if (r == 0)
			break;
		x->buf.len += r;
		x->buf.p[x->buf.len] = '\0';
		nd_xspace_tally(&x->tally, x->buf.p, x->buf.len);
		if (check_tally(x->name, &x->tally, x->buf.len, growing ||
		    nd_in_is_gzip(x->in), err) != 0)
			return -1;
		if (x->tally.bad && x->buf.len >= 65536 &&
		    x->buf.len - x->tally.pos >= 64) {
			x->cut = 1;
			break;
		}
	}
	if (!x->cut)
		nd_in_sha256(x->in, x->sha);
	x->p = (const unsigned char *)(x->buf.p != NULL ? x->buf.p : "");
	x->n = x->buf.len;
	return 0;
}

/* The SHA-256 of the stored bytes (waits for the hashing thread). */
static const char *
input_sha(struct input *x)
{
	if (x->threaded) {
		pthread_join(x->th, NULL);
		x->threaded = 0;
	}
	if (hashing == x)
		hashing = NULL;
	return x->sha;
}

static void
input_close(struct input *x)
{
	input_sha(x);
	if (x->map != NULL)
		munmap(x->map, x->maplen);
	if (x->in != NULL)
		nd_in_close(x->in);
	nd_buf_free(&x->buf);
}

/* ---------- per file ---------- */

static int
line_selected(const nd_xpconv_opts *o, const nd_xp_line *ln)
{
	if (o->lines == NULL)
		return 1;
	return nd_rx_exec(o->lines, ln->name.p, ln->name.n, 0, NULL) == 0 ||
	    (ln->display_name.n > 0 && nd_rx_exec(o->lines,
	    ln->display_name.p, ln->display_name.n, 0, NULL) == 0);
}

static int
plane_selected(const nd_xpconv_opts *o, nd_xp_str name)
{
	if (o->device_only && !nd_xp_is_device_plane(name))
		return 0;
	if (o->planes == NULL)
		return 1;
	return nd_rx_exec(o->planes, name.p, name.n, 0, NULL) == 0;
}

static int64_t
fold53(int64_t v)
{
	if (v > SAFE_INT || v < -SAFE_INT)
		return (int64_t)((uint64_t)v & ((uint64_t)SAFE_INT - 1));
	return v;
}

/* A fresh pid or tid, unused by any id in `ids` (all the ids as the file
 * gives them) and in `given` (those given so far): the next integer above the largest, while
 * that stays within 2^53 (what a stream's readers take), else the lowest
 * unused integer from 0 up.  Either way linear in all: *max only grows,
 * *low only grows. */
static int64_t
fresh_id(const nd_map64 *ids, const nd_map64 *given, int64_t *max,
    int64_t *low)
{
	if (*max < SAFE_INT)
		return ++*max;
	while (nd_map64_get(ids, (uint64_t)*low) != NULL ||
	    nd_map64_get(given, (uint64_t)*low) != NULL)
		++*low;
	return (*low)++;
}

/* ---------- device models (the meta's "devices") ---------- */

struct devcap {
	nd_xp_str model, vendor;	/* device_type_string, device_vendor */
	double tflops, gbps;		/* peak_*: 0 when not stated */
	int64_t cc_major, cc_minor;	/* compute_cap_*: -1 when not stated */
};

static double
stat_num(const nd_xp_stat *st)
{
	double v = st->kind == ND_XP_DOUBLE ? st->v.d :
	    st->kind == ND_XP_UINT ? (double)st->v.u :
	    st->kind == ND_XP_INT ? (double)st->v.i : 0;

	return v > 0 && v < 1e300 ? v : 0;	/* NaN, <= 0, inf: unknown */
}

static int64_t
stat_small(const nd_xp_stat *st)
{
	if (st->kind == ND_XP_UINT && st->v.u < 1000)
		return (int64_t)st->v.u;
	if (st->kind == ND_XP_INT && st->v.i >= 0 && st->v.i < 1000)
		return st->v.i;
	return -1;
}

static void
read_devcap(const nd_xp_plane *pl, struct devcap *c)
{
	nd_xp_statit si;
	nd_xp_stat st;

	memset(c, 0, sizeof *c);
	c->cc_major = c->cc_minor = -1;
	nd_xp_plane_stats(&si, pl);
	while (nd_xp_stat_next(&si, &st)) {
		nd_xp_str k = pl->statmd[st.md].name, v = st.s;

		if (st.kind == ND_XP_REF)
			v = pl->statmd[st.v.ref].name;
		else if (st.kind != ND_XP_STR)
			v.n = 0;
		if (str_is(k, "device_type_string"))
			c->model = v;
		else if (str_is(k, "device_vendor"))
			c->vendor = v;
		else if (str_is(k, "peak_teraflops_per_second"))
			c->tflops = stat_num(&st);
		else if (str_is(k, "peak_hbm_bw_gigabytes_per_second"))
			c->gbps = stat_num(&st);
		else if (str_is(k, "compute_cap_major"))
			c->cc_major = stat_small(&st);
		else if (str_is(k, "compute_cap_minor"))
			c->cc_minor = stat_small(&st);
	}
}

/* A selected device plane's model, as one member of the meta's "devices"
 * (nd_devnames reads it): the plane's device_type_string (TPU), else
 * what a GPU plane states, its vendor and compute capability ("AMD GPU
 * (compute capability 9.4)": no product name, so no peak is guessed from
 * it), and the peaks the plane states.  The first plane of a key wins. */
static void
note_device(struct src *s, const nd_xp_plane *pl)
{
	struct devcap c;
	nd_xp_str dev;
	nd_buf *b = &s->devs;
	int has_cc;

	if (!nd_xp_is_device_plane(pl->name) ||
	    !nd_xp_device_of(pl->name, &dev))
		return;
	read_devcap(pl, &c);
	has_cc = c.cc_major >= 0 && c.cc_minor >= 0;
	if (c.model.n == 0 && c.vendor.n == 0 && !has_cc && c.tflops == 0 &&
	    c.gbps == 0)
		return;
	if (s->devkeys == NULL)
		s->devkeys = nd_intern_new();
	if (nd_intern_find(s->devkeys, dev.p, dev.n) != UINT32_MAX)
		return;
	if (b->len > MAX_RECORD) {	/* the meta stays a line readers take */
		s->n.nodev++;
		return;
	}
	nd_intern_id(s->devkeys, dev.p, dev.n);
	nd_buf_adds(b, b->len == 0 ? "{" : ",");
	put_jstr(b, dev.p, dev.n, &s->n.clipped);
	nd_buf_adds(b, ":{");
	if (c.model.n > 0 || c.vendor.n > 0 || has_cc) {
		nd_buf tmp = ND_BUF_INIT;

		if (c.model.n > 0)
			nd_buf_add(&tmp, c.model.p, c.model.n);
		else {
			if (c.vendor.n > 0) {
				nd_buf_add(&tmp, c.vendor.p, c.vendor.n);
				nd_buf_addc(&tmp, ' ');
			}
			nd_buf_adds(&tmp, "GPU");
			if (has_cc)
				nd_buf_addf(&tmp, " (compute capability "
				    "%lld.%lld)", (long long)c.cc_major,
				    (long long)c.cc_minor);
		}
		nd_buf_adds(b, "\"name\":");
		put_jstr(b, tmp.p, tmp.len, &s->n.clipped);
		nd_buf_free(&tmp);
	}
	if (c.tflops > 0) {
		nd_buf_adds(b, b->p[b->len - 1] == '{' ? "" : ",");
		nd_buf_adds(b, "\"peak_teraflops_per_second\":");
		nd_json_put_double(b, c.tflops);
	}
	if (c.gbps > 0) {
		nd_buf_adds(b, b->p[b->len - 1] == '{' ? "" : ",");
		nd_buf_adds(b, "\"peak_hbm_bw_gigabytes_per_second\":");
		nd_json_put_double(b, c.gbps);
	}
	nd_buf_addc(b, '}');
}

/* Two lines of a plane with one tid would make one timeline: the later
 * gets a fresh tid (see fresh_id). */
static void
unique_tids(struct pinfo *p, int64_t *maxtid)
{
	nd_map64 *tids = nd_map64_new(), *seen = nd_map64_new();
	int64_t low = 0;
	int isnew;

	for (size_t j = 0; j < p->nlines; j++)
		nd_map64_put(tids, (uint64_t)p->lines[j].tid, &isnew);
	for (size_t j = 0; j < p->nlines; j++) {
		struct linfo *l = &p->lines[j];

		nd_map64_put(seen, (uint64_t)l->tid, &isnew);
		if (!isnew) {
			l->tid = fresh_id(tids, seen, maxtid, &low);
			nd_map64_put(seen, (uint64_t)l->tid, &isnew);
		}
	}
	nd_map64_free(seen);
	nd_map64_free(tids);
}

/* Planes with lines keep their id as pid when it is unique; later planes
 * with an id already taken get a fresh one. */
static void
unique_pids(struct src *s, int64_t maxpid)
{
	nd_map64 *pids = nd_map64_new(), *seen = nd_map64_new();
	int64_t low = 0;
	int isnew;

	for (size_t i = 0; i < s->xs->nplanes; i++)
		if (s->pi[i].nlines > 0)
			nd_map64_put(pids, (uint64_t)s->pi[i].pid, &isnew);
	for (size_t i = 0; i < s->xs->nplanes; i++) {
		struct pinfo *p = &s->pi[i];

		if (p->nlines == 0)
			continue;
		nd_map64_put(seen, (uint64_t)p->pid, &isnew);
		if (!isnew) {
			p->pid = fresh_id(pids, seen, &maxpid, &low);
			nd_map64_put(seen, (uint64_t)p->pid, &isnew);
		}
	}
	nd_map64_free(seen);
	nd_map64_free(pids);
}

/* The first pass: line headers of every plane; origin, pid and tid. */
static int
scan_headers(struct src *s)
{
	nd_xspace *xs = s->xs;
	int64_t maxpid = -1;
	int have_origin = 0;

	s->pi = nd_xcalloc(xs->nplanes + 1, sizeof *s->pi);
	for (size_t i = 0; i < xs->nplanes; i++) {
		struct pinfo *p = &s->pi[i];
		int64_t maxtid = -1, id;
		nd_xp_str name;
		nd_xp_plane *pl;

		nd_xp_plane_peek(xs, i, &id, &name);
		p->selected = plane_selected(s->o, name);
		pl = nd_xp_plane_load(xs, i, p->selected);
		if (nd_xspace_err(xs) != NULL) {
			nd_xp_plane_free(pl);
			return -1;
		}
		if (p->selected)
			note_device(s, pl);
		p->nlines = pl->nlines;
		/* Nothing is kept for a plane without lines beyond *p: a file
		 * may hold millions of them. */
		p->lines = pl->nlines > 0 ? nd_xcalloc(pl->nlines,
		    sizeof *p->lines) : NULL;
		p->pid = fold53(pl->id);
		for (size_t j = 0; j < pl->nlines; j++) {
			const nd_xp_line *ln = &pl->lines[j];
			struct linfo *l = &p->lines[j];

			if (ln->first_event != NULL && (!have_origin ||
			    ln->timestamp_ns < s->origin)) {
				s->origin = ln->timestamp_ns;
				have_origin = 1;
			}
			l->selected = p->selected && line_selected(s->o, ln);
			l->tid = fold53(ln->display_id != 0 ? ln->display_id :
			    ln->id);
			if (l->tid > maxtid)
				maxtid = l->tid;
		}
		if (pl->nlines > 1)
			unique_tids(p, &maxtid);
		if (p->pid > maxpid)
			maxpid = p->pid;
		/* The planes to check and write: selected, with a selected line
		 * that has events. */
		for (size_t j = 0; j < pl->nlines && p->selected && p->pl == NULL;
		    j++)
			if (p->lines[j].selected && pl->lines[j].first_event != NULL)
				p->pl = pl;
		if (p->pl == NULL)
			nd_xp_plane_free(pl);
	}
	unique_pids(s, maxpid);
	if (!have_origin)
		s->origin = 0;
	return 0;
}

/* origin_ns: newer profilers store line times relative to the profile
 * start, kept in the "Task Environment" plane's profile_start_time. */
static int
find_start(struct src *s, uint64_t *start, int *has)
{
	nd_xspace *xs = s->xs;

	*has = 0;
	for (size_t i = 0; i < xs->nplanes; i++) {
		int64_t id;
		nd_xp_str name;
		nd_xp_plane *pl;
		nd_xp_statit si;
		nd_xp_stat st;

		nd_xp_plane_peek(xs, i, &id, &name);
		if (!str_is(name, "Task Environment"))
			continue;
		pl = nd_xp_plane_load(xs, i, 1);
		nd_xp_plane_stats(&si, pl);
		while (nd_xp_stat_next(&si, &st))
			if (str_is(pl->statmd[st.md].name, "profile_start_time")) {
				if (st.kind == ND_XP_UINT) {
					*start = st.v.u;
					*has = 1;
				} else if (st.kind == ND_XP_INT && st.v.i >= 0) {
					*start = (uint64_t)st.v.i;
					*has = 1;
				}
			}
		nd_xp_plane_free(pl);
	}
	return nd_xspace_err(xs) != NULL ? -1 : 0;
}

static const char *
host_of(struct src *s, nd_buf *tmp)
{
	const nd_xspace *xs = s->xs;
	const char *base, *suf = ".xplane.pb";
	size_t n, sl = strlen(suf);

	for (size_t i = 0; i < xs->nhostnames; i++)
		if (xs->hostnames[i].n > 0) {
			nd_buf_add(tmp, xs->hostnames[i].p, clip_len(
			    xs->hostnames[i].p, xs->hostnames[i].n,
			    &s->n.clipped));
			return tmp->p;
		}
	if (strcmp(s->path, "-") == 0)
		return NULL;
	base = strrchr(s->path, '/');
	base = base != NULL ? base + 1 : s->path;
	n = strlen(base);
	if (n > 3 && strcmp(base + n - 3, ".gz") == 0)
		n -= 3;
	if (n <= sl || memcmp(base + n - sl, suf, sl) != 0)
		return NULL;
	nd_buf_add(tmp, base, n - sl);
	return tmp->p;
}

static int
refuse_json(const char *name, const unsigned char *p, size_t n, nd_err *err)
{
	size_t i = 0, j;

	if (n >= 3 && memcmp(p, "\xef\xbb\xbf", 3) == 0)
		i = 3;
	while (i < n && (p[i] == ' ' || p[i] == '\t' || p[i] == '\n' ||
	    p[i] == '\r'))
		i++;
	if (i >= n || (p[i] != '{' && p[i] != '['))
		return 0;
	j = i + 1;
	while (j < n && (p[j] == ' ' || p[j] == '\t' || p[j] == '\n' ||
	    p[j] == '\r'))
		j++;
	if (j >= n || p[j] == '"' || p[j] == '}' || p[j] == ']' ||
	    p[j] == '{' || p[j] == '[' || p[j] == '-' ||
	    (p[j] >= '0' && p[j] <= '9'))
		return nd_err_byte(err, name, i, "this is JSON text (a Chrome "
		    "or Perfetto trace?), not an XPlane protobuf: use "
		    "chrome2ndjson");
	return 0;
}

/* The file's errors and warnings go into the end record, which must stay
 * a line that readers take: each is cut to MAX_STR, and those beyond
 * MAX_RECORD bytes in all are only counted. */
static void
put_str_arr_item(nd_jw *w, size_t at, const char *prefix, nd_xp_str s,
    nd_buf *tmp, uint64_t *clipped, uint64_t *left_out)
{
	if (w->b->len - at > MAX_RECORD) {
		(*left_out)++;
		return;
	}
	nd_buf_reset(tmp);
	nd_buf_adds(tmp, prefix);
	nd_buf_add(tmp, s.p, clip_len(s.p, s.n, clipped));
	nd_jw_str(w, tmp->p, tmp->len);
}

/* "N WHAT (over 32 MiB with them)": what was left out of a record. */
static void
put_over_note(nd_jw *w, nd_buf *tmp, uint64_t n, const char *what)
{
	nd_buf_reset(tmp);
	nd_buf_addf(tmp, "%llu %s (over %zu MiB with them)",
	    (unsigned long long)n, what, MAX_RECORD >> 20);
	nd_jw_str(w, tmp->p, tmp->len);
}

static void
write_end(nd_out *o, const struct src *s, const char *sha)
{
	static const char *const skip_names[] = {
		"num_occurrences", "negative_duration", "time_out_of_range"
	};
	const uint64_t skipped[] = { s->n.nocc, s->n.negdur, s->n.range };
	nd_end_counts c = { s->n.events, s->n.spans, s->n.instants, 0, 0 };
	nd_buf *b = nd_out_buf(o);
	nd_buf tmp = ND_BUF_INIT;
	nd_jw w;
	uint64_t clipped = s->n.clipped, left_out = 0;
	size_t at = b->len;

	nd_end_open(&w, b, &c);
	nd_end_skipped(&w, skip_names, skipped, 3, 1);
	nd_jw_kuint(&w, "planes", s->n.planes);
	nd_jw_kuint(&w, "lines", s->n.lines);
	if (s->filtering) {
		nd_jw_key(&w, "filtered");
		nd_jw_obj(&w);
		nd_jw_kuint(&w, "planes", s->n.fplanes);
		nd_jw_kuint(&w, "lines", s->n.flines);
		nd_jw_obj_end(&w);
	}
	nd_end_tail(&w, sha, 0);
	for (size_t i = 0; i < s->xs->nerrors; i++)
		put_str_arr_item(&w, at, "error: ", s->xs->errors[i], &tmp,
		    &clipped, &left_out);
	for (size_t i = 0; i < s->xs->nwarnings; i++)
		put_str_arr_item(&w, at, "", s->xs->warnings[i], &tmp,
		    &clipped, &left_out);
	if (left_out > 0) {
		nd_buf_reset(&tmp);
		nd_buf_addf(&tmp, "%llu more errors and warnings of the file "
		    "left out (the end record is kept under %zu MiB)",
		    (unsigned long long)left_out, MAX_RECORD >> 20);
		nd_jw_str(&w, tmp.p, tmp.len);
	}
	if (clipped > 0) {
		nd_buf_reset(&tmp);
		nd_buf_addf(&tmp, "%llu strings longer than %zu MiB were cut "
		    "to %zu MiB", (unsigned long long)clipped, MAX_STR >> 20,
		    MAX_STR >> 20);
		nd_jw_str(&w, tmp.p, tmp.len);
	}
	if (s->n.noargs > 0)
		put_over_note(&w, &tmp, s->n.noargs,
		    "records were written without their args");
	if (s->n.nodev > 0)
		put_over_note(&w, &tmp, s->n.nodev,
		    "device models were left out of the meta record");
	if (s->origin_relative && !s->has_start)
		nd_jw_cstr(&w, "line timestamps are relative and the file has "
		    "no profile_start_time: origin_ns is not a time since the "
		    "epoch");
	nd_end_close(&w);
	nd_out_commit(o);
	nd_buf_free(&tmp);
}

/* Check the input and validate every selected line: nothing is written
 * before this returns 0. */
static int
validate(struct src *s, struct input *x, nd_err *err)
{
	uint64_t start = 0;

	if (refuse_json(x->name, x->p, x->n, err) != 0)
		return -1;
	nd_xspace_tally(&x->tally, x->p, x->n);	/* a mapped file: all of it */
	if (check_tally(x->name, &x->tally, x->n, 0, err) != 0)
		return -1;
	s->xs = nd_xspace_open(x->p, x->n, x->name);
	if (nd_xspace_err(s->xs) == NULL && x->cut)
		/* cannot happen: the walk stops at that field */
		return nd_err_byte(err, x->name, x->tally.pos,
		    "invalid XSpace field");
	if (nd_xspace_err(s->xs) != NULL || scan_headers(s) != 0 ||
	    find_start(s, &start, &s->has_start) != 0)
		goto fail;
	s->origin_relative = s->origin < RELATIVE_BEFORE;
	s->origin_ns = s->origin;
	if (s->origin_relative && s->has_start &&
	    (start > (uint64_t)INT64_MAX || __builtin_add_overflow(
	    (int64_t)start, s->origin, &s->origin_ns))) {
		s->origin_ns = s->origin;	/* an absurd start: ignore it */
		s->has_start = 0;
	}
	for (size_t i = 0; i < s->xs->nplanes; i++) {
		nd_xp_plane *pl;

		if ((pl = s->pi[i].pl) == NULL)
			continue;
		for (size_t j = 0; j < pl->nlines; j++)
			if (s->pi[i].lines[j].selected &&
			    check_line(s, pl, j, &s->pi[i].lines[j]) != 0)
				goto fail;
	}
	return 0;
fail:
	nd_err_copy(err, nd_xspace_err(s->xs));
	return -1;
}

/* The meta record, the selected planes' records, the end record. */
static int
write_all(nd_out *o, struct src *s, struct input *x, nd_err *err)
{
	nd_buf tmp = ND_BUF_INIT;
	const char *host = host_of(s, &tmp);

	if (s->devs.len > 0)
		nd_buf_addc(&s->devs, '}');
	nd_meta_write_devices(nd_out_buf(o), s->path, "xplane", s->origin_ns,
	    host, 0, 0, s->devs.p, s->devs.len);
	nd_out_commit(o);
	nd_buf_free(&tmp);
	for (size_t i = 0; i < s->xs->nplanes; i++) {
		struct pinfo *p = &s->pi[i];

		if (!p->selected) {
			s->n.fplanes++;
			s->n.flines += p->nlines;
			continue;
		}
		s->n.planes++;
		for (size_t j = 0; j < p->nlines; j++) {
			if (p->lines[j].selected)
				s->n.lines++;
			else
				s->n.flines++;
		}
		if (p->pl == NULL)
			continue;	/* no events in its selected lines */
		if (write_plane(o, s, i, err) != 0)
			return -1;
		nd_xp_plane_free(p->pl);
		p->pl = NULL;
	}
	write_end(o, s, input_sha(x));
	return 0;
}

/* The input x read (rc 0) or not: converted, then closed. */
static int
convert(struct input *x, int rc, const char *path, const nd_xpconv_opts *opts,
    nd_out *o, nd_err *err)
{
	struct src s;
	nd_xpconv_opts oo = *opts;

	memset(&s, 0, sizeof s);
	s.path = path;
	s.o = &oo;
	s.filtering = oo.planes != NULL || oo.lines != NULL || oo.device_only;
	if (rc == 0)
		rc = validate(&s, x, err);
	if (rc == 0 && oo.rules == NULL)
		oo.rules = nd_rules_default();	/* before the threads */
	if (rc == 0)
		rc = write_all(o, &s, x, err);
	for (size_t i = 0; s.pi != NULL && i < s.xs->nplanes; i++) {
		for (size_t j = 0; j < s.pi[i].nlines; j++)
			free(s.pi[i].lines[j].chunk);
		free(s.pi[i].lines);
		nd_xp_plane_free(s.pi[i].pl);
	}
	free(s.pi);
	nd_buf_free(&s.devs);
	nd_intern_free(s.devkeys);
	nd_xspace_close(s.xs);
	input_close(x);
	return rc;
}

int
nd_xpconv_convert(const char *path, const nd_xpconv_opts *o, nd_out *out,
    nd_err *err)
{
	struct input x;
	int rc = input_open(&x, path, o->one_thread, err);

	return convert(&x, rc, path, o, out, err);
}

int
nd_xpconv_convert_mem(const void *p, size_t n, const char *name,
    const nd_xpconv_opts *o, nd_out *out, nd_err *err)
{
	struct input x;
	int rc;

	memset(&x, 0, sizeof x);
	x.one_thread = o->one_thread;
	x.in = nd_in_open_mem(p, n, name, 1);
	rc = input_read(&x, 0, err);
	return convert(&x, rc, name, o, out, err);
}
