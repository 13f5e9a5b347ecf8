/*
 * nd_in: an input file (or "-" for stdin) read by large blocks, gunzipped
 * transparently when it starts with the gzip magic (the name does not
 * matter), with the SHA-256 of the bytes as stored and the offset of the
 * decompressed bytes delivered so far (for error messages).
 *
 * Errors are values: a file that cannot be opened, a read error, gzip
 * data that is corrupt or cut, input over the cap end the input (reads
 * return 0) and nd_in_err() then returns the error, whose message is
 * "FILE: message" (with the byte offset where one applies).  Every reader
 * of an nd_in asks nd_in_err() once a read returns 0.
 *
 * Input cap: gzip data may decompress to at most nd_in_max() bytes, and a
 * program holds at most that much of one input in memory (nd_in_slurp,
 * nd_in_check_held): a small gzip bomb, or /dev/zero, ends with an error
 * naming the file and the cap rather than exhausting memory or time.  The
 * cap is ND_IN_MAX_DEFAULT, or NDTRACE_MAX_INPUT from the environment (a
 * size such as 512M or 64G; 0 for none), documented in ndtrace(7).
 */
#ifndef ND_IN_H
#define ND_IN_H

#include "nd_buf.h"
#include "nd_err.h"
#include "nd_spool.h"

#include <stddef.h>
#include <stdint.h>

typedef struct nd_in nd_in;

/* Never NULL: a file that cannot be opened is the input's error. */
nd_in *nd_in_open(const char *path);
/* An input over p[0..n) (borrowed, outlives the nd_in), named name in
 * messages; hashed as nd_in_open_hashed when hashed is set. */
nd_in *nd_in_open_mem(const void *p, size_t n, const char *name, int hashed);
/* The input's error, or NULL while there is none. */
const nd_err *nd_in_err(const nd_in *in);
/* The same, also hashing the stored bytes for nd_in_sha256 (ingest
 * programs); plain nd_in_open skips the cost. */
nd_in *nd_in_open_hashed(const char *path);
/* Read up to n decompressed bytes; 0 at end of input or on an error. */
size_t nd_in_read(nd_in *in, void *buf, size_t n);
/* Append the whole rest of the input to b (up to an error). */
void nd_in_slurp(nd_in *in, nd_buf *b);
const char *nd_in_name(const nd_in *in);	/* as given, "<stdin>" for "-" */
/* The name of path as nd_in_name gives it, before or after it is read. */
const char *nd_in_path_name(const char *path);
uint64_t nd_in_offset(const nd_in *in);		/* decompressed bytes read */
int nd_in_is_gzip(const nd_in *in);
/* Peek at the first bytes (decompressed) without consuming them; returns
 * how many are available (<= n). */
size_t nd_in_peek(nd_in *in, void *buf, size_t n);
/* SHA-256 of the stored bytes (input opened with nd_in_open_hashed).  Reads
 * and discards any unread rest of the input first: call it at the end. */
void nd_in_sha256(nd_in *in, char hex[65]);
void nd_in_close(nd_in *in);

/* For a second reading of a pipe (nd_drive): every stored byte read from
 * now on is also added to sp; or the stored bytes are read from sp, from
 * offset off to its end, instead of the file (the name stays, so messages
 * are the same).  The spool is borrowed. */
void nd_in_tee(nd_in *in, nd_spool *sp);
void nd_in_replay(nd_in *in, nd_spool *sp, uint64_t off);

#define ND_IN_MAX_DEFAULT ((uint64_t)16 << 30)	/* 16 GiB */
/* The cap in bytes (UINT64_MAX: none); an invalid NDTRACE_MAX_INPUT is a
 * usage error (exit 2). */
uint64_t nd_in_max(void);
/* 0 if n bytes of input `name` may be held in memory, else -1 with err
 * filled; why, if not NULL, says in the message what the n bytes are. */
int nd_in_check_held(const char *name, uint64_t n, const char *why,
    nd_err *err);

#endif
