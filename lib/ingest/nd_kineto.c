/*
 * nd_kineto: the Chrome/Perfetto/Kineto trace JSON -> ndtrace stream
 * engine (chrome2ndjson(1) is its program).
 *
 * Two passes over each input, because a Chrome trace is not ordered and
 * what a record needs (process names, the clock origin, the launching op of
 * a GPU kernel, the enclosing ProfilerStep) may come anywhere in the file:
 *
 *  1. nd_chrome streams the document; every event is validated, decoded
 *     into a 48-byte `rec` appended to the array of its timeline, and its
 *     args (minified, member names and long_name texts as tokens, any
 *     non-standard top-level member folded in) go to an nd_spool (memory,
 *     then an unlinked temporary file).  Names, categories and pid/tid
 *     strings are interned.
 *     Reading, gunzipping, hashing and validating run on a reader thread
 *     that hands batches of events to the decoding (main) thread.
 *  2. per timeline: B/E and async b/e pairs are matched, records sorted
 *     (nd_sort: ts ascending, longer first, parents first on full ties),
 *     and the nesting walked to give each record its `scope` and `step`;
 *     host launches (args.correlation) are collected, then device ops take
 *     the scope and step of their launch.  Records are written in an order
 *     close to the file's (a merge of the sorted timelines by file
 *     position), which keeps reads of the spool nearly sequential.  Sorting
 *     and formatting use a second thread too; the output is the same bytes
 *     whatever the threads do.
 *
 * Memory: 48 bytes a record, 4 more while writing, the spool's 8 MiB in
 * memory and read windows, sort buffers (at most half the largest
 * timeline, usually far less), interned strings; per distinct op and per
 * timeline a few hundred bytes.  Label scopes are a tree (snode) capped
 * in depth and length, so they stay linear however deep labels nest.
 *
 * An ordered input (every timeline already in output order in the file,
 * without B/E pairs) needs none of that: the output order is then the
 * file order.  So an input is read as above while every timeline stays
 * ordered; past a budget of records (BUDGET_BYTES of them) the records
 * move to the spool (a `sent`: the record, its timeline, its args after
 * it) and so do the later ones, while only what the writing needs stays
 * in memory (names, origin, steps, counts, and the launch table:
 * correlation -> scope and step of the launching host op, 24 bytes a
 * launch); once the
 * input is read, the spooled records are written in file order, each
 * one's scope from a nesting stack per timeline.  Disorder found after
 * the switch takes the spooled records back into memory (unspool) and
 * goes on buffered.  Same bytes out either way, and every input is read
 * exactly once: what is written is what that read saw, and nothing is
 * written before the input has been read whole.
 *
 * The rules (what is a scope element, the origin, skipped vs fatal) are
 * documented in chrome2ndjson(1); keep the two in step.
 */
#include "nd_kineto.h"
#include "nd_ascend.h"
#include "nd_chrome.h"
#include "nd_classify.h"
#include "nd_end.h"
#include "nd_event.h"
#include "nd_hash.h"
#include "nd_in.h"
#include "nd_json.h"
#include "nd_lines.h"
#include "nd_name.h"
#include "nd_memtl.h"
#include "nd_out.h"
#include "nd_scope.h"
#include "nd_sort.h"
#include "nd_spool.h"
#include "nd_util.h"

#include <stdarg.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <pthread.h>
#include <sys/mman.h>
#include <sys/stat.h>

#define NONE32 UINT32_MAX
#define NOSTEP INT32_MIN
#define LIM62 ((int64_t)1 << 62)
#define LIM53 ((int64_t)1 << 53)
#define ARGS_NONE UINT64_MAX
#define ARGS_LONG 0xffffffu	/* length field: true length prefixed */

/* ---------- records and tables ---------- */

enum { K_SPAN, K_B, K_E, K_INSTANT, K_COUNTER, K_FLOW, K_DEAD };
enum {
	F_CORR = 1,		/* corr holds args.correlation */
	F_STRID = 2,		/* flow: corr is a string id */
	F_FS = 0x10, F_FT = 0x20, F_FF = 0x30,	/* flow phase */
	F_FMASK = 0x30
};

/* One event between the passes (48 bytes). */
typedef struct rec {
	int64_t ts;		/* ns as written; origin applied on output */
	int64_t dur;		/* ns (spans) */
	uint64_t args;		/* spool offset << 24 | length, or ARGS_NONE */
	int64_t corr;		/* correlation / flow id; after the walk of a
				 * non-flow record: scope << 32 | (u32)step */
	uint32_t op;
	uint32_t seq;		/* position in traceEvents */
	uint8_t kind, flags;
} rec;

enum {
	OP_STEP = 1, OP_ANNOT = 2, OP_DEVICE = 4, OP_HOST = 8, OP_LAUNCHFLOW = 16
};

typedef struct op {
	uint32_t name, cat, lname;	/* strs ids / cats id; NONE32 none */
	uint32_t elem;		/* strs id of the scope element */
	uint32_t tfscope;	/* SC_TF | scopes id from args.tf_op, NONE32 */
	int32_t stepno;
	uint8_t flags, tie;
	uint64_t namej;		/* frags offset << 24 | length; 0 unset */
} op;

typedef struct proc {
	int64_t key;		/* integer pid, or strs id when isstr */
	uint8_t isstr;
	int64_t pid;		/* assigned */
	uint32_t name, labels;	/* strs ids of metadata, NONE32 */
} proc;

typedef struct tl {
	uint32_t proc;
	int64_t key;		/* integer tid or strs id */
	uint8_t isstr, async, has_device, has_host, has_be;
	uint8_t lane;		/* nd_ascend_lane of its process (lanes_mark) */
	uint32_t acat, aid;	/* async: cats id, strs id of the id */
	int64_t tid;		/* assigned */
	uint32_t thread_name;	/* strs id, NONE32 */
	int32_t devno;		/* smallest args.device, -1 none */
	rec *v;
	size_t n, cap, pos;
	nd_buf frag;		/* ,"pid":..,"tid":.. ... ,"rank":.. */
	struct frame *fr;	/* open spans of the walk (walk_one) */
	size_t nfr, capfr;
	int64_t lts, ldur;	/* last record read: is the order kept? */
	uint8_t ltie, lany;
} tl;

enum skip_reason {
	SK_NOT_OBJECT, SK_NO_PH, SK_BAD_PH, SK_UNSUPPORTED, SK_NO_TS, SK_BAD_TS,
	SK_NO_DUR, SK_BAD_DUR, SK_NEG_DUR, SK_BAD_NAME, SK_BAD_PID, SK_BAD_TID,
	SK_BAD_ARGS, SK_NO_ID, SK_UNMATCHED_B, SK_UNMATCHED_E,
	SK_UNMATCHED_ASYNC_B, SK_UNMATCHED_ASYNC_E, SK_FLOW_DROPPED,
	SK_TS_RANGE, SK_TOO_LONG, SK_NREASONS
};

static const char *const skip_names[SK_NREASONS] = {
	"not_an_object", "no_ph", "bad_ph", "unsupported_ph", "no_ts", "bad_ts",
	"no_dur", "bad_dur", "negative_dur", "bad_name", "bad_pid", "bad_tid",
	"bad_args", "no_id", "unmatched_B", "unmatched_E", "unmatched_b",
	"unmatched_e", "flow_not_written", "ts_out_of_range", "line_too_long"
};

typedef struct launch {
	int64_t corr;
	uint64_t packed;
} launch;

typedef struct stepiv {
	int64_t ts, end;
	int32_t n;
} stepiv;

typedef struct frame {
	int64_t end;
	uint32_t scope, elem;
	int32_t step;
	uint8_t capped;		/* a label here or above was left out */
} frame;

typedef struct extra {
	nd_jval k, v;
} extra;

/* Scope ids (32 bits of a packed record): an snode, or SC_TF | an id of
 * the tf_op scopes; NONE32 none. */
#define SC_TF 0x80000000u
#define SCOPE_LABELS 64
#define SCOPE_BYTES 4096

typedef struct snode {
	uint32_t parent;	/* snode, NONE32 at the top */
	uint32_t elem;		/* strs id of the last label */
	uint32_t len;		/* bytes of the path */
	uint32_t depth;		/* labels in the path */
} snode;

/* Everything about one input. */
struct nd_kineto {
	const char *path;	/* the input's name in messages */
	const char *arg;	/* the input as given (meta, rank) */
	nd_kineto_opts opts;
	const nd_kineto_opts *o;	/* &opts */
	int64_t shift, origin;	/* set by nd_kineto_finish */
	nd_chrome *ch;
	nd_spool *spool;
	nd_intern *strs, *cats, *scopes;
	nd_intern *opkeys, *pkeys, *tlkeys;
	nd_intern *tfops;	/* args.tf_op as written -> tfmap */
	uint32_t *tfmap;	/* SC_TF | scopes id, NONE32 */
	size_t captfmap;
	op *ops;
	size_t nops, capops;
	proc *procs;
	size_t nprocs, capprocs;
	tl *tls;
	size_t ntls, captls;
	nd_map64 *joins;	/* parent << 32 | label -> scope_join() */
	struct snode *snodes;	/* label scopes (see scope_join) */
	size_t nsnodes, capsnodes;
	uint64_t scope_capped;	/* labels left out of scopes */
	uint64_t long_numbers;	/* numbers written as strings (copy_num) */
	uint64_t *catcount;
	size_t capcat;
	uint64_t phases[128];
	uint64_t skipped[SK_NREASONS];
	uint64_t nev, nmeta, nx, ntimed;
	uint64_t spans, instants, counters, flows;
	uint64_t args_cut;	/* records written without args (too long) */
	stepiv *steps;
	size_t nsteps, capsteps;
	launch *launches;
	size_t nlaunches, caplaunches;
	extra *extras;
	size_t capextras;
	nd_jval *akeys;		/* names of the args members of this event */
	size_t nakeys, capakeys;
	nd_intern *kdict;	/* member names of args -> key tokens */
	struct kcache {
		const char *text;	/* "name": in kdict */
		uint32_t len, id;
	} kcache[512];
	nd_intern *vdict;	/* args.long_name texts -> value tokens */
	uint32_t *vlname;	/* vdict id -> strs id of the text decoded */
	size_t capvlname;
	uint64_t vbytes;	/* bytes held in vdict */
	int64_t min_ts, max_ts;
	int any_ts;
	int64_t *devids;	/* deviceProperties[].id */
	size_t ndevids, capdevids;
	int has_base;
	int64_t base_ns;
	int has_rank;
	int64_t rank;
	int overflowed;
	nd_buf header;		/* "key":value,... of other top-level members */
	nd_buf warnings;	/* JSON strings, comma separated */
	nd_buf scratch, scratch2;
	nd_buf frags;		/* JSON fragments: names, tf scopes, classes */
	uint64_t *scopej;	/* scopes id -> frags offset << 24 | length */
	size_t capscopej;
	nd_map64 *clsfrag;	/* op << 32 | tl -> frag */
	nd_intern *clstext;	/* texts of those frags */
	uint64_t *clsoff;	/* clstext id -> frag */
	size_t capclsoff;
	/* last timeline lookup */
	char lastp[64], lastt[64];
	size_t lastpn, lasttn;
	uint32_t lasttl;
	char sha[65];
	/* the ordered path (see the top of the file) */
	int mode;		/* M_* */
	int adaptive;		/* may leave M_BUFFER at the budget */
	int unordered;		/* a timeline out of order, or B/E pairs */
	int dev_nocorr, lflow_f;	/* flow_corr() may be needed */
	int defer;		/* warnings kept in pending until read */
	int unclosed;		/* nd_chrome_unclosed() */
	int rebuffered;		/* left M_PRESCAN for M_BUFFER (unspool) */
	int lanes;		/* a process named as a torch_npu lane */
	size_t nrecs;
	struct plaunch *plaunches;
	size_t nplaunches, capplaunches;
	nd_buf pending;		/* deferred warnings, NUL terminated */
	uint64_t first_sent;	/* spool offset of the first sent */
	size_t sent_inl;	/* M_PRESCAN: args bytes of the event's sent */
	char *sent_at;		/* M_PRESCAN: the event's reserved sent */
	uint64_t nsent;
	struct fmt *sf;		/* M_STREAM: the formatter and output */
	nd_out *out;
	nd_err err;		/* the first input error; items then ignored */
};

typedef struct nd_kineto src;

enum {
	M_BUFFER,		/* records kept, written after the read */
	M_PRESCAN,		/* ordered so far: records go to the spool */
	M_STREAM		/* pass 2: each spooled record written */
};

/* A record spooled by the ordered path (M_PRESCAN), followed by inl bytes
 * of its args (inl 0: the args are elsewhere in the spool, or none). */
typedef struct sent {
	rec r;
	uint32_t ti;
	uint32_t inl;
} sent;

/* Memory of the records buffered before an ordered file is streamed
 * instead: an input that fits (about 1.4 million events) is written from
 * memory, on two threads; a larger one stays within this, whatever its
 * length.  The spool costs no more instructions, only the helper thread. */
#define BUDGET_BYTES ((size_t)64 << 20)
#define BUDGET (BUDGET_BYTES / sizeof(rec))

/* ---------- small helpers ---------- */

static void
warn_add(src *s, const char *fmt, ...) ND_PRINTF(2, 3);

static void
warn_add(src *s, const char *fmt, ...)
{
	char msg[512];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof msg, fmt, ap);
	va_end(ap);
	if (s->warnings.len > 0)
		nd_buf_addc(&s->warnings, ',');
	nd_json_put_str(&s->warnings, msg, strlen(msg));
	if (s->o->quiet)
		return;
	if (s->defer)
		nd_buf_add(&s->pending, msg, strlen(msg) + 1);
	else
		nd_warn("%s: %s", s->path, msg);
}

/* Warnings of the read are printed once it is over: a read that ends in a
 * restart prints nothing. */
static void
warn_flush(src *s)
{
	for (size_t i = 0; i < s->pending.len; i += strlen(s->pending.p + i) + 1)
		nd_warn("%s: %s", s->path, s->pending.p + i);
	nd_buf_reset(&s->pending);
	s->defer = 0;
}

static uint32_t
intern(nd_intern *t, const char *p, size_t n)
{
	return nd_intern_id(t, p, n);
}

/* Intern a validated string value, decoding escapes when present. */
static uint32_t
intern_jstr(src *s, nd_intern *t, const nd_jval *v)
{
	if (!v->esc)
		return intern(t, v->raw + 1, v->len - 2);
	nd_buf_reset(&s->scratch);
	nd_json_unescape(v, &s->scratch);
	return intern(t, s->scratch.p, s->scratch.len);
}

/* Names, processes, threads and categories longer than this are cut:
 * only hostile input has them, and cut they keep every record's line far
 * below a reader's 64 MiB (and a frag's 24-bit length). */
#define NAME_CUT ((size_t)1 << 21)

/* A category: as intern_jstr, cut at NAME_CUT. */
static uint32_t
intern_cat(src *s, const nd_jval *v)
{
	if (!v->esc)
		return intern(s->cats, v->raw + 1,
		    v->len - 2 > NAME_CUT ? NAME_CUT : v->len - 2);
	nd_buf_reset(&s->scratch);
	nd_json_unescape(v, &s->scratch);
	return intern(s->cats, s->scratch.p,
	    s->scratch.len > NAME_CUT ? NAME_CUT : s->scratch.len);
}

static const char *
istr(const nd_intern *t, uint32_t id, size_t *n)
{
	return nd_intern_str(t, id, n);
}

/* ---------- fast walking of validated JSON ---------- */

static const unsigned char ws_tab[256] = {
	[' '] = 1, ['\t'] = 1, ['\n'] = 1, ['\r'] = 1
};

/* Ends of a number or literal inside a container. */
static const unsigned char delim_tab[256] = {
	[' '] = 1, ['\t'] = 1, ['\n'] = 1, ['\r'] = 1, [','] = 1, ['}'] = 1,
	[']'] = 1
};

static inline const char *
skip_ws(const char *p)
{
	while (ws_tab[(unsigned char)*p])
		p++;
	return p;
}

/* p just after the opening quote of a valid string that ends before end;
 * returns the byte after the closing quote, sets *esc on a backslash.
 * Eight bytes at a time: the lowest flagged byte of the mask is exactly
 * the first quote or backslash. */
static inline const char *
skip_str(const char *p, const char *end, int *esc)
{
	for (;;) {
#if defined(__GNUC__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
		while (end - p >= 8) {
			uint64_t x, q, b, m;

			memcpy(&x, p, 8);
			q = x ^ 0x2222222222222222ULL;
			b = x ^ 0x5c5c5c5c5c5c5c5cULL;
			q = (q - 0x0101010101010101ULL) & ~q;
			b = (b - 0x0101010101010101ULL) & ~b;
			m = (q | b) & 0x8080808080808080ULL;
			if (m != 0) {
				p += __builtin_ctzll(m) >> 3;
				goto special;
			}
			p += 8;
		}
#endif
		while (*p != '"' && *p != '\\')
			p++;
#if defined(__GNUC__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
special:
#endif
		if (*p == '"')
			return p + 1;
		*esc = 1;
		p += 2;
	}
}

/* End of the valid value at p (no leading white space). */
static const char *
skip_val(const char *p, const char *end)
{
	int depth = 0, esc = 0;

	switch (*p) {
	case '"':
		return skip_str(p + 1, end, &esc);
	case '{':
	case '[':
		break;
	default:
		while (p < end && !delim_tab[(unsigned char)*p])
			p++;
		return p;
	}
	for (;;) {
		char c = *p++;

		if (c == '"')
			p = skip_str(p, end, &esc);
		else if (c == '{' || c == '[')
			depth++;
		else if (c == '}' || c == ']') {
			if (--depth == 0)
				return p;
		}
	}
}

