/*
 * gen-xplane: write a realistic XPlane profile (an XSpace protobuf), seeded
 * and reproducible, for tests, examples and benchmarks.
 *
 * Kinds:
 *   tpu  four /device:TPU:N planes (lines Steps, XLA Modules, XLA Ops) with
 *        HLO op metadata (hlo_category, tf_op scope paths, flops,
 *        bytes_accessed, program_id > 2^53, source), nested while loops,
 *        collectives, gaps between ops and input stalls between steps, and a
 *        /host:CPU plane (nested TraceMe events, instants, aggregates with
 *        num_occurrences).  Absolute timestamps (ns since the epoch).
 *   gpu  four /device:GPU:N planes with Stream #N(Kernel|MemcpyH2D) lines,
 *        kernels carrying correlation_id, kernel_details, tf_op, name,
 *        hlo_module as ref_value stats (as CUPTI/ROCm tracers write
 *        them), NCCL kernels on a second stream, a /host:CPU plane, and a
 *        "Task Environment" plane with profile_start_time: timestamps are
 *        relative to it, as newer profilers write them.
 *
 * --tiny writes a small fixed profile whose exact ndjson is in
 * tests/xplane2ndjson.bats; --broken KIND writes that profile damaged in one
 * way (see usage) for the error tests.
 *
 * Memory stays small whatever --events is: a plane is generated twice from
 * the same seed, once to measure its lines and once to write them; only the
 * outer length prefixes are hand-encoded, every message is packed by the
 * protobuf-c code generated from lib/ingest/xplane.proto.
 */
#include "nd_cli.h"
#include "nd_out.h"
#include "nd_util.h"
#include "xplane.pb-c.h"

#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static const char usage_text[] =
"usage: gen-xplane [-hVv] [--seed N] [--events N] [--kind tpu|gpu] [--tiny]\n"
"                  [--broken KIND] [-o FILE]\n"
"\n"
"Write a seeded, reproducible XPlane profile (XSpace protobuf) to FILE or\n"
"stdout.  --events is approximate (whole steps are generated).\n"
"  --seed N        random seed (default 1)\n"
"  --events N      about N events (default 100000)\n"
"  --kind K        tpu (default) or gpu\n"
"  --tiny          a small fixed profile (the tests' known content)\n"
"  --broken KIND   the tiny profile damaged: varint (an 11-byte varint),\n"
"                  length (a length past the end), evmd (an event naming a\n"
"                  missing metadata id), statmd (a stat naming a missing stat\n"
"                  metadata id), ref (a ref_value naming a missing id),\n"
"                  wiretype (XLine.events encoded as a varint)\n"
"  -o FILE         output file (default stdout)\n"
"  -v              print the number of events written on stderr\n";

typedef Tensorflow__Profiler__XSpace XSpace;
typedef Tensorflow__Profiler__XPlane XPlane;
typedef Tensorflow__Profiler__XLine XLine;
typedef Tensorflow__Profiler__XEvent XEvent;
typedef Tensorflow__Profiler__XStat XStat;
typedef Tensorflow__Profiler__XEventMetadata XEventMetadata;
typedef Tensorflow__Profiler__XStatMetadata XStatMetadata;
typedef Tensorflow__Profiler__XPlane__EventMetadataEntry EvMdEntry;
typedef Tensorflow__Profiler__XPlane__StatMetadataEntry StMdEntry;

/* ---------- random numbers (splitmix64) ---------- */

typedef struct { uint64_t s; } rng;

static uint64_t
rnext(rng *r)
{
	uint64_t z = (r->s += 0x9e3779b97f4a7c15ULL);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
	return z ^ (z >> 31);
}

static rng
rseed(uint64_t a, uint64_t b, uint64_t c)
{
	rng r = { a * 0x100000001b3ULL ^ (b << 20) ^ (c << 42) ^ b * 31 ^ c };

	rnext(&r);
	return r;
}

/* Uniform in [lo, hi]. */
static int64_t
runi(rng *r, int64_t lo, int64_t hi)
{
	return lo + (int64_t)(rnext(r) % (uint64_t)(hi - lo + 1));
}

static double
runif01(rng *r)
{
	return (double)(rnext(r) >> 11) / 9007199254740992.0;
}

/* Log-uniform in [lo, hi]. */
static int64_t
rlog(rng *r, double lo, double hi)
{
	return (int64_t)exp(log(lo) + runif01(r) * (log(hi) - log(lo)));
}

/* ---------- output: sizing or writing ---------- */

typedef struct W {
	int sizing;
	uint64_t n;
	FILE *fp;
} W;

static void
w_bytes(W *w, const void *p, size_t n)
{
	w->n += n;
	if (!w->sizing && n > 0 && fwrite(p, 1, n, w->fp) != n)
		nd_die_errno(ND_EXIT_ERROR, "write error");
}

static size_t
varint_enc(uint64_t v, unsigned char *b)
{
	size_t i = 0;

	while (v >= 0x80) {
		b[i++] = (unsigned char)(v | 0x80);
		v >>= 7;
	}
	b[i++] = (unsigned char)v;
	return i;
}

static void
w_varint(W *w, uint64_t v)
{
	unsigned char b[10];

	w_bytes(w, b, varint_enc(v, b));
}

/* The header of a length-delimited field. */
static void
w_lenhdr(W *w, unsigned field, uint64_t len)
{
	w_varint(w, (uint64_t)field << 3 | 2);
	w_varint(w, len);
}

static unsigned char *scratch;
static size_t scratch_cap;

static unsigned char *
scratch_for(size_t n)
{
	if (n > scratch_cap) {
		scratch_cap = n * 2;
		scratch = nd_xrealloc(scratch, scratch_cap);
	}
	return scratch;
}

/* A protobuf-c message as a length-delimited field.  Sizing needs only the
 * packed size. */
static void
w_msg_field(W *w, unsigned field, const ProtobufCMessage *m)
{
	size_t n = protobuf_c_message_get_packed_size(m);

	w_lenhdr(w, field, n);
	if (w->sizing) {
		w->n += n;
		return;
	}
	protobuf_c_message_pack(m, scratch_for(n));
	w_bytes(w, scratch, n);
}

/* A message's fields, bare (concatenated messages merge). */
static void
w_msg_bare(W *w, const ProtobufCMessage *m)
{
	size_t n = protobuf_c_message_get_packed_size(m);

	if (w->sizing) {
		w->n += n;
		return;
	}
	protobuf_c_message_pack(m, scratch_for(n));
	w_bytes(w, scratch, n);
}

/* ---------- metadata tables ---------- */

typedef struct md_table {
	XEventMetadata **ev;
	size_t nev, cap_ev;
	XStatMetadata **st;
	size_t nst, cap_st;
} md_table;

static int64_t
stat_md(md_table *t, const char *name)
{
	XStatMetadata *m;

	for (size_t i = 0; i < t->nst; i++)
		if (strcmp(t->st[i]->name, name) == 0)
			return t->st[i]->id;
	m = nd_xmalloc(sizeof *m);
	tensorflow__profiler__xstat_metadata__init(m);
	m->id = (int64_t)t->nst + 1;
	m->name = nd_xstrdup(name);
	nd_grow(&t->st, &t->cap_st, t->nst + 1, sizeof *t->st);
	t->st[t->nst++] = m;
	return m->id;
}

static XEventMetadata *
ev_md(md_table *t, const char *name, const char *display)
{
	XEventMetadata *m = nd_xmalloc(sizeof *m);

	tensorflow__profiler__xevent_metadata__init(m);
	m->id = (int64_t)t->nev + 1;
	m->name = nd_xstrdup(name);
	if (display != NULL)
		m->display_name = nd_xstrdup(display);
	nd_grow(&t->ev, &t->cap_ev, t->nev + 1, sizeof *t->ev);
	t->ev[t->nev++] = m;
	return m;
}

