#include "nd_hash.h"
#include "nd_util.h"

#include <stdlib.h>
#include <string.h>

uint64_t
nd_hash_bytes(const void *data, size_t n)
{
	/* FNV-1a over 8-byte words, then a finaliser: fast for short keys. */
	const unsigned char *p = data;
	uint64_t h = 0xcbf29ce484222325ULL ^ n;

	while (n >= 8) {
		uint64_t w;

		memcpy(&w, p, 8);
		h = (h ^ w) * 0x100000001b3ULL;
		h ^= h >> 29;
		p += 8;
		n -= 8;
	}
	while (n > 0) {
		h = (h ^ *p++) * 0x100000001b3ULL;
		n--;
	}
	return nd_hash_u64(h);
}

/* ---- interning ---- */

/* A slot holds the hash, the string and its length, so a lookup of a key
 * that is present touches one slot and the string: two cache misses at most
 * in a table of thousands of names, which is what aggregations do per
 * event.  strs[] (by id) serves nd_intern_str. */
struct islot {
	uint64_t hash;
	const char *str;
	uint32_t len;
	uint32_t id1;		/* id + 1, 0 = empty */
};

struct nd_intern {
	struct islot *slots;
	size_t mask;
	const char **strs;
	uint32_t *lens;
	size_t n, cap;
	/* Strings are packed into large blocks to avoid a malloc each. */
	char *blk;
	size_t blk_used, blk_cap;
};

nd_intern *
nd_intern_new(void)
{
	nd_intern *t = nd_xcalloc(1, sizeof *t);

	t->mask = 1023;
	t->slots = nd_xcalloc(t->mask + 1, sizeof *t->slots);
	return t;
}

static char *
pack(nd_intern *t, const char *s, size_t n)
{
	char *p;

	if (t->blk == NULL || t->blk_cap - t->blk_used < n + 1) {
		size_t c = n + 1 > 65536 ? n + 1 : 65536;

		/* Old blocks stay alive: chain them through their first bytes. */
		char *nb = nd_xmalloc(c + sizeof(char *));
		memcpy(nb, &t->blk, sizeof(char *));
		t->blk = nb;
		t->blk_used = sizeof(char *);
		t->blk_cap = c + sizeof(char *);
	}
	p = t->blk + t->blk_used;
	if (n > 0)
		memcpy(p, s, n);
	p[n] = '\0';
	t->blk_used += n + 1;
	return p;
}

void
nd_intern_free(nd_intern *t)
{
	char *b;

	if (t == NULL)
		return;
	b = t->blk;
	while (b != NULL) {
		char *next;

		memcpy(&next, b, sizeof(char *));
		free(b);
		b = next;
	}
	free(t->slots);
	free(t->strs);
	free(t->lens);
	free(t);
}

static void
rehash(nd_intern *t)
{
	size_t nm = t->mask * 2 + 1;
	struct islot *ns = nd_xcalloc(nm + 1, sizeof *ns);

	for (size_t i = 0; i <= t->mask; i++)
		if (t->slots[i].id1 != 0) {
			size_t j = t->slots[i].hash & nm;

			while (ns[j].id1 != 0)
				j = (j + 1) & nm;
			ns[j] = t->slots[i];
		}
	free(t->slots);
	t->slots = ns;
	t->mask = nm;
}

/* Equality of n bytes without a call for the short keys aggregations use
 * (names, packed group keys): word compares, the last word overlapping. */
static inline int
same_bytes(const char *a, const char *b, size_t n)
{
	uint64_t x, y;
	uint32_t u, v;
	size_t i;

	if (n >= 8) {
		if (n > 64)
			return memcmp(a, b, n) == 0;
		for (i = 0; i + 8 < n; i += 8) {
			memcpy(&x, a + i, 8);
			memcpy(&y, b + i, 8);
			if (x != y)
				return 0;
		}
		memcpy(&x, a + n - 8, 8);
		memcpy(&y, b + n - 8, 8);
		return x == y;
	}
	if (n >= 4) {
		memcpy(&u, a, 4);
		memcpy(&v, b, 4);
		if (u != v)
			return 0;
		memcpy(&u, a + n - 4, 4);
		memcpy(&v, b + n - 4, 4);
		return u == v;
	}
	for (i = 0; i < n; i++)
		if (a[i] != b[i])
			return 0;
	return 1;
}

