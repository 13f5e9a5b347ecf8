/*
 * nd_spool: an append-only byte store for what a two-pass program keeps
 * between its passes (chrome2ndjson keeps the `args` text of every event
 * until the events are written in timeline order; nd_drive keeps standard
 * input from a pipe for a second reading).
 *
 * The first ND_SPOOL_MEM bytes stay in memory (fewer when the environment
 * variable ND_SPOOL_MEM gives a smaller figure in bytes: tests use it to
 * reach the file with small inputs).  Past that, everything goes
 * to a temporary file in $TMPDIR (default /tmp) that is unlinked as soon as
 * it is created, so nothing is left behind whatever happens; resident
 * memory stays bounded by the in-memory part plus a small read cache of
 * ND_SPOOL_WINDOWS windows of ND_SPOOL_WINDOW bytes, which suits reads
 * that go roughly forward through the spool.  If no temporary file can be
 * created the spool keeps growing in memory instead (correct, only bigger)
 * and the program says so once on stderr, naming TMPDIR.
 *
 * Pointers returned by nd_spool_reserve and nd_spool_get are valid until
 * the next call on the same spool.  I/O errors are fatal (exit 2).
 */
#ifndef ND_SPOOL_H
#define ND_SPOOL_H

#include <stddef.h>
#include <stdint.h>

#define ND_SPOOL_MEM ((size_t)8 << 20)
#define ND_SPOOL_WINDOW ((size_t)1 << 20)
#define ND_SPOOL_WINDOWS 4

typedef struct nd_spool nd_spool;

nd_spool *nd_spool_new(void);
void nd_spool_free(nd_spool *s);

/* Room for up to n bytes at the end of the spool; write into it, then
 * nd_spool_commit() the number actually used, which returns the offset of
 * those bytes. */
char *nd_spool_reserve(nd_spool *s, size_t n);
uint64_t nd_spool_commit(nd_spool *s, size_t used);
uint64_t nd_spool_add(nd_spool *s, const void *p, size_t n);
uint64_t nd_spool_size(const nd_spool *s);
/* 1 once data went to the temporary file. */
int nd_spool_on_disk(const nd_spool *s);

/* The bytes [off, off + n), which must have been committed. */
const char *nd_spool_get(nd_spool *s, uint64_t off, size_t n);

/* Read cursors with a window cache of their own, so that several threads
 * can read at once once the writing is over (no reserve or commit may run
 * while cursors are in use).  A pointer from nd_spool_rd_get is valid
 * until the next call on the same cursor. */
typedef struct nd_spool_rd nd_spool_rd;
nd_spool_rd *nd_spool_rd_new(nd_spool *s);
const char *nd_spool_rd_get(nd_spool_rd *r, uint64_t off, size_t n);
void nd_spool_rd_free(nd_spool_rd *r);

#endif