static XStat *
new_stat(int64_t md)
{
	XStat *s = nd_xmalloc(sizeof *s);

	tensorflow__profiler__xstat__init(s);
	s->metadata_id = md;
	return s;
}

static void
md_add_stat(XEventMetadata *m, XStat *s)
{
	m->stats = nd_xrealloc(m->stats, (m->n_stats + 1) * sizeof *m->stats);
	m->stats[m->n_stats++] = s;
}

static void
md_str(md_table *t, XEventMetadata *m, const char *k, const char *v)
{
	XStat *s = new_stat(stat_md(t, k));

	s->value_case = TENSORFLOW__PROFILER__XSTAT__VALUE_STR_VALUE;
	s->str_value = nd_xstrdup(v);
	md_add_stat(m, s);
}

static void
md_int(md_table *t, XEventMetadata *m, const char *k, int64_t v)
{
	XStat *s = new_stat(stat_md(t, k));

	s->value_case = TENSORFLOW__PROFILER__XSTAT__VALUE_INT64_VALUE;
	s->int64_value = v;
	md_add_stat(m, s);
}

static void
md_uint(md_table *t, XEventMetadata *m, const char *k, uint64_t v)
{
	XStat *s = new_stat(stat_md(t, k));

	s->value_case = TENSORFLOW__PROFILER__XSTAT__VALUE_UINT64_VALUE;
	s->uint64_value = v;
	md_add_stat(m, s);
}

/* The metadata as the fields of an XPlane (written after the lines, as
 * profilers do). */
static void
w_metadata(W *w, const md_table *t)
{
	XPlane p = TENSORFLOW__PROFILER__XPLANE__INIT;
	EvMdEntry **ee = nd_xcalloc(t->nev + 1, sizeof *ee);
	StMdEntry **se = nd_xcalloc(t->nst + 1, sizeof *se);
	EvMdEntry *eb = nd_xcalloc(t->nev + 1, sizeof *eb);
	StMdEntry *sb = nd_xcalloc(t->nst + 1, sizeof *sb);

	for (size_t i = 0; i < t->nev; i++) {
		tensorflow__profiler__xplane__event_metadata_entry__init(&eb[i]);
		eb[i].key = t->ev[i]->id;
		eb[i].value = t->ev[i];
		ee[i] = &eb[i];
	}
	for (size_t i = 0; i < t->nst; i++) {
		tensorflow__profiler__xplane__stat_metadata_entry__init(&sb[i]);
		sb[i].key = t->st[i]->id;
		sb[i].value = t->st[i];
		se[i] = &sb[i];
	}
	p.n_event_metadata = t->nev;
	p.event_metadata = ee;
	p.n_stat_metadata = t->nst;
	p.stat_metadata = se;
	w_msg_bare(w, &p.base);
	free(ee);
	free(se);
	free(eb);
	free(sb);
}

static void
md_free(md_table *t)
{
	for (size_t i = 0; i < t->nev; i++) {
		XEventMetadata *m = t->ev[i];

		for (size_t j = 0; j < m->n_stats; j++) {
			if (m->stats[j]->value_case ==
			    TENSORFLOW__PROFILER__XSTAT__VALUE_STR_VALUE)
				free(m->stats[j]->str_value);
			free(m->stats[j]);
		}
		free(m->stats);
		free(m->name);
		if (m->display_name != protobuf_c_empty_string)
			free(m->display_name);
		free(m);
	}
	for (size_t i = 0; i < t->nst; i++) {
		free(t->st[i]->name);
		free(t->st[i]);
	}
	free(t->ev);
	free(t->st);
	memset(t, 0, sizeof *t);
}

/* ---------- events ---------- */

#define MAX_EV_STATS 12

typedef struct evb {
	XEvent e;
	XStat st[MAX_EV_STATS];
	XStat *sp[MAX_EV_STATS];
} evb;

static void
ev_init(evb *b, int64_t md, int64_t off, int64_t dur)
{
	tensorflow__profiler__xevent__init(&b->e);
	b->e.metadata_id = md;
	b->e.data_case = TENSORFLOW__PROFILER__XEVENT__DATA_OFFSET_PS;
	b->e.offset_ps = off;
	b->e.duration_ps = dur;
	b->e.stats = b->sp;
	b->e.n_stats = 0;
}

static XStat *
ev_stat(evb *b, int64_t md)
{
	XStat *s = &b->st[b->e.n_stats];

	tensorflow__profiler__xstat__init(s);
	s->metadata_id = md;
	b->sp[b->e.n_stats++] = s;
	return s;
}

static void
ev_int(evb *b, int64_t md, int64_t v)
{
	XStat *s = ev_stat(b, md);

	s->value_case = TENSORFLOW__PROFILER__XSTAT__VALUE_INT64_VALUE;
	s->int64_value = v;
}

static void
ev_uint(evb *b, int64_t md, uint64_t v)
{
	XStat *s = ev_stat(b, md);

	s->value_case = TENSORFLOW__PROFILER__XSTAT__VALUE_UINT64_VALUE;
	s->uint64_value = v;
}

static void
ev_ref(evb *b, int64_t md, int64_t ref)
{
	XStat *s = ev_stat(b, md);

	s->value_case = TENSORFLOW__PROFILER__XSTAT__VALUE_REF_VALUE;
	s->ref_value = (uint64_t)ref;
}

static void
ev_str(evb *b, int64_t md, const char *v)
{
	XStat *s = ev_stat(b, md);

	s->value_case = TENSORFLOW__PROFILER__XSTAT__VALUE_STR_VALUE;
	s->str_value = (char *)v;
}

static uint64_t events_written;

static void
w_event(W *w, evb *b)
{
	w_msg_field(w, 4, &b->e.base);
	if (!w->sizing)
		events_written++;
}

/* A line: its header fields, then the events the generator writes. */
typedef struct line_spec {
	int64_t id, display_id, ts_ns;
	const char *name, *display_name;
} line_spec;

static void
w_line_header(W *w, const line_spec *ls)
{
	XLine l = TENSORFLOW__PROFILER__XLINE__INIT;

	l.id = ls->id;
	l.display_id = ls->display_id;
	l.name = (char *)ls->name;
	if (ls->display_name != NULL)
		l.display_name = (char *)ls->display_name;
	l.timestamp_ns = ls->ts_ns;
	w_msg_bare(w, &l.base);
}

/* ---------- the model ---------- */

typedef struct cfg {
	uint64_t seed;
	int64_t events;
	int gpu;
	int ndev;
	int nops;		/* ops per step and device */
	int64_t nsteps;
	int64_t ts_ns;		/* line timestamp */
	/* schedule, per step, in ps from the line timestamp */
	int64_t *step_start, *mod_start, *mod_dur;
} cfg;