/* Copy a number of n bytes to d; one longer than ND_JSON_MAX_NUMBER,
 * which no stream reader accepts, as a string holding its text (counted in
 * *nlong).  Returns the end of the copy. */
static char *
copy_num(char *d, const char *p, size_t n, uint64_t *nlong)
{
	if (n > ND_JSON_MAX_NUMBER) {
		*d++ = '"';
		memcpy(d, p, n);
		d[n] = '"';
		(*nlong)++;
		return d + n + 1;
	}
	memcpy(d, p, n);
	return d + n;
}

/* Room to reserve for a copy of n bytes of JSON text: the copy drops
 * white space but may quote long numbers (2 bytes per 401 or more). */
#define COPY_ROOM(n) ((n) + (n) / 128 + 16)

/* Copy the valid value at p without insignificant white space to *o;
 * returns the end of the value.  Long numbers become strings (copy_num). */
static const char *
copy_val(const char *p, const char *end, char **o, uint64_t *nlong)
{
	char *d = *o;
	int depth = 0, esc = 0;
	const char *q;

	switch (*p) {
	case '"':
		q = skip_str(p + 1, end, &esc);
		memcpy(d, p, (size_t)(q - p));
		*o = d + (q - p);
		return q;
	case '{':
	case '[':
		break;
	default:
		q = p;
		while (q < end && !delim_tab[(unsigned char)*q])
			q++;
		*o = *p == '-' || (*p >= '0' && *p <= '9') ?
		    copy_num(d, p, (size_t)(q - p), nlong) :
		    (char *)memcpy(d, p, (size_t)(q - p)) + (q - p);
		return q;
	}
	for (;;) {
		char c = *p;

		if (c == '"') {
			q = skip_str(p + 1, end, &esc);
			memcpy(d, p, (size_t)(q - p));
			d += q - p;
			p = q;
			continue;
		}
		if (c == '-' || (c >= '0' && c <= '9')) {
			q = p;
			while (!delim_tab[(unsigned char)*q])
				q++;	/* a number in a container ends before one */
			d = copy_num(d, p, (size_t)(q - p), nlong);
			p = q;
			continue;
		}
		p++;
		if (ws_tab[(unsigned char)c])
			continue;
		*d++ = c;
		if (c == '{' || c == '[')
			depth++;
		else if (c == '}' || c == ']') {
			if (--depth == 0)
				break;
		}
	}
	*o = d;
	return p;
}

static nd_jtype
jtype_of(char c)
{
	switch (c) {
	case '"': return ND_JSTR;
	case '{': return ND_JOBJ;
	case '[': return ND_JARR;
	case 't': return ND_JTRUE;
	case 'f': return ND_JFALSE;
	case 'n': return ND_JNULL;
	default: return ND_JNUM;
	}
}

/* The next member name of a valid object (*pp just after '{' or after the
 * previous value); *pp is left at the value.  0 at the closing brace. */
static int
obj_key(const char **pp, const char *end, nd_jval *k)
{
	const char *p = skip_ws(*pp);

	if (*p == ',')
		p = skip_ws(p + 1);
	if (*p == '}') {
		*pp = p + 1;
		return 0;
	}
	k->type = ND_JSTR;
	k->raw = p;
	k->esc = 0;
	p = skip_str(p + 1, end, &k->esc);
	k->len = (size_t)(p - k->raw);
	*pp = skip_ws(skip_ws(p) + 1);
	return 1;
}

static void
obj_val(const char **pp, const char *end, nd_jval *v)
{
	const char *p = *pp;

	v->type = jtype_of(*p);
	v->raw = p;
	v->esc = 0;
	if (*p == '"')
		p = skip_str(p + 1, end, &v->esc);
	else
		p = skip_val(p, end);
	v->len = (size_t)(p - v->raw);
	*pp = p;
}

static int
obj_next(const char **pp, const char *end, nd_jval *k, nd_jval *v)
{
	if (!obj_key(pp, end, k))
		return 0;
	obj_val(pp, end, v);
	return 1;
}

static inline int
key_is(const nd_jval *k, const char *s, size_t n)
{
	return k->len == n + 2 && memcmp(k->raw + 1, s, n) == 0;
}

/* Copy a valid JSON value without insignificant white space. */
static char *
minify(const char *p, const char *end, char *o, uint64_t *nlong)
{
	copy_val(p, end, &o, nlong);
	return o;
}

/* A canonical decimal integer (no leading zeros, optional '-'). */
static int
canon_int(const char *p, size_t n, int64_t *out)
{
	int neg = 0;
	uint64_t x = 0;

	if (n > 0 && *p == '-') {
		neg = 1;
		p++;
		n--;
	}
	if (n == 0 || n > 19 || (n > 1 && *p == '0'))
		return -1;
	for (size_t i = 0; i < n; i++) {
		if (p[i] < '0' || p[i] > '9')
			return -1;
		x = x * 10 + (uint64_t)(p[i] - '0');
	}
	if (x > (uint64_t)INT64_MAX)
		return -1;
	if (neg && x == 0)
		return -1;
	*out = neg ? -(int64_t)x : (int64_t)x;
	return 0;
}

/* ---------- tables ---------- */

static int
cat_in(const char *c, size_t n, const char *const *set)
{
	for (; *set != NULL; set++)
		if (strlen(*set) == n && strncasecmp(c, *set, n) == 0)
			return 1;
	return 0;
}

static const char *const host_cats[] = {
	"cpu_op", "operator", "cuda_runtime", "runtime", "cuda_driver",
	"python_function", "user_annotation", "cpu_instant_event", NULL
};
static const char *const launch_flow_cats[] = {
	"ac2g", "async", "async_cpu_to_gpu", "async_npu", NULL
};

/* Is a span without a category a record_function label?  Operators have
 * a namespace ("aten::mm", "gloo:all_reduce") or are autograd nodes
 * ("MmBackward0"); labels are anything else. */
static int
looks_like_label(const char *n, size_t len)
{
	size_t i = len;

	if (len == 0 || memchr(n, ':', len) != NULL)
		return 0;
	while (i > 0 && n[i - 1] >= '0' && n[i - 1] <= '9')
		i--;
	if (i >= 8 && memcmp(n + i - 8, "Backward", 8) == 0)
		return 0;
	if ((len == 6 && memcmp(n, "detach", 6) == 0) ||
	    (len == 7 && memcmp(n, "detach_", 7) == 0))
		return 0;
	return 1;
}

static void
op_classify(src *s, op *o)
{
	size_t nn, cn = 0;
	const char *name = istr(s->strs, o->name, &nn);
	const char *cat = o->cat != NONE32 ? istr(s->cats, o->cat, &cn) : NULL;

	o->stepno = NOSTEP;
	o->elem = NONE32;
	o->tie = 4;
	/* on the device: a device op or annotation by its category */
	if (cat != NULL && nd_cat_on_device((nd_str){ cat, cn })) {
		o->flags |= OP_DEVICE;
		o->tie = 6;
	}
	if (cat != NULL && cat_in(cat, cn, host_cats))
		o->flags |= OP_HOST;
	if (cat != NULL && cat_in(cat, cn, launch_flow_cats))
		o->flags |= OP_LAUNCHFLOW;
	if (nn > 13 && memcmp(name, "ProfilerStep#", 13) == 0) {
		int64_t v;

		if (nd_step_number(name + 13, nn - 13, &v)) {
			o->flags |= OP_STEP;
			o->stepno = (int32_t)v;
			o->tie = 0;
			return;
		}
	}
	if (cat != NULL && ((cn == 15 && memcmp(cat, "user_annotation", 15) == 0) ||
	    (cn == 19 && memcmp(cat, "gpu_user_annotation", 19) == 0))) {
		if (nn > 0) {
			o->flags |= OP_ANNOT;
			o->elem = o->name;
			o->tie = 1;
		}
	} else if (cat != NULL && cn == 15 &&
	    memcmp(cat, "python_function", 15) == 0) {
		o->tie = 3;
		if (nn > 11 && memcmp(name, "nn.Module: ", 11) == 0) {
			o->flags |= OP_ANNOT;
			o->elem = intern(s->strs, name + 11, nn - 11);
			o->tie = 2;
		}
	} else if (cat == NULL && looks_like_label(name, nn)) {
		o->flags |= OP_ANNOT;
		o->elem = o->name;
		o->tie = 1;
	} else if (cat != NULL && (o->flags & OP_HOST) &&
	    (strncasecmp(cat, "cuda_runtime", cn) == 0 ||
	    strncasecmp(cat, "runtime", cn) == 0 ||
	    strncasecmp(cat, "cuda_driver", cn) == 0))
		o->tie = 5;
}

static uint32_t
op_get(src *s, uint32_t name, uint32_t cat, uint32_t lname, uint32_t tfscope)
{
	uint32_t key[4] = { name, cat, lname, tfscope };
	uint32_t n = nd_intern_count(s->opkeys);
	uint32_t id = nd_intern_id(s->opkeys, (const char *)key, sizeof key);

	if (id == n) {
		op *o;

		nd_grow(&s->ops, &s->capops, (size_t)id + 1, sizeof *s->ops);
		o = &s->ops[id];
		memset(o, 0, sizeof *o);
		o->name = name;
		o->cat = cat;
		o->lname = lname;
		o->tfscope = tfscope;
		op_classify(s, o);
		s->nops = (size_t)id + 1;
	}
	return id;
}

/* pid/tid/id values: an integer, or a string (interned). */
typedef struct idk {
	int64_t v;
	uint8_t isstr;
} idk;

/* 0 ok, -1 wrong type.  Missing and null read as the empty string. */
static int
idk_of(src *s, const nd_jval *v, idk *k)
{
	int64_t x;

	switch (v->type) {
	case ND_JNONE:
	case ND_JNULL:
		k->isstr = 1;
		k->v = intern(s->strs, "", 0);
		return 0;
	case ND_JNUM:
		if (nd_json_int(v, &x) == 0) {
			k->isstr = 0;
			k->v = x;
		} else {
			k->isstr = 1;
			k->v = intern(s->strs, v->raw, v->len);
		}
		return 0;
	case ND_JSTR:
		/* a numeric string is that number, within the +-2^53 of a
		 * numeric one; past it, a name to number like any other */
		if (!v->esc && canon_int(v->raw + 1, v->len - 2, &x) == 0 &&
		    x >= -ND_JSON_MAX_SAFE_INT && x <= ND_JSON_MAX_SAFE_INT) {
			k->isstr = 0;
			k->v = x;
		} else {
			k->isstr = 1;
			k->v = intern_jstr(s, s->strs, v);
		}
		return 0;
	default:
		return -1;
	}
}

static uint32_t
proc_get(src *s, idk pk)
{
	struct {
		int64_t v;
		int64_t isstr;
	} key = { pk.v, pk.isstr };
	uint32_t n = nd_intern_count(s->pkeys);
	uint32_t id = nd_intern_id(s->pkeys, (const char *)&key, sizeof key);

	if (id == n) {
		proc *p;

		nd_grow(&s->procs, &s->capprocs, (size_t)id + 1,
		    sizeof *s->procs);
		p = &s->procs[id];
		memset(p, 0, sizeof *p);
		p->key = pk.v;
		p->isstr = pk.isstr;
		p->name = p->labels = NONE32;
		s->nprocs = (size_t)id + 1;
	}
	return id;
}

static uint32_t
tl_get(src *s, idk pk, idk tk, int async, uint32_t acat, uint32_t aid)
{
	struct {
		int64_t p, t;
		uint32_t acat, aid;
		uint8_t pstr, tstr, async, pad[5];
	} key;
	uint32_t n, id;

	memset(&key, 0, sizeof key);
	key.p = pk.v;
	key.pstr = pk.isstr;
	if (async) {
		key.async = 1;
		key.acat = acat;
		key.aid = aid;
	} else {
		key.t = tk.v;
		key.tstr = tk.isstr;
	}
	n = nd_intern_count(s->tlkeys);
	id = nd_intern_id(s->tlkeys, (const char *)&key, sizeof key);
	if (id == n) {
		tl *t;
		uint32_t pr = proc_get(s, pk);

		nd_grow(&s->tls, &s->captls, (size_t)id + 1, sizeof *s->tls);
		t = &s->tls[id];
		memset(t, 0, sizeof *t);
		t->proc = pr;
		t->async = (uint8_t)async;
		t->acat = acat;
		t->aid = aid;
		if (!async) {
			t->key = tk.v;
			t->isstr = tk.isstr;
		}
		t->thread_name = NONE32;
		t->devno = -1;
		s->ntls = (size_t)id + 1;
	}
	return id;
}

/* The per-timeline record arrays grow by doubling.  Past BIG bytes they
 * are mappings of their own, grown with mremap(2): no copy, however large
 * they get, and transparent huge pages make first touches cheap (page
 * faults are dear on virtual machines).  Below, plain realloc. */
#define BIG ((size_t)1 << 20)

/* An anonymous mapping just made (or moved), on huge pages if it can. */
static void *
mapped(void *p, size_t bytes)
{
	if (p == MAP_FAILED)
		nd_die_errno(ND_EXIT_ERROR, "out of memory (%zu bytes)", bytes);
#ifdef MADV_HUGEPAGE
	madvise(p, bytes, MADV_HUGEPAGE);
#endif
	return p;
}

static void *
grow_array(void *p, size_t old, size_t bytes)
{
	void *q;

	if (bytes < BIG)
		return nd_xrealloc(p, bytes);
	if (old < BIG) {
		q = mapped(mmap(NULL, bytes, PROT_READ | PROT_WRITE,
		    MAP_PRIVATE | MAP_ANONYMOUS, -1, 0), bytes);
		if (old > 0)
			memcpy(q, p, old);
		free(p);
		return q;
	}
	return mapped(mremap(p, old, bytes, MREMAP_MAYMOVE), bytes);
}

static void
free_array(void *p, size_t bytes)
{
	if (bytes < BIG)
		free(p);
	else if (p != NULL)
		munmap(p, bytes);
}

static rec *
tl_push(tl *t)
{
	if (t->n == t->cap) {
		size_t c = t->cap ? t->cap * 2 : 4;

		t->v = grow_array(t->v, t->cap * sizeof *t->v, c * sizeof *t->v);
		t->cap = c;
	}
	return &t->v[t->n++];
}

/* ---------- phase 1: one event ---------- */

struct special {
	int has_corr;
	int64_t corr;
	int device;
	nd_jval lname, tfop, ttype;
	nd_jval mname, mlabels;
	const char *lname_raw;	/* the long_name value token of lname_vid */
	uint32_t lname_vid;
};

/* *to = jv when k names the member and jv is a string. */
static void
take_str(const nd_jval *k, const nd_jval *jv, const char *name, size_t n,
    nd_jval *to)
{
	if (key_is(k, name, n) && jv->type == ND_JSTR)
		*to = *jv;
}

static void
special_of(const nd_jval *k, const char *v, const char *vend,
    struct special *sp)
{
	nd_jval jv;
	int64_t d;

	if (k->esc || k->len < 6 || k->len > 13)
		return;
	jv.type = jtype_of(*v);
	jv.raw = v;
	jv.len = (size_t)(vend - v);
	jv.esc = jv.type == ND_JSTR && memchr(v, '\\', jv.len) != NULL;
	switch (k->len - 2) {
	case 4:
		take_str(k, &jv, "name", 4, &sp->mname);
		break;
	case 5:
		take_str(k, &jv, "tf_op", 5, &sp->tfop);
		break;
	case 6:
		if (!key_is(k, "device", 6))
			take_str(k, &jv, "labels", 6, &sp->mlabels);
		else if (jv.type == ND_JNUM && nd_json_int(&jv, &d) == 0 &&
		    d >= 0 && d < 1000000)
			sp->device = (int)d;
		break;
	case 9:
		take_str(k, &jv, "long_name", 9, &sp->lname);
		take_str(k, &jv, "Task Type", 9, &sp->ttype);
		break;
	case 11:
		if (key_is(k, "correlation", 11) && jv.type == ND_JNUM &&
		    nd_json_int(&jv, &sp->corr) == 0)
			sp->has_corr = 1;
		break;
	}
}

/* Spooled args are minified JSON in which a member name may be replaced
 * by a key token: the byte KTOK and two bytes of an id in the source's key
 * dictionary (kdict), whose entry is the text `"name":`.  Minified valid
 * JSON never holds a byte below 0x20, so the marker is unambiguous.  Key
 * names are most of the bytes of profiler args ("registers per thread",
 * "est. achieved occupancy %"): tokens halve what goes through the spool
 * file.  A string value of args.long_name may be a value token: the byte
 * VTOK and four bytes of an id in vdict, whose entry is the string as
 * written (value_token). */
#define KTOK '\001'
#define VTOK '\002'
#define KDICT_MAX 60000
#define VTOK_MIN 32		/* shorter long_names stay inline */
#define VDICT_BYTES ((uint64_t)64 << 20)

static uint32_t
key_token(src *s, const char *k, size_t n)
{
	uint64_t w = 0;
	struct kcache *c;
	uint32_t id, cnt;

	memcpy(&w, k + 1, n - 1 < 8 ? n - 1 : 8);
	c = &s->kcache[(nd_hash_u64(w ^ (uint64_t)n << 56)) & 511];
	if (c->text != NULL && c->len == n + 1 &&
	    memcmp(c->text, k, n) == 0)
		return c->id;
	cnt = nd_intern_count(s->kdict);
	nd_buf_reset(&s->scratch2);
	nd_buf_add(&s->scratch2, k, n);
	nd_buf_addc(&s->scratch2, ':');
	id = nd_intern_id(s->kdict, s->scratch2.p, n + 1);
	if (id == cnt && cnt >= KDICT_MAX)
		return NONE32;	/* full: later names stay as they are */
	c->text = nd_intern_str(s->kdict, id, NULL);
	c->len = (uint32_t)n + 1;
	c->id = id;
	return id;
}

