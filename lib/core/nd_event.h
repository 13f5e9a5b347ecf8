/*
 * nd_event: the ndtrace stream record (see ndtrace(7)) decoded for reading,
 * and written back in canonical key order.
 *
 * Reading: nd_event_decode() validates one line as a JSON object, fills the
 * typed fields of the keys the contract reserves and keeps every member
 * (known or not) as a raw slice, so a filter re-emits unknown keys unchanged.
 * Decoded strings are NUL-terminated copies in the decoder's scratch buffer;
 * everything an nd_event points to is valid until the next decode with the
 * same scratch (the "borrowed until next call" rule of nd_util.h).
 *
 * The `end` record (last of each source) has these keys, all optional but
 * type: "events" (input events read), "spans", "instants", "counters",
 * "flows" (records of that type emitted for this source), "skipped" (object:
 * reason -> count), "sha256" (of the input as stored), "suspected_truncation"
 * (bool), "warnings" (array of strings).  trace-check verifies the per-type
 * counts against the records it saw.
 *
 * Writing: fill an nd_event (strings need not be NUL-terminated, `n` is
 * used) and call nd_event_write(); it writes the reserved keys in the order
 * of ndtrace(7), then `args`, then any extra members.
 */
#ifndef ND_EVENT_H
#define ND_EVENT_H

#include "nd_buf.h"
#include "nd_json.h"

#include <stddef.h>
#include <stdint.h>

#define ND_SCHEMA "ndtrace/1"

typedef enum {
	ND_EV_OTHER = 0,	/* any other type: passed through by filters */
	ND_EV_META,
	ND_EV_SPAN,
	ND_EV_INSTANT,
	ND_EV_COUNTER,
	ND_EV_FLOW,
	ND_EV_END
} nd_evtype;

/* A string field; p == NULL means absent. */
typedef struct nd_str {
	const char *p;
	size_t n;
} nd_str;

#define ND_STR(s) ((nd_str){ (s), sizeof(s) - 1 })
#define ND_STR_NONE ((nd_str){ NULL, 0 })
static inline nd_str nd_str_c(const char *s);

/* Bits of nd_event.has for the integer fields. */
enum {
	ND_HAS_TS = 1 << 0,
	ND_HAS_DUR = 1 << 1,
	ND_HAS_PID = 1 << 2,
	ND_HAS_TID = 1 << 3,
	ND_HAS_RANK = 1 << 4,
	ND_HAS_STEP = 1 << 5,
	ND_HAS_ORIGIN = 1 << 6
};

typedef struct nd_member {
	nd_jval key;		/* string value (raw, with quotes) */
	nd_jval val;
	int known;		/* one of the typed fields below */
	int field;		/* its reserved key's field + 1, 0: none */
} nd_member;

typedef struct nd_event {
	nd_evtype type;
	nd_str type_name;	/* the "type" string as written */
	unsigned has;
	int64_t ts_ns, dur_ns, pid, tid, rank, step, origin_ns;
	nd_str name, process, thread, device, cat, cls, family, scope;
	nd_str host, source_path;	/* meta: host, source */
	nd_jval args;		/* raw object, type ND_JNONE when absent */
	nd_jval values;		/* counter values: raw object */
	int has_argnote;	/* argnote holds the args keys (ND_ARG_*) */
	int kind;		/* ND_KIND_* set by nd_event_decode, 0: not
				 * decoded (use nd_event_kind) */

	/* Reading only. */
	const char *line;
	size_t len;
	nd_member *members;
	size_t nmembers, cap_members;
	uint32_t source;	/* index of the source (see nd_stream) */
	unsigned sid_have;	/* bit f: sid[f] is known (nd_event_sid) */

	/* Writing only: extra members, raw JSON text starting with ',' (e.g.
	 * ",\"context\":{...}"), appended before the closing brace. */
	const char *extra;
	size_t extra_len;

	/* Last: nd_event_decode leaves these alone (argnote is valid with
	 * has_argnote, sid[f] with bit f of sid_have). */
	nd_jnote argnote;	/* args members noted by nd_event_decode */
	const char *sidp[5];	/* the string each sid[] is of */
	uint32_t sid[5];	/* by ND_SID_* */
} nd_event;