/* Op kinds with weights; %d is the instance number. */
static const struct opkind {
	const char *kind, *category, *prim, *hlo;
	int weight;
	int collective;
} opkinds[] = {
	{ "fusion", "non-fusion elementwise", "add",
	  "%%fusion.%d = bf16[8,1024,4096]{2,1,0} fusion(bf16[8,1024,4096]{2,1,0} %%p0, bf16[4096]{0} %%p1), kind=kLoop, calls=%%fused_computation.%d", 34, 0 },
	{ "loop_fusion", "loop fusion", "mul",
	  "%%loop_fusion.%d = f32[8,1024]{1,0} fusion(f32[8,1024,4096]{2,1,0} %%p0), kind=kLoop, calls=%%fused_computation.%d", 12, 0 },
	{ "convolution", "convolution", "conv_general_dilated",
	  "%%convolution.%d = bf16[8,1024,4096]{2,1,0} convolution(bf16[8,1024,1024]{2,1,0} %%p0, bf16[1024,4096]{1,0} %%p1), dim_labels=bf0_io->bf0 /*%d*/", 14, 0 },
	{ "dot", "convolution", "dot_general",
	  "%%dot.%d = bf16[8,16,1024,1024]{3,2,1,0} dot(bf16[8,16,1024,64]{3,2,1,0} %%q, bf16[8,16,1024,64]{3,2,1,0} %%k), lhs_contracting_dims={3}, rhs_contracting_dims={3} /*%d*/", 10, 0 },
	{ "reduce", "reduction", "reduce_sum",
	  "%%reduce.%d = f32[8,1024]{1,0} reduce(f32[8,1024,4096]{2,1,0} %%p0, f32[] %%c), dimensions={2}, to_apply=%%region_%d", 6, 0 },
	{ "copy", "data formatting", "copy",
	  "%%copy.%d = bf16[1024,4096]{0,1} copy(bf16[1024,4096]{1,0} %%p0) /*%d*/", 5, 0 },
	{ "convert", "data formatting", "convert_element_type",
	  "%%convert.%d = f32[1024,4096]{1,0} convert(bf16[1024,4096]{1,0} %%p0) /*%d*/", 3, 0 },
	{ "all-reduce", "all-reduce", "psum",
	  "%%all-reduce.%d = f32[4096,4096]{1,0} all-reduce(f32[4096,4096]{1,0} %%g), channel_id=%d, replica_groups={{0,1,2,3}}, to_apply=%%add", 4, 1 },
	{ "all-gather", "all-gather", "all_gather",
	  "%%all-gather.%d = bf16[4096,4096]{1,0} all-gather(bf16[1024,4096]{1,0} %%w), channel_id=%d, replica_groups={{0,1,2,3}}, dimensions={0}", 3, 1 },
	{ "reduce-scatter", "reduce-scatter", "reduce_scatter",
	  "%%reduce-scatter.%d = f32[1024,4096]{1,0} reduce-scatter(f32[4096,4096]{1,0} %%g), channel_id=%d, replica_groups={{0,1,2,3}}, dimensions={0}, to_apply=%%add", 2, 1 },
	{ "collective-permute", "collective-permute", "ppermute",
	  "%%collective-permute.%d = bf16[8,1024]{1,0} collective-permute(bf16[8,1024]{1,0} %%x), channel_id=%d, source_target_pairs={{0,1},{1,2},{2,3},{3,0}}", 1, 1 },
};
#define NKINDS (sizeof opkinds / sizeof opkinds[0])
#define NOPMD 240	/* op metadata per device plane */

static const char *const blocks_sub[] = {
	"attention", "mlp", "layernorm", "attention/softmax", "embed"
};

/* The op metadata table of a device plane: identical on every device
 * (SPMD), so it is built from the seed alone.  Returns the id of op 0; op i
 * has id first + i.  WHILE is the last. */
static int64_t
build_ops(const cfg *c, md_table *t, int64_t *while_id)
{
	rng r = rseed(c->seed, 0x0b5, 0);
	int64_t first = (int64_t)t->nev + 1;
	char name[512], disp[96], path[256];
	int total = 0;

	for (size_t k = 0; k < NKINDS; k++)
		total += opkinds[k].weight;
	for (int i = 0; i < NOPMD; i++) {
		int x = (int)runi(&r, 0, total - 1);
		size_t k = 0;
		const struct opkind *ok;
		XEventMetadata *m;
		int blk = (int)runi(&r, 0, 11);
		const char *sub = blocks_sub[runi(&r, 0, 4)];

		while (x >= opkinds[k].weight) {
			x -= opkinds[k].weight;
			k++;
		}
		ok = &opkinds[k];
		snprintf(name, sizeof name, ok->hlo, i, i);
		snprintf(disp, sizeof disp, "%s.%d", ok->kind, i);
		if (ok->collective)
			snprintf(path, sizeof path, "jit(train_step)/jit(main)/"
			    "%s", ok->prim);
		else if (runi(&r, 0, 2) == 0)
			snprintf(path, sizeof path, "jit(train_step)/jit(main)/"
			    "transpose(jvp(transformer))/block_%d/%s/%s", blk, sub,
			    ok->prim);
		else
			snprintf(path, sizeof path, "jit(train_step)/jit(main)/"
			    "transformer/block_%d/%s/%s", blk, sub, ok->prim);
		if (c->gpu) {
			/* GPU kernels: metadata name is the kernel. */
			if (strcmp(ok->kind, "dot") == 0 ||
			    strcmp(ok->kind, "convolution") == 0)
				snprintf(name, sizeof name, "sm90_xmma_gemm_bf16bf16"
				    "_bf16f32_f32_tn_n_tilesize128x128x64_%d", i);
			else if (ok->collective)
				snprintf(name, sizeof name, "ncclDevKernel_%s_Sum_"
				    "bf16_RING_LL(ncclDevComm*, unsigned long, "
				    "ncclWork*)", ok->prim);
			else
				snprintf(name, sizeof name, "%s_%d", ok->kind, i);
			m = ev_md(t, name, NULL);
			continue;
		}
		m = ev_md(t, name, disp);
		md_str(t, m, "hlo_category", ok->category);
		md_uint(t, m, "program_id", 0xdeadbeef00000000ULL + c->seed);
		md_int(t, m, "flops", ok->collective ? 0 :
		    rlog(&r, 1e6, 1e11));
		md_int(t, m, "bytes_accessed", rlog(&r, 1e4, 1e9));
		md_str(t, m, "source", "train.py:123");
		md_str(t, m, "tf_op", path);
	}
	if (!c->gpu) {
		XEventMetadata *m = ev_md(t, "%while.7 = (s32[], bf16[8,1024,"
		    "4096]{2,1,0}) while((s32[], bf16[8,1024,4096]{2,1,0}) %tuple),"
		    " condition=%cond, body=%body", "while.7");

		md_str(t, m, "hlo_category", "control flow");
		md_str(t, m, "tf_op", "jit(train_step)/jit(main)/while");
		*while_id = m->id;
	} else
		*while_id = 0;
	return first;
}

/* One op of a step: which metadata, its duration and the idle time
 * before it.  Drawn from a per-step stream shared by every device. */
typedef struct op {
	int md;			/* index 0..NOPMD-1 */
	int64_t dur, gap;
	int nest;		/* > 0: a while loop around the next nest ops */
} op;

static void
step_op(rng *r, int i, int nops, op *o)
{
	o->md = (int)runi(r, 0, NOPMD - 1);
	o->dur = rlog(r, 1.2e6, 4e8);		/* 1.2 us .. 400 us in ps */
	o->gap = runi(r, 0, 400000);		/* up to 0.4 us */
	if (runi(r, 0, 99) == 0)
		o->gap += runi(r, 20000000, 60000000);	/* 20-60 us bubble */
	o->nest = 0;
	if (i + 6 < nops && runi(r, 0, 63) == 0)
		o->nest = (int)runi(r, 3, 5);
}

static void
make_schedule(cfg *c)
{
	int64_t t = 5000000;	/* 5 us */

	c->step_start = nd_xcalloc((size_t)c->nsteps, sizeof *c->step_start);
	c->mod_start = nd_xcalloc((size_t)c->nsteps, sizeof *c->mod_start);
	c->mod_dur = nd_xcalloc((size_t)c->nsteps, sizeof *c->mod_dur);
	for (int64_t k = 0; k < c->nsteps; k++) {
		rng r = rseed(c->seed, 0x57e9, (uint64_t)k);
		rng s = rseed(c->seed, 0x5e9, (uint64_t)k);
		int64_t host = runi(&s, 30000000, 150000000);	/* 30-150 us */
		int64_t sum = 0;
		op o;

		if (k % 25 == 24)
			host += runi(&s, 1000000000, 3000000000);  /* input stall */
		for (int i = 0; i < c->nops; i++) {
			step_op(&r, i, c->nops, &o);
			sum += o.gap + o.dur;
		}
		c->step_start[k] = t;
		c->mod_start[k] = t + host;
		c->mod_dur[k] = sum + 2000000;
		t = c->mod_start[k] + c->mod_dur[k] + runi(&s, 1000000, 5000000);
	}
}