/* The string value of args.long_name at p (XLA's HLO text: hundreds of
 * bytes, the same at every run of an op, most of the bytes of a JAX trace)
 * as a value token at *o, else copied.  Its decoded text is interned for
 * the op anyway (ev_record, through vlname), so vdict holds about as much
 * again, capped at VDICT_BYTES; the spool holds 5 bytes a record. */
static const char *
value_token(src *s, const char *p, const char *end, char **o,
    struct special *sp)
{
	int esc = 0;
	const char *q = skip_str(p + 1, end, &esc);
	size_t n = (size_t)(q - p);
	uint32_t cnt = nd_intern_count(s->vdict), id = NONE32;

	if (n >= VTOK_MIN)
		id = s->vbytes + n <= VDICT_BYTES ?
		    nd_intern_id(s->vdict, p, n) :
		    nd_intern_find(s->vdict, p, n);
	if (id == NONE32) {
		memcpy(*o, p, n);
		*o += n;
		return q;
	}
	if (id == cnt) {
		s->vbytes += n;
		nd_grow(&s->vlname, &s->capvlname, (size_t)id + 1,
		    sizeof *s->vlname);
		s->vlname[id] = NONE32;
	}
	**o = VTOK;
	memcpy(*o + 1, &id, 4);
	*o += 5;
	sp->lname_raw = p;
	sp->lname_vid = id;
	return q;
}

/* Walk the members of a valid args object (p at its '{'), copying them
 * minified to *o as `{"k":v,"k":v` (no closing brace; *n counts them),
 * names as key tokens, noting the names in s->akeys and picking out the
 * members that mean something to us.  Returns the end of args.  One
 * pass: finding the end, minifying and looking are fused. */
static const char *
args_walk(src *s, const char *p, const char *end, struct special *sp,
    char **o, int *n)
{
	nd_jval k;

	p++;
	while (obj_key(&p, end, &k)) {
		char *d = *o;
		const char *v = p;
		uint32_t id = NONE32;

		*d++ = (*n)++ ? ',' : '{';
		if (!k.esc && k.len >= 5 && k.len <= 200)
			id = key_token(s, k.raw, k.len);
		if (id != NONE32) {
			*d++ = KTOK;
			*d++ = (char)(id & 0xff);
			*d++ = (char)(id >> 8);
		} else {
			memcpy(d, k.raw, k.len);
			d += k.len;
			*d++ = ':';
		}
		if (*p == '"' && !k.esc && key_is(&k, "long_name", 9))
			p = value_token(s, p, end, &d, sp);
		else
			p = copy_val(p, end, &d, &s->long_numbers);
		*o = d;
		nd_grow(&s->akeys, &s->capakeys, s->nakeys + 1,
		    sizeof *s->akeys);
		s->akeys[s->nakeys++] = k;
		special_of(&k, v, p, sp);
	}
	return p;
}

/* Append the extra top-level members of an event to the args being
 * written at *o unless args has a member of the same name. */
static void
append_extras(src *s, size_t nextras, char **o, int *n)
{
	nd_intern *seen = NULL;

	/* many names on both sides: look them up in a table, not each
	 * against each */
	if (nextras > 8 && s->nakeys > 8 && (uint64_t)nextras * s->nakeys >
	    4096) {
		seen = nd_intern_new();
		for (size_t j = 0; j < s->nakeys; j++)
			nd_intern_id(seen, s->akeys[j].raw, s->akeys[j].len);
	}
	for (size_t i = 0; i < nextras; i++) {
		const extra *x = &s->extras[i];
		int dup = 0;
		char *d = *o;

		if (seen != NULL)
			dup = nd_intern_find(seen, x->k.raw, x->k.len) !=
			    UINT32_MAX;
		else
			for (size_t j = 0; j < s->nakeys && !dup; j++)
				dup = s->akeys[j].len == x->k.len &&
				    memcmp(s->akeys[j].raw, x->k.raw,
				    x->k.len) == 0;
		if (dup)
			continue;
		*d++ = (*n)++ ? ',' : '{';
		memcpy(d, x->k.raw, x->k.len);
		d += x->k.len;
		*d++ = ':';
		copy_val(x->v.raw, x->v.raw + x->v.len, &d,
		    &s->long_numbers);
		*o = d;
	}
	nd_intern_free(seen);
}

/* The first key or value token in [p, end), NULL if none: eight bytes
 * at a time, the lowest flagged byte of the mask is exactly the first byte
 * below 3 (nothing else in minified JSON is). */
static const char *
next_token(const char *p, const char *end)
{
#if defined(__GNUC__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
	while (end - p >= 8) {
		uint64_t x, m;

		memcpy(&x, p, 8);
		m = (x - 0x0303030303030303ULL) & ~x & 0x8080808080808080ULL;
		if (m != 0)
			return p + (__builtin_ctzll(m) >> 3);
		p += 8;
	}
#endif
	while (p < end && (unsigned char)*p > (unsigned char)VTOK)
		p++;
	return p < end ? p : NULL;
}

/* Spooled args (key and value tokens expanded) appended to b. */
static void
detok(const src *s, nd_buf *b, const char *p, size_t n)
{
	const char *end = p + n;

	while (p < end) {
		const char *q = next_token(p, end);
		size_t kn;
		const char *k;
		uint32_t id;

		if (q == NULL) {
			nd_buf_add(b, p, (size_t)(end - p));
			return;
		}
		nd_buf_add(b, p, (size_t)(q - p));
		if (*q == KTOK) {
			k = nd_intern_str(s->kdict, (uint32_t)(unsigned char)q[1] |
			    (uint32_t)(unsigned char)q[2] << 8, &kn);
			p = q + 3;
		} else {
			memcpy(&id, q + 1, 4);
			k = nd_intern_str(s->vdict, id, &kn);
			p = q + 5;
		}
		nd_buf_add(b, k, kn);
	}
}

/* Commit args written at [d, d + n) (reserved with 16 bytes of slack). */
static uint64_t
args_commit(src *s, char *d, size_t n)
{
	if (s->mode == M_PRESCAN) {
		/* in the event's sent, committed with it (rec_done) */
		uint64_t off = nd_spool_size(s->spool) + sizeof(sent);

		if (n < ARGS_LONG) {
			s->sent_inl = n;
			return off << 24 | n;
		}
		memmove(d + 8, d, n);
		memcpy(d, &(uint64_t){ n }, 8);
		s->sent_inl = n + 8;
		return off << 24 | ARGS_LONG;
	}
	if (n < ARGS_LONG)
		return nd_spool_commit(s->spool, n) << 24 | n;
	memmove(d + 8, d, n);
	memcpy(d, &(uint64_t){ n }, 8);
	return nd_spool_commit(s->spool, n + 8) << 24 | ARGS_LONG;
}

static const char *
args_get(src *s, uint64_t a, size_t *n)
{
	uint64_t off = a >> 24;
	size_t len = (size_t)(a & 0xffffff);

	if (len == ARGS_LONG) {
		uint64_t l;

		memcpy(&l, nd_spool_get(s->spool, off, 8), 8);
		*n = (size_t)l;
		return nd_spool_get(s->spool, off + 8, (size_t)l);
	}
	*n = len;
	return nd_spool_get(s->spool, off, len);
}

static void
skip(src *s, enum skip_reason r)
{
	s->skipped[r]++;
}

static int get_time(const nd_jval *v, int64_t *ns);

/* torch_npu writes "ts":"1699529623106750.125": the number in the
 * string, read like any other */
static int
get_time_str(const nd_jval *v, int64_t *ns)
{
	nd_jval num;

	return nd_ascend_strnum(v, &num) == 0 ? get_time(&num, ns) : -1;
}

static int
get_time(const nd_jval *v, int64_t *ns)
{
	const char *p = v->raw, *e = v->raw + v->len;
	int64_t x = 0;
	int frac = -1;

	if (v->type != ND_JNUM)
		return get_time_str(v, ns);
	/* The common case, digits with at most three decimals, directly;
	 * anything else (a sign, an exponent, more digits) exactly by
	 * nd_json_fixed. */
	if (v->len <= 18) {
		for (; p < e; p++) {
			if (*p >= '0' && *p <= '9') {
				x = x * 10 + (*p - '0');
				if (frac >= 0 && ++frac > 3)
					break;
			} else if (*p == '.' && frac < 0)
				frac = 0;
			else
				break;
		}
		if (p == e) {
			/* 18 digits times 1000 would pass 2^63: the same
			 * 2^62 limit as below */
			for (frac = frac < 0 ? 0 : frac; frac < 3; frac++) {
				if (x >= LIM62 / 10)
					return -1;
				x *= 10;
			}
			*ns = x;
			return 0;
		}
	}
	if (nd_json_fixed(v->raw, v->len, 3, ns) != 0 ||
	    *ns >= LIM62 || *ns <= -LIM62)
		return -1;
	return 0;
}

static void
metadata(src *s, const nd_jval *name, const nd_jval *pid, const nd_jval *tid,
    const struct special *sp)
{
	idk pk, tk;

	s->nmeta++;
	if (name->type != ND_JSTR)
		return;
	if (nd_jstr_eq(name, "trace_buffer_overflowed")) {
		s->overflowed = 1;
		return;
	}
	if (idk_of(s, pid, &pk) != 0)
		return;
	if (nd_jstr_eq(name, "process_name") && sp->mname.type == ND_JSTR) {
		uint32_t pi = proc_get(s, pk), v = intern_jstr(s, s->strs,
		    &sp->mname);
		size_t n;
		const char *pn = istr(s->strs, v, &n);

		s->procs[pi].name = v;
		if (nd_ascend_lane(pn, n) != ND_ASC_NONE)
			s->lanes = 1;
	} else if (nd_jstr_eq(name, "process_labels") &&
	    sp->mlabels.type == ND_JSTR) {
		uint32_t pi = proc_get(s, pk), v = intern_jstr(s, s->strs,
		    &sp->mlabels);

		s->procs[pi].labels = v;
	} else if (nd_jstr_eq(name, "thread_name") &&
	    sp->mname.type == ND_JSTR && idk_of(s, tid, &tk) == 0) {
		uint32_t t = tl_get(s, pk, tk, 0, 0, 0);
		uint32_t v = intern_jstr(s, s->strs, &sp->mname);

		s->tls[t].thread_name = v;
	}
}

static void rec_done(src *s, uint32_t ti, rec *r);
static uint32_t *output_order(src *s, size_t *np);

/* The scope of an args.tf_op, normalized once per distinct value (XLA
 * traces repeat a few hundred long ones). */
static uint32_t
tfop_scope(src *s, const nd_jval *v)
{
	uint32_t cnt = nd_intern_count(s->tfops);
	uint32_t id = nd_intern_id(s->tfops, v->raw, v->len);
	size_t n;

	if (id < cnt)
		return s->tfmap[id];
	nd_grow(&s->tfmap, &s->captfmap, (size_t)id + 1, sizeof *s->tfmap);
	s->tfmap[id] = NONE32;
	nd_buf_reset(&s->scratch);
	nd_json_unescape(v, &s->scratch);
	nd_buf_reset(&s->scratch2);
	n = nd_scope_normalize(s->scratch.p, s->scratch.len, 1, &s->scratch2);
	if (n > 0)
		s->tfmap[id] = SC_TF | intern(s->scopes, s->scratch2.p, n);
	return s->tfmap[id];
}

/* A host span of a ProfilerStep: the interval of its step. */
static void
step_add(src *s, const op *o, int64_t ts, int64_t dur)
{
	if (!(o->flags & OP_STEP) || (o->flags & OP_DEVICE))
		return;
	nd_grow(&s->steps, &s->capsteps, s->nsteps + 1, sizeof *s->steps);
	s->steps[s->nsteps].ts = ts;
	s->steps[s->nsteps].end = ts + dur;
	s->steps[s->nsteps].n = o->stepno;
	s->nsteps++;
}

/* One element of traceEvents as it is decoded (event() and its steps). */
typedef struct evst {
	nd_jval ph, name, cat, ts, dur, pid, tid, id, id2, args;
	struct special sp;
	size_t nextras;
	int nmem, kind, async, flags;
	uint32_t catid, acat, aid;
	int64_t tsns, durns, corr;
	idk pk, tk;
	char *d0, *o;		/* its args, written into the spool */
} evst;

/* The slot in e of a standard member of an event (name of n bytes).
 * Names are compared as up to 4 bytes packed in an integer. */
#define KEY4(a, b, c, d) ((uint32_t)(uint8_t)(a) | \
	(uint32_t)(uint8_t)(b) << 8 | (uint32_t)(uint8_t)(c) << 16 | \
	(uint32_t)(uint8_t)(d) << 24)

static nd_jval *
std_member(evst *e, const char *kp, size_t n)
{
	static const struct {
		uint32_t key;
		size_t off;
	} m[] = {
		{ KEY4('p', 'h', 0, 0), offsetof(evst, ph) },
		{ KEY4('t', 's', 0, 0), offsetof(evst, ts) },
		{ KEY4('i', 'd', 0, 0), offsetof(evst, id) },
		{ KEY4('c', 'a', 't', 0), offsetof(evst, cat) },
		{ KEY4('d', 'u', 'r', 0), offsetof(evst, dur) },
		{ KEY4('p', 'i', 'd', 0), offsetof(evst, pid) },
		{ KEY4('t', 'i', 'd', 0), offsetof(evst, tid) },
		{ KEY4('i', 'd', '2', 0), offsetof(evst, id2) },
		{ KEY4('n', 'a', 'm', 'e'), offsetof(evst, name) }
	};
	static const uint8_t from[] = { 0, 0, 0, 3, 8, 9 };	/* by n */
	uint32_t w;

	if (n < 2 || n > 4)
		return NULL;
	w = KEY4(kp[0], kp[1], n > 2 ? kp[2] : 0, n > 3 ? kp[3] : 0);
	for (size_t i = from[n]; i < from[n + 1]; i++)
		if (m[i].key == w)
			return (nd_jval *)((char *)e + m[i].off);
	return NULL;
}

/* The members of the event: the standard ones into e, args copied into
 * the spool (args_walk), any other kept in s->extras. */
static void
ev_members(src *s, const nd_chrome_item *it, evst *e)
{
	const char *p = it->val.raw + 1, *end = it->val.raw + it->val.len;
	nd_jval k, v, *slot;

	while (obj_key(&p, end, &k)) {
		const char *kp = k.raw + 1;

		if (k.esc)
			goto extra;
		if (k.len == 6 && memcmp(kp, "args", 4) == 0) {
			if (*p == '{') {
				e->args.type = ND_JOBJ;
				e->args.raw = p;
				p = args_walk(s, p, end, &e->sp, &e->o, &e->nmem);
				e->args.len = (size_t)(p - e->args.raw);
			} else
				obj_val(&p, end, &e->args);
			continue;
		}
		obj_val(&p, end, &v);
		if ((slot = std_member(e, kp, k.len - 2)) != NULL) {
			*slot = v;
			continue;
		}
extra:
		if (k.esc)
			obj_val(&p, end, &v);
		nd_grow(&s->extras, &s->capextras, e->nextras + 1,
		    sizeof *s->extras);
		s->extras[e->nextras].k = k;
		s->extras[e->nextras].v = v;
		e->nextras++;
	}
}

/* The record kind of a phase; -1 for a phase not converted (c is
 * printable ASCII). */
static int
ev_phase(int c, evst *e)
{
	static const struct {
		uint8_t kind1;		/* kind + 1; 0 not converted */
		uint8_t async, flags;
	} ph[128] = {
		['X'] = { K_SPAN + 1, 0, 0 }, ['C'] = { K_COUNTER + 1, 0, 0 },
		['B'] = { K_B + 1, 0, 0 }, ['E'] = { K_E + 1, 0, 0 },
		['i'] = { K_INSTANT + 1, 0, 0 }, ['I'] = { K_INSTANT + 1, 0, 0 },
		['P'] = { K_INSTANT + 1, 0, 0 },
		['s'] = { K_FLOW + 1, 0, F_FS }, ['t'] = { K_FLOW + 1, 0, F_FT },
		['f'] = { K_FLOW + 1, 0, F_FF },
		['b'] = { K_B + 1, 1, 0 }, ['S'] = { K_B + 1, 1, 0 },
		['e'] = { K_E + 1, 1, 0 }, ['F'] = { K_E + 1, 1, 0 },
		['n'] = { K_INSTANT + 1, 1, 0 }, ['T'] = { K_INSTANT + 1, 1, 0 },
		['p'] = { K_INSTANT + 1, 1, 0 },
	};

	e->kind = ph[c & 127].kind1 - 1;
	e->async = ph[c & 127].async;
	e->flags = ph[c & 127].flags;
	return e->kind;
}

/* The times, name, args, pid and tid; SK_NREASONS when they are valid. */
static int
ev_check(src *s, evst *e)
{
	if (e->ts.type == ND_JNONE)
		return SK_NO_TS;
	if (get_time(&e->ts, &e->tsns) != 0)
		return SK_BAD_TS;
	if (e->kind == K_SPAN) {
		if (e->dur.type == ND_JNONE)
			return SK_NO_DUR;
		if (get_time(&e->dur, &e->durns) != 0 || e->durns >= LIM53)
			return SK_BAD_DUR;
		if (e->durns < 0)
			return SK_NEG_DUR;
	}
	if (e->name.type != ND_JNONE && e->name.type != ND_JSTR &&
	    e->name.type != ND_JNULL)
		return SK_BAD_NAME;
	if (e->args.type != ND_JNONE && e->args.type != ND_JOBJ)
		return SK_BAD_ARGS;
	if (idk_of(s, &e->pid, &e->pk) != 0)
		return SK_BAD_PID;
	if (idk_of(s, &e->tid, &e->tk) != 0)
		return SK_BAD_TID;
	return SK_NREASONS;
}

