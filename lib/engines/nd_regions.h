/*
 * nd_regions: time by named-scope region -- the `scope` path of each op
 * split on '/' into a tree, with inclusive and exclusive time; the views of
 * it (--depth, --min-share, --prune, --ops, --by-device); NDJSON region
 * records, an indented tree, folded stacks; and partial results that
 * a merge reads back.
 *
 * Push interface: feed the selected records of a scan and their exclusive
 * time (nd_regions_engine, driven by nd_run) or partial results (the
 * same engine with merge); then nd_regions_write.
 *
 * The scope tree (nd_rtree) is also usable alone: a caller adds the ops'
 * figures at their scope (nd_rtree_scope), sums (nd_rtree_sum) and reads
 * the regions, in tree order or ranked (nd_rtree_rank).  Scope rule: the
 * segments between '/', empty ones dropped; a scope with no segment is the
 * region "(none)" where the caller asks for one.
 *
 * Partial results (nd_partial framing): a region_partial header
 * {timelines, fallback, rule, sources}, then one region_group record per
 * (device, scope, op name) {key, count, exclusive_ns, overrun}: every view
 * can be made from them.
 */
#ifndef ND_REGIONS_H
#define ND_REGIONS_H

#include "nd_agg.h"
#include "nd_buf.h"
#include "nd_event.h"
#include "nd_out.h"
#include "nd_scan.h"
#include "nd_stream.h"

#include <stddef.h>
#include <stdint.h>

/* A region: node ids are those of (parent, name). */
typedef struct nd_region {
	uint32_t parent;	/* UINT32_MAX for a root or a top region */
	char *name;		/* owned, NUL-terminated */
	size_t namelen;
	int depth;		/* 0: a root (device); 1: a top region */
	size_t plen;		/* length of the path below the root */
	size_t rank;		/* nd_rtree_rank: tree order */
	uint64_t self_count, count, overrun, overrun_incl;
	int64_t excl, incl;
	uint32_t *kids;
	size_t nkids, capkids;
} nd_region;

typedef struct nd_rtree nd_rtree;

nd_rtree *nd_rtree_new(void);
void nd_rtree_free(nd_rtree *t);
/* The child of parent named name[0..n), created if new; parent
 * UINT32_MAX with root: a root (depth 0), else a top region (depth 1). */
uint32_t nd_rtree_child(nd_rtree *t, uint32_t parent, int root,
    const char *name, size_t n);
/* The region of scope[0..n) below parent (UINT32_MAX: at the top); a scope
 * with no segment is the child `none`, or UINT32_MAX when none is NULL. */
uint32_t nd_rtree_scope(nd_rtree *t, uint32_t parent, const char *scope,
    size_t n, const char *none);
/* Own figures of a region. */
void nd_rtree_add(nd_rtree *t, uint32_t id, uint64_t count, int64_t excl,
    uint64_t overrun);
/* Sum the inclusive figures bottom-up; returns the total time. */
int64_t nd_rtree_sum(nd_rtree *t);
size_t nd_rtree_count(const nd_rtree *t);
nd_region *nd_rtree_node(nd_rtree *t, uint32_t id);
/* Every region ranked: inclusive time, count (descending), the shorter
 * path, then tree order (parents first, siblings by name bytes).  Sets
 * each node's rank (its tree order); returns the ids (caller frees). */
uint32_t *nd_rtree_rank(nd_rtree *t);
/* The path of region id below its root, "a/b/c". */
void nd_rtree_path(nd_rtree *t, uint32_t id, nd_buf *out);

enum { ND_REG_JSON, ND_REG_TREE, ND_REG_FOLDED, ND_REG_PARTIAL };

typedef struct nd_regions_opts {
	int fmt;		/* ND_REG_* */
	int by_device, ops, prune, depth;
	double min_share;
} nd_regions_opts;

typedef struct nd_regions nd_regions;

nd_regions *nd_regions_new(const nd_regions_opts *o);
void nd_regions_free(nd_regions *r);
/* The record interface for nd_scan (a selected record, its exclusive
 * time, forget everything). */
/* r as an engine for nd_run (nd_engine.h): exclusive time through nd_scan
 * with opts (copied) from a reading, or partial results with merge; the
 * answer is nd_regions_write's. */
nd_engine nd_regions_engine(nd_regions *r, const nd_scan_opts *opts,
    int merge);
/* Write in o->fmt on o (not closed). */
void nd_regions_write(nd_regions *r, nd_out *o);

#endif