/* XLA Ops (or the kernels of a GPU compute stream) of device dev. */
static void
w_ops_line(W *w, const cfg *c, int dev, int64_t op0, int64_t while_id,
    const int64_t *refs)
{
	int64_t skew = dev * 1237;	/* ps */
	uint64_t corr = 1000 + (uint64_t)dev * 100000000;

	for (int64_t k = 0; k < c->nsteps; k++) {
		rng r = rseed(c->seed, 0x57e9, (uint64_t)k);
		int64_t t = c->mod_start[k] + 1000000 + skew;
		op ops[8];
		op o;

		for (int i = 0; i < c->nops; i++) {
			evb b;

			step_op(&r, i, c->nops, &o);
			t += o.gap;
			if (o.nest > 0 && while_id != 0) {
				/* A while loop around the next ops: draw them
				 * ahead to know its end. */
				rng r2 = r;
				int64_t end = t + o.dur;

				for (int j = 0; j < o.nest; j++) {
					step_op(&r2, i + 1 + j, c->nops, &ops[j]);
					end += ops[j].gap + ops[j].dur;
				}
				ev_init(&b, while_id, t, end - t);
				ev_int(&b, refs[0], k);		/* group_id */
				w_event(w, &b);
			}
			ev_init(&b, op0 + o.md, t, o.dur);
			if (!c->gpu) {
				ev_int(&b, refs[0], k);		/* group_id */
				ev_uint(&b, refs[1], (uint64_t)(t - 7000));
				ev_uint(&b, refs[2], (uint64_t)o.dur);
			} else {
				ev_uint(&b, refs[0], corr++);
				ev_ref(&b, refs[1], refs[6 + o.md % 4]);
				ev_ref(&b, refs[2], refs[10]);	/* tf_op */
				ev_ref(&b, refs[3], refs[11 + o.md % 8]);
				ev_ref(&b, refs[4], refs[19]);	/* hlo_module */
				ev_int(&b, refs[5], 3);		/* program_id */
				ev_int(&b, refs[20], k);	/* group_id */
			}
			w_event(w, &b);
			t += o.dur;
		}
	}
}

static int64_t
ns_of(int64_t ps)
{
	return ps / 1000;
}

/* ---------- TPU ---------- */

typedef struct plane_w {
	int64_t id;
	const char *name;
	XStat **stats;
	size_t nstats;
} plane_w;

static void
w_plane_header(W *w, const plane_w *p)
{
	XPlane x = TENSORFLOW__PROFILER__XPLANE__INIT;

	x.id = p->id;
	x.name = (char *)p->name;
	x.n_stats = p->nstats;
	x.stats = p->stats;
	w_msg_bare(w, &x.base);
}

typedef void (*line_fn)(W *w, const cfg *c, int dev, int line, void *ctx);

/* A plane: header, lines (each measured, then written), metadata. */
static void
w_plane(W *out, const cfg *c, const plane_w *p, int nlines,
    const line_spec *ls, line_fn fn, void *ctx, const md_table *t)
{
	W s = { 1, 0, NULL };
	uint64_t *lsz = nd_xcalloc((size_t)nlines + 1, sizeof *lsz);
	uint64_t total;

	/* Measure. */
	w_plane_header(&s, p);
	for (int i = 0; i < nlines; i++) {
		W l = { 1, 0, NULL };

		w_line_header(&l, &ls[i]);
		fn(&l, c, -1, i, ctx);
		lsz[i] = l.n;
		w_lenhdr(&s, 3, l.n);
		s.n += l.n;
	}
	w_metadata(&s, t);
	total = s.n;
	/* Write. */
	w_lenhdr(out, 1, total);
	if (out->sizing) {
		out->n += total;
		free(lsz);
		return;
	}
	w_plane_header(out, p);
	for (int i = 0; i < nlines; i++) {
		uint64_t before;

		w_lenhdr(out, 3, lsz[i]);
		before = out->n;
		w_line_header(out, &ls[i]);
		fn(out, c, -1, i, ctx);
		if (out->n - before != lsz[i])
			nd_die(ND_EXIT_ERROR, "internal error: line %d of %s "
			    "changed size", i, p->name);
	}
	w_metadata(out, t);
	free(lsz);
}

typedef struct tpu_ctx {
	int dev;
	int64_t op0, while_id, step_md0, module_md;
	int64_t refs[24];
	int64_t run_id_md, group_id_md, step_num_md;
} tpu_ctx;

static void
tpu_line(W *w, const cfg *c, int unused, int line, void *vctx)
{
	tpu_ctx *x = vctx;
	int64_t skew = x->dev * 1237;

	(void)unused;
	switch (line) {
	case 0:		/* Steps */
		for (int64_t k = 0; k < c->nsteps; k++) {
			evb b;
			int64_t end = k + 1 < c->nsteps ? c->step_start[k + 1] :
			    c->mod_start[k] + c->mod_dur[k];

			ev_init(&b, x->step_md0 + k, c->step_start[k] + skew,
			    end - c->step_start[k]);
			ev_int(&b, x->group_id_md, k);
			ev_int(&b, x->step_num_md, k);
			w_event(w, &b);
		}
		break;
	case 1:		/* XLA Modules */
		for (int64_t k = 0; k < c->nsteps; k++) {
			evb b;

			ev_init(&b, x->module_md, c->mod_start[k] + skew,
			    c->mod_dur[k]);
			ev_uint(&b, x->run_id_md, (uint64_t)k + 1);
			ev_int(&b, x->group_id_md, k);
			w_event(w, &b);
		}
		break;
	case 2:		/* XLA Ops */
		w_ops_line(w, c, x->dev, x->op0, x->while_id, x->refs);
		break;
	}
}

typedef struct host_ctx {
	int64_t md_step, md_pjit, md_exec, md_start_region, md_agg, md_helper,
	    md_launch;
	int64_t st_group, st_corr, st_launch_n;
} host_ctx;

static void
host_line(W *w, const cfg *c, int unused, int line, void *vctx)
{
	host_ctx *h = vctx;

	(void)unused;
	for (int64_t k = 0; k < c->nsteps; k++) {
		rng r = rseed(c->seed, 0x4057 + (uint64_t)line, (uint64_t)k);
		int64_t s = c->step_start[k] + 2000000;
		int64_t e = c->mod_start[k] - 1000000;
		evb b;

		if (e <= s + 10000000)
			e = s + 10000000;
		if (line == 0) {
			/* main thread: train_step > PjitFunction > Execute,
			 * an instant, and now and then an aggregate. */
			ev_init(&b, h->md_step, s, e - s);
			ev_int(&b, h->st_group, k);
			w_event(w, &b);
			ev_init(&b, h->md_pjit, s + 1500000, e - s - 3000000);
			w_event(w, &b);
			ev_init(&b, h->md_exec, s + 4000000 + runi(&r, 0, 999),
			    e - s - 9000000);
			ev_uint(&b, h->st_corr, (uint64_t)k + 77);
			w_event(w, &b);
			ev_init(&b, h->md_start_region, e - 2000000, 0);
			w_event(w, &b);
			if (k % 50 == 0) {
				ev_init(&b, h->md_agg, 0, 0);
				b.e.data_case =
				    TENSORFLOW__PROFILER__XEVENT__DATA_NUM_OCCURRENCES;
				b.e.num_occurrences = 3;
				b.e.duration_ps = 5000000;
				w_event(w, &b);
			}
		} else {
			/* a runtime thread: the launches of the step */
			int64_t t = s + 5000000;

			ev_init(&b, h->md_helper, t, e - t);
			w_event(w, &b);
			for (int i = 0; i < 3; i++) {
				ev_init(&b, h->md_launch, t + 1000000 +
				    i * 2000000, runi(&r, 300000, 1500000));
				ev_uint(&b, h->st_corr, (uint64_t)k * 3 + i);
				w_event(w, &b);
			}
		}
	}
}