/* The id of a flow, and the id and category of an async event's
 * timeline; SK_NREASONS when the event is kept. */
static int
ev_ids(src *s, evst *e)
{
	if (e->kind == K_FLOW) {
		const nd_jval *id = &e->id;

		if (id->type == ND_JNUM &&
		    canon_int(id->raw, id->len, &e->corr) == 0)
			;
		else if (id->type == ND_JNUM || id->type == ND_JSTR) {
			e->corr = id->type == ND_JSTR ?
			    intern_jstr(s, s->strs, id) :
			    intern(s->strs, id->raw, id->len);
			e->flags |= F_STRID;
		} else
			return SK_NO_ID;
		if (s->o->no_flows)
			return SK_FLOW_DROPPED;
	}
	if (e->async) {
		const nd_jval *iv = e->id.type != ND_JNONE ? &e->id : &e->id2;

		if (iv->type == ND_JSTR)
			e->aid = intern_jstr(s, s->strs, iv);
		else if (iv->type == ND_JNUM || iv->type == ND_JOBJ) {
			uint64_t nlong = 0;	/* an id: never a number */

			nd_buf_reset(&s->scratch2);
			nd_buf_reserve(&s->scratch2, COPY_ROOM(iv->len));
			s->scratch2.len = (size_t)(minify(iv->raw, iv->raw +
			    iv->len, s->scratch2.p, &nlong) - s->scratch2.p);
			e->aid = intern(s->strs, s->scratch2.p,
			    s->scratch2.len);
		} else if (e->kind == K_INSTANT)
			e->async = 0;	/* a plain instant */
		else
			return SK_NO_ID;
		e->acat = e->catid == NONE32 ? 0 : e->catid + 1;
	}
	return SK_NREASONS;
}

/* The args: commit what was written, with the extra members. */
static uint64_t
ev_args(src *s, evst *e)
{
	if (e->kind == K_COUNTER) {
		if (e->nmem == 0) {
			*e->o++ = '{';
			e->nmem = 1;	/* "{}" */
		}
		*e->o++ = '}';
		return args_commit(s, e->d0, (size_t)(e->o - e->d0));
	}
	if (s->o->no_args)
		return ARGS_NONE;
	if (e->nextras > 0)
		append_extras(s, e->nextras, &e->o, &e->nmem);
	if (e->nmem == 0)
		return ARGS_NONE;
	*e->o++ = '}';
	return args_commit(s, e->d0, (size_t)(e->o - e->d0));
}

/* The timeline: the last one again (common), else a lookup. */
static uint32_t
ev_timeline(src *s, const evst *e)
{
	const nd_jval *pid = &e->pid, *tid = &e->tid;
	int cacheable = !e->async && pid->raw != NULL && tid->raw != NULL &&
	    pid->len < sizeof s->lastp && tid->len < sizeof s->lastt;
	uint32_t t;

	if (cacheable && s->lasttl != NONE32 && pid->len == s->lastpn &&
	    tid->len == s->lasttn && memcmp(pid->raw, s->lastp, pid->len) == 0 &&
	    memcmp(tid->raw, s->lastt, tid->len) == 0)
		return s->lasttl;
	t = tl_get(s, e->pk, e->tk, e->async, e->acat, e->aid);
	if (cacheable) {
		memcpy(s->lastp, pid->raw, pid->len);
		memcpy(s->lastt, tid->raw, tid->len);
		s->lastpn = pid->len;
		s->lasttn = tid->len;
		s->lasttl = t;
	} else
		s->lasttl = NONE32;
	return t;
}

/* The event's op, what it tells of its timeline, and its record. */
static void
ev_record(src *s, const evst *e, uint64_t a)
{
	uint32_t nameid, lname = NONE32, tfscope = NONE32, oi, t;
	uint32_t catid = e->catid;
	const op *po;
	tl *tp;
	rec r;

	nameid = e->name.type == ND_JSTR ? intern_jstr(s, s->strs, &e->name) :
	    intern(s->strs, "", 0);
	if (e->sp.lname.type == ND_JSTR && e->sp.lname.raw == e->sp.lname_raw) {
		uint32_t *m = &s->vlname[e->sp.lname_vid];

		if (*m == NONE32)
			*m = intern_jstr(s, s->strs, &e->sp.lname);
		lname = *m;
	} else if (e->sp.lname.type == ND_JSTR)
		lname = intern_jstr(s, s->strs, &e->sp.lname);
	if (e->sp.tfop.type == ND_JSTR)
		tfscope = tfop_scope(s, &e->sp.tfop);
	/* the tasks of torch_npu's device streams have no category: their
	 * args."Task Type" (AI_CORE, AI_CPU, ...) is one */
	if (catid == NONE32 && e->sp.ttype.type == ND_JSTR)
		catid = intern_cat(s, &e->sp.ttype);
	t = ev_timeline(s, e);
	oi = op_get(s, nameid, catid, lname, tfscope);
	po = &s->ops[oi];
	tp = &s->tls[t];
	if (po->flags & OP_DEVICE) {
		tp->has_device = 1;
		if (e->sp.device >= 0 && (tp->devno < 0 ||
		    e->sp.device < tp->devno))
			tp->devno = e->sp.device;
	}
	if (po->flags & OP_HOST)
		tp->has_host = 1;
	if (e->kind == K_B || e->kind == K_E)
		tp->has_be = 1;
	if (e->kind == K_SPAN)
		step_add(s, po, e->tsns, e->durns);
	r.ts = e->tsns;
	r.dur = e->durns;
	r.args = a;
	r.corr = e->corr;
	r.op = oi;
	r.seq = (uint32_t)(s->nev - 1);
	r.kind = (uint8_t)e->kind;
	r.flags = (uint8_t)e->flags;
	rec_done(s, t, &r);
}

/* The phase, counted with the category, then by kind: metadata, or
 * checked and made a record. */
static void
event(src *s, const nd_chrome_item *it)
{
	evst e;
	int c, why;
	uint64_t a;

	if (s->nev >= UINT32_MAX) {
		nd_chrome_error(s->ch, &s->err, it->off,
		    "more than 4294967295 events");
		return;
	}
	s->nev++;
	if (it->val.type != ND_JOBJ) {
		char what[160];

		/* a bare array that does not start with an event is some other
		 * JSON document: say what it is rather than skip it all */
		if (s->nev == 1 && nd_chrome_form(s->ch) == '[') {
			nd_chrome_error(s->ch, &s->err, it->off, "not a Chrome "
			    "trace: %s", nd_memtl_what(&it->val, what,
			    sizeof what));
			return;
		}
		skip(s, SK_NOT_OBJECT);
		return;
	}
	memset(&e, 0, sizeof e);
	e.sp.device = -1;
	e.catid = NONE32;
	s->nakeys = 0;
	/* args are written straight into the spool (committed if kept) */
	if (s->mode == M_BUFFER)
		e.d0 = e.o = nd_spool_reserve(s->spool,
		    COPY_ROOM(it->val.len));
	else {
		/* M_PRESCAN: the record's sent goes first */
		s->sent_at = nd_spool_reserve(s->spool, sizeof(sent) +
		    COPY_ROOM(it->val.len));
		s->sent_inl = 0;
		e.d0 = e.o = s->sent_at + sizeof(sent);
	}
	ev_members(s, it, &e);
	if (e.ph.type == ND_JNONE) {
		skip(s, SK_NO_PH);
		return;
	}
	if (e.ph.type != ND_JSTR || e.ph.len != 3 ||
	    (unsigned char)e.ph.raw[1] < 0x21 ||
	    (unsigned char)e.ph.raw[1] > 0x7e || e.ph.raw[1] == '\\') {
		skip(s, SK_BAD_PH);
		return;
	}
	c = e.ph.raw[1];
	s->phases[c]++;
	if (e.cat.type == ND_JSTR) {
		e.catid = intern_cat(s, &e.cat);
		if (e.catid >= s->capcat) {
			size_t old = s->capcat;

			nd_grow(&s->catcount, &s->capcat, (size_t)e.catid + 1,
			    sizeof *s->catcount);
			memset(s->catcount + old, 0, (s->capcat - old) *
			    sizeof *s->catcount);
		}
		s->catcount[e.catid]++;
	}
	if (e.args.type == ND_JNULL)
		e.args.type = ND_JNONE;
	if (c == 'M') {
		metadata(s, &e.name, &e.pid, &e.tid, &e.sp);
		return;
	}
	if (ev_phase(c, &e) < 0) {
		skip(s, SK_UNSUPPORTED);
		return;
	}
	if ((why = ev_check(s, &e)) != SK_NREASONS ||
	    (why = ev_ids(s, &e)) != SK_NREASONS) {
		skip(s, why);
		return;
	}
	a = ev_args(s, &e);
	/* Flow ids are the flow's; a span's correlation its own. */
	if (e.sp.has_corr && e.kind != K_FLOW) {
		e.corr = e.sp.corr;
		e.flags |= F_CORR;
	}
	ev_record(s, &e, a);
	if (!s->any_ts || e.tsns < s->min_ts)
		s->min_ts = e.tsns;
	if (!s->any_ts || e.tsns > s->max_ts)
		s->max_ts = e.tsns;
	s->any_ts = 1;
	s->ntimed++;
	if (e.kind == K_SPAN)
		s->nx++;
}

/* A top-level member other than traceEvents. */
static void
member(src *s, const nd_chrome_item *it)
{
	char *d;

	if (it->val.type == ND_JNONE) {
		size_t n = it->key.len < 200 ? it->key.len : 200;

		warn_add(s, "top-level member %.*s (%llu bytes) is too large to "
		    "keep and was skipped", (int)n, it->key.raw,
		    (unsigned long long)it->size);
		return;
	}
	if (nd_jstr_eq(&it->key, "baseTimeNanoseconds")) {
		int64_t b;

		if (it->val.type == ND_JNUM &&
		    nd_json_fixed(it->val.raw, it->val.len, 0, &b) == 0 &&
		    canon_int(it->val.raw, it->val.len, &b) == 0) {
			s->has_base = 1;
			s->base_ns = b;
		} else
			warn_add(s, "baseTimeNanoseconds is not an integer: "
			    "ignored");
	} else if (nd_jstr_eq(&it->key, "deviceProperties") &&
	    it->val.type == ND_JARR) {
		nd_jiter ai;
		nd_jval e, k, v;
		nd_jerr je;

		nd_jaiter_init(&ai, &it->val, it->val.raw);
		while (nd_jaiter_next(&ai, &e, &je) == 1) {
			const char *p = e.raw + 1;
			int64_t id;

			if (e.type != ND_JOBJ)
				continue;
			while (obj_next(&p, e.raw + e.len, &k, &v))
				if (key_is(&k, "id", 2) && v.type == ND_JNUM &&
				    nd_json_int(&v, &id) == 0) {
					nd_grow(&s->devids, &s->capdevids,
					    s->ndevids + 1, sizeof *s->devids);
					s->devids[s->ndevids++] = id;
				}
		}
	} else if (nd_jstr_eq(&it->key, "distributedInfo") &&
	    it->val.type == ND_JOBJ) {
		const char *p = it->val.raw + 1;
		nd_jval k, v;
		int64_t r;

		while (obj_next(&p, it->val.raw + it->val.len, &k, &v))
			if (key_is(&k, "rank", 4) && v.type == ND_JNUM &&
			    nd_json_int(&v, &r) == 0) {
				s->has_rank = 1;
				s->rank = r;
			}
	}
	if (it->val.len > ((size_t)1 << 20)) {
		size_t n = it->key.len < 200 ? it->key.len : 200;

		warn_add(s, "top-level member %.*s (%zu bytes) is larger than "
		    "1 MiB and was left out of the meta record", (int)n,
		    it->key.raw, it->val.len);
		return;
	}
	if (s->header.len > 0)
		nd_buf_addc(&s->header, ',');
	nd_buf_add(&s->header, it->key.raw, it->key.len);
	nd_buf_addc(&s->header, ':');
	nd_buf_reserve(&s->header, COPY_ROOM(it->val.len));
	d = minify(it->val.raw, it->val.raw + it->val.len,
	    s->header.p + s->header.len, &s->long_numbers);
	s->header.len = (size_t)(d - s->header.p);
	s->header.p[s->header.len] = '\0';
}

/* ---------- phase 2 ---------- */

static int
cmp_str(const src *s, int64_t a, int64_t b)
{
	size_t na, nb;
	const char *pa = istr(s->strs, (uint32_t)a, &na);
	const char *pb = istr(s->strs, (uint32_t)b, &nb);

	return nd_bytes_cmp(pa, na, pb, nb);
}

static int
cmp_proc_idx(const void *a, const void *b, void *ctx)
{
	const src *s = ctx;
	const proc *x = &s->procs[*(const uint32_t *)a];
	const proc *y = &s->procs[*(const uint32_t *)b];

	return cmp_str(s, x->key, y->key);
}

/* Timelines of one process: real ones with string tids by string, async
 * ones by (category, id). */
static int
cmp_tl_idx(const void *a, const void *b, void *ctx)
{
	const src *s = ctx;
	const tl *x = &s->tls[*(const uint32_t *)a];
	const tl *y = &s->tls[*(const uint32_t *)b];
	int c;

	if (x->async != y->async)
		return x->async - y->async;
	if (!x->async)
		return cmp_str(s, x->key, y->key);
	if (x->acat != y->acat) {
		size_t nx = 0, ny = 0;
		const char *px = x->acat ? istr(s->cats, x->acat - 1, &nx) : "";
		const char *py = y->acat ? istr(s->cats, y->acat - 1, &ny) : "";

		if ((c = nd_bytes_cmp(px, nx, py, ny)) != 0)
			return c;
	}
	return cmp_str(s, x->aid, y->aid);
}

/* Give string pids, string tids and async timelines numbers: the smallest
 * positive integers not used by numeric ones, in string order, so the
 * result does not depend on the order of the events. */
static void
assign_ids(src *s)
{
	nd_map64 *used = nd_map64_new();
	uint32_t *idx = nd_xmalloc((s->nprocs + s->ntls + 1) * sizeof *idx);
	uint32_t *bytl;
	size_t n = 0, *first;
	int64_t next = 1;

	for (size_t i = 0; i < s->nprocs; i++) {
		if (!s->procs[i].isstr) {
			s->procs[i].pid = s->procs[i].key;
			nd_map64_put(used, (uint64_t)s->procs[i].key, NULL);
		} else
			idx[n++] = (uint32_t)i;
	}
	nd_sort(idx, n, sizeof *idx, cmp_proc_idx, s);
	for (size_t i = 0; i < n; i++) {
		while (nd_map64_get(used, (uint64_t)next) != NULL)
			next++;
		s->procs[idx[i]].pid = next++;
	}
	nd_map64_free(used);
	/* tids, per process: the timelines grouped by process first (a
	 * counting sort), so that a trace of many processes is not read once
	 * per process */
	bytl = nd_xmalloc((s->ntls + 1) * sizeof *bytl);
	first = nd_xcalloc(s->nprocs + 2, sizeof *first);
	for (size_t i = 0; i < s->ntls; i++)
		first[s->tls[i].proc + 2]++;
	for (size_t pi = 0; pi < s->nprocs; pi++)
		first[pi + 2] += first[pi + 1];
	for (size_t i = 0; i < s->ntls; i++)
		bytl[first[s->tls[i].proc + 1]++] = (uint32_t)i;
	for (size_t pi = 0; pi < s->nprocs; pi++) {
		int64_t maxtid = 0;

		n = 0;
		for (size_t j = first[pi]; j < first[pi + 1]; j++) {
			size_t i = bytl[j];
			tl *t = &s->tls[i];

			if (!t->async && !t->isstr) {
				t->tid = t->key;
				if (t->key > maxtid)
					maxtid = t->key;
			} else
				idx[n++] = (uint32_t)i;
		}
		if (n == 0)
			continue;	/* nothing to number: no table */
		used = nd_map64_new();
		for (size_t j = first[pi]; j < first[pi + 1]; j++) {
			const tl *t = &s->tls[bytl[j]];

			if (!t->async && !t->isstr)
				nd_map64_put(used, (uint64_t)t->key, NULL);
		}
		nd_sort(idx, n, sizeof *idx, cmp_tl_idx, s);
		next = 1;
		for (size_t i = 0; i < n; i++) {
			tl *t = &s->tls[idx[i]];

			if (t->async && next <= maxtid)
				next = maxtid + 1;
			while (nd_map64_get(used, (uint64_t)next) != NULL)
				next++;
			t->tid = next++;
			if (!t->async && t->tid > maxtid)
				maxtid = t->tid;
		}
		nd_map64_free(used);
	}
	free(first);
	free(bytl);
	free(idx);
}

static int
cmp_idx_ts(const void *a, const void *b, void *ctx)
{
	const rec *v = ctx;
	const rec *x = &v[*(const uint32_t *)a], *y = &v[*(const uint32_t *)b];

	return (x->ts > y->ts) - (x->ts < y->ts);
}

/* The order of EVENTS.md: ts ascending, longer first; on a full tie the
 * more enclosing kind first (step, label, module frame, python, op,
 * runtime, device op); non-spans after the spans starting with them. */