/* The slot of s: its own when present, else the empty one to fill. */
static inline struct islot *
probe(const nd_intern *t, const char *s, size_t n, uint64_t h)
{
	struct islot *sl;

	for (size_t j = h & t->mask; (sl = &t->slots[j])->id1 != 0;
	    j = (j + 1) & t->mask)
		if (sl->hash == h && sl->len == n &&
		    same_bytes(sl->str, s, n))
			break;
	return sl;
}

uint32_t
nd_intern_find(const nd_intern *t, const char *s, size_t n)
{
	const struct islot *sl = probe(t, s, n, nd_hash_bytes(s, n));

	return sl->id1 != 0 ? sl->id1 - 1 : UINT32_MAX;
}

uint32_t
nd_intern_id(nd_intern *t, const char *s, size_t n)
{
	uint64_t h = nd_hash_bytes(s, n);
	struct islot *sl = probe(t, s, n, h);
	uint32_t id;

	if (sl->id1 != 0)
		return sl->id1 - 1;
	if (t->n >= UINT32_MAX - 1 || n > UINT32_MAX)
		nd_die(ND_EXIT_ERROR, "too many distinct strings");
	if (t->n + 1 > t->cap) {
		size_t c = t->cap;

		nd_grow(&t->strs, &c, t->n + 1, sizeof *t->strs);
		c = t->cap;
		nd_grow(&t->lens, &c, t->n + 1, sizeof *t->lens);
		t->cap = c;
	}
	id = (uint32_t)t->n++;
	t->strs[id] = pack(t, s, n);
	t->lens[id] = (uint32_t)n;
	sl->hash = h;
	sl->str = t->strs[id];
	sl->len = (uint32_t)n;
	sl->id1 = id + 1;
	if (t->n * 2 > t->mask)
		rehash(t);
	return id;
}

const char *
nd_intern_str(const nd_intern *t, uint32_t id, size_t *n)
{
	if (n != NULL)
		*n = t->lens[id];
	return t->strs[id];
}

uint32_t
nd_intern_count(const nd_intern *t)
{
	return (uint32_t)t->n;
}

/* ---- uint64 map ---- */

struct nd_map64 {
	uint64_t *keys;
	uint64_t *vals;
	unsigned char *used;
	size_t mask, n;
};

nd_map64 *
nd_map64_new(void)
{
	nd_map64 *m = nd_xcalloc(1, sizeof *m);

	m->mask = 255;
	m->keys = nd_xcalloc(m->mask + 1, sizeof *m->keys);
	m->vals = nd_xcalloc(m->mask + 1, sizeof *m->vals);
	m->used = nd_xcalloc(m->mask + 1, 1);
	return m;
}

void
nd_map64_free(nd_map64 *m)
{
	if (m == NULL)
		return;
	free(m->keys);
	free(m->vals);
	free(m->used);
	free(m);
}

static void
map_grow(nd_map64 *m)
{
	nd_map64 nm;

	nm.mask = m->mask * 2 + 1;
	nm.keys = nd_xcalloc(nm.mask + 1, sizeof *nm.keys);
	nm.vals = nd_xcalloc(nm.mask + 1, sizeof *nm.vals);
	nm.used = nd_xcalloc(nm.mask + 1, 1);
	nm.n = m->n;
	for (size_t i = 0; i <= m->mask; i++) {
		size_t j;

		if (!m->used[i])
			continue;
		j = nd_hash_u64(m->keys[i]) & nm.mask;
		while (nm.used[j])
			j = (j + 1) & nm.mask;
		nm.used[j] = 1;
		nm.keys[j] = m->keys[i];
		nm.vals[j] = m->vals[i];
	}
	free(m->keys);
	free(m->vals);
	free(m->used);
	*m = nm;
}