static void
gen_host_plane(W *w, const cfg *c, int64_t id)
{
	md_table t = { 0 };
	host_ctx h;
	plane_w p = { id, "/host:CPU", NULL, 0 };
	line_spec ls[2] = {
		{ 4747829982129071201LL, 0, c->ts_ns, "python3", "python3" },
		{ -1472503042444199177LL, 0, c->ts_ns,
		  "pjrt_thread_pool/-1472503042444199177", NULL },
	};

	h.md_step = ev_md(&t, "$train.py:88 train_step", NULL)->id;
	h.md_pjit = ev_md(&t, "PjitFunction(train_step)", NULL)->id;
	h.md_exec = ev_md(&t, "PjRtStreamExecutorLoadedExecutable::Execute",
	    NULL)->id;
	h.md_start_region = ev_md(&t, "ThreadpoolListener::StartRegion",
	    NULL)->id;
	h.md_agg = ev_md(&t, "TfrtCpuExecutable::ExecuteHelper (aggregate)",
	    NULL)->id;
	h.md_helper = ev_md(&t, "PjRtStreamExecutorLoadedExecutable::"
	    "ExecuteHelper", NULL)->id;
	h.md_launch = ev_md(&t, c->gpu ? "cuLaunchKernel" : "TpuLaunch",
	    NULL)->id;
	h.st_group = stat_md(&t, "group_id");
	h.st_corr = stat_md(&t, "correlation_id");
	h.st_launch_n = stat_md(&t, "launch_count");
	w_plane(w, c, &p, 2, ls, host_line, &h, &t);
	md_free(&t);
}

static XStat *
plane_stat(md_table *t, const char *k, int kind, uint64_t u, double d,
    const char *s)
{
	XStat *x = new_stat(stat_md(t, k));

	x->value_case = kind;
	if (kind == TENSORFLOW__PROFILER__XSTAT__VALUE_DOUBLE_VALUE)
		x->double_value = d;
	else if (kind == TENSORFLOW__PROFILER__XSTAT__VALUE_STR_VALUE)
		x->str_value = nd_xstrdup(s);
	else
		x->uint64_value = u;
	return x;
}

static void
free_stats(XStat **s, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		if (s[i]->value_case == TENSORFLOW__PROFILER__XSTAT__VALUE_STR_VALUE)
			free(s[i]->str_value);
		free(s[i]);
	}
}

static void
gen_tpu(W *w, const cfg *c)
{
	for (int d = 0; d < c->ndev; d++) {
		md_table t = { 0 };
		tpu_ctx x;
		char pname[32];
		XStat *ps[2];
		plane_w p;
		line_spec ls[3] = {
			{ 1, 0, c->ts_ns, "Steps", NULL },
			{ 2, 0, c->ts_ns, "XLA Modules", NULL },
			{ 3, 0, c->ts_ns, "XLA Ops", NULL },
		};

		memset(&x, 0, sizeof x);
		x.dev = d;
		/* Stat metadata ids the events use come first: 1..5. */
		x.refs[0] = stat_md(&t, "group_id");
		x.refs[1] = stat_md(&t, "device_offset_ps");
		x.refs[2] = stat_md(&t, "device_duration_ps");
		x.group_id_md = x.refs[0];
		x.run_id_md = stat_md(&t, "run_id");
		x.step_num_md = stat_md(&t, "step_num");
		x.op0 = build_ops(c, &t, &x.while_id);
		x.module_md = ev_md(&t, "jit_train_step(8412305593178)",
		    NULL)->id;
		x.step_md0 = (int64_t)t.nev + 1;
		for (int64_t k = 0; k < c->nsteps; k++) {
			char sn[32];

			snprintf(sn, sizeof sn, "%" PRId64, k);
			ev_md(&t, sn, NULL);
		}
		snprintf(pname, sizeof pname, "/device:TPU:%d", d);
		ps[0] = plane_stat(&t, "device_type_string",
		    TENSORFLOW__PROFILER__XSTAT__VALUE_STR_VALUE, 0, 0,
		    "TPU v5 lite");
		ps[1] = plane_stat(&t, "peak_teraflops_per_second",
		    TENSORFLOW__PROFILER__XSTAT__VALUE_DOUBLE_VALUE, 0, 197.0,
		    NULL);
		p.id = 2 + 8 * d;
		p.name = pname;
		p.stats = ps;
		p.nstats = 2;
		w_plane(w, c, &p, 3, ls, tpu_line, &x, &t);
		free_stats(ps, 2);
		md_free(&t);
	}
	gen_host_plane(w, c, 0);
}

/* ---------- GPU ---------- */

typedef struct gpu_ctx {
	int dev;
	int64_t op0, refs[24];
	int64_t md_nccl, md_memcpy, st_memcpy, st_corr;
} gpu_ctx;

static void
gpu_line(W *w, const cfg *c, int unused, int line, void *vctx)
{
	gpu_ctx *x = vctx;

	(void)unused;
	if (line == 0) {
		w_ops_line(w, c, x->dev, x->op0, 0, x->refs);
		return;
	}
	for (int64_t k = 0; k < c->nsteps; k++) {
		rng r = rseed(c->seed, 0x6e9 + (uint64_t)line,
		    (uint64_t)k * 8 + (uint64_t)x->dev);
		evb b;

		if (line == 1) {	/* NCCL stream: overlaps compute */
			int64_t s = c->mod_start[k] + c->mod_dur[k] / 2;

			for (int i = 0; i < 2; i++) {
				int64_t d = runi(&r, c->mod_dur[k] / 8,
				    c->mod_dur[k] / 5);

				ev_init(&b, x->md_nccl, s, d);
				ev_uint(&b, x->st_corr, (uint64_t)k * 2 + i);
				ev_int(&b, x->refs[20], k);
				w_event(w, &b);
				s += d + runi(&r, 1000000, 9000000);
			}
		} else {		/* H2D copy of the batch */
			ev_init(&b, x->md_memcpy, c->mod_start[k] -
			    runi(&r, 2000000, 9000000), runi(&r, 8000000,
			    20000000));
			ev_str(&b, x->st_memcpy, "kind_src:pinned kind_dst:"
			    "device size:8388608 dest:0 async:1");
			w_event(w, &b);
		}
	}
}