static int
cmp_rec(const void *a, const void *b, void *ctx)
{
	const src *s = ctx;
	const rec *x = a, *y = b;
	int64_t dx, dy;

	if (x->ts != y->ts)
		return x->ts < y->ts ? -1 : 1;
	dx = x->kind == K_SPAN ? x->dur : -1;
	dy = y->kind == K_SPAN ? y->dur : -1;
	if (dx != dy)
		return dx > dy ? -1 : 1;
	return (int)s->ops[x->op].tie - (int)s->ops[y->op].tie;
}

/* Merge the args of an E into its B (members of B win), as plain text. */
static void
merge_args(src *s, rec *b, const rec *e)
{
	const char *p, *q;
	size_t n;
	nd_jval k, v;
	char *d0, *o;
	int nmem = 1;
	nd_buf bt = ND_BUF_INIT, et = ND_BUF_INIT;

	if (e->args == ARGS_NONE)
		return;
	if (b->args == ARGS_NONE) {
		b->args = e->args;
		return;
	}
	p = args_get(s, b->args, &n);
	detok(s, &bt, p, n);
	p = args_get(s, e->args, &n);
	detok(s, &et, p, n);
	s->nakeys = 0;
	q = bt.p + 1;
	while (obj_next(&q, bt.p + bt.len, &k, &v)) {
		nd_grow(&s->akeys, &s->capakeys, s->nakeys + 1,
		    sizeof *s->akeys);
		s->akeys[s->nakeys++] = k;
	}
	n = 0;
	q = et.p + 1;
	while (obj_next(&q, et.p + et.len, &k, &v)) {
		nd_grow(&s->extras, &s->capextras, n + 1, sizeof *s->extras);
		s->extras[n].k = k;
		s->extras[n].v = v;
		n++;
	}
	d0 = nd_spool_reserve(s->spool, bt.len + et.len + 16);
	memcpy(d0, bt.p, bt.len - 1);	/* without '}' */
	o = d0 + bt.len - 1;
	append_extras(s, n, &o, &nmem);
	*o++ = '}';
	b->args = args_commit(s, d0, (size_t)(o - d0));
	nd_buf_free(&bt);
	nd_buf_free(&et);
}

/* Match B/E (and async b/e) pairs on a timeline, in time order (file
 * order on equal times): an E closes the latest open B. */
static void
match_pairs(src *s, tl *t)
{
	uint32_t *idx = nd_xmalloc(t->n * sizeof *idx), *stack;
	size_t n = 0, ns = 0;

	for (size_t i = 0; i < t->n; i++)
		if (t->v[i].kind == K_B || t->v[i].kind == K_E)
			idx[n++] = (uint32_t)i;
	nd_sort(idx, n, sizeof *idx, cmp_idx_ts, t->v);
	stack = nd_xmalloc((n + 1) * sizeof *stack);
	for (size_t i = 0; i < n; i++) {
		rec *r = &t->v[idx[i]];

		if (r->kind == K_B) {
			stack[ns++] = idx[i];
			continue;
		}
		r->kind = K_DEAD;
		if (ns == 0) {
			skip(s, t->async ? SK_UNMATCHED_ASYNC_E : SK_UNMATCHED_E);
			continue;
		}
		{
			rec *b = &t->v[stack[--ns]];
			const op *o = &s->ops[b->op];

			b->kind = K_SPAN;
			b->dur = r->ts - b->ts;
			if (b->dur >= LIM53) {
				b->kind = K_DEAD;
				skip(s, SK_BAD_DUR);
				continue;
			}
			merge_args(s, b, r);
			s->nx++;
			step_add(s, o, b->ts, b->dur);
		}
	}
	while (ns > 0) {
		t->v[stack[--ns]].kind = K_DEAD;
		skip(s, t->async ? SK_UNMATCHED_ASYNC_B : SK_UNMATCHED_B);
	}
	free(stack);
	free(idx);
	/* drop the dead */
	n = 0;
	for (size_t i = 0; i < t->n; i++)
		if (t->v[i].kind != K_DEAD)
			t->v[n++] = t->v[i];
	t->n = n;
}

/* Scope of a label inside a scope: "parent/label", except that a label
 * that begins with the enclosing label and '/' replaces it (torch users
 * write record_function("block.0/attention") inside "block.0").
 *
 * A label scope is an snode: its parent's scope and one label, so scopes
 * share their prefixes and take memory linear in the labels however deep
 * they nest; the path is spelled out only when a record is written
 * (put_scope).  A label that would make the path longer than SCOPE_LABELS
 * labels or SCOPE_BYTES bytes is left out (counted, warned about): the
 * span and what it encloses keep the enclosing scope, so that no record's
 * scope is longer than that and the output stays linear in the input. */
static uint32_t
scope_join(src *s, uint32_t parent, uint32_t pelem, uint32_t elem,
    uint32_t *newelem)
{
	int isnew;
	/* pelem is the last label of parent: (parent, elem) is the key */
	uint64_t *v = nd_map64_put(s->joins, (uint64_t)parent << 32 | elem,
	    &isnew);

	if (isnew) {
		size_t en, pen;
		const char *e = istr(s->strs, elem, &en);
		snode nd = { parent, elem, (uint32_t)en, 1 };

		if (parent != NONE32) {
			const snode *ps = &s->snodes[parent];
			const char *pe = istr(s->strs, pelem, &pen);

			if (en > pen && e[pen] == '/' && memcmp(e, pe, pen) == 0) {
				nd.parent = ps->parent;
				nd.depth = ps->depth;
			} else
				nd.depth = ps->depth + 1;
			if (nd.parent != NONE32)
				nd.len += s->snodes[nd.parent].len + 1;
		}
		if (nd.len > SCOPE_BYTES || nd.depth > SCOPE_LABELS)
			*v = parent;
		else {
			nd_grow(&s->snodes, &s->capsnodes, s->nsnodes + 1,
			    sizeof *s->snodes);
			s->snodes[s->nsnodes] = nd;
			*v = (uint32_t)s->nsnodes++;
		}
	}
	*newelem = (uint32_t)*v == parent ? pelem : elem;
	return (uint32_t)*v;
}

static inline uint64_t
pack(uint32_t scope, int32_t step)
{
	return (uint64_t)scope << 32 | (uint32_t)step;
}

static int32_t
step_at(const src *s, int64_t ts)
{
	size_t lo = 0, hi = s->nsteps;

	/* last interval starting at or before ts */
	while (lo < hi) {
		size_t m = lo + (hi - lo) / 2;

		if (s->steps[m].ts <= ts)
			lo = m + 1;
		else
			hi = m;
	}
	if (lo > 0 && ts < s->steps[lo - 1].end)
		return s->steps[lo - 1].n;
	return NOSTEP;
}

/* Steps by start, then number; launches by correlation, then what the
 * launch packs (scope and step). */
#define CMP2(x, y, k1, k2) ((x)->k1 != (y)->k1 ? ((x)->k1 < (y)->k1 ? -1 : 1) : \
	((x)->k2 > (y)->k2) - ((x)->k2 < (y)->k2))

static int
cmp_step(const void *a, const void *b, void *ctx)
{
	(void)ctx;
	return CMP2((const stepiv *)a, (const stepiv *)b, ts, n);
}

static int
cmp_launch(const void *a, const void *b, void *ctx)
{
	(void)ctx;
	return CMP2((const launch *)a, (const launch *)b, corr, packed);
}

static const launch *
launch_find(const src *s, int64_t corr)
{
	size_t lo = nd_lower_bound(s->launches, s->nlaunches,
	    sizeof *s->launches, offsetof(launch, corr), corr);

	return lo < s->nlaunches && s->launches[lo].corr == corr ?
	    &s->launches[lo] : NULL;
}

static void
launch_add(src *s, int64_t corr, uint64_t packed)
{
	nd_grow(&s->launches, &s->caplaunches, s->nlaunches + 1,
	    sizeof *s->launches);
	s->launches[s->nlaunches].corr = corr;
	s->launches[s->nlaunches].packed = packed;
	s->nlaunches++;
}

/* A device op without args.correlation: the id of a launch flow ('f')
 * that ends on it (same timeline, same ts): the first one after it, else
 * the nearest one before it.  The walk keeps the one before (fc->prev);
 * the one after is found by a scan that only moves forward (fc->from), so
 * many records at one ts cost linear time, not quadratic. */
typedef struct fcur {
	size_t from, hit;	/* scanned up to from; hit: SIZE_MAX none */
	int64_t prev;		/* corr of the last launch flow at this ts */
	int64_t prevts;
	int has_prev;
} fcur;

static int
is_lflow_f(const src *s, const rec *r)
{
	return r->kind == K_FLOW && (r->flags & F_FMASK) == F_FF &&
	    !(r->flags & F_STRID) && (s->ops[r->op].flags & OP_LAUNCHFLOW);
}

static int
flow_corr(const src *s, const tl *t, size_t i, fcur *fc, int64_t *corr)
{
	const rec *v = t->v;
	size_t j;

	if (fc->hit == SIZE_MAX || fc->hit <= i) {
		fc->hit = SIZE_MAX;
		for (j = fc->from > i + 1 ? fc->from : i + 1;
		    j < t->n && v[j].ts == v[i].ts; j++)
			if (is_lflow_f(s, &v[j])) {
				fc->hit = j;
				j++;
				break;
			}
		fc->from = j;
	}
	if (fc->hit != SIZE_MAX) {
		*corr = v[fc->hit].corr;
		return 1;
	}
	if (fc->has_prev && fc->prevts == v[i].ts) {
		*corr = fc->prev;
		return 1;
	}
	return 0;
}

/* One record of a timeline, in output order: the scope and step of the
 * spans enclosing it (t->fr, the open ones), before step_at. */
static uint64_t
walk_one(src *s, tl *t, const rec *r)
{
	const op *o = &s->ops[r->op];
	uint32_t scope = NONE32, elem = NONE32;
	int32_t step = NOSTEP;
	uint8_t capped = 0;

	while (t->nfr > 0 && t->fr[t->nfr - 1].end <= r->ts)
		t->nfr--;
	if (t->nfr > 0) {
		scope = t->fr[t->nfr - 1].scope;
		elem = t->fr[t->nfr - 1].elem;
		step = t->fr[t->nfr - 1].step;
		capped = t->fr[t->nfr - 1].capped;
	}
	if (r->kind == K_SPAN && r->dur > 0) {
		frame f = { r->ts + r->dur, scope, elem, step, capped };

		if (o->flags & OP_STEP)
			f.step = o->stepno;
		else if (o->flags & OP_ANNOT) {
			/* inside a label left out, labels are left out too:
			 * a scope is always the outermost labels */
			if (!capped)
				f.scope = scope_join(s, scope, elem, o->elem,
				    &f.elem);
			if (f.scope == scope) {
				f.capped = 1;
				if (s->mode != M_STREAM)
					s->scope_capped++;
			}
		}
		nd_grow(&t->fr, &t->capfr, t->nfr + 1, sizeof *t->fr);
		t->fr[t->nfr++] = f;
	}
	if (o->flags & OP_STEP)
		step = o->stepno;
	if (o->tfscope != NONE32)
		scope = o->tfscope;
	return pack(scope, step);
}

/* Host records outside every step span: the step whose window holds them
 * (any timeline's). */
static uint64_t
step_fill(const src *s, const rec *r, uint64_t packed)
{
	if ((int32_t)(uint32_t)packed == NOSTEP && s->nsteps > 0 &&
	    !(s->ops[r->op].flags & OP_DEVICE))
		return pack((uint32_t)(packed >> 32), step_at(s, r->ts));
	return packed;
}

/* Does a host record launch device work (its scope and step go to the
 * device ops of the same correlation id)? */
static int
is_launch(const src *s, const rec *r)
{
	if (r->kind == K_SPAN)
		return (r->flags & F_CORR) != 0;
	return r->kind == K_FLOW && (r->flags & F_FMASK) == F_FS &&
	    !(r->flags & F_STRID) && (s->ops[r->op].flags & OP_LAUNCHFLOW);
}

/* Walk a sorted timeline: each record gets the scope and step of the spans
 * enclosing it; host launches are recorded, device ops take their
 * launch's.  The result replaces corr (except for flows). */
static void
walk(src *s, tl *t)
{
	fcur fc = { 0, SIZE_MAX, 0, 0, 0 };

	t->nfr = 0;
	for (size_t i = 0; i < t->n; i++) {
		rec *r = &t->v[i];
		const op *o = &s->ops[r->op];
		uint64_t packed = walk_one(s, t, r);

		/* HCCL ops, which torch_npu links to no operator: the step
		 * whose window holds them, like host records */
		if (t->lane == ND_ASC_NONE || t->lane == ND_ASC_COMM)
			packed = step_fill(s, r, packed);
		if ((o->flags & OP_DEVICE) || t->lane) {
			int64_t corr = r->corr;
			int has = (r->flags & F_CORR) ? 1 :
			    r->kind == K_FLOW ? 0 : flow_corr(s, t, i, &fc, &corr);
			const launch *l = has ? launch_find(s, corr) : NULL;

			if (l != NULL && r->kind != K_FLOW)
				packed = l->packed;
		} else if (t->has_device)
			;	/* launches are sorted by now: none added */
		else if (is_launch(s, r))
			launch_add(s, r->corr, packed);
		if (r->kind != K_FLOW)
			r->corr = (int64_t)packed;
		else if (is_lflow_f(s, r)) {
			fc.prev = r->corr;
			fc.prevts = r->ts;
			fc.has_prev = 1;
		}
	}
}

/* ---------- output ---------- */

static uint64_t
frag_add(src *s, const char *p, size_t n)
{
	uint64_t off = s->frags.len;

	nd_buf_add(&s->frags, p, n);
	return off << 24 | n;
}

static const char *
frag_get(const src *s, uint64_t f, size_t *n)
{
	*n = (size_t)(f & 0xffffff);
	return s->frags.p + (f >> 24);
}

/* A frag is packed with a 24-bit length: strings longer than 2 MiB are
 * cut (only hostile input has names that long); processes and threads
 * too, so that a span's line stays far below a reader's limit. */
static uint64_t
frag_json(src *s, const char *key, const char *p, size_t n)
{
	nd_buf_reset(&s->scratch2);
	nd_buf_adds(&s->scratch2, key);
	nd_json_put_str(&s->scratch2, p, n > NAME_CUT ? NAME_CUT : n);
	return frag_add(s, s->scratch2.p, s->scratch2.len);
}

static const char *
tl_process(const src *s, const tl *t, size_t *n)
{
	const proc *p = &s->procs[t->proc];

	if (p->name != NONE32)
		return istr(s->strs, p->name, n);
	if (p->isstr)
		return istr(s->strs, (uint32_t)p->key, n);
	*n = 0;
	return NULL;
}

static const char *
tl_thread(src *s, const tl *t, size_t *n)
{
	if (t->thread_name != NONE32)
		return istr(s->strs, t->thread_name, n);
	if (t->async) {
		size_t cn = 0, in;
		const char *c = t->acat ? istr(s->cats, t->acat - 1, &cn) : "";
		const char *i = istr(s->strs, t->aid, &in);

		nd_buf_reset(&s->scratch);
		nd_buf_adds(&s->scratch, "async ");
		if (cn > 0) {
			nd_buf_add(&s->scratch, c, cn);
			nd_buf_addc(&s->scratch, ' ');
		}
		nd_buf_add(&s->scratch, i, in);
		*n = s->scratch.len;
		return s->scratch.p;
	}
	if (t->isstr)
		return istr(s->strs, (uint32_t)t->key, n);
	*n = 0;
	return NULL;
}

/* "GPU 3", "CPU", "/device:TPU:0", "/host:CPU" -> "GPU:3", "CPU", ... */
static int
device_from(const char *p, size_t n, char out[32])
{
	static const char *const kinds[] = {
		"GPU", "TPU", "CPU", "XPU", "NPU", "HPU", "MTIA", NULL
	};

	if (p == NULL)
		return 0;
	if (n > 8 && memcmp(p, "/device:", 8) == 0) {
		p += 8;
		n -= 8;
	} else if (n > 6 && memcmp(p, "/host:", 6) == 0) {
		p += 6;
		n -= 6;
	}
	for (int i = 0; kinds[i] != NULL; i++) {
		size_t kn = strlen(kinds[i]);
		size_t j = kn;
		int64_t v;

		if (n < kn || strncasecmp(p, kinds[i], kn) != 0)
			continue;
		if (n == kn) {
			snprintf(out, 32, "%s", kinds[i]);
			return 1;
		}
		if (p[j] == ' ' || p[j] == ':' || p[j] == '_')
			j++;
		if (canon_int(p + j, n - j, &v) == 0 && v >= 0 && v < 1000000) {
			snprintf(out, 32, "%s:%lld", kinds[i], (long long)v);
			return 1;
		}
	}
	return 0;
}

static int
cmp_i64(const void *a, const void *b, void *ctx)
{
	int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;

	(void)ctx;
	return (x > y) - (x < y);
}

/* Is id in deviceProperties (s->devids, sorted before the first call)? */
static int
devid_known(const src *s, int64_t id)
{
	size_t lo = 0, hi = s->ndevids;

	while (lo < hi) {
		size_t m = lo + (hi - lo) / 2;

		if (s->devids[m] < id)
			lo = m + 1;
		else
			hi = m;
	}
	return lo < s->ndevids && s->devids[lo] == id;
}