uint64_t *
nd_map64_put(nd_map64 *m, uint64_t key, int *isnew)
{
	size_t j;

	if ((m->n + 1) * 2 > m->mask)
		map_grow(m);
	j = nd_hash_u64(key) & m->mask;
	for (; m->used[j]; j = (j + 1) & m->mask)
		if (m->keys[j] == key) {
			if (isnew != NULL)
				*isnew = 0;
			return &m->vals[j];
		}
	m->used[j] = 1;
	m->keys[j] = key;
	m->vals[j] = 0;
	m->n++;
	if (isnew != NULL)
		*isnew = 1;
	return &m->vals[j];
}

uint64_t *
nd_map64_get(const nd_map64 *m, uint64_t key)
{
	size_t j = nd_hash_u64(key) & m->mask;

	for (; m->used[j]; j = (j + 1) & m->mask)
		if (m->keys[j] == key)
			return &m->vals[j];
	return NULL;
}

int
nd_map64_del(nd_map64 *m, uint64_t key)
{
	size_t j = nd_hash_u64(key) & m->mask, k;

	for (; m->used[j]; j = (j + 1) & m->mask)
		if (m->keys[j] == key)
			break;
	if (!m->used[j])
		return 0;
	m->used[j] = 0;
	m->n--;
	/* Backward-shift deletion keeps probe chains intact. */
	k = j;
	for (;;) {
		size_t h;

		k = (k + 1) & m->mask;
		if (!m->used[k])
			break;
		h = nd_hash_u64(m->keys[k]) & m->mask;
		if ((j < k && (h <= j || h > k)) || (j > k && h <= j && h > k)) {
			m->used[j] = 1;
			m->keys[j] = m->keys[k];
			m->vals[j] = m->vals[k];
			m->used[k] = 0;
			j = k;
		}
	}
	return 1;
}

size_t
nd_map64_count(const nd_map64 *m)
{
	return m->n;
}

int
nd_map64_next(const nd_map64 *m, size_t *pos, uint64_t *key, uint64_t *val)
{
	while (*pos <= m->mask) {
		size_t i = (*pos)++;

		if (m->used[i]) {
			*key = m->keys[i];
			*val = m->vals[i];
			return 1;
		}
	}
	return 0;
}

/* ---- id tuples ---- */

#define DENSE_W 7	/* at most this many ids before the last one */

/* One slot holds key and value: a lookup touches one cache line.  tag
 * tells the levels of prefixes apart: (a, b) at one level is no (a, b) at
 * another. */
struct kslot {
	uint64_t key;
	uint32_t val;
	uint32_t tag;		/* 0: empty */
};

struct ktab {
	struct kslot *s;
	size_t mask, n;
};

/* In front of the tables, an array by the last id (ids are dense: one
 * load, no probe): its slot holds the latest tuple with that last id, w + 1
 * words (value + 1, 0: none; then ids[0..w)).  A tuple of another length,
 * or one that lost its slot, takes the tables. */
struct nd_idmemo {
	struct ktab prefix;	/* (prefix id, id) -> prefix id */
	struct ktab vals;	/* (prefix id, last id) -> value */
	uint32_t *dense;
	size_t capdense;	/* in slots */
	size_t w;		/* ids before the last one, of every slot */
	uint32_t pend[DENSE_W + 1];	/* the last nd_idmemo_get's miss */
	size_t npend;
	uint64_t pendkey;
	int haspend;
};

static void
ktab_init(struct ktab *t)
{
	t->mask = 255;
	t->n = 0;
	t->s = nd_xcalloc(t->mask + 1, sizeof *t->s);
}

/* The slot of (tag, key): its own, or the empty one where it goes. */
static struct kslot *
ktab_slot(const struct ktab *t, uint32_t tag, uint64_t key)
{
	size_t j = nd_hash_u64(key + tag) & t->mask;

	while (t->s[j].tag != 0 && (t->s[j].key != key || t->s[j].tag != tag))
		j = (j + 1) & t->mask;
	return &t->s[j];
}

