/*
 * nd_pipe: pipeline-parallel schedules from the ranks' own traces -- the
 * forward/backward/weight-gradient blocks of each micro-batch on each stage,
 * the bubbles between them and the slow stage.  trace-pipeline(1) is the
 * reference for every rule stated here; trace-report(1) feeds the same
 * engine for its pipeline section and chart.
 *
 * Use: nd_pipe_new, then every record of the input in order to
 * nd_pipe_add (meta records give the rank and the clock origin of the
 * sources that follow), then nd_pipe_finish for the steps.  A partial
 * (--partial) is what nd_pipe_partial_write writes after the last record;
 * nd_pipe_partial_add reads its records back into an engine, so a merge of
 * the partials of every rank gives the answer of one run over all of them.
 *
 * Memory: the blocks and P2P spans (a few per micro-batch) and the union of
 * each rank's work (its disjoint busy stretches), per step; never a record
 * that is neither.
 */
#ifndef ND_PIPE_H
#define ND_PIPE_H

#include "nd_buf.h"
#include "nd_err.h"
#include "nd_event.h"
#include "nd_interval.h"
#include "nd_json.h"

#include <stddef.h>
#include <stdint.h>

/* Phases of a block. */
enum { ND_PIPE_F = 0, ND_PIPE_B, ND_PIPE_W, ND_PIPE_NPHASE };
/* "F", "B", "W". */
const char *nd_pipe_phase_name(int phase);

/* Schedules (pipe_step.schedule). */
enum { ND_PIPE_NONE = 0, ND_PIPE_GPIPE, ND_PIPE_1F1B, ND_PIPE_INTERLEAVED,
	ND_PIPE_ZERO_BUBBLE };
/* "none", "gpipe", "1f1b", "interleaved", "zero_bubble". */
const char *nd_pipe_schedule_name(int schedule);

/* Clocks (pipe_step.clock). */
enum { ND_PIPE_CLOCK_ABSOLUTE = 0, ND_PIPE_CLOCK_MARKER,
	ND_PIPE_CLOCK_FIRST_BLOCK };
/* "absolute", "step_marker", "first_block". */
const char *nd_pipe_clock_name(int clock);

/* The block rules: POSIX extended regexes matched without case against
 * span names; NULL takes the default (ND_PIPE_DEFAULT_*).  The number of a
 * micro-batch is the first capture group that matched a run of digits (a
 * Python frame's line number is inside a group that holds more). */
#define ND_PIPE_PYFRAME "^(.*\\.py\\([0-9]+\\): )?"
#define ND_PIPE_MBSUFFIX \
	"([ #:=_-]*(mb|microbatch|micro_batch)?[ #:=]*([0-9]+))?$"
#define ND_PIPE_DEFAULT_FORWARD \
	ND_PIPE_PYFRAME "forward[_ ]step" ND_PIPE_MBSUFFIX \
	"|^forward-compute$|^forward[ #:]*([0-9]+)$|^[0-9]+F([0-9]+)$"
#define ND_PIPE_DEFAULT_BACKWARD \
	ND_PIPE_PYFRAME "backward[_ ]step" ND_PIPE_MBSUFFIX \
	"|^backward-compute$|^backward([ _]input)?[ #:]*([0-9]+)$" \
	"|^[0-9]+[BI]([0-9]+)$"
#define ND_PIPE_DEFAULT_WGRAD \
	ND_PIPE_PYFRAME "(backward[_ ]weight|weight[_ ]grad|wgrad)" \
	ND_PIPE_MBSUFFIX "|^[0-9]+W([0-9]+)$"
#define ND_PIPE_DEFAULT_P2P "send|recv"

typedef struct nd_pipe_opts {
	const char *forward, *backward, *wgrad, *p2p;
} nd_pipe_opts;

/* One block of the schedule (a pipe_mb record). */
typedef struct nd_pipe_block {
	int phase;		/* ND_PIPE_F/B/W */
	int64_t mb;		/* micro-batch number */
	int64_t at;		/* start - the step window's start (W0) */
	int64_t ts;		/* start in its source's own clock */
	int64_t dur;
	const char *name;	/* the span's name */
} nd_pipe_block;

