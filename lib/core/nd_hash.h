/*
 * nd_hash: string interning and an integer-keyed hash map, the two tables
 * aggregations need (op names -> ids, (source,pid,tid) or correlation ids ->
 * slots).  Open addressing, power-of-two sizes, load factor <= 1/2.
 *
 * Interned strings live as long as the table; ids are dense (0, 1, 2, ...)
 * so callers index their own arrays by id.
 */
#ifndef ND_HASH_H
#define ND_HASH_H

#include <stddef.h>
#include <stdint.h>

uint64_t nd_hash_bytes(const void *p, size_t n);
static inline uint64_t
nd_hash_u64(uint64_t x)
{
	/* splitmix64 finaliser */
	x ^= x >> 30;
	x *= 0xbf58476d1ce4e5b9ULL;
	x ^= x >> 27;
	x *= 0x94d049bb133111ebULL;
	x ^= x >> 31;
	return x;
}

typedef struct nd_intern nd_intern;

nd_intern *nd_intern_new(void);
void nd_intern_free(nd_intern *t);
/* Id of the string s[0..n), added if new. */
uint32_t nd_intern_id(nd_intern *t, const char *s, size_t n);
/* Id if present, else UINT32_MAX. */
uint32_t nd_intern_find(const nd_intern *t, const char *s, size_t n);
/* The string of an id (NUL-terminated) and its length. */
const char *nd_intern_str(const nd_intern *t, uint32_t id, size_t *n);
uint32_t nd_intern_count(const nd_intern *t);

/* uint64 -> uint64 map.  Any key is allowed. */
typedef struct nd_map64 nd_map64;

nd_map64 *nd_map64_new(void);
void nd_map64_free(nd_map64 *m);
/* Pointer to the value of key, inserting 0 (and setting *isnew) if absent. */
uint64_t *nd_map64_put(nd_map64 *m, uint64_t key, int *isnew);
/* Pointer to the value, or NULL. */
uint64_t *nd_map64_get(const nd_map64 *m, uint64_t key);
int nd_map64_del(nd_map64 *m, uint64_t key);
size_t nd_map64_count(const nd_map64 *m);
/* Iterate: *pos starts at 0; returns 1 with key/value until the end. */
int nd_map64_next(const nd_map64 *m, size_t *pos, uint64_t *key,
    uint64_t *val);

/*
 * Tuples of ids -> uint32 values: a memo in front of a string-keyed table
 * whose keys the caller can also name by ids one-to-one with them (the
 * nd_event_sid of their fields), so most records cost a hash of integers
 * instead of a key built, hashed and compared.  ids[0..n) (n >= 1) folds
 * into one 64-bit key through dense ids of its prefixes: put the field of
 * most values last, so that the prefixes stay few.
 */
typedef struct nd_idmemo nd_idmemo;

nd_idmemo *nd_idmemo_new(void);
void nd_idmemo_free(nd_idmemo *m);
/* The value of ids[0..n), or UINT32_MAX when none yet: then *key is the
 * tuple's key for nd_idmemo_put, which follows that get (a value, once
 * put, stays).  A tuple whose last id was seen last with the same other
 * ids costs one array load (ids are dense). */
uint32_t nd_idmemo_get(nd_idmemo *m, const uint32_t *ids, size_t n,
    uint64_t *key);
void nd_idmemo_put(nd_idmemo *m, uint64_t key, uint32_t val);

#endif
