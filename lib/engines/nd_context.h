/*
 * nd_context: the neighbourhood of matching spans, found in one pass over a
 * stream in memory bounded by the windows (trace-context(1) is the user's
 * reference; this is the engine).
 *
 * The caller feeds every span in stream order (nd_context_add) and says which
 * ones match.  For each match (ids 1, 2, 3, ... in order of arrival) the
 * engine reports relations (span, match, role):
 *
 *   ND_CTX_MATCH    the matching span itself;
 *   ND_CTX_PARENT   a span of its timeline that encloses it: open when it
 *                   starts (ts <= match ts < ts + dur, dur > 0; of equal
 *                   starts the one that came first encloses, the nesting
 *                   rule of nd_nest.h);
 *   ND_CTX_BEFORE   one of the `before` spans that precede it on its
 *                   timeline, in stream order, other than its parents (the
 *                   last `before` spans that had ended when it arrived);
 *   ND_CTX_AFTER    one of the `after` spans that follow it on its timeline
 *                   in stream order (its children first, if it has any);
 *   ND_CTX_OVERLAP  with `overlapping`: a span of the same source on another
 *                   timeline, of the match's device (same `device`, or the
 *                   same pid when the match has no device) or on a host
 *                   timeline (nd_event_kind() == ND_KIND_HOST), whose time
 *                   overlaps the match's (a zero-length span counts as
 *                   [ts, ts+1) for this test).
 *
 * A timeline is (source, pid, tid).  Spans must come in the contract's
 * order on each timeline (ts ascending, longer first on ties); a span that
 * does not is refused (ND_CTX_ORDER) and nothing changes.
 *
 * What is held, per timeline: the open spans (the stack of possible
 * parents), the last `keep` spans that have ended (a ring: `before`, or
 * with `overlapping` the larger `lookback`), a countdown per match still
 * collecting `after` spans, and, in write mode, the claimed spans waiting
 * for their turn (below).  With `overlapping`, also one window (a few
 * integers) per match of the current source, until the source ends: spans
 * of other timelines are tested against the windows as they arrive, and
 * against what the other timelines hold (open spans and ring) when a match
 * arrives.  Spans that arrived earlier and are no longer held are not
 * found: memory stays bounded by the windows, not by the stream.
 * Everything of a source is released when it ends.
 *
 * Two ways to consume the result (either callback may be NULL):
 *   relate  every relation as found, a span once per match it belongs to
 *           (trace-context --table groups them per match);
 *   write   every span that belongs to some match exactly once, in an
 *           order that keeps each timeline in stream order, with one
 *           relation: its own ND_CTX_MATCH if it matches, otherwise its
 *           relation to the lowest-numbered match it belongs to.  A span
 *           is written once no span of its timeline that comes before it
 *           can still be claimed (usually at once; at the latest after
 *           `before` more spans of the timeline, once an open span that
 *           belongs to no match has ended, or at the end of the source).
 *   done    a match's context is complete: its `after` spans are in, and
 *           with `overlapping` its source has ended.  Matches complete in
 *           no particular order (a match on a busy timeline can finish
 *           before an earlier one on a quiet timeline).
 *
 * Spans passed to callbacks (nd_context_span) are borrowed for the call.
 */
#ifndef ND_CONTEXT_H
#define ND_CONTEXT_H

#include "nd_event.h"

#include <stddef.h>
#include <stdint.h>

enum {
	ND_CTX_BEFORE = 0,
	ND_CTX_MATCH,
	ND_CTX_AFTER,
	ND_CTX_PARENT,
	ND_CTX_OVERLAP
};

/* "before", "match", "after", "parent", "overlap". */
const char *nd_context_role_name(int role);

/* A held span as the callbacks see it. */
typedef struct nd_context_span {
	const char *line;	/* the record as read, without newline */
	size_t len;
	int64_t ts_ns, dur_ns, pid, tid;
	uint64_t seq;		/* 0-based position on its timeline */
	uint32_t timeline;	/* dense id of (pid, tid) within its source */
	uint32_t source;
} nd_context_span;

typedef struct nd_context_rel {
	uint64_t match;		/* id, from 1 */
	int role;
	int64_t offset_ns;	/* the span's ts_ns minus the match's */
} nd_context_rel;

typedef struct nd_context_ops {
	void (*relate)(void *u, const nd_context_span *s, const nd_context_rel *r);
	void (*write)(void *u, const nd_context_span *s, const nd_context_rel *r);
	void (*done)(void *u, uint64_t match);
} nd_context_ops;

typedef struct nd_context nd_context;

enum { ND_CTX_OK = 0, ND_CTX_ORDER = -1 };

/* What an out-of-order span came after. */
typedef struct nd_context_order {
	int64_t pid, tid, ts_ns, dur_ns;	/* the span refused */
	int64_t prev_ts_ns, prev_dur_ns;	/* the last one accepted */
} nd_context_order;

/* lookback: with overlapping, how many ended spans each timeline keeps
 * for matches that come later (at least `before`). */
nd_context *nd_context_new(int64_t before, int64_t after, int overlapping,
    int64_t lookback, const nd_context_ops *ops, void *u);
/* Releases everything without reporting more: end the source first. */
void nd_context_free(nd_context *c);

/* Add the next span of the current source (nd_context_end_source ends
 * it).  ts_ns, dur_ns, pid and tid must be present.  With
 * is_match the span is a match; its id is stored in *id when id != NULL.
 * ND_CTX_OK, or ND_CTX_ORDER with *oe filled (oe may be NULL). */
int nd_context_add(nd_context *c, const nd_event *ev, int is_match, uint64_t *id,
    nd_context_order *oe);
/* The current source is complete: every pending match is done, every
 * claimed span written; its timelines are released. */
void nd_context_end_source(nd_context *c);

/* Matches found so far, and those whose context is not complete yet. */
uint64_t nd_context_matches(const nd_context *c);
size_t nd_context_pending(const nd_context *c);
/* Spans held now and the most ever held at once (the memory claim). */
size_t nd_context_held(const nd_context *c);
size_t nd_context_held_max(const nd_context *c);

#endif