/* One rank in one step (a pipe_rank record); its blocks by start. */
typedef struct nd_pipe_rank {
	int64_t rank;
	int stage;
	int64_t busy, bubble, warmup, cooldown, steady, p2p_wait;
	double bubble_frac;
	int64_t mb;
	int64_t phase_ns[ND_PIPE_NPHASE];	/* f_ns, b_ns, w_ns */
	int64_t fb_per_mb;
	int64_t explained;
	double explained_frac;
	const nd_pipe_block *blocks;
	size_t nblocks;
	/* The idle stretches of [W0, W1) in window time (0 = W0), sorted and
	 * disjoint, for the chart's hatching; and the rank's P2P spans in
	 * window time, clipped to the window. */
	const nd_iv *idle;
	size_t nidle;
	const nd_iv *p2p;
	size_t np2p;
} nd_pipe_rank;

/* One step (a pipe_step record); its ranks by stage. */
typedef struct nd_pipe_step {
	int64_t num;
	int stages;
	int64_t microbatches;
	int schedule;		/* ND_PIPE_* schedule */
	int clock;		/* ND_PIPE_CLOCK_* */
	int64_t window, busy, bubble;
	double bubble_frac;
	int has_ideal;
	double ideal_bubble_frac;
	int slow;		/* index into ranks[] of the slow stage, -1: none */
	const nd_pipe_rank *ranks;
	size_t nranks;
} nd_pipe_step;

typedef struct nd_pipe nd_pipe;
struct nd_span_role;	/* nd_steps.h */

/* NULL with a one-line message in err (e.g. "invalid --forward 'a(':
 * Unmatched ( or \(") when a rule does not compile.  Blocks are never
 * device annotations (the GPU copy of a host range would count twice). */
nd_pipe *nd_pipe_new(const nd_pipe_opts *o, char *err, size_t errlen);
void nd_pipe_free(nd_pipe *p);
/* Every record of the input, in order (spans, meta, the rest ignored). */
void nd_pipe_add(nd_pipe *p, const nd_event *ev);
/* The same, with the span's role (nd_span_role_of) when the caller has it
 * (trace-report: its --step-regex then says what a step marker is); NULL
 * computes it without a step regex. */
void nd_pipe_add_span(nd_pipe *p, const nd_event *ev,
    const struct nd_span_role *role);
/* The input had n sources (nd_stream_nsources), some perhaps without a
 * record: their indexes count for ranks without a meta rank. */
void nd_pipe_sources(nd_pipe *p, uint32_t n);
/* The rules in effect as canonical text ("--forward RE --backward RE
 * --wgrad RE --p2p RE"): partials merge only when theirs are equal. */
const char *nd_pipe_rules(const nd_pipe *p);
/* The input ended: the steps, by number; valid until nd_pipe_free.  Steps
 * where no rank has a block are left out. */
size_t nd_pipe_finish(nd_pipe *p, const nd_pipe_step **out);

/* Writing the answer (shared by trace-pipeline and trace-report). */
/* The NDJSON records of one step (pipe_mb..., pipe_rank..., pipe_step). */
void nd_pipe_write_step(nd_buf *out, const nd_pipe_step *st);
/* The human table of one step (--table). */
void nd_pipe_table_step(nd_buf *out, const nd_pipe_step *st);
/* The SVG schedule chart of one step: ranks x time, F/B/W coloured,
 * micro-batch numbers, bubbles hatched (nd_pipesvg.c). */
void nd_pipe_svg_step(nd_buf *out, const nd_pipe_step *st);
/* A fraction in percent, rounded to 4 decimals first as the records
 * round it, so that a chart or a report reads as the records
 * (nd_pipesvg.c). */
double nd_pipe_pct(double frac);
/* The step a report shows: the one whose window is the median (the lower
 * middle), or NULL when there is none. */
const nd_pipe_step *nd_pipe_typical(const nd_pipe_step *st, size_t n);

/* Partials (trace-pipeline --partial / --merge; nd_partial framing). */
#define ND_PIPE_PARTIAL "pipe_partial"
/* Write every figure the engine holds as partial records after the
 * header the caller began (nd_partial_begin); one line per record, each
 * committed by the caller's callback. */
typedef void nd_pipe_line_fn(void *ctx, nd_buf *line);
void nd_pipe_partial_write(nd_pipe *p, nd_pipe_line_fn *fn, void *ctx);
/* Record types a partial holds (for nd_partial_read's body list). */
extern const char *const nd_pipe_partial_types[];
extern const size_t nd_pipe_partial_ntypes;
/* One record of a partial (the header included), in order; file and line
 * say where it is, for the message of a record that cannot be read: 0, or
 * -1 with err filled ("FILE:LINE: ...") and nothing of it added. */
int nd_pipe_partial_add(nd_pipe *p, const nd_event *ev, const char *file,
    uint64_t line, nd_err *err);

#endif