static void
ktab_put(struct ktab *t, uint32_t tag, uint64_t key, uint32_t val)
{
	struct kslot *sl;

	if ((t->n + 1) * 2 > t->mask) {
		struct ktab nt;

		nt.mask = t->mask * 2 + 1;
		nt.n = 0;
		nt.s = nd_xcalloc(nt.mask + 1, sizeof *nt.s);
		for (size_t i = 0; i <= t->mask; i++)
			if (t->s[i].tag != 0) {
				*ktab_slot(&nt, t->s[i].tag, t->s[i].key) =
				    t->s[i];
				nt.n++;
			}
		free(t->s);
		*t = nt;
	}
	sl = ktab_slot(t, tag, key);
	if (sl->tag == 0) {
		sl->tag = tag;
		sl->key = key;
		t->n++;
	}
	sl->val = val;
}

nd_idmemo *
nd_idmemo_new(void)
{
	nd_idmemo *m = nd_xcalloc(1, sizeof *m);

	ktab_init(&m->prefix);
	ktab_init(&m->vals);
	m->w = SIZE_MAX;
	return m;
}

void
nd_idmemo_free(nd_idmemo *m)
{
	if (m == NULL)
		return;
	free(m->prefix.s);
	free(m->vals.s);
	free(m->dense);
	free(m);
}

/* The dense slot of ids[0..n), or NULL when it has none. */
static uint32_t *
dense_slot(nd_idmemo *m, const uint32_t *ids, size_t n, int grow)
{
	uint32_t last = ids[n - 1];

	if (m->w == SIZE_MAX && grow && n - 1 <= DENSE_W)
		m->w = n - 1;
	if (n - 1 != m->w || last == UINT32_MAX)
		return NULL;
	if (last >= m->capdense) {
		size_t old = m->capdense, c = old;

		if (!grow)
			return NULL;
		nd_grow(&m->dense, &c, ((size_t)last + 1) * (m->w + 1),
		    sizeof *m->dense);
		c /= m->w + 1;
		memset(m->dense + old * (m->w + 1), 0,
		    (c - old) * (m->w + 1) * sizeof *m->dense);
		m->capdense = c;
	}
	return m->dense + (size_t)last * (m->w + 1);
}

static void
dense_put(nd_idmemo *m, const uint32_t *ids, size_t n, uint32_t val)
{
	uint32_t *d = dense_slot(m, ids, n, 1);

	if (d != NULL) {
		d[0] = val + 1;
		memcpy(d + 1, ids, (n - 1) * sizeof *ids);
	}
}

uint32_t
nd_idmemo_get(nd_idmemo *m, const uint32_t *ids, size_t n, uint64_t *key)
{
	uint64_t pre = ids[0];
	const struct kslot *sl;
	const uint32_t *d = dense_slot(m, ids, n, 0);

	if (d != NULL && d[0] != 0 &&
	    memcmp(d + 1, ids, (n - 1) * sizeof *ids) == 0)
		return d[0] - 1;
	for (size_t i = 1; i < n; i++) {
		uint64_t k = pre << 32 | ids[i];

		if (i == n - 1) {
			pre = k;
			break;
		}
		sl = ktab_slot(&m->prefix, (uint32_t)i, k);
		if (sl->tag != 0)
			pre = sl->val;
		else {
			if (m->prefix.n >= UINT32_MAX)
				nd_die(ND_EXIT_ERROR, "too many distinct keys");
			pre = m->prefix.n;
			ktab_put(&m->prefix, (uint32_t)i, k, (uint32_t)pre);
		}
	}
	*key = pre;
	sl = ktab_slot(&m->vals, 1, pre);
	if (sl->tag != 0) {
		dense_put(m, ids, n, sl->val);
		return sl->val;
	}
	m->haspend = n <= DENSE_W + 1;
	if (m->haspend) {
		memcpy(m->pend, ids, n * sizeof *ids);
		m->npend = n;
		m->pendkey = pre;
	}
	return UINT32_MAX;
}

void
nd_idmemo_put(nd_idmemo *m, uint64_t key, uint32_t val)
{
	ktab_put(&m->vals, 1, key, val);
	if (m->haspend && key == m->pendkey)
		dense_put(m, m->pend, m->npend, val);
	m->haspend = 0;
}