static void
tl_frag(src *s, tl *t)
{
	const proc *p = &s->procs[t->proc];
	size_t pn = 0, tn = 0, ln = 0;
	const char *ps = tl_process(s, t, &pn);
	const char *lb = p->labels != NONE32 ? istr(s->strs, p->labels, &ln) :
	    NULL;
	char dev[32];
	int has_dev = 1;
	nd_buf *b = &t->frag;

	nd_buf_adds(b, ",\"pid\":");
	nd_json_put_i64(b, p->pid);
	nd_buf_adds(b, ",\"tid\":");
	nd_json_put_i64(b, t->tid);
	if (ps != NULL && pn > 0) {
		nd_buf_adds(b, ",\"process\":");
		nd_json_put_str(b, ps, pn > NAME_CUT ? NAME_CUT : pn);
	}
	{
		const char *ts = tl_thread(s, t, &tn);

		if (ts != NULL && tn > 0) {
			nd_buf_adds(b, ",\"thread\":");
			nd_json_put_str(b, ts, tn > NAME_CUT ? NAME_CUT : tn);
		}
	}
	if (t->lane != ND_ASC_NONE) {
		/* an NPU: numbered by the labels ("NPU 1"), else by CANN's
		 * pid */
		if (!device_from(lb, ln, dev) || strchr(dev, ':') == NULL) {
			if (p->isstr)
				snprintf(dev, sizeof dev, "NPU");
			else
				snprintf(dev, sizeof dev, "NPU:%d",
				    nd_ascend_devno(p->key));
		}
	} else if (t->devno >= 0) {
		/* args.device numbers a device of the kind the process names
		 * ("MTIA 0"), else a GPU */
		if (!(device_from(lb, ln, dev) || device_from(ps, pn, dev)) ||
		    strncmp(dev, "CPU", 3) == 0)
			snprintf(dev, sizeof dev, "GPU");
		dev[strcspn(dev, ":")] = '\0';
		snprintf(dev + strlen(dev), sizeof dev - strlen(dev), ":%d",
		    (int)t->devno);
	} else if (device_from(lb, ln, dev) || device_from(ps, pn, dev))
		;
	else if (t->has_device) {
		/* Kineto numbers GPU processes by device index */
		snprintf(dev, sizeof dev, "GPU");
		if (!p->isstr && devid_known(s, p->key))
			snprintf(dev, sizeof dev, "GPU:%lld", (long long)p->key);
	}
	else if (t->has_host || (ps != NULL && memmem(ps, pn, "CPU", 3)))
		snprintf(dev, sizeof dev, "CPU");
	else
		has_dev = 0;
	if (has_dev) {
		nd_buf_adds(b, ",\"device\":");
		nd_json_put_str(b, dev, strlen(dev));
	}
	if (s->has_rank) {
		nd_buf_adds(b, ",\"rank\":");
		nd_json_put_i64(b, s->rank);
	}
	/* no slack: a trace may have a timeline per event */
	b->p = nd_xrealloc(b->p, b->len + 1);
	b->cap = b->len + 1;
}

/* ,"cat":..,"class":..,"family":.. for a span of op o on timeline t. */
static uint64_t
cls_frag(src *s, uint32_t o, uint32_t ti)
{
	int isnew;
	uint64_t *slot = nd_map64_put(s->clsfrag, (uint64_t)o << 32 | ti,
	    &isnew);
	const op *po = &s->ops[o];
	nd_class_in in;
	nd_class_out out;

	if (!isnew)
		return *slot;
	memset(&in, 0, sizeof in);
	in.name.p = istr(s->strs, po->name, &in.name.n);
	if (po->lname != NONE32)
		in.long_name.p = istr(s->strs, po->lname, &in.long_name.n);
	if (po->cat != NONE32)
		in.cat.p = istr(s->cats, po->cat, &in.cat.n);
	in.process.p = tl_process(s, &s->tls[ti], &in.process.n);
	in.thread.p = tl_thread(s, &s->tls[ti], &in.thread.n);
	nd_classify(s->o->rules, &in, &out);
	nd_buf_reset(&s->scratch2);
	if (in.cat.p != NULL) {
		nd_buf_adds(&s->scratch2, ",\"cat\":");
		nd_json_put_str(&s->scratch2, in.cat.p, in.cat.n);
	}
	nd_buf_adds(&s->scratch2, ",\"class\":");
	nd_json_put_str(&s->scratch2, out.cls, strlen(out.cls));
	nd_buf_adds(&s->scratch2, ",\"family\":");
	nd_json_put_str(&s->scratch2, out.family, strlen(out.family));
	slot = nd_map64_put(s->clsfrag, (uint64_t)o << 32 | ti, NULL);
	{
		/* few distinct texts for many ops: each kept once */
		uint32_t cnt = nd_intern_count(s->clstext);
		uint32_t id = nd_intern_id(s->clstext, s->scratch2.p,
		    s->scratch2.len);

		if (id == cnt) {
			nd_grow(&s->clsoff, &s->capclsoff, (size_t)id + 1,
			    sizeof *s->clsoff);
			s->clsoff[id] = frag_add(s, s->scratch2.p,
			    s->scratch2.len);
		}
		*slot = s->clsoff[id];
	}
	return *slot;
}

/* What one formatting thread has of its own (the rest of src is only read
 * while records are written, so two threads can write them at once). */
typedef struct fmt {
	src *s;
	nd_spool_rd *rd;
	int64_t shift;
	uint64_t spans, instants, counters, flows, ts_range;
	uint64_t args_cut, too_long;	/* records over the line limit */
	uint32_t scid;		/* the label scope in scj, when scok */
	int scok;
	nd_buf scj, scraw;
} fmt;

static void
fmt_free(fmt *f)
{
	nd_buf_free(&f->scj);
	nd_buf_free(&f->scraw);
}

/* ,"scope":"..." of a label scope, spelled out from its snodes (at most
 * SCOPE_LABELS of them); the last one is kept, as consecutive records
 * mostly share their scope. */
static void
put_scope(fmt *f, nd_buf *b, uint32_t id)
{
	const src *s = f->s;

	if (!f->scok || f->scid != id) {
		uint32_t chain[SCOPE_LABELS];
		int n = 0;

		for (uint32_t x = id; x != NONE32 && n < SCOPE_LABELS;
		    x = s->snodes[x].parent)
			chain[n++] = x;
		nd_buf_reset(&f->scraw);
		while (n-- > 0) {
			size_t en;
			const char *e = istr(s->strs, s->snodes[chain[n]].elem,
			    &en);

			if (f->scraw.len > 0)
				nd_buf_addc(&f->scraw, '/');
			nd_buf_add(&f->scraw, e, en);
		}
		nd_buf_reset(&f->scj);
		nd_buf_adds(&f->scj, ",\"scope\":");
		nd_json_put_str(&f->scj, f->scraw.p, f->scraw.len);
		f->scid = id;
		f->scok = 1;
	}
	nd_buf_add(b, f->scj.p, f->scj.len);
}

static void
put_frag(const src *s, nd_buf *b, uint64_t f)
{
	size_t n;
	const char *p = frag_get(s, f, &n);

	nd_buf_add(b, p, n);
}

/* The JSON fragments of names, scopes and classes, made before the records
 * are written. */
static void
make_frags(src *s)
{
	for (size_t i = 0; i < s->nops; i++) {
		op *o = &s->ops[i];
		size_t n;
		const char *p = istr(s->strs, o->name, &n);

		o->namej = frag_json(s, ",\"name\":", p, n);
	}
	{
		uint32_t ns = nd_intern_count(s->scopes);

		free(s->scopej);
		s->scopej = nd_xcalloc((size_t)ns + 1, sizeof *s->scopej);
		s->capscopej = (size_t)ns + 1;
		for (uint32_t i = 0; i < ns; i++) {
			size_t n;
			const char *p = istr(s->scopes, i, &n);

			s->scopej[i] = frag_json(s, ",\"scope\":", p, n);
		}
	}
	for (size_t ti = 0; ti < s->ntls; ti++) {
		const tl *t = &s->tls[ti];
		uint32_t last = NONE32;

		for (size_t i = 0; i < t->n; i++)
			if (t->v[i].kind == K_SPAN && t->v[i].op != last) {
				last = t->v[i].op;
				cls_frag(s, last, (uint32_t)ti);
			}
	}
}

static void
put_args(fmt *f, nd_buf *b, const char *key, uint64_t a)
{
	uint64_t off = a >> 24;
	size_t n = (size_t)(a & 0xffffff);
	const char *p;

	if (a == ARGS_NONE)
		return;
	if (n == ARGS_LONG) {
		uint64_t l;

		memcpy(&l, nd_spool_rd_get(f->rd, off, 8), 8);
		off += 8;
		n = (size_t)l;
	}
	p = nd_spool_rd_get(f->rd, off, n);
	nd_buf_adds(b, key);
	detok(f->s, b, p, n);
}

static void
put_cat(const src *s, nd_buf *b, const op *o)
{
	size_t n;
	const char *c;

	if (o->cat == NONE32)
		return;
	c = istr(s->cats, o->cat, &n);
	nd_buf_adds(b, ",\"cat\":");
	nd_json_put_str(b, c, n);
}

static void
put_rec_once(fmt *f, nd_buf *b, uint32_t ti, const rec *r, int args)
{
	const src *s = f->s;
	const tl *t = &s->tls[ti];
	const op *o = &s->ops[r->op];
	uint32_t scope = (uint32_t)((uint64_t)r->corr >> 32);
	int32_t step = (int32_t)(uint32_t)r->corr;
	int64_t ts = r->ts - f->shift;
#define HEAD(t) { "{\"type\":\"" t "\",\"ts_ns\":", \
	sizeof "{\"type\":\"" t "\",\"ts_ns\":" - 1 }
	static const struct {
		const char *p;
		size_t n;
	} head[K_DEAD] = {
		[K_SPAN] = HEAD("span"), [K_INSTANT] = HEAD("instant"),
		[K_COUNTER] = HEAD("counter"), [K_FLOW] = HEAD("flow")
	};
#undef HEAD
	uint64_t *count[K_DEAD] = {
		[K_SPAN] = &f->spans, [K_INSTANT] = &f->instants,
		[K_COUNTER] = &f->counters, [K_FLOW] = &f->flows
	};

	if (ts >= LIM53 || ts <= -LIM53) {
		f->ts_range++;
		return;
	}
	if (r->kind >= K_DEAD || count[r->kind] == NULL)
		return;		/* B and E are written as their span */
	(*count[r->kind])++;
	nd_buf_add(b, head[r->kind].p, head[r->kind].n);
	nd_json_put_i64(b, ts);
	if (r->kind == K_SPAN) {
		nd_buf_adds(b, ",\"dur_ns\":");
		nd_json_put_i64(b, r->dur);
	}
	put_frag(s, b, o->namej);
	nd_buf_add(b, t->frag.p, t->frag.len);
	if (r->kind == K_FLOW) {
		size_t n;

		put_cat(s, b, o);
		if (args)
			put_args(f, b, ",\"args\":", r->args);
		nd_buf_adds(b, ",\"flow_id\":");
		if (r->flags & F_STRID) {
			const char *id = istr(s->strs, (uint32_t)r->corr, &n);

			nd_json_put_str(b, id, n);
		} else
			nd_json_put_i64(b, r->corr);
		nd_buf_adds(b, (r->flags & F_FMASK) == F_FS ?
		    ",\"flow_phase\":\"s\"}\n" : (r->flags & F_FMASK) == F_FT ?
		    ",\"flow_phase\":\"t\"}\n" : ",\"flow_phase\":\"f\"}\n");
		return;
	}
	if (step != NOSTEP) {
		nd_buf_adds(b, ",\"step\":");
		nd_json_put_i64(b, step);
	}
	if (r->kind == K_SPAN)
		put_frag(s, b, *nd_map64_get(s->clsfrag,
		    (uint64_t)r->op << 32 | ti));
	else
		put_cat(s, b, o);
	if (r->kind == K_COUNTER) {
		if (r->args != ARGS_NONE && args)
			put_args(f, b, ",\"values\":", r->args);
		else
			nd_buf_adds(b, ",\"values\":{}");
		nd_buf_add(b, "}\n", 2);
		return;
	}
	if (scope != NONE32 && (scope & SC_TF))
		put_frag(s, b, s->scopej[scope & ~SC_TF]);
	else if (scope != NONE32)
		put_scope(f, b, scope);
	if (args)
		put_args(f, b, ",\"args\":", r->args);
	nd_buf_add(b, "}\n", 2);
}

/* One record, never longer than a reader takes (ND_LINES_MAX_DEFAULT): one
 * whose args make it longer is written without them; one longer even so
 * (a 64 MiB category) is left out.  Both are counted for the end record's
 * warnings.  Names, processes and threads are cut at 2 MiB (frag_json). */
static void
put_rec(fmt *f, nd_buf *b, uint32_t ti, const rec *r)
{
	size_t at = b->len;
	uint64_t c[4] = { f->spans, f->instants, f->counters, f->flows };

	put_rec_once(f, b, ti, r, 1);
	if (b->len - at < ND_LINES_MAX_DEFAULT)
		return;
	b->len = at;
	f->spans = c[0], f->instants = c[1], f->counters = c[2];
	f->flows = c[3];
	put_rec_once(f, b, ti, r, 0);
	if (b->len - at < ND_LINES_MAX_DEFAULT) {
		f->args_cut++;
		return;
	}
	b->len = at;
	f->spans = c[0], f->instants = c[1], f->counters = c[2];
	f->flows = c[3];
	f->too_long++;
}

/* ---------- the ordered path ---------- */

/* A launch found by the prescan.  Its step is not known yet when no span
 * of its own timeline gives one (step_at needs every step), nor whether
 * its timeline will turn out to hold device ops (then it is no launch). */
typedef struct plaunch {
	int64_t corr;
	int64_t x;		/* the step when tl has PL_STEP, else ts */
	uint32_t scope;
	uint32_t tl;		/* timeline | PL_STEP */
} plaunch;

#define PL_STEP 0x80000000u

static int
streamable(const src *s)
{
	return !s->unordered && !(s->dev_nocorr && s->lflow_f) && !s->lanes;
}

/* What the prescan keeps of a record: the nesting of its timeline, and
 * the launch table. */
static void
prescan_rec(src *s, tl *t, uint32_t ti, const rec *r)
{
	uint64_t packed = walk_one(s, t, r);
	int32_t step = (int32_t)(uint32_t)packed;
	plaunch *p;

	if ((s->ops[r->op].flags & OP_DEVICE) || !is_launch(s, r))
		return;
	nd_grow(&s->plaunches, &s->capplaunches, s->nplaunches + 1,
	    sizeof *s->plaunches);
	p = &s->plaunches[s->nplaunches++];
	p->corr = r->corr;
	p->scope = (uint32_t)(packed >> 32);
	p->tl = step != NOSTEP ? ti | PL_STEP : ti;
	p->x = step != NOSTEP ? step : r->ts;
}

/* The launch table of walk() from the prescan's (steps sorted), built in
 * place: a launch is smaller than a plaunch. */
static void
launches_from_prescan(src *s)
{
	char *base = (char *)s->plaunches;
	size_t n = 0;

	for (size_t i = 0; i < s->nplaunches; i++) {
		plaunch p;
		launch l;

		memcpy(&p, base + i * sizeof p, sizeof p);
		if (s->tls[p.tl & ~PL_STEP].has_device)
			continue;
		l.corr = p.corr;
		l.packed = pack(p.scope, (p.tl & PL_STEP) ? (int32_t)p.x :
		    step_at(s, p.x));
		memcpy(base + n++ * sizeof l, &l, sizeof l);
	}
	s->launches = (launch *)(void *)base;
	s->nlaunches = n;
	s->caplaunches = s->capplaunches * sizeof(plaunch) / sizeof(launch);
	s->plaunches = NULL;
	s->nplaunches = s->capplaunches = 0;
	nd_sort(s->launches, s->nlaunches, sizeof *s->launches, cmp_launch,
	    NULL);
}

/* Append a record to the spool with no args of its own in the sent. */
static void
sent_add(src *s, uint32_t ti, const rec *r)
{
	sent e;

	memset(&e, 0, sizeof e);	/* no padding bytes left undefined */
	memcpy(&e.r, r, offsetof(rec, flags) + 1);
	e.ti = ti;
	nd_spool_add(s->spool, &e, sizeof e);
	s->nsent++;
}

/* The budget is reached: if the input is ordered so far, walk what is
 * buffered as the prescan would have and move it to the spool, in file
 * order (each timeline is in file order: a merge by seq), where the rest
 * of the records will follow. */
static void
budget_reached(src *s)
{
	size_t n;
	uint32_t *order;

	s->adaptive = 0;
	if (!streamable(s))
		return;
	order = output_order(s, &n);
	for (size_t ti = 0; ti < s->ntls; ti++)
		s->tls[ti].pos = 0;
	s->first_sent = nd_spool_size(s->spool);
	for (size_t j = 0; j < n; j++) {
		tl *t = &s->tls[order[j]];
		const rec *r = &t->v[t->pos++];

		prescan_rec(s, t, order[j], r);
		sent_add(s, order[j], r);
	}
	free_array(order, (n + 1) * sizeof *order);
	for (size_t ti = 0; ti < s->ntls; ti++) {
		tl *t = &s->tls[ti];

		free_array(t->v, t->cap * sizeof *t->v);
		t->v = NULL;
		t->n = t->cap = t->pos = 0;
	}
	s->mode = M_PRESCAN;
}

/* Disorder after the budget: take the spooled records back into their
 * timelines and go on buffered (the prescan's findings are dropped: the
 * buffered path walks everything again). */
static void
unspool(src *s)
{
	uint64_t off = s->first_sent, end = nd_spool_size(s->spool);

	while (off < end) {
		sent e;

		memcpy(&e, nd_spool_get(s->spool, off, sizeof e), sizeof e);
		*tl_push(&s->tls[e.ti]) = e.r;
		off += sizeof e + e.inl;
	}
	free(s->plaunches);
	s->plaunches = NULL;
	s->nplaunches = s->capplaunches = 0;
	for (size_t ti = 0; ti < s->ntls; ti++)
		s->tls[ti].nfr = 0;
	s->scope_capped = 0;
	s->nsent = 0;
	s->rebuffered = 1;
	s->mode = M_BUFFER;
}

