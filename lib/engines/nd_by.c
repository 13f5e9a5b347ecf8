#include "nd_by.h"
#include "nd_cli.h"
#include "nd_hash.h"
#include "nd_name.h"
#include "nd_util.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* How a key is read from a record. */
enum { K_STR, K_INT, K_ARG, K_ANY };

struct bykey {
	char *key;		/* as given: "name", "args.stream" */
	const char *arg;	/* K_ARG: the part after "args." */
	int kind;
	size_t off;		/* K_STR: offset of the nd_str in nd_event;
				 * K_INT: offset of the int64 */
	unsigned bit;		/* K_INT: ND_HAS_* */
};

/* What nd_by_key saw, for nd_by_check: whether each key had a value and,
 * while some key has had none yet, the keys the records have (so the cost
 * is one test a key once every key has been seen): the CENSUS_MAX first in
 * byte order, whatever order the records come in, and whether there were
 * more.  Behind a pointer so that nd_by_key can note it through a const
 * nd_by. */
#define CENSUS_MAX 200
struct ckey {
	char *s;
	size_t n;
};
struct bystats {
	uint64_t calls;
	unsigned char *present;	/* per key: it had a value */
	size_t unseen;		/* keys with present 0 */
	struct ckey keys[CENSUS_MAX];	/* the census, in byte order */
	size_t nkeys;
	int more;		/* keys left out of it */
	nd_buf tmp;
};

static void
census_free(struct bystats *st)
{
	for (size_t i = 0; i < st->nkeys; i++)
		free(st->keys[i].s);
	st->nkeys = 0;
	st->more = 0;
}

struct nd_by {
	struct bykey *k;
	size_t n;
	struct bystats *st;
};

static const struct {
	const char *key;
	int kind;
	size_t off;
	unsigned bit;
} typed[] = {
	{ "name", K_STR, offsetof(nd_event, name), 0 },
	{ "cat", K_STR, offsetof(nd_event, cat), 0 },
	{ "class", K_STR, offsetof(nd_event, cls), 0 },
	{ "family", K_STR, offsetof(nd_event, family), 0 },
	{ "scope", K_STR, offsetof(nd_event, scope), 0 },
	{ "process", K_STR, offsetof(nd_event, process), 0 },
	{ "thread", K_STR, offsetof(nd_event, thread), 0 },
	{ "device", K_STR, offsetof(nd_event, device), 0 },
	{ "rank", K_INT, offsetof(nd_event, rank), ND_HAS_RANK },
	{ "step", K_INT, offsetof(nd_event, step), ND_HAS_STEP },
	{ "pid", K_INT, offsetof(nd_event, pid), ND_HAS_PID },
	{ "tid", K_INT, offsetof(nd_event, tid), ND_HAS_TID },
};

void
nd_by_free(nd_by *b)
{
	if (b == NULL)
		return;
	for (size_t i = 0; i < b->n; i++)
		free(b->k[i].key);
	free(b->k);
	if (b->st != NULL) {
		free(b->st->present);
		census_free(b->st);
		nd_buf_free(&b->st->tmp);
		free(b->st);
	}
	free(b);
}

nd_by *
nd_by_parse(const char *spec, const char *const *reserved, size_t nreserved,
    const char **bad)
{
	char *s = nd_xstrdup(spec), *save = NULL, *k;
	nd_by *b = nd_xcalloc(1, sizeof *b);

	*bad = NULL;
	for (k = strtok_r(s, ",", &save); k != NULL;
	    k = strtok_r(NULL, ",", &save)) {
		struct bykey *x;

		for (size_t i = 0; i < nreserved; i++)
			if (strcmp(k, reserved[i]) == 0) {
				*bad = reserved[i];
				free(s);
				nd_by_free(b);
				return NULL;
			}
		b->k = nd_xrealloc(b->k, (b->n + 1) * sizeof *b->k);
		x = &b->k[b->n++];
		memset(x, 0, sizeof *x);
		x->key = nd_xstrdup(k);
		x->kind = K_ANY;
		if (strncmp(k, "args.", 5) == 0 && k[5] != '\0') {
			x->kind = K_ARG;
			x->arg = x->key + 5;
		}
		for (size_t i = 0; i < sizeof typed / sizeof *typed; i++)
			if (strcmp(k, typed[i].key) == 0) {
				x->kind = typed[i].kind;
				x->off = typed[i].off;
				x->bit = typed[i].bit;
			}
	}
	free(s);
	if (b->n == 0) {
		*bad = "";
		nd_by_free(b);
		return NULL;
	}
	b->st = nd_xcalloc(1, sizeof *b->st);
	b->st->present = nd_xcalloc(b->n, sizeof *b->st->present);
	b->st->unseen = b->n;
	return b;
}