static void
gen_gpu(W *w, const cfg *c)
{
	static const char *const details[4] = {
		"regs:128 shm:65536 grid:132,1,1 block:384,1,1 occ_pct:12.5",
		"regs:32 shm:0 grid:4096,1,1 block:256,1,1 occ_pct:100",
		"regs:64 shm:16384 grid:1024,1,1 block:128,1,1 occ_pct:50",
		"regs:40 shm:0 grid:8192,1,1 block:512,1,1 occ_pct:75",
	};
	static const char *const paths[8] = {
		"jit(train_step)/jit(main)/transformer/block_0/attention/dot_general",
		"jit(train_step)/jit(main)/transformer/block_0/mlp/dot_general",
		"jit(train_step)/jit(main)/transpose(jvp(transformer))/block_1/mlp/add",
		"jit(train_step)/jit(main)/transformer/block_1/layernorm/reduce_sum",
		"jit(train_step)/jit(main)/transformer/block_2/attention/softmax/exp",
		"jit(train_step)/jit(main)/optimizer/adam/mul",
		"jit(train_step)/jit(main)/loss/log_softmax/sub",
		"jit(train_step)/jit(main)/psum",
	};

	for (int d = 0; d < c->ndev; d++) {
		md_table t = { 0 };
		gpu_ctx x;
		char pname[32];
		int64_t while_id;
		plane_w p;
		XStat *ps[1];
		line_spec ls[3] = {
			{ 13, 0, c->ts_ns, "Stream #13(Kernel)", NULL },
			{ 14, 0, c->ts_ns, "Stream #14(Kernel)", NULL },
			{ 15, 0, c->ts_ns, "Stream #15(MemcpyH2D)", NULL },
		};

		memset(&x, 0, sizeof x);
		x.dev = d;
		x.refs[0] = stat_md(&t, "correlation_id");
		x.refs[1] = stat_md(&t, "kernel_details");
		x.refs[2] = stat_md(&t, "tf_op");
		x.refs[3] = stat_md(&t, "name");
		x.refs[4] = stat_md(&t, "hlo_module");
		x.refs[5] = stat_md(&t, "program_id");
		for (int i = 0; i < 4; i++)
			x.refs[6 + i] = stat_md(&t, details[i]);
		x.refs[10] = stat_md(&t, "XlaModule:");
		for (int i = 0; i < 8; i++)
			x.refs[11 + i] = stat_md(&t, paths[i]);
		x.refs[19] = stat_md(&t, "jit_train_step");
		x.refs[20] = stat_md(&t, "group_id");
		x.st_corr = x.refs[0];
		x.st_memcpy = stat_md(&t, "memcpy_details");
		x.op0 = build_ops(c, &t, &while_id);
		x.md_nccl = ev_md(&t, "ncclDevKernel_AllReduce_Sum_f32_RING_LL"
		    "(ncclDevComm*, unsigned long, ncclWork*)", NULL)->id;
		x.md_memcpy = ev_md(&t, "MemcpyH2D", NULL)->id;
		snprintf(pname, sizeof pname, "/device:GPU:%d", d);
		ps[0] = plane_stat(&t, "device_vendor",
		    TENSORFLOW__PROFILER__XSTAT__VALUE_STR_VALUE, 0, 0, "Nvidia");
		p.id = d;
		p.name = pname;
		p.stats = ps;
		p.nstats = 1;
		w_plane(w, c, &p, 3, ls, gpu_line, &x, &t);
		free_stats(ps, 1);
		md_free(&t);
	}
	gen_host_plane(w, c, 0);
	/* Task Environment: the absolute start of the profile. */
	{
		md_table t = { 0 };
		XStat *ps[2];
		plane_w p = { 0, "Task Environment", ps, 2 };
		uint64_t start = 1771595650000000000ULL + c->seed * 1000;

		ps[0] = plane_stat(&t, "profile_start_time",
		    TENSORFLOW__PROFILER__XSTAT__VALUE_UINT64_VALUE, start, 0,
		    NULL);
		ps[1] = plane_stat(&t, "profile_stop_time",
		    TENSORFLOW__PROFILER__XSTAT__VALUE_UINT64_VALUE, start +
		    (uint64_t)ns_of(c->mod_start[c->nsteps - 1] +
		    c->mod_dur[c->nsteps - 1]) + 1000, 0, NULL);
		w_plane(w, c, &p, 0, NULL, NULL, NULL, &t);
		free_stats(ps, 2);
		md_free(&t);
	}
}

static void
w_space_tail(W *w, const char *host, const char *err, const char *warn)
{
	XSpace s = TENSORFLOW__PROFILER__XSPACE__INIT;
	char *h[1], *e[1], *wn[1];

	h[0] = (char *)host;
	s.n_hostnames = 1;
	s.hostnames = h;
	if (err != NULL) {
		e[0] = (char *)err;
		s.n_errors = 1;
		s.errors = e;
	}
	if (warn != NULL) {
		wn[0] = (char *)warn;
		s.n_warnings = 1;
		s.warnings = wn;
	}
	w_msg_bare(w, &s.base);
}

/* ---------- tiny: a fixed profile with known content ---------- */

static void
tiny_stat(XStat *s, XStat **sp, size_t *n, int64_t md)
{
	tensorflow__profiler__xstat__init(s);
	s->metadata_id = md;
	sp[(*n)++] = s;
}

/* Stat metadata of the tiny TPU plane. */
static const char *const tiny_snames[] = {
	NULL, "tf_op", "flops", "group_id", "bytes_accessed", "big",
	"ratio", "blob", "fusion_kind", "kLoop", "step_num", "note",
	"neg"
};
enum { S_TFOP = 1, S_FLOPS, S_GROUP, S_BYTES, S_BIG, S_RATIO, S_BLOB,
    S_FKIND, S_KLOOP, S_STEPNUM, S_NOTE, S_NEG, S_N };

/* The protobuf-c structures of the tiny profile, filled in parts. */
struct tiny {
	const char *broken;	/* the damage asked for, or NULL */
	int64_t bad;		/* the id a damaged reference has */
	XStatMetadata sm[S_N];
	StMdEntry se[S_N], *sep[S_N];
	XEventMetadata em[8];
	EvMdEntry ee[8], *eep[8];
	XStat st[40], *mdsp[8][6];
	XStat *evsp[16][6];
	size_t nst;		/* st[] used */
	XEvent ev[16], *evp[16];
	XLine ln[4], *lnp[4];
	XPlane pl[3], *plp[3];
	int nev;		/* ev[] used */
};

/* The TPU plane's stat and event metadata. */
static void
tiny_metadata(struct tiny *t)
{
	XStatMetadata *sm = t->sm;
	StMdEntry *se = t->se, **sep = t->sep;
	XEventMetadata *em = t->em;
	EvMdEntry *ee = t->ee, **eep = t->eep;
	XStat *st = t->st, *(*mdsp)[6] = t->mdsp;
	size_t nst = t->nst;
	const char *broken = t->broken;
	int64_t bad = t->bad;

	for (int i = 1; i < S_N; i++) {
		tensorflow__profiler__xstat_metadata__init(&sm[i]);
		sm[i].id = i;
		sm[i].name = (char *)tiny_snames[i];
		tensorflow__profiler__xplane__stat_metadata_entry__init(&se[i]);
		se[i].key = i;
		se[i].value = &sm[i];
		sep[i - 1] = &se[i];
	}
	for (int i = 0; i < 8; i++) {
		tensorflow__profiler__xevent_metadata__init(&em[i]);
		em[i].id = i + 1;
		tensorflow__profiler__xplane__event_metadata_entry__init(&ee[i]);
		ee[i].key = i + 1;
		ee[i].value = &em[i];
		eep[i] = &ee[i];
	}
	/* 1: a fusion with HLO text, scope, flops and a ref stat. */
	em[0].name = "%fusion.12 = f32[8]{0} fusion(f32[8]{0} %p), kind=kLoop";
	em[0].display_name = "fusion.12";
	em[0].stats = mdsp[0];
	tiny_stat(&st[nst], mdsp[0], &em[0].n_stats, S_TFOP);
	st[nst].value_case = TENSORFLOW__PROFILER__XSTAT__VALUE_STR_VALUE;
	st[nst++].str_value = "jit(train_step)/jit(main)/transformer/block_3/"
	    "attention/dot_general";
	tiny_stat(&st[nst], mdsp[0], &em[0].n_stats, S_FLOPS);
	st[nst].value_case = TENSORFLOW__PROFILER__XSTAT__VALUE_INT64_VALUE;
	st[nst++].int64_value = 1024;
	tiny_stat(&st[nst], mdsp[0], &em[0].n_stats, S_FKIND);
	st[nst].value_case = TENSORFLOW__PROFILER__XSTAT__VALUE_REF_VALUE;
	st[nst++].ref_value = strcmp(broken ? broken : "", "ref") == 0 ?
	    (uint64_t)bad : S_KLOOP;
	/* 2: a collective with big unsigned stats. */
	em[1].name = "%all-reduce.1 = f32[1024]{0} all-reduce(f32[1024]{0} %g)"
	    ", replica_groups={{0,1}}, to_apply=%add";
	em[1].display_name = "all-reduce.1";
	em[1].stats = mdsp[1];
	tiny_stat(&st[nst], mdsp[1], &em[1].n_stats, S_BYTES);
	st[nst].value_case = TENSORFLOW__PROFILER__XSTAT__VALUE_UINT64_VALUE;
	st[nst++].uint64_value = 4096;
	tiny_stat(&st[nst], mdsp[1], &em[1].n_stats, S_BIG);
	st[nst].value_case = TENSORFLOW__PROFILER__XSTAT__VALUE_UINT64_VALUE;
	st[nst++].uint64_value = UINT64_MAX;
	tiny_stat(&st[nst], mdsp[1], &em[1].n_stats, S_NEG);
	st[nst].value_case = TENSORFLOW__PROFILER__XSTAT__VALUE_INT64_VALUE;
	st[nst++].int64_value = -9007199254740993LL;
	/* 3: a module; 4: a step; 5: a copy with a double; 6: an instant. */
	em[2].name = "jit_train_step(42)";
	em[3].name = "1";
	em[4].name = "copy.3";
	em[4].stats = mdsp[4];
	tiny_stat(&st[nst], mdsp[4], &em[4].n_stats, S_RATIO);
	st[nst].value_case = TENSORFLOW__PROFILER__XSTAT__VALUE_DOUBLE_VALUE;
	st[nst++].double_value = 0.5;
	em[5].name = "marker";
	/* 7, 8: host events (another plane uses ids 1, 2 of its own). */
	em[6].name = "unused";
	em[7].name = "unused too";
	t->nst = nst;
}