static void
scope_frag(src *s, uint32_t id)
{
	if (id >= s->capscopej) {
		size_t old = s->capscopej, c = old * 2 > id ? old * 2 : id + 1;

		s->scopej = nd_xrealloc(s->scopej, c * sizeof *s->scopej);
		memset(s->scopej + old, 0, (c - old) * sizeof *s->scopej);
		s->capscopej = c;
	}
	if (s->scopej[id] == 0) {
		size_t n;
		const char *p = istr(s->scopes, id, &n);

		s->scopej[id] = frag_json(s, ",\"scope\":", p, n);
	}
}

/* Pass 2: walk() and put_rec() for one record.  No flow_corr(): an input
 * that would need it is not streamed. */
static void
stream_rec(src *s, tl *t, uint32_t ti, rec *r)
{
	const op *o = &s->ops[r->op];
	uint64_t packed = step_fill(s, r, walk_one(s, t, r));

	if ((o->flags & OP_DEVICE) && (r->flags & F_CORR)) {
		const launch *l = launch_find(s, r->corr);

		if (l != NULL)
			packed = l->packed;
	}
	if (r->kind != K_FLOW) {
		r->corr = (int64_t)packed;
		if ((uint32_t)(packed >> 32) != NONE32 &&
		    ((uint32_t)(packed >> 32) & SC_TF))
			scope_frag(s, (uint32_t)(packed >> 32) & ~SC_TF);
	}
	if (r->kind == K_SPAN)
		cls_frag(s, r->op, ti);
	put_rec(s->sf, nd_out_buf(s->out), ti, r);
	nd_out_commit(s->out);
}

/* Is the input still one that can be streamed?  Each timeline must come
 * in the order of cmp_rec (nd_sort is stable: ties keep file order). */
static void
order_note(src *s, tl *t, uint32_t ti, const rec *r)
{
	int64_t d = r->kind == K_SPAN ? r->dur : -1;
	uint8_t tie = s->ops[r->op].tie;

	if (t->lany && (r->ts < t->lts || (r->ts == t->lts &&
	    (d > t->ldur || (d == t->ldur && tie < t->ltie)))))
		s->unordered = 1;
	t->lts = r->ts;
	t->ldur = d;
	t->ltie = tie;
	t->lany = 1;
	if (r->kind == K_B || r->kind == K_E || ti >= PL_STEP)
		s->unordered = 1;
	if ((s->ops[r->op].flags & OP_DEVICE) && r->kind != K_FLOW &&
	    !(r->flags & F_CORR))
		s->dev_nocorr = 1;
	if (is_lflow_f(s, r))
		s->lflow_f = 1;
}

/* A decoded record, by mode. */
static void
rec_done(src *s, uint32_t ti, rec *r)
{
	tl *t = &s->tls[ti];

	if (s->adaptive || s->mode != M_BUFFER)
		order_note(s, t, ti, r);
	if (s->mode == M_BUFFER) {
		*tl_push(t) = *r;
		if (s->adaptive && ++s->nrecs >= (s->o->budget > 0 ?
		    s->o->budget : BUDGET))
			budget_reached(s);
		return;
	}
	{
		/* M_PRESCAN: the sent reserved by event(), args after it */
		sent e;

		memset(&e, 0, sizeof e);
		memcpy(&e.r, r, offsetof(rec, flags) + 1);
		e.ti = ti;
		e.inl = (uint32_t)s->sent_inl;
		memcpy(s->sent_at, &e, sizeof e);
		nd_spool_commit(s->spool, sizeof e + s->sent_inl);
		s->nsent++;
	}
	if (!streamable(s))
		unspool(s);
	else
		prescan_rec(s, t, ti, r);
}

/* Rank from "rank3", "rank-3", "rank_3" in the file name. */
static int
rank_from_name(const char *path, int64_t *rank)
{
	const char *b = strrchr(path, '/');

	b = b != NULL ? b + 1 : path;
	for (const char *p = b; *p != '\0'; p++) {
		const char *q = p + 4;
		size_t n = 0;

		if (strncasecmp(p, "rank", 4) != 0)
			continue;
		if (p > b && ((p[-1] >= 'a' && p[-1] <= 'z') ||
		    (p[-1] >= 'A' && p[-1] <= 'Z')))
			continue;
		if (*q == '-' || *q == '_')
			q++;
		while (q[n] >= '0' && q[n] <= '9')
			n++;
		if (n > 0 && n < 10 && canon_int(q, n, rank) == 0)
			return 1;
	}
	return 0;
}

static int
cmp_cat_idx(const void *a, const void *b, void *ctx)
{
	const src *s = ctx;

	return strcmp(istr(s->cats, *(const uint32_t *)a, NULL),
	    istr(s->cats, *(const uint32_t *)b, NULL));
}

/* The categories of the records, sorted by name (n log n: a trace may
 * have many). */
static void
put_categories(src *s, nd_jw *w)
{
	uint32_t nc = nd_intern_count(s->cats);
	uint32_t *idx = nd_xmalloc((nc + 1) * sizeof *idx);
	size_t n = 0;

	for (uint32_t i = 0; i < nc; i++)
		if (i < s->capcat && s->catcount[i] > 0)
			idx[n++] = i;
	nd_sort(idx, n, sizeof *idx, cmp_cat_idx, s);
	nd_jw_key(w, "categories");
	nd_jw_obj(w);
	for (size_t i = 0; i < n; i++) {
		size_t cn;
		const char *c = istr(s->cats, idx[i], &cn);

		nd_jw_keyn(w, c, cn);
		nd_jw_uint(w, s->catcount[idx[i]]);
	}
	nd_jw_obj_end(w);
	free(idx);
}

static void
write_end(src *s, nd_buf *b)
{
	nd_end_counts c = { s->nev, s->spans, s->instants, s->counters,
	    s->flows };
	nd_jw w;
	int trunc = s->overflowed || s->unclosed ||
	    s->nx == 1000000 || s->nx == 5000000 ||
	    s->ntimed == 1000000 || s->ntimed == 5000000;

	nd_end_open(&w, b, &c);
	nd_jw_kuint(&w, "metadata", s->nmeta);
	nd_jw_key(&w, "phases");
	nd_jw_obj(&w);
	for (int ph = 0; ph < 128; ph++)
		if (s->phases[ph] > 0) {
			char k = (char)ph;

			nd_jw_keyn(&w, &k, 1);
			nd_jw_uint(&w, s->phases[ph]);
		}
	nd_jw_obj_end(&w);
	put_categories(s, &w);
	nd_end_skipped(&w, skip_names, s->skipped, SK_NREASONS, 0);
	nd_end_tail(&w, s->sha, trunc);
	nd_buf_add(b, s->warnings.p, s->warnings.len);
	nd_end_close(&w);
}

/* The interned string tables of a source. */
static const size_t src_dicts[] = {
	offsetof(src, strs), offsetof(src, cats), offsetof(src, scopes),
	offsetof(src, opkeys), offsetof(src, pkeys), offsetof(src, tlkeys),
	offsetof(src, tfops), offsetof(src, kdict), offsetof(src, clstext),
	offsetof(src, vdict)
};

static void
src_free(src *s)
{
	void *mem[] = {
		s->tls, s->procs, s->ops, s->snodes, s->catcount, s->steps,
		s->launches, s->plaunches, s->extras, s->scopej, s->devids,
		s->tfmap, s->akeys, s->clsoff, s->vlname
	};
	nd_buf *bufs[] = {
		&s->pending, &s->header, &s->warnings, &s->scratch,
		&s->scratch2, &s->frags
	};

	for (size_t i = 0; i < s->ntls; i++) {
		free_array(s->tls[i].v, s->tls[i].cap * sizeof *s->tls[i].v);
		nd_buf_free(&s->tls[i].frag);
		free(s->tls[i].fr);
	}
	for (size_t i = 0; i < sizeof mem / sizeof mem[0]; i++)
		free(mem[i]);
	for (size_t i = 0; i < sizeof src_dicts / sizeof src_dicts[0]; i++)
		nd_intern_free(*(nd_intern **)((char *)s + src_dicts[i]));
	for (size_t i = 0; i < sizeof bufs / sizeof bufs[0]; i++)
		nd_buf_free(bufs[i]);
	nd_map64_free(s->joins);
	nd_map64_free(s->clsfrag);
	nd_spool_free(s->spool);
}

/* ---------- the reader thread ----------
 *
 * Reading, hashing, decompressing and validating (nd_in + nd_chrome) run
 * on a second thread that hands batches of validated events to the
 * decoder, so the two halves of phase 1 overlap on two cores.  Items are
 * copied into the batch (their slices would not outlive the next
 * nd_chrome_next).  An input error on the reader ends the document there
 * (the reader's, nd_chrome_err); one of the engine's stops the reader
 * (stop).  Either reaches the caller after the items before it. */

#define BATCH_BYTES ((size_t)1 << 20)
#define BATCH_ITEMS 16384
#define NBATCH 4

typedef struct bitem {
	nd_chrome_item it;	/* raw pointers stored as offsets into buf */
} bitem;

typedef struct batch {
	char *buf;
	size_t len, cap;
	bitem *items;
	size_t n, capn;
	int last;
} batch;

typedef struct reader {
	nd_chrome *ch;
	pthread_t th;
	pthread_mutex_t mu;
	pthread_cond_t cv;
	batch b[NBATCH];
	size_t w, r;		/* batches filled / consumed */
	atomic_int stop;	/* the engine met an error: read no more */
} reader;

static size_t
batch_copy(batch *b, const char *p, size_t n)
{
	size_t off = b->len;

	if (b->len + n > b->cap) {
		size_t c = b->cap ? b->cap : BATCH_BYTES + 4096;

		while (c < b->len + n)
			c *= 2;
		b->buf = nd_xrealloc(b->buf, c);
		b->cap = c;
	}
	if (n > 0)
		memcpy(b->buf + off, p, n);
	b->len += n;
	return off;
}

static void *
reader_main(void *arg)
{
	reader *rd = arg;

	for (;;) {
		batch *b;
		int last = 0;

		pthread_mutex_lock(&rd->mu);
		while (rd->w - rd->r == NBATCH)
			pthread_cond_wait(&rd->cv, &rd->mu);
		pthread_mutex_unlock(&rd->mu);
		b = &rd->b[rd->w % NBATCH];
		b->len = b->n = 0;
		b->last = 0;
		if (b->cap > 4 * BATCH_BYTES) {
			/* after a huge event: give the memory back */
			free(b->buf);
			b->buf = NULL;
			b->cap = 0;
		}
		while (b->len < BATCH_BYTES && b->n < BATCH_ITEMS) {
			nd_chrome_item it;
			bitem *x;

			if (atomic_load(&rd->stop) ||
			    nd_chrome_next(rd->ch, &it) == ND_CHROME_END) {
				b->last = last = 1;
				break;
			}
			nd_grow(&b->items, &b->capn, b->n + 1, sizeof *b->items);
			x = &b->items[b->n++];
			x->it = it;
			if (it.kind == ND_CHROME_MEMBER)
				x->it.key.raw = (const char *)(uintptr_t)
				    batch_copy(b, it.key.raw, it.key.len);
			if (it.val.type != ND_JNONE)
				x->it.val.raw = (const char *)(uintptr_t)
				    batch_copy(b, it.val.raw, it.val.len);
		}
		pthread_mutex_lock(&rd->mu);
		rd->w++;
		pthread_cond_signal(&rd->cv);
		pthread_mutex_unlock(&rd->mu);
		if (last)
			return NULL;
	}
}

/* The next batch from the reader (items with real pointers), NULL after
 * the last one was released. */
static batch *
reader_next(reader *rd)
{
	batch *b;

	pthread_mutex_lock(&rd->mu);
	while (rd->r == rd->w)
		pthread_cond_wait(&rd->cv, &rd->mu);
	pthread_mutex_unlock(&rd->mu);
	b = &rd->b[rd->r % NBATCH];
	for (size_t i = 0; i < b->n; i++) {
		nd_chrome_item *it = &b->items[i].it;

		if (it->kind == ND_CHROME_MEMBER)
			it->key.raw = b->buf + (uintptr_t)it->key.raw;
		if (it->val.type != ND_JNONE)
			it->val.raw = b->buf + (uintptr_t)it->val.raw;
	}
	return b;
}

static void
reader_release(reader *rd)
{
	pthread_mutex_lock(&rd->mu);
	rd->r++;
	pthread_cond_signal(&rd->cv);
	pthread_mutex_unlock(&rd->mu);
}

/* ---------- phase 2 on two threads ----------
 *
 * Sorting the timelines and formatting the records use both cores: a
 * helper thread takes timelines to sort from a shared queue, then formats
 * every other chunk of CHUNK records of the output order while the main
 * thread formats the others and writes all chunks in order.  The output
 * is byte for byte what one thread would write. */

#define CHUNK 4096

typedef struct sortq {
	src *s;
	uint32_t *idx;		/* timelines, largest first */
	size_t n, next;
	pthread_mutex_t mu;
} sortq;

static void *
sort_worker(void *arg)
{
	sortq *q = arg;

	for (;;) {
		size_t i;
		tl *t;

		pthread_mutex_lock(&q->mu);
		i = q->next++;
		pthread_mutex_unlock(&q->mu);
		if (i >= q->n)
			return NULL;
		t = &q->s->tls[q->idx[i]];
		nd_sort(t->v, t->n, sizeof *t->v, cmp_rec, q->s);
	}
}

static int
cmp_tl_size(const void *a, const void *b, void *ctx)
{
	const src *s = ctx;
	size_t x = s->tls[*(const uint32_t *)a].n;
	size_t y = s->tls[*(const uint32_t *)b].n;

	return (x < y) - (x > y);
}

static void
sort_all(src *s)
{
	sortq q;
	pthread_t th;
	size_t total = 0;
	int helper;

	memset(&q, 0, sizeof q);
	q.s = s;
	q.idx = nd_xmalloc((s->ntls + 1) * sizeof *q.idx);
	for (size_t i = 0; i < s->ntls; i++) {
		q.idx[q.n++] = (uint32_t)i;
		total += s->tls[i].n;
	}
	nd_sort(q.idx, q.n, sizeof *q.idx, cmp_tl_size, s);
	pthread_mutex_init(&q.mu, NULL);
	helper = q.n > 1 && total > 4 * CHUNK && !s->o->one_thread &&
	    pthread_create(&th, NULL, sort_worker, &q) == 0;
	sort_worker(&q);
	if (helper)
		pthread_join(th, NULL);
	pthread_mutex_destroy(&q.mu);
	free(q.idx);
}

typedef struct outq {
	fmt f;			/* the helper's */
	const uint32_t *order;	/* timeline of each record, in output order */
	size_t n, nchunks;
	nd_buf buf[2];
	int ready[2];
	pthread_mutex_t mu;
	pthread_cond_t cv;
} outq;

/* Format the records of chunk c (out: commit after each), or only count
 * them in pos (each thread keeps the position of every timeline). */
static void
format_chunk(fmt *f, const uint32_t *order, size_t n, size_t c, uint32_t *pos,
    nd_buf *b, nd_out *out)
{
	size_t end = (c + 1) * CHUNK < n ? (c + 1) * CHUNK : n;

	for (size_t j = c * CHUNK; j < end; j++) {
		uint32_t ti = order[j];

		if (b != NULL) {
			put_rec(f, b, ti, &f->s->tls[ti].v[pos[ti]]);
			if (out != NULL)
				nd_out_commit(out);
		}
		pos[ti]++;
	}
}

static void *
out_worker(void *arg)
{
	outq *q = arg;
	uint32_t *pos = nd_xcalloc(q->f.s->ntls + 1, sizeof *pos);

	for (size_t c = 0; c < q->nchunks; c++) {
		int k = (int)(c / 2 % 2);

		if (c % 2 == 0) {
			format_chunk(&q->f, q->order, q->n, c, pos, NULL, NULL);
			continue;
		}
		pthread_mutex_lock(&q->mu);
		while (q->ready[k])
			pthread_cond_wait(&q->cv, &q->mu);
		pthread_mutex_unlock(&q->mu);
		nd_buf_reset(&q->buf[k]);
		format_chunk(&q->f, q->order, q->n, c, pos, &q->buf[k], NULL);
		pthread_mutex_lock(&q->mu);
		q->ready[k] = 1;
		pthread_cond_broadcast(&q->cv);
		pthread_mutex_unlock(&q->mu);
	}
	free(pos);
	return NULL;
}

/* The output order: a merge of the sorted timelines by file position (a
 * binary heap of timelines keyed by the seq of each one's next record),
 * which keeps reads of the spool nearly sequential. */
static void
heap_down(src *s, uint32_t *h, size_t n, size_t i)
{
	for (;;) {
		size_t l = 2 * i + 1, m = i;

		if (l < n && s->tls[h[l]].v[s->tls[h[l]].pos].seq <
		    s->tls[h[m]].v[s->tls[h[m]].pos].seq)
			m = l;
		if (l + 1 < n && s->tls[h[l + 1]].v[s->tls[h[l + 1]].pos].seq <
		    s->tls[h[m]].v[s->tls[h[m]].pos].seq)
			m = l + 1;
		if (m == i)
			return;
		{
			uint32_t x = h[i];

			h[i] = h[m];
			h[m] = x;
		}
		i = m;
	}
}

