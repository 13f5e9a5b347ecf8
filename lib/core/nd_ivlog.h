/*
 * nd_ivlog: an append-only log of 16-byte records (nd_iv) sorted by lo,
 * kept on an nd_spool so that resident memory does not grow with it, read
 * back through sequential cursors.
 *
 * Records go into a chunk of `chunk` records held in memory; a full chunk
 * is appended to the spool and only its offset and last record stay in
 * memory (the chunk index, 32 bytes per chunk).  Many logs may share one
 * spool: their chunks interleave there.
 *
 * Two ways to write a log (do not mix them on one log):
 *   nd_ivlog_add   a union of time stretches: an interval that starts at
 *                  or before the end of the last stretch (touching
 *                  included) extends it, else it opens a new stretch.  The
 *                  last stretch stays open (in memory) until a later one
 *                  starts after its end.  The records are then sorted,
 *                  disjoint and not touching, as in a normalised nd_ivset.
 *   nd_ivlog_push  plain records (e.g. a time and a value's bits in hi).
 * Both need lo nondecreasing; they return -1 and add nothing otherwise (the
 * caller keeps such input elsewhere, e.g. in an nd_ivset).
 * nd_ivlog_close() ends the writing; then the log can be read, merged and
 * read again.
 *
 * A cursor (nd_ivcur) reads one log: nd_ivcur_at() any index, cheapest
 * going forward; nd_ivcur_seek() a position that only moves forward, for
 * sweeps over windows sorted by start.  It copies one chunk at a time from
 * the spool, so the spool's read cache serves at most a few cursors at
 * once without thrashing: merges read at most ND_IVLOG_FANIN logs at a
 * time, and callers should keep about that many cursors busy together.
 *
 * I/O errors are fatal (nd_spool).
 */
#ifndef ND_IVLOG_H
#define ND_IVLOG_H

#include "nd_interval.h"
#include "nd_spool.h"

#include <stddef.h>
#include <stdint.h>

/* Records per chunk by default: 16 KiB chunks. */
#define ND_IVLOG_CHUNK 1024
/* Logs read at once by a merge (the spool keeps 4 read windows). */
#define ND_IVLOG_FANIN 4

typedef struct nd_ivchunk {
	uint64_t off;		/* spool offset */
	nd_iv last;		/* its last record */
} nd_ivchunk;

typedef struct nd_ivlog {
	nd_spool *sp;
	size_t chunk;		/* records per chunk */
	nd_ivchunk *ck;		/* full chunks, on the spool */
	size_t nck, capck;
	nd_iv *buf;		/* the chunk being filled */
	size_t nbuf, capbuf;
	nd_iv open;		/* nd_ivlog_add: the last stretch */
	int has_open;
	uint64_t n;		/* records in ck and buf */
} nd_ivlog;

/* The chunk size to use: $ND_IVLOG_CHUNK when a positive number (tests
 * set a small one to reach chunk boundaries with small inputs), else
 * ND_IVLOG_CHUNK. */
size_t nd_ivlog_chunk_env(void);
/* chunk 0: ND_IVLOG_CHUNK. */
void nd_ivlog_init(nd_ivlog *l, nd_spool *sp, size_t chunk);
/* Forget the records (their spool bytes stay until the spool is freed). */
void nd_ivlog_free(nd_ivlog *l);
int nd_ivlog_add(nd_ivlog *l, int64_t lo, int64_t hi);
int nd_ivlog_push(nd_ivlog *l, int64_t lo, int64_t hi);
void nd_ivlog_close(nd_ivlog *l);
/* Records in a closed log. */
static inline uint64_t nd_ivlog_count(const nd_ivlog *l) { return l->n; }

/* dst (initialised, empty) = the union of the closed union logs src[0..n),
 * closed.  The sources are unchanged. */
void nd_ivlog_union(nd_ivlog *dst, nd_ivlog *const *src, size_t n);
/* dst (initialised, empty) = the records of the closed logs src[0..n)
 * merged by lo, ties in the order of src; closed. */
void nd_ivlog_merge(nd_ivlog *dst, nd_ivlog *const *src, size_t n);
/* A normalised nd_ivset appended to an empty union log, closed. */
void nd_ivlog_from_set(nd_ivlog *dst, const nd_ivset *s);

typedef struct nd_ivcur {
	const nd_ivlog *l;
	uint64_t pos;		/* nd_ivcur_seek's position */
	int64_t last;		/* its last t */
	size_t ci;		/* chunk in cbuf, SIZE_MAX: none */
	nd_iv *cbuf;
} nd_ivcur;

void nd_ivcur_init(nd_ivcur *c, const nd_ivlog *l);
void nd_ivcur_free(nd_ivcur *c);
/* Record i < nd_ivlog_count(). */
nd_iv nd_ivcur_at(nd_ivcur *c, uint64_t i);
/* Union log: the index of the first stretch that ends after t (the count
 * when none).  Cheap when t does not decrease from one call to the next
 * (a smaller t starts again from the first chunk index). */
uint64_t nd_ivcur_seek(nd_ivcur *c, int64_t t);
/* Any log: the index of the first record with lo >= t; the same. */
uint64_t nd_ivcur_seek_lo(nd_ivcur *c, int64_t t);
/* Union log: length of its part inside [lo, hi). */
int64_t nd_ivcur_measure(nd_ivcur *c, int64_t lo, int64_t hi);

/* nd_iv_breakdown over union logs: cursors cat[ND_CAT_*] (NULL: empty).
 * The result is that of nd_iv_breakdown on the same sets; cheapest for
 * windows by start. */
void nd_ivcur_breakdown(nd_ivcur *const cat[ND_NCAT], int64_t lo,
    int64_t hi, nd_breakdown *out);

#endif