/* <0, 0, >0 as s[0..n) sorts before, with or after k: bytes, then the
 * shorter first. */
static int
ckey_cmp(const char *s, size_t n, const struct ckey *k)
{
	int c = memcmp(s, k->s, n < k->n ? n : k->n);

	return c != 0 ? c : n < k->n ? -1 : n > k->n;
}

static void
census_add(struct bystats *st, const char *s, size_t n)
{
	size_t lo = 0, hi = st->nkeys;

	/* full, and after the last: the common case once full */
	if (st->nkeys == CENSUS_MAX &&
	    ckey_cmp(s, n, &st->keys[CENSUS_MAX - 1]) >= 0) {
		st->more |= ckey_cmp(s, n, &st->keys[CENSUS_MAX - 1]) > 0;
		return;
	}
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (ckey_cmp(s, n, &st->keys[mid]) > 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (lo < st->nkeys && ckey_cmp(s, n, &st->keys[lo]) == 0)
		return;
	if (st->nkeys == CENSUS_MAX) {	/* the last makes room */
		free(st->keys[CENSUS_MAX - 1].s);
		st->nkeys--;
		st->more = 1;
	}
	memmove(st->keys + lo + 1, st->keys + lo,
	    (st->nkeys - lo) * sizeof *st->keys);
	st->keys[lo].s = nd_xstrndup(s, n);
	st->keys[lo].n = n;
	st->nkeys++;
}

/* The top-level and args keys of ev into the census. */
static void
census(struct bystats *st, const nd_event *ev)
{
	for (size_t i = 0; i < ev->nmembers; i++) {
		const nd_jval *k = &ev->members[i].key;

		if (k->len >= 2)
			census_add(st, k->raw + 1, k->len - 2);
	}
	if (ev->args.type == ND_JOBJ) {
		nd_jiter it;
		nd_jval k, v;
		nd_jerr e;

		nd_jiter_init(&it, &ev->args, ev->line);
		while (nd_jiter_next(&it, &k, &v, &e) == 1 && k.len >= 2) {
			nd_buf_reset(&st->tmp);
			nd_buf_adds(&st->tmp, "args.");
			nd_buf_add(&st->tmp, k.raw + 1, k.len - 2);
			census_add(st, st->tmp.p, st->tmp.len);
		}
	}
}

static int
is_standard(const char *key)
{
	/* ndtrace(7)'s span members besides the typed ones. */
	static const char *const more[] = { "type", "ts_ns", "dur_ns",
		"source", "args", "flow", "correlation", "context" };

	for (size_t i = 0; i < sizeof typed / sizeof *typed; i++)
		if (strcmp(key, typed[i].key) == 0)
			return 1;
	for (size_t i = 0; i < sizeof more / sizeof *more; i++)
		if (strcmp(key, more[i]) == 0)
			return 1;
	return strncmp(key, "args.", 5) == 0;
}

void
nd_by_note(const nd_by *b, const nd_event *ev, size_t i, int had)
{
	struct bystats *st = b->st;

	if (i == 0)
		st->calls++;
	if (ND_UNLIKELY(st->present[i] == 0)) {
		if (had) {
			st->present[i] = 1;
			st->unseen--;
		} else if (i == 0)
			census(st, ev);
	}
}

void
nd_by_reset(const nd_by *b)
{
	struct bystats *st = b->st;

	st->calls = 0;
	memset(st->present, 0, b->n);
	st->unseen = b->n;
	census_free(st);
}

int
nd_by_check(const nd_by *b, const char *opt, nd_err *err)
{
	const struct bystats *st = b->st;

	if (st->calls == 0 || st->unseen == 0)
		return 0;
	for (size_t i = 0; i < b->n; i++) {
		nd_buf list = ND_BUF_INIT;

		if (st->present[i] != 0)
			continue;
		for (size_t j = 0; j < st->nkeys; j++) {
			if (j > 0)
				nd_buf_adds(&list, ", ");
			nd_buf_adds(&list, st->keys[j].s);
		}
		if (st->more)
			nd_buf_adds(&list, ", ...");
		nd_err_set(err, NULL, ND_ERR_NONE, ND_ERR_NONE, "%s %s: %s; "
		    "the spans have: %s", opt, b->k[i].key,
		    is_standard(b->k[i].key) ? "no span has this key" :
		    "not a standard key, and no span has it",
		    list.len > 0 ? list.p : "(no keys)");
		nd_buf_free(&list);
		return -1;
	}
	return 0;
}

size_t
nd_by_count(const nd_by *b)
{
	return b->n;
}

const char *
nd_by_name(const nd_by *b, size_t i, const char **arg)
{
	if (arg != NULL)
		*arg = b->k[i].arg;
	return b->k[i].key;
}

void
nd_by_jval(nd_buf *k, nd_buf *tmp, const nd_jval *v)
{
	if (v->type == ND_JSTR) {
		if (!v->esc)
			nd_aggkey_str(k, nd_jstr_ptr(v), nd_jstr_len(v));
		else {
			nd_buf_reset(tmp);
			nd_json_unescape(v, tmp);
			nd_aggkey_str(k, tmp->p, tmp->len);
		}
	} else if (v->type == ND_JNULL || v->type == ND_JNONE)
		nd_aggkey_none(k);
	else
		nd_aggkey_raw(k, v->raw, v->len);
}

/* The ND_SID_* field of a K_STR key, or -1 (no ids kept for it). */
static int
sid_field(size_t off)
{
	if (off == offsetof(nd_event, name))
		return ND_SID_NAME;
	if (off == offsetof(nd_event, family))
		return ND_SID_FAMILY;
	if (off == offsetof(nd_event, cls))
		return ND_SID_CLASS;
	if (off == offsetof(nd_event, scope))
		return ND_SID_SCOPE;
	if (off == offsetof(nd_event, device))
		return ND_SID_DEVICE;
	return -1;
}

int
nd_by_sids(const nd_by *b, const nd_event *ev, uint32_t *ids)
{
	struct bystats *st = b->st;

	for (size_t i = 0; i < b->n; i++) {
		int f = b->k[i].kind == K_STR ? sid_field(b->k[i].off) : -1;

		if (f < 0)
			return 0;
		ids[i] = nd_event_sid(ev, f);
	}
	st->calls++;
	for (size_t i = 0; i < b->n; i++)
		if (ND_UNLIKELY(st->present[i] == 0) && ids[i] != ND_SID_NONE) {
			st->present[i] = 1;
			st->unseen--;
		}
	if (ND_UNLIKELY(st->unseen != 0))
		census(st, ev);
	return 1;
}

int
nd_by_memo(const nd_by *b, const nd_event *ev, nd_idmemo *m, uint32_t lead,
    uint32_t *id, uint64_t *ik)
{
	uint32_t ids[8];

	if (b->n >= 8 || !nd_by_sids(b, ev, ids + 1))
		return -1;
	ids[0] = lead;
	*id = nd_idmemo_get(m, ids, b->n + 1, ik);
	return *id != UINT32_MAX;
}

void
nd_by_key(const nd_by *b, const nd_event *ev, const nd_source_info *si,
    nd_buf *k, nd_buf *tmp)
{
	struct bystats *st = b->st;

	st->calls++;
	for (size_t i = 0; i < b->n; i++) {
		const struct bykey *x = &b->k[i];
		size_t before = k->len;

		switch (x->kind) {
		case K_STR: {
			const nd_str *s = (const nd_str *)(const void *)
			    ((const char *)ev + x->off);

			if (s->p != NULL)
				nd_aggkey_str(k, s->p, s->n);
			else
				nd_aggkey_none(k);
			break;
		}
		case K_INT: {
			char num[24];
			int64_t v = *(const int64_t *)(const void *)
			    ((const char *)ev + x->off);
			int has = (ev->has & x->bit) != 0;

			if (!has && x->bit == ND_HAS_RANK && si != NULL &&
			    si->has_rank) {
				has = 1;
				v = si->rank;
			}
			if (has) {
				int n = snprintf(num, sizeof num, "%lld",
				    (long long)v);

				nd_aggkey_raw(k, num, (size_t)n);
			} else
				nd_aggkey_none(k);
			break;
		}
		case K_ARG: {
			nd_jval v;

			if (nd_event_arg(ev, x->arg, &v))
				nd_by_jval(k, tmp, &v);
			else
				nd_aggkey_none(k);
			break;
		}
		default: {
			const nd_jval *v = nd_event_get(ev, x->key);

			if (v != NULL)
				nd_by_jval(k, tmp, v);
			else
				nd_aggkey_none(k);
		}
		}
		/* The first value of key i (a field not tagged absent). */
		if (ND_UNLIKELY(st->present[i] == 0) &&
		    k->p[before] != ND_AGGKEY_NONE) {
			st->present[i] = 1;
			st->unseen--;
		}
	}
	if (ND_UNLIKELY(st->unseen != 0))
		census(st, ev);
}

int
nd_by_field(const char *k, size_t n, size_t i, int *tag, const char **s,
    size_t *len)
{
	const char *p = k, *end = k + n;

	for (size_t j = 0; nd_aggkey_next(&p, end, tag, s, len); j++)
		if (j == i)
			return *tag != ND_AGGKEY_NONE;
	*tag = ND_AGGKEY_NONE;
	*s = "";
	*len = 0;
	return 0;
}

static void
jw_keyval(nd_jw *w, int tag, const char *s, size_t n)
{
	if (tag == ND_AGGKEY_STR)
		nd_jw_str(w, s, n);
	else
		nd_jw_raw(w, s, n);
}

void
nd_by_json(const nd_by *b, nd_jw *w, const char *k, size_t n)
{
	int tag, args = 0;
	const char *s;
	size_t len;

	for (size_t i = 0; i < b->n; i++) {
		if (!nd_by_field(k, n, i, &tag, &s, &len))
			continue;
		if (b->k[i].kind == K_ARG) {
			args = 1;
			continue;
		}
		nd_jw_key(w, b->k[i].key);
		jw_keyval(w, tag, s, len);
	}
	if (!args)
		return;
	nd_jw_key(w, "args");
	nd_jw_obj(w);
	for (size_t i = 0; i < b->n; i++) {
		if (b->k[i].kind != K_ARG || !nd_by_field(k, n, i, &tag, &s,
		    &len))
			continue;
		nd_jw_key(w, b->k[i].arg);
		jw_keyval(w, tag, s, len);
	}
	nd_jw_obj_end(w);
}

void
nd_by_text(const char *k, size_t n, size_t i, nd_buf *out)
{
	int tag;
	const char *s;
	size_t len;

	nd_buf_reset(out);
	if (!nd_by_field(k, n, i, &tag, &s, &len)) {
		nd_buf_adds(out, "(none)");
		return;
	}
	{
		nd_buf t = ND_BUF_INIT;

		nd_name_short(s, len, ND_NAME_WIDTH, &t);
		nd_text_visible(out, t.p != NULL ? t.p : "", t.len);
		nd_buf_free(&t);
	}
}

void
nd_by_table_head(const nd_by *b, nd_buf *out, const char *const *head,
    const size_t *wd, size_t ncol, const size_t *kw)
{
	for (size_t c = 0; c < ncol; c++)
		nd_buf_addf(out, "%s%*s", c ? "  " : "", (int)wd[c], head[c]);
	for (size_t k = 0; k < b->n; k++)
		nd_buf_addf(out, "  %-*s", k + 1 < b->n ? (int)kw[k] : 0,
		    b->k[k].key);
	nd_buf_addc(out, '\n');
	for (size_t c = 0; c < ncol; c++) {
		if (c)
			nd_buf_adds(out, "  ");
		for (size_t j = 0; j < wd[c]; j++)
			nd_buf_addc(out, '-');
	}
	for (size_t k = 0; k < b->n; k++) {
		nd_buf_adds(out, "  ");
		for (size_t j = 0; j < kw[k]; j++)
			nd_buf_addc(out, '-');
	}
	nd_buf_addc(out, '\n');
}

void
nd_by_table_key(nd_buf *out, const char *s, size_t n, size_t k, size_t nk,
    const size_t *kw)
{
	size_t pad = k + 1 < nk ? kw[k] - nd_text_width(s, n) : 0;

	nd_buf_adds(out, "  ");
	nd_buf_add(out, s != NULL ? s : "", n);
	for (size_t j = 0; j < pad; j++)
		nd_buf_addc(out, ' ');
}

void
nd_by_table_eol(nd_buf *out)
{
	while (out->len > 0 && out->p[out->len - 1] == ' ')
		out->len--;
	nd_buf_addc(out, '\n');
}