static uint32_t *
output_order(src *s, size_t *np)
{
	uint32_t *heap = nd_xmalloc((s->ntls + 1) * sizeof *heap);
	size_t nh = 0, total = 0, n = 0;
	uint32_t *order;

	for (size_t i = 0; i < s->ntls; i++) {
		total += s->tls[i].n;
		s->tls[i].pos = 0;
		if (s->tls[i].n > 0)
			heap[nh++] = (uint32_t)i;
	}
	order = grow_array(NULL, 0, (total + 1) * sizeof *order);
	for (size_t i = nh; i > 0; i--)
		heap_down(s, heap, nh, i - 1);
	while (nh > 0) {
		tl *t = &s->tls[heap[0]];
		uint32_t next = UINT32_MAX;

		/* Take from the first timeline until its next record comes
		 * after the head of another one (a child of the root). */
		for (size_t c = 1; c <= 2 && c < nh; c++) {
			const tl *u = &s->tls[heap[c]];

			if (u->v[u->pos].seq < next)
				next = u->v[u->pos].seq;
		}
		do
			order[n++] = heap[0];
		while (++t->pos < t->n && t->v[t->pos].seq < next);
		if (t->pos == t->n)
			heap[0] = heap[--nh];
		heap_down(s, heap, nh, 0);
	}
	free(heap);
	*np = n;
	return order;
}

static void
write_records(src *s, nd_out *out, int64_t shift)
{
	size_t n;
	uint32_t *order = output_order(s, &n);
	uint32_t *pos = nd_xcalloc(s->ntls + 1, sizeof *pos);
	outq q;
	fmt mine;
	pthread_t th;
	int helper;

	memset(&q, 0, sizeof q);
	memset(&mine, 0, sizeof mine);
	mine.s = q.f.s = s;
	mine.shift = q.f.shift = shift;
	mine.rd = nd_spool_rd_new(s->spool);
	q.order = order;
	q.n = n;
	q.nchunks = (n + CHUNK - 1) / CHUNK;
	pthread_mutex_init(&q.mu, NULL);
	pthread_cond_init(&q.cv, NULL);
	helper = 0;
	if (q.nchunks > 2) {
		q.f.rd = nd_spool_rd_new(s->spool);
		helper = !s->o->one_thread &&
		    pthread_create(&th, NULL, out_worker, &q) == 0;
	}
	for (size_t c = 0; c < q.nchunks; c++) {
		int k = (int)(c / 2 % 2);

		if (c % 2 == 0 || !helper) {
			format_chunk(&mine, order, n, c, pos, nd_out_buf(out),
			    out);
			continue;
		}
		format_chunk(&mine, order, n, c, pos, NULL, NULL);
		pthread_mutex_lock(&q.mu);
		while (!q.ready[k])
			pthread_cond_wait(&q.cv, &q.mu);
		pthread_mutex_unlock(&q.mu);
		nd_out_write(out, q.buf[k].p, q.buf[k].len);
		pthread_mutex_lock(&q.mu);
		q.ready[k] = 0;
		pthread_cond_broadcast(&q.cv);
		pthread_mutex_unlock(&q.mu);
	}
	if (helper)
		pthread_join(th, NULL);
	s->spans = mine.spans + q.f.spans;
	s->instants = mine.instants + q.f.instants;
	s->counters = mine.counters + q.f.counters;
	s->flows = mine.flows + q.f.flows;
	s->skipped[SK_TS_RANGE] += mine.ts_range + q.f.ts_range;
	s->skipped[SK_TOO_LONG] += mine.too_long + q.f.too_long;
	s->args_cut += mine.args_cut + q.f.args_cut;
	nd_spool_rd_free(mine.rd);
	fmt_free(&mine);
	fmt_free(&q.f);
	nd_spool_rd_free(q.f.rd);
	nd_buf_free(&q.buf[0]);
	nd_buf_free(&q.buf[1]);
	pthread_mutex_destroy(&q.mu);
	pthread_cond_destroy(&q.cv);
	free_array(order, (n + 1) * sizeof *order);
	free(pos);
}

/* Phase 1 over the whole document: on the reader thread when one can be
 * started, else inline. */
static void
read_all(src *s)
{
	reader rd;
	nd_chrome_item it;
	int k, done = 0;

	memset(&rd, 0, sizeof rd);
	rd.ch = s->ch;
	pthread_mutex_init(&rd.mu, NULL);
	pthread_cond_init(&rd.cv, NULL);
	if (s->o->one_thread ||
	    pthread_create(&rd.th, NULL, reader_main, &rd) != 0) {
		while (s->err.code == 0 &&
		    (k = nd_chrome_next(s->ch, &it)) != ND_CHROME_END) {
			if (k == ND_CHROME_EVENT)
				event(s, &it);
			else
				member(s, &it);
		}
		done = 1;
	}
	while (!done) {
		batch *b = reader_next(&rd);

		for (size_t i = 0; i < b->n && s->err.code == 0; i++) {
			if (b->items[i].it.kind == ND_CHROME_EVENT)
				event(s, &b->items[i].it);
			else
				member(s, &b->items[i].it);
		}
		if (s->err.code != 0)
			atomic_store(&rd.stop, 1);	/* drain, then stop */
		done = b->last;
		reader_release(&rd);
	}
	if (rd.w > 0 || rd.r > 0)
		pthread_join(rd.th, NULL);
	for (int i = 0; i < NBATCH; i++) {
		free(rd.b[i].buf);
		free(rd.b[i].items);
	}
	pthread_mutex_destroy(&rd.mu);
	pthread_cond_destroy(&rd.cv);
}

/* Pass 2 of the ordered path: each spooled record written in file order
 * (which is the output order: every timeline is ordered). */
static void
stream_write(src *s, nd_out *out, int64_t shift)
{
	fmt f;
	nd_spool_rd *rd = nd_spool_rd_new(s->spool);
	uint64_t off = s->first_sent, end = nd_spool_size(s->spool);

	memset(&f, 0, sizeof f);
	f.s = s;
	f.shift = shift;
	f.rd = nd_spool_rd_new(s->spool);
	s->sf = &f;
	s->out = out;
	for (size_t i = 0; i < s->ntls; i++)
		s->tls[i].nfr = 0;
	s->mode = M_STREAM;
	while (off < end) {
		sent e;

		memcpy(&e, nd_spool_rd_get(rd, off, sizeof e), sizeof e);
		off += sizeof e + e.inl;
		stream_rec(s, &s->tls[e.ti], e.ti, &e.r);
	}
	s->spans = f.spans;
	s->instants = f.instants;
	s->counters = f.counters;
	s->flows = f.flows;
	s->skipped[SK_TS_RANGE] += f.ts_range;
	s->skipped[SK_TOO_LONG] += f.too_long;
	s->args_cut += f.args_cut;
	nd_spool_rd_free(rd);
	nd_spool_rd_free(f.rd);
	fmt_free(&f);
}

/* Phase 2 of the buffered path: pairs, order, scopes and steps. */
static void
settle(src *s)
{
	for (size_t i = 0; i < s->ntls; i++)
		if (s->tls[i].has_be || s->tls[i].async)
			match_pairs(s, &s->tls[i]);
	sort_all(s);
	nd_sort(s->steps, s->nsteps, sizeof *s->steps, cmp_step, NULL);
	for (int pass = 0; pass < 2; pass++) {
		for (size_t i = 0; i < s->ntls; i++)
			if (s->tls[i].has_device == pass)
				walk(s, &s->tls[i]);
		if (pass == 0)
			nd_sort(s->launches, s->nlaunches, sizeof *s->launches,
			    cmp_launch, NULL);
	}
	free(s->launches);
	s->launches = NULL;
	s->nlaunches = s->caplaunches = 0;
}

static void
read_warnings(src *s)
{
	warn_flush(s);
	if (s->unclosed)
		warn_add(s, "the event array is not closed (allowed by the "
		    "Trace Event Format, but the file may be truncated)");
	if (s->overflowed)
		warn_add(s, "the profiler reported trace_buffer_overflowed: "
		    "events were lost");
	if (s->nx == 1000000 || s->nx == 5000000 || s->ntimed == 1000000 ||
	    s->ntimed == 5000000)
		warn_add(s, "exactly %llu events: the count of a known export "
		    "cap, the trace is probably truncated",
		    (unsigned long long)(s->nx == 1000000 || s->nx == 5000000 ?
		    s->nx : s->ntimed));
}

static void
end_warnings(src *s)
{
	uint64_t bad = 0, un = s->skipped[SK_UNSUPPORTED];

	if (s->skipped[SK_UNMATCHED_B] > 0)
		warn_add(s, "skipped %llu B (begin) event%s without an E",
		    (unsigned long long)s->skipped[SK_UNMATCHED_B],
		    s->skipped[SK_UNMATCHED_B] == 1 ? "" : "s");
	if (s->skipped[SK_UNMATCHED_E] > 0)
		warn_add(s, "skipped %llu E (end) event%s without a B",
		    (unsigned long long)s->skipped[SK_UNMATCHED_E],
		    s->skipped[SK_UNMATCHED_E] == 1 ? "" : "s");
	if (s->skipped[SK_UNMATCHED_ASYNC_B] + s->skipped[SK_UNMATCHED_ASYNC_E] > 0)
		warn_add(s, "skipped %llu async begin and %llu async end "
		    "events without a partner",
		    (unsigned long long)s->skipped[SK_UNMATCHED_ASYNC_B],
		    (unsigned long long)s->skipped[SK_UNMATCHED_ASYNC_E]);
	for (int r = 0; r < SK_NREASONS; r++)
		if (r != SK_UNMATCHED_B && r != SK_UNMATCHED_E &&
		    r != SK_UNMATCHED_ASYNC_B && r != SK_UNMATCHED_ASYNC_E &&
		    r != SK_FLOW_DROPPED && r != SK_UNSUPPORTED)
			bad += s->skipped[r];
	if (s->args_cut > 0)
		warn_add(s, "%llu record%s longer than 64 MiB written without "
		    "their args", (unsigned long long)s->args_cut,
		    s->args_cut == 1 ? "" : "s");
	if (s->long_numbers > 0)
		warn_add(s, "%llu number%s longer than %d characters (in args "
		    "or the header) written as string%s",
		    (unsigned long long)s->long_numbers,
		    s->long_numbers == 1 ? "" : "s", ND_JSON_MAX_NUMBER,
		    s->long_numbers == 1 ? "" : "s");
	if (s->scope_capped > 0)
		warn_add(s, "%llu label%s nested deeper than %d labels or %d "
		    "bytes left out of scopes (the spans are kept)",
		    (unsigned long long)s->scope_capped,
		    s->scope_capped == 1 ? "" : "s", SCOPE_LABELS, SCOPE_BYTES);
	if (bad > 0)
		warn_add(s, "skipped %llu malformed event%s (see "
		    "\"skipped\" in the end record)",
		    (unsigned long long)bad, bad == 1 ? "" : "s");
	if (un > 0)
		warn_add(s, "skipped %llu event%s of %s phase%s",
		    (unsigned long long)un, un == 1 ? "" : "s",
		    un == 1 ? "an unsupported" : "unsupported",
		    un == 1 ? "" : "s");
}

static void
src_init(src *s, const nd_kineto_opts *o, int adaptive)
{
	memset(s, 0, sizeof *s);
	s->o = o;
	for (size_t i = 0; i < sizeof src_dicts / sizeof src_dicts[0]; i++)
		*(nd_intern **)((char *)s + src_dicts[i]) = nd_intern_new();
	s->joins = nd_map64_new();
	s->clsfrag = nd_map64_new();
	s->spool = nd_spool_new();
	s->lasttl = NONE32;
	s->mode = M_BUFFER;
	s->adaptive = adaptive;
	s->defer = 1;
	nd_buf_add(&s->frags, "", 0);
	nd_buf_addc(&s->frags, 0);	/* offset 0 means "unset" */
}

static void
stats(const src *s, const char *what)
{
	if (s->o->stats)
		fprintf(stderr, "%s: %s: %s\n", nd_progname, s->path, what);
}

/* ---------- the engine's interface (nd_kineto.h) ---------- */

nd_kineto *
nd_kineto_new(const char *arg, const char *name, const nd_kineto_opts *o)
{
	src *s = nd_xmalloc(sizeof *s);

	src_init(s, o, 1);
	s->opts = *o;
	s->o = &s->opts;
	if (s->opts.rules == NULL)
		s->opts.rules = nd_rules_default();
	s->arg = arg;
	s->path = name;
	return s;
}

int
nd_kineto_feed(nd_kineto *s, nd_chrome *ch, const nd_chrome_item *it)
{
	if (s->err.code != 0)
		return -1;
	s->ch = ch;
	if (it->kind == ND_CHROME_EVENT)
		event(s, it);
	else
		member(s, it);
	return s->err.code != 0 ? -1 : 0;
}

const nd_err *
nd_kineto_err(const nd_kineto *s)
{
	return s->err.code != 0 ? &s->err : NULL;
}

int
nd_kineto_read(nd_kineto *s, nd_chrome *ch, nd_err *err)
{
	s->ch = ch;
	read_all(s);
	s->unclosed = nd_chrome_unclosed(ch);
	s->ch = NULL;
	/* the engine's error is at an item before the reader's */
	if (s->err.code == 0 && nd_chrome_err(ch) != NULL)
		nd_err_copy(&s->err, nd_chrome_err(ch));
	nd_err_copy(err, &s->err);
	return s->err.code != 0 ? -1 : 0;
}

/* The timelines of torch_npu's device and derived lanes (nd_ascend_lane),
 * by the final names of their processes: device work whatever their
 * categories say, so they take the scope and step of their launches.
 * Such an input is not streamed: the lanes are known only at its end. */
static void
lanes_mark(src *s)
{
	if (!s->lanes)
		return;
	if (s->mode == M_PRESCAN)
		unspool(s);
	for (size_t i = 0; i < s->ntls; i++) {
		tl *t = &s->tls[i];
		size_t n;
		const char *p = tl_process(s, t, &n);

		t->lane = (uint8_t)nd_ascend_lane(p, n);
		if (t->lane != ND_ASC_NONE)
			t->has_device = 1;
	}
}

/* Phase 2: everything the output needs that only the whole input tells. */
void
nd_kineto_finish(nd_kineto *s, const char *sha256, int unclosed)
{
	snprintf(s->sha, sizeof s->sha, "%s", sha256);
	s->unclosed |= unclosed;
	s->ch = NULL;
	read_warnings(s);
	if (!s->has_rank && s->o->has_rank) {
		s->has_rank = 1;
		s->rank = s->o->rank;
	}
	if (!s->has_rank && strcmp(s->arg, "-") != 0 &&
	    rank_from_name(s->arg, &s->rank))
		s->has_rank = 1;
	assign_ids(s);
	lanes_mark(s);
	if (s->mode == M_BUFFER)
		settle(s);
	else {
		nd_sort(s->steps, s->nsteps, sizeof *s->steps, cmp_step, NULL);
		launches_from_prescan(s);
	}
	/* The origin: baseTimeNanoseconds, moved by whole seconds when the
	 * times would not stay below 2^53 ns (an epoch clock without one). */
	s->origin = s->has_base ? s->base_ns : 0;
	if (s->any_ts && (s->max_ts >= LIM53 || s->min_ts <= -LIM53)) {
		int64_t sec = 1000000000;

		s->shift = s->min_ts / sec * sec;
		if (s->min_ts < 0 && s->min_ts % sec != 0)
			s->shift -= sec;
		s->origin += s->shift;
	}
	nd_sort(s->devids, s->ndevids, sizeof *s->devids, cmp_i64, NULL);
	for (size_t i = 0; i < s->ntls; i++)
		tl_frag(s, &s->tls[i]);
	make_frags(s);
}

void
nd_kineto_write(nd_kineto *s, nd_out *out)
{
	nd_buf *b = nd_out_buf(out);

	nd_meta_write(b, s->arg, "chrome", s->origin, NULL, s->has_rank,
	    s->rank);
	if (s->header.len > 0 && b->len >= 2 && b->p[b->len - 2] == '}') {
		b->len -= 2;
		nd_buf_adds(b, ",\"header\":{");
		nd_buf_add(b, s->header.p, s->header.len);
		nd_buf_adds(b, "}}\n");
	}
	nd_out_commit(out);
	if (s->mode == M_BUFFER) {
		stats(s, s->rebuffered ? "rebuffered" : "buffered");
		write_records(s, out, s->shift);
	} else {
		stats(s, "streamed");
		stream_write(s, out, s->shift);
	}
	end_warnings(s);
	write_end(s, b);
	/* each source reaches the output whole before the next input is
	 * read: an error in a later input leaves the earlier ones complete */
	nd_out_flush(out);
}

void
nd_kineto_free(nd_kineto *s)
{
	if (s == NULL)
		return;
	src_free(s);
	free(s);
}

/* One input, read once: nothing is written before the whole input has
 * been read and found valid, so an input error leaves nothing of it on
 * the output, and what is written is what that one read saw (the sha256
 * of the end record is of the same bytes). */
int
nd_kineto_convert(const char *path, const nd_kineto_opts *o, nd_out *out,
    nd_err *err)
{
	nd_in *in = nd_in_open_hashed(path);
	nd_kineto *k = nd_kineto_new(path, nd_in_name(in), o);
	nd_chrome *ch = nd_chrome_open(in);
	char sha[65];
	int rc = nd_kineto_read(k, ch, err);

	nd_chrome_close(ch);
	if (rc == 0) {
		nd_in_sha256(in, sha);
		nd_kineto_finish(k, sha, 0);
		nd_kineto_write(k, out);
	}
	nd_in_close(in);
	nd_kineto_free(k);
	return rc;
}