typedef struct nd_everr {
	size_t off;		/* byte offset within the line */
	char msg[200];
} nd_everr;

void nd_event_init(nd_event *ev);
void nd_event_free(nd_event *ev);	/* frees the members array */
/* Decode one line.  0 ok; -1 error (JSON or contract) with err filled.
 * It touches no shared state (nd_drive_mt runs it on a second thread
 * beside the analyses): no interning here. */
int nd_event_decode(nd_event *ev, const char *line, size_t len,
    nd_buf *scratch, nd_everr *err);
/* Look up any top-level member by key (NULL if absent). */
const nd_jval *nd_event_get(const nd_event *ev, const char *key);
/* A reserved key that the decoded record has twice (the last one counts),
 * or NULL: for trace-check, the decoder does not look. */
const char *nd_event_dup_key(const nd_event *ev);
/* Look up args.KEY: 1 with its (first) value, 0 if absent. */
int nd_event_arg(const nd_event *ev, const char *key, nd_jval *out);

/* The args members that nd_event_decode notes while it validates args, so
 * that the analyses that want them need no second walk. */
enum {
	ND_ARG_FLOPS, ND_ARG_MODEL_FLOPS, ND_ARG_CORRELATION,
	ND_ARG_CORRELATION_ID, ND_ARG_STEP_NUM, ND_ARG_GROUP_ID,
	ND_ARG_BYTES_ACCESSED, ND_ARG_BYTES_ALLOCATED, ND_ARG_N
};
/* How many members args has with key `which` (ND_ARG_*): 0, 1, or 2 for
 * two or more, with the first one's value in *out; -1 when not known (the
 * event was not decoded, or a key of args has an escape): then walk. */
int nd_event_arg_noted(const nd_event *ev, int which, nd_jval *out);
/* The correlation id of a span that has one (CUPTI/roctracer: the launch
 * call and the device ops it launched share it): args.correlation or
 * args.correlation_id as an integer.  1 with *out, else 0. */
int nd_event_corr(const nd_event *ev, int64_t *out);

/*
 * Event strings as integers: the id of a string field in one table per
 * program, so equal ids are equal strings for every analysis, which can
 * then key its tables by ids (nd_idmemo) rather than hash the strings each
 * (1M spans made 7 string lookups each, most of trace-report's time).  The
 * first call for a field of a record interns it; later calls, from any
 * analysis, read the memo kept in the record (so the record must not be
 * an object defined const).  ND_SID_NONE: the field is absent.  Not
 * thread-safe: the analyses of a program call it from one thread.
 */
enum { ND_SID_NAME, ND_SID_FAMILY, ND_SID_CLASS, ND_SID_SCOPE,
	ND_SID_DEVICE, ND_SID_N };
#define ND_SID_NONE UINT32_MAX
uint32_t nd_event_sid(const nd_event *ev, int field);
/* 1 with *id when the field's id is known without interning (the field is
 * absent, or an analysis asked for it already), else 0. */
int nd_event_sid_known(const nd_event *ev, int field, uint32_t *id);
/* The id of any string in the same table (strings that are no event's
 * field: a merged partial's, a timeline's process), and an id's string. */
uint32_t nd_sid_intern(const char *s, size_t n);
const char *nd_sid_str(uint32_t id, size_t *n);

