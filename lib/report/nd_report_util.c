/*
 * nd_report: the helpers of every part: names by id, labels of devices and
 * sources, shares, the rows a table shows, counted names, the fields of
 * a partial's records.
 */
#include "nd_report_int.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

uint32_t
nd_rep_name_id(nd_report *r, const char *s)
{
	if (s == NULL)
		return UINT32_MAX;
	return nd_intern_id(r->names, s, strlen(s));
}

uint32_t
nd_rep_name_idn(nd_report *r, const char *s, size_t n)
{
	if (s == NULL)
		return UINT32_MAX;
	return nd_intern_id(r->names, s, n);
}

const char *
nd_rep_name_ofn(const nd_report *r, uint32_t id, size_t *n)
{
	*n = 0;
	if (id == UINT32_MAX)
		return NULL;
	return nd_intern_str(r->names, id, n);
}

const char *
nd_rep_name_of(const nd_report *r, uint32_t id)
{
	if (id == UINT32_MAX)
		return NULL;
	return nd_intern_str(r->names, id, NULL);
}

double
nd_rep_pct(int64_t a, int64_t b)
{
	return b > 0 ? 100.0 * (double)a / (double)b : 0;
}

size_t
nd_rep_cut(const nd_report *r, size_t n)
{
	return r->o.top > 0 && (size_t)r->o.top < n ? (size_t)r->o.top : n;
}

const char *
nd_rep_dev_label(const nd_report *r, uint32_t d, char *buf, size_t n)
{
	return nd_rep_src_label(r, r->devs[d].source, r->devs[d].key, buf, n);
}

/* name of source `source`: after "rank R " or "source S " when there are
 * several sources. */
const char *
nd_rep_src_label(const nd_report *r, uint32_t source, const char *name,
    char *buf, size_t n)
{
	if (r->nsrc <= 1)
		return name;
	if (r->src[source].has_rank)
		snprintf(buf, n, "rank %lld %s",
		    (long long)r->src[source].rank, name);
	else
		snprintf(buf, n, "source %u %s", source, name);
	return buf;
}

/* s[0..n) contains needle (ASCII, any case). */
int
nd_rep_has_ci(const char *s, size_t n, const char *needle)
{
	size_t k = strlen(needle);

	for (size_t i = 0; k <= n && i <= n - k; i++) {
		size_t j = 0;

		while (j < k && tolower((unsigned char)s[i + j]) == needle[j])
			j++;
		if (j == k)
			return 1;
	}
	return 0;
}

/* ix (may be NULL: a table of a few rows) finds the row of an id without
 * a scan. */
void
nd_rep_cnt_add(struct cnt **a, size_t *n, size_t *cap, nd_map64 *ix,
    uint32_t id, uint64_t k, int64_t ns)
{
	if (ix != NULL) {
		int isnew;
		uint64_t *v = nd_map64_put(ix, id, &isnew);

		if (isnew)
			*v = *n;
		else {
			(*a)[*v].n += k;
			(*a)[*v].ns += ns;
			return;
		}
	} else
		for (size_t i = 0; i < *n; i++)
			if ((*a)[i].id == id) {
				(*a)[i].n += k;
				(*a)[i].ns += ns;
				return;
			}
	nd_grow(a, cap, *n + 1, sizeof **a);
	(*a)[*n].id = id;
	(*a)[*n].n = k;
	(*a)[*n].ns = ns;
	(*n)++;
}

uint32_t
nd_rep_m_src(const struct rmerge *m, const char *key)
{
	uint32_t n = m->r->nsrc > m->base ? (uint32_t)(m->r->nsrc - m->base) :
	    0;

	return nd_partial_index(m->st, m->ev, key, m->base,
	    n < m->sources ? n : m->sources);
}

uint32_t
nd_rep_m_name(const struct rmerge *m, const char *key)
{
	char *s = nd_partial_str(m->st, m->ev, key);
	uint32_t id = nd_rep_name_id(m->r, s);

	free(s);
	return id;
}

const char *
nd_rep_s(uint64_t n)
{
	return n == 1 ? "" : "s";
}