/* The TPU plane's lines: Steps, XLA Ops, XLA Modules. */
static void
tiny_tpu_lines(struct tiny *t)
{
	XStat *st = t->st, *(*evsp)[6] = t->evsp;
	XEvent *ev = t->ev, **evp = t->evp;
	XLine *ln = t->ln, **lnp = t->lnp;
	size_t nst = t->nst;
	int nev = t->nev;
	const char *broken = t->broken;
	int64_t bad = t->bad;

	for (int i = 0; i < 16; i++) {
		tensorflow__profiler__xevent__init(&ev[i]);
		ev[i].data_case = TENSORFLOW__PROFILER__XEVENT__DATA_OFFSET_PS;
		ev[i].stats = evsp[i];
		evp[i] = &ev[i];
	}
	for (int i = 0; i < 4; i++) {
		tensorflow__profiler__xline__init(&ln[i]);
		lnp[i] = &ln[i];
	}
	/* Line "Steps": one step. */
	ln[0].id = 1;
	ln[0].name = "Steps";
	ln[0].timestamp_ns = 1000;
	ln[0].events = &evp[0];
	ev[0].metadata_id = 4;
	ev[0].offset_ps = 0;
	ev[0].duration_ps = 5000000;
	tiny_stat(&st[nst], evsp[0], &ev[0].n_stats, S_STEPNUM);
	st[nst].value_case = TENSORFLOW__PROFILER__XSTAT__VALUE_INT64_VALUE;
	st[nst++].int64_value = 1;
	ln[0].n_events = 1;
	nev = 1;
	/* Line "XLA Ops", out of order, with a tie, an instant and an
	 * aggregate. */
	ln[1].id = 3;
	ln[1].name = "XLA Ops";
	ln[1].timestamp_ns = 1000;
	ln[1].events = &evp[nev];
	ev[nev].metadata_id = 5;		/* copy.3 */
	ev[nev].offset_ps = 3000500;
	ev[nev].duration_ps = 999;
	nev++;
	ev[nev].metadata_id = strcmp(broken ? broken : "", "evmd") == 0 ?
	    bad : 1;				/* fusion.12 */
	ev[nev].offset_ps = 1000000;
	ev[nev].duration_ps = 2000000;
	tiny_stat(&st[nst], evsp[nev], &ev[nev].n_stats, S_GROUP);
	st[nst].value_case = TENSORFLOW__PROFILER__XSTAT__VALUE_INT64_VALUE;
	st[nst++].int64_value = 1;
	tiny_stat(&st[nst], evsp[nev], &ev[nev].n_stats, S_FLOPS);
	st[nst].value_case = TENSORFLOW__PROFILER__XSTAT__VALUE_INT64_VALUE;
	st[nst++].int64_value = 2048;
	tiny_stat(&st[nst], evsp[nev], &ev[nev].n_stats,
	    strcmp(broken ? broken : "", "statmd") == 0 ? bad : S_BLOB);
	st[nst].value_case = TENSORFLOW__PROFILER__XSTAT__VALUE_BYTES_VALUE;
	st[nst].bytes_value.data = (uint8_t *)"\x00\x01\xfe";
	st[nst++].bytes_value.len = 3;
	tiny_stat(&st[nst], evsp[nev], &ev[nev].n_stats, S_RATIO);
	st[nst].value_case = TENSORFLOW__PROFILER__XSTAT__VALUE_DOUBLE_VALUE;
	st[nst++].double_value = NAN;
	nev++;
	ev[nev].metadata_id = 2;		/* all-reduce.1: same start */
	ev[nev].offset_ps = 1000000;
	ev[nev].duration_ps = 3000000;
	nev++;
	ev[nev].metadata_id = 6;		/* marker: an instant */
	ev[nev].offset_ps = 4000000;
	nev++;
	ev[nev].metadata_id = 5;		/* an aggregate */
	ev[nev].data_case = TENSORFLOW__PROFILER__XEVENT__DATA_NUM_OCCURRENCES;
	ev[nev].num_occurrences = 7;
	ev[nev].duration_ps = 1000;
	nev++;
	ln[1].n_events = (size_t)(nev - 1);
	/* Line "XLA Modules", the earliest timestamp (the origin). */
	ln[2].id = 2;
	ln[2].name = "XLA Modules";
	ln[2].timestamp_ns = 999;
	ln[2].events = &evp[nev];
	ev[nev].metadata_id = 3;
	ev[nev].offset_ps = 1500;
	ev[nev].duration_ps = 4000000;
	nev++;
	ln[2].n_events = 1;
	t->nst = nst;
	t->nev = nev;
}

/* /host:CPU, the same plane id 7, a line id beyond 2^53. */
static void
tiny_host_plane(struct tiny *t)
{
	static XEventMetadata hm[1];
	static EvMdEntry he[1];
	static EvMdEntry *hep[1];
	static XStatMetadata hs[2];
	static StMdEntry hse[2], *hsep[2];
	XStat *st = t->st, *(*evsp)[6] = t->evsp;
	XEvent *ev = t->ev, **evp = t->evp;
	XLine *ln = t->ln, **lnp = t->lnp;
	XPlane *pl = t->pl;
	size_t nst = t->nst;
	int nev = t->nev;

	tensorflow__profiler__xevent_metadata__init(&hm[0]);
	hm[0].id = 1;
	hm[0].name = "$train.py:10 step";
	tensorflow__profiler__xplane__event_metadata_entry__init(&he[0]);
	he[0].key = 1;
	he[0].value = &hm[0];
	hep[0] = &he[0];
	tensorflow__profiler__xstat_metadata__init(&hs[0]);
	hs[0].id = 1;
	hs[0].name = "note";
	tensorflow__profiler__xstat_metadata__init(&hs[1]);
	hs[1].id = 2;
	hs[1].name = "group_id";
	for (int i = 0; i < 2; i++) {
		tensorflow__profiler__xplane__stat_metadata_entry__init(
		    &hse[i]);
		hse[i].key = i + 1;
		hse[i].value = &hs[i];
		hsep[i] = &hse[i];
	}
	ln[3].id = 9007199254740993LL;
	ln[3].name = "python3";
	ln[3].display_name = "main";
	ln[3].timestamp_ns = 1000;
	ln[3].events = &evp[nev];
	ev[nev].metadata_id = 1;
	ev[nev].offset_ps = 250;
	ev[nev].duration_ps = 10000;
	tiny_stat(&st[nst], evsp[nev], &ev[nev].n_stats, 1);
	st[nst].value_case = TENSORFLOW__PROFILER__XSTAT__VALUE_STR_VALUE;
	st[nst++].str_value = "a\"b\nc!";
	tiny_stat(&st[nst], evsp[nev], &ev[nev].n_stats, 2);
	st[nst].value_case = TENSORFLOW__PROFILER__XSTAT__VALUE_INT64_VALUE;
	st[nst++].int64_value = 1;
	nev++;
	ln[3].n_events = 1;
	pl[1].id = 7;
	pl[1].name = "/host:CPU";
	pl[1].n_lines = 1;
	pl[1].lines = &lnp[3];
	pl[1].n_event_metadata = 1;
	pl[1].event_metadata = hep;
	pl[1].n_stat_metadata = 2;
	pl[1].stat_metadata = hsep;
	t->nst = nst;
	t->nev = nev;
}