/*
 * Where a span runs: the one device-op rule of every program (ndtrace(7),
 * "Device ops").  From the stream fields alone:
 *   ND_KIND_DEVICE  a device op: `cat` (compared without case) is a device
 *                   activity of a Kineto trace -- kernel, gpu_memcpy,
 *                   gpu_memset, cuda_sync (the stream and event waits
 *                   CUPTI records on a device lane), gpu_op, the 2021
 *                   Kernel, Memcpy, Memset, and the accelerators'
 *                   mtia_ccp_events (MTIA) and hpu_op (Gaudi) -- or
 *                   `process` is a device lane of torch_npu (Ascend:
 *                   nd_ascend_lane), or starts with "/device:" (XPlane)
 *                   and `thread` is not a derived line (ND_KIND_ANNOT_LINES);
 *   ND_KIND_ANNOT   an annotation: `cat` gpu_user_annotation, the
 *                   profiler's own span (`cat` Trace: Kineto's "PyTorch
 *                   Profiler (0)" over the whole capture), a derived lane
 *                   of torch_npu (nd_ascend_lane), or a span on a derived
 *                   line of a /device: process (Steps, XLA Modules,
 *                   TensorFlow Name Scope, ...): they repeat time other
 *                   spans hold, or mark the capture, and are no work;
 *   ND_KIND_HOST    everything else (CPU ops, runtime calls, annotations).
 * `device` plays no part: chrome2ndjson labels a rank's host threads with
 * its GPU when the trace names the process so.  Nor does `class`: it says
 * what an op does, not where it runs.
 */
enum { ND_KIND_HOST = 1, ND_KIND_DEVICE = 2, ND_KIND_ANNOT = 4 };
#define ND_KIND_ANNOT_LINES "Steps, XLA Modules, XLA TraceMe, " \
	"TensorFlow Ops, TensorFlow Name Scope, Framework Ops, " \
	"Framework Name Scope, Source code, Launch Stats"
/* The rule on the three fields (an absent one: ND_STR_NONE). */
int nd_kind_of(nd_str cat, nd_str process, nd_str thread);
/* 1 when `cat` puts a span on a device's lane: a device op's, or a device
 * annotation's (not the profiler's own span). */
int nd_cat_on_device(nd_str cat);
/* ev->kind when decoded, else the rule on ev's fields. */
static inline int nd_event_kind(const nd_event *ev);

/* Map a type string to the enum. */
nd_evtype nd_evtype_of(const char *s, size_t n);
const char *nd_evtype_name(nd_evtype t);

/* Write ev as one line (with '\n') in canonical order.  When re-emitting a
 * decoded record, members not covered by the typed fields are copied after
 * `args` in their original order. */
void nd_event_write(nd_buf *out, const nd_event *ev);

/* Write a `meta` record (one line) for a source; producer is
 * "<nd_progname> <version>"; host NULL and !has_rank give JSON null. */
void nd_meta_write(nd_buf *out, const char *source, const char *format,
    int64_t origin_ns, const char *host, int has_rank, int64_t rank);
/* The same with a "devices" member last: devices[0..ndevices) is its
 * JSON object (none when ndevices is 0), as nd_devnames_meta reads it. */
void nd_meta_write_devices(nd_buf *out, const char *source,
    const char *format, int64_t origin_ns, const char *host, int has_rank,
    int64_t rank, const char *devices, size_t ndevices);

static inline nd_str
nd_str_c(const char *s)
{
	nd_str r;
	const char *e = s;

	if (s == NULL)
		return ND_STR_NONE;
	while (*e)
		e++;
	r.p = s;
	r.n = (size_t)(e - s);
	return r;
}

int nd_str_eq(nd_str a, const char *s);

/* The one rule for a step number written in a name ("ProfilerStep#007",
 * an XPlane Steps line's "12"): 1 to 10 decimal digits, leading zeros
 * allowed, no sign, at most INT32_MAX.  1 and *out set, or 0. */
int nd_step_number(const char *p, size_t n, int64_t *out);

/* The order of the spans of a timeline (ndtrace(7), "Sources, timelines
 * and order"): by start, the longer first.  <0 when (ts_a, dur_a) comes
 * first, >0 when (ts_b, dur_b) does, 0 on a tie, where stream order
 * decides.  A span is out of order when nd_span_order(the previous one
 * of its timeline, it) > 0. */
static inline int
nd_span_order(int64_t ts_a, int64_t dur_a, int64_t ts_b, int64_t dur_b)
{
	if (ts_a != ts_b)
		return ts_a < ts_b ? -1 : 1;
	if (dur_a != dur_b)
		return dur_a > dur_b ? -1 : 1;
	return 0;
}

static inline int
nd_event_kind(const nd_event *ev)
{
	return ev->kind != 0 ? ev->kind :
	    nd_kind_of(ev->cat, ev->process, ev->thread);
}

#endif