/* Build the tiny profile with protobuf-c structures and pack it whole
 * (it is small).  broken selects a damage (NULL: none). */
static unsigned char *
tiny_pack(const char *broken, size_t *len)
{
	struct tiny t;
	XPlane *pl = t.pl, **plp = t.plp;
	XLine **lnp = t.lnp;
	XSpace sp = TENSORFLOW__PROFILER__XSPACE__INIT;
	char *hosts[1] = { "tinyhost" }, *errs[1] = { "tiny error" },
	    *warns[1] = { "tiny warning" };
	unsigned char *buf;
	size_t n;

	t.broken = broken;
	t.bad = 99;
	t.nst = 0;
	t.nev = 0;
	tiny_metadata(&t);
	tiny_tpu_lines(&t);
	for (int i = 0; i < 3; i++)
		tensorflow__profiler__xplane__init(&pl[i]);
	pl[0].id = 7;
	pl[0].name = "/device:TPU:0";
	pl[0].n_lines = 3;
	pl[0].lines = lnp;
	pl[0].n_event_metadata = 8;
	pl[0].event_metadata = t.eep;
	pl[0].n_stat_metadata = S_N - 1;
	pl[0].stat_metadata = t.sep;
	tiny_host_plane(&t);
	/* An empty plane: no lines, nothing emitted. */
	pl[2].id = 0;
	pl[2].name = "/host:metadata";
	for (int i = 0; i < 3; i++)
		plp[i] = &pl[i];
	sp.n_planes = 3;
	sp.planes = plp;
	sp.n_hostnames = 1;
	sp.hostnames = hosts;
	sp.n_errors = 1;
	sp.errors = errs;
	sp.n_warnings = 1;
	sp.warnings = warns;
	n = tensorflow__profiler__xspace__get_packed_size(&sp);
	buf = nd_xmalloc(n + 16);
	tensorflow__profiler__xspace__pack(&sp, buf);
	*len = n;
	return buf;
}

static void
gen_tiny(W *w, const char *broken)
{
	size_t n;
	unsigned char *b = tiny_pack(broken, &n);

	if (broken == NULL || strcmp(broken, "evmd") == 0 ||
	    strcmp(broken, "statmd") == 0 || strcmp(broken, "ref") == 0) {
		w_bytes(w, b, n);
	} else if (strcmp(broken, "varint") == 0) {
		/* XSpace.planes with an 11-byte length varint. */
		static const unsigned char v[] = { 0x0a, 0xff, 0xff, 0xff, 0xff,
		    0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01 };

		w_bytes(w, v, sizeof v);
		w_bytes(w, b, n);
	} else if (strcmp(broken, "length") == 0) {
		/* The first plane claims 1000 more bytes than there are. */
		unsigned char hdr[16];
		size_t i = 1, k;

		while (b[i] & 0x80)
			i++;
		i++;
		hdr[0] = 0x0a;
		k = 1 + varint_enc(n + 1000, hdr + 1);
		w_bytes(w, hdr, k);
		w_bytes(w, b + i, n - i);
	} else if (strcmp(broken, "wiretype") == 0) {
		/* Append a plane whose line has events as a varint (4 << 3). */
		static const unsigned char p[] = { 0x0a, 0x06, 0x1a, 0x04,
		    0x08, 0x01, 0x20, 0x05 };

		w_bytes(w, b, n);
		w_bytes(w, p, sizeof p);
	} else
		nd_die(ND_EXIT_ERROR, "unknown --broken kind '%s'", broken);
	free(b);
}

/* ---------- main ---------- */

int
main(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "seed", required_argument, NULL, 's' },
		{ "events", required_argument, NULL, 'n' },
		{ "kind", required_argument, NULL, 'k' },
		{ "tiny", no_argument, NULL, 't' },
		{ "broken", required_argument, NULL, 'b' },
		{ "output", required_argument, NULL, 'o' },
		ND_CLI_STD_LONGOPTS,
		{ NULL, 0, NULL, 0 }
	};
	cfg c;
	const char *out = NULL, *broken = NULL;
	int tiny = 0, verbose = 0, ch;
	FILE *fp;
	W w = { 0, 0, NULL };
	nd_out *o;

	nd_init(argv[0]);
	memset(&c, 0, sizeof c);
	c.seed = 1;
	c.events = 100000;
	while ((ch = getopt_long(argc, argv, "hVo:v", opts, NULL)) != -1)
		switch (ch) {
		case 'h':
			nd_cli_help(usage_text);
		case 'V':
			nd_cli_version();
		case 's':
			c.seed = (uint64_t)nd_cli_int("--seed", optarg, 0,
			    INT64_MAX);
			break;
		case 'n':
			c.events = nd_cli_int("--events", optarg, 1,
			    INT64_C(1) << 40);
			break;
		case 'k':
			if (strcmp(optarg, "tpu") == 0)
				c.gpu = 0;
			else if (strcmp(optarg, "gpu") == 0)
				c.gpu = 1;
			else
				nd_die(ND_EXIT_ERROR, "invalid value for --kind: "
				    "'%s' (tpu or gpu)", optarg);
			break;
		case 't':
			tiny = 1;
			break;
		case 'b':
			broken = optarg;
			break;
		case 'o':
			out = optarg;
			break;
		case 'v':
			verbose = 1;
			break;
		default:
			nd_cli_usage(usage_text);
		}
	if (optind != argc)
		nd_cli_usage(usage_text);

	/* Through nd_out: -o FILE is replaced atomically (a device, a FIFO or
	 * a symlink's target is written as every program writes it). */
	o = nd_out_open(out);
	fp = nd_out_stdio(o);
	setvbuf(fp, NULL, _IOFBF, 1 << 20);
	w.fp = fp;

	if (tiny || broken != NULL) {
		gen_tiny(&w, broken);
	} else {
		c.ndev = 4;
		c.nops = (int)(c.events / (c.ndev * 20));
		if (c.nops > 500)
			c.nops = 500;
		if (c.nops < 4)
			c.nops = 4;
		c.nsteps = c.events / (c.ndev * (c.nops + c.nops / 64 + 2) +
		    (c.gpu ? c.ndev * 3 : 0) + 9);
		if (c.nsteps < 1)
			c.nsteps = 1;
		/* TPU: absolute ns since the epoch; GPU: relative to the
		 * Task Environment's profile_start_time. */
		c.ts_ns = c.gpu ? 12345 : 1771595650000000000LL +
		    (int64_t)(c.seed % 1000) * 1000000;
		make_schedule(&c);
		if (c.gpu)
			gen_gpu(&w, &c);
		else
			gen_tpu(&w, &c);
		w_space_tail(&w, c.gpu ? "gen-gpu-host" : "gen-tpu-host", NULL,
		    NULL);
		free(c.step_start);
		free(c.mod_start);
		free(c.mod_dur);
	}
	if (fclose(fp) != 0)
		nd_die_errno(ND_EXIT_ERROR, "%s: write error", out ? out :
		    "<stdout>");
	nd_out_close(o);
	if (verbose && (tiny || broken != NULL))
		fprintf(stderr, "gen-xplane: %llu bytes\n",
		    (unsigned long long)w.n);
	else if (verbose)
		fprintf(stderr, "gen-xplane: %llu events, %llu bytes\n",
		    (unsigned long long)events_written, (unsigned long long)w.n);
	free(scratch);
	return 0;
}
