#include "nd_peak.h"
#include "nd_hash.h"
#include "nd_util.h"

#include <ctype.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#define M(...) ((const char *const[]){ __VA_ARGS__, NULL })

/* Sources: NVIDIA B200/H200/H100/A100/V100 and AMD MI300X datasheets, Google
 * Cloud TPU system architecture pages (per chip).  Dense, no sparsity.
 * Bandwidths: HBM per device in GB/s (10^9 bytes/s), see nd_peak.h. */
static const nd_peak table[] = {
	{ "B200", 2250.0, 8000.0, "bf16", M("B200") },
	{ "GH200", 989.0, 4000.0, "bf16", M("GH200") },
	{ "H200", 989.0, 4800.0, "bf16", M("H200") },
	{ "H100 PCIe", 756.0, 2000.0, "bf16", M("H100 PCIe", "H100-PCIe") },
	{ "H100 NVL", 835.0, 3900.0, "bf16", M("H100 NVL") },
	{ "H100", 989.0, 3350.0, "bf16", M("H100") },
	{ "A100 40GB", 312.0, 1555.0, "bf16",
	    M("A100-SXM4-40GB", "A100-PCIE-40GB", "A100 40GB") },
	{ "A100", 312.0, 2039.0, "bf16", M("A100") },
	{ "V100 PCIe", 112.0, 900.0, "fp16", M("V100-PCIE", "V100 PCIe") },
	{ "V100", 125.0, 900.0, "fp16", M("V100") },
	{ "MI300X", 1307.4, 5300.0, "bf16", M("MI300X") },
	{ "TPU v4", 275.0, 1200.0, "bf16", M("TPU v4") },
	{ "TPU v5e", 197.0, 819.0, "bf16",
	    M("TPU v5 lite", "TPU v5e", "v5litepod") },
	{ "TPU v5p", 459.0, 2765.0, "bf16", M("TPU v5p", "TPU v5") },
	{ "TPU v6e", 918.0, 1640.0, "bf16",
	    M("TPU v6 lite", "TPU v6e", "Trillium") },
};

#define NTABLE (sizeof table / sizeof table[0])

/* pat occurs in s[0..n) case-insensitively, not preceded by a letter or
 * digit and not followed by a digit. */
static int
has_word(const char *s, size_t n, const char *pat)
{
	size_t m = strlen(pat);

	for (size_t i = 0; i + m <= n; i++) {
		if (strncasecmp(s + i, pat, m) != 0)
			continue;
		if (i > 0 && isalnum((unsigned char)s[i - 1]))
			continue;
		if (i + m < n && isdigit((unsigned char)s[i + m]))
			continue;
		return 1;
	}
	return 0;
}

const nd_peak *
nd_peak_find(const char *name, size_t n)
{
	if (name == NULL)
		return NULL;
	for (size_t i = 0; i < NTABLE; i++)
		if (strlen(table[i].key) == n &&
		    strncasecmp(table[i].key, name, n) == 0)
			return &table[i];
	for (size_t i = 0; i < NTABLE; i++)
		for (const char *const *p = table[i].match; *p != NULL; p++)
			if (has_word(name, n, *p))
				return &table[i];
	return NULL;
}

void
nd_peak_check_device(const char *device, double tflops, double gbps,
    const char *see)
{
	if (device != NULL && nd_peak_find(device, strlen(device)) == NULL &&
	    (tflops <= 0 || gbps <= 0))
		nd_die(ND_EXIT_ERROR, "--device: '%s' is not in the peak table "
		    "(see %s); give --peak-tflops and --peak-gbps", device, see);
}

const nd_peak *
nd_peak_table(size_t *n)
{
	*n = NTABLE;
	return table;
}

void
nd_peak_print(nd_buf *b)
{
	nd_buf_adds(b, "# key\ttflops\tgbps\tprecision\tnames matched\n");
	for (size_t i = 0; i < NTABLE; i++) {
		nd_buf_addf(b, "%s\t%g\t%g\t%s\t", table[i].key,
		    table[i].tflops, table[i].gbps, table[i].prec);
		for (const char *const *m = table[i].match; *m != NULL; m++)
			nd_buf_addf(b, "%s%s", m == table[i].match ? "" : ", ",
			    *m);
		nd_buf_addc(b, '\n');
	}
}

/* ---- device names from meta records ---- */

struct dname {
	char *key;		/* device key, or NULL: match by id */
	int64_t id;		/* deviceProperties id */
	char *name;		/* NULL when only peaks are stated */
	double tflops, gbps;
};

/* What nd_devnames_get answers for one key, kept as entries come so that
 * a lookup is not a scan (many devices): the first entry with a name, the
 * last positive peaks. */
struct dagg {
	size_t name_at;		/* index in d, SIZE_MAX: none */
	double tflops, gbps;
};

struct nd_devnames {
	struct dname *d;
	size_t n, cap;
	char *all;		/* "device_name" */
	nd_intern *keys;	/* key -> index in agg */
	struct dagg *agg;
	size_t capagg;
	nd_map64 *ids;		/* id -> 1 + index in d of its first name */
};

nd_devnames *
nd_devnames_new(void)
{
	return nd_xcalloc(1, sizeof(nd_devnames));
}

void
nd_devnames_reset(nd_devnames *d)
{
	for (size_t i = 0; i < d->n; i++) {
		free(d->d[i].key);
		free(d->d[i].name);
	}
	d->n = 0;
	free(d->all);
	d->all = NULL;
	nd_intern_free(d->keys);
	d->keys = NULL;
	nd_map64_free(d->ids);
	d->ids = NULL;
}

void
nd_devnames_free(nd_devnames *d)
{
	if (d == NULL)
		return;
	nd_devnames_reset(d);
	free(d->d);
	free(d->agg);
	free(d);
}

static void
dn_add(nd_devnames *d, char *key, int64_t id, char *name, double tflops,
    double gbps)
{
	struct dname *x;

	if (d->n == d->cap)
		nd_grow(&d->d, &d->cap, d->n + 1, sizeof *d->d);
	x = &d->d[d->n++];
	x->key = key;
	x->id = id;
	x->name = name;
	x->tflops = tflops;
	x->gbps = gbps;
	if (d->keys == NULL) {
		d->keys = nd_intern_new();
		d->ids = nd_map64_new();
	}
	if (key != NULL) {
		uint32_t nk = nd_intern_count(d->keys);
		uint32_t k = nd_intern_id(d->keys, key, strlen(key));
		struct dagg *a;

		if (k >= d->capagg)
			nd_grow(&d->agg, &d->capagg, (size_t)k + 1,
			    sizeof *d->agg);
		a = &d->agg[k];
		if (k == nk) {		/* a new key */
			a->name_at = SIZE_MAX;
			a->tflops = a->gbps = 0;
		}
		if (name != NULL && a->name_at == SIZE_MAX)
			a->name_at = d->n - 1;
		if (tflops > 0)
			a->tflops = tflops;
		if (gbps > 0)
			a->gbps = gbps;
	} else if (name != NULL) {
		int isnew;
		uint64_t *v = nd_map64_put(d->ids, (uint64_t)id, &isnew);

		if (isnew)
			*v = d->n;
	}
}

static const nd_jval *
dn_get(const nd_jval *obj, const char *key, nd_jval *tmp)
{
	nd_jiter it;
	nd_jval k;
	nd_jerr je;

	nd_jiter_init(&it, obj, obj->raw);
	while (nd_jiter_next(&it, &k, tmp, &je) == 1)
		if (nd_jstr_eq(&k, key))
			return tmp;
	return NULL;
}

static double
dn_num(const nd_jval *obj, const char *key)
{
	nd_jval t;
	const nd_jval *x = dn_get(obj, key, &t);

	return x != NULL && x->type == ND_JNUM ? nd_json_double(x) : 0;
}

static void
dn_member(nd_devnames *d, const nd_jval *key, const nd_jval *v)
{
	nd_jiter it;
	nd_jval k, el, t;
	nd_jerr je;
	const nd_jval *x;

	if (nd_jstr_eq(key, "device_name") && v->type == ND_JSTR) {
		free(d->all);
		d->all = nd_jstr_dup(v);
	} else if (nd_jstr_eq(key, "deviceProperties") && v->type == ND_JARR) {
		nd_jaiter_init(&it, v, v->raw);
		while (nd_jaiter_next(&it, &el, &je) == 1) {
			int64_t id;

			if (el.type != ND_JOBJ ||
			    (x = dn_get(&el, "id", &t)) == NULL ||
			    nd_json_int(x, &id) != 0)
				continue;
			if ((x = dn_get(&el, "name", &t)) == NULL ||
			    x->type != ND_JSTR)
				continue;
			dn_add(d, NULL, id, nd_jstr_dup(x), 0, 0);
		}
	} else if (nd_jstr_eq(key, "devices") && v->type == ND_JOBJ) {
		nd_jiter_init(&it, v, v->raw);
		while (nd_jiter_next(&it, &k, &el, &je) == 1) {
			char *name = NULL;
			double tf = 0, bw = 0;

			if (el.type == ND_JSTR)
				name = nd_jstr_dup(&el);
			else if (el.type == ND_JOBJ) {
				if (((x = dn_get(&el, "name", &t)) != NULL ||
				    (x = dn_get(&el, "device_type_string",
				    &t)) != NULL) && x->type == ND_JSTR)
					name = nd_jstr_dup(x);
				tf = dn_num(&el, "peak_teraflops_per_second");
				bw = dn_num(&el,
				    "peak_hbm_bw_gigabytes_per_second");
			} else
				continue;
			dn_add(d, nd_jstr_dup(&k), -1, name, tf, bw);
		}
	}
}

void
nd_devnames_meta(nd_devnames *d, const nd_event *meta)
{
	for (size_t i = 0; i < meta->nmembers; i++) {
		const nd_member *m = &meta->members[i];

		if (nd_jstr_eq(&m->key, "header") && m->val.type == ND_JOBJ) {
			nd_jiter it;
			nd_jval k, v;
			nd_jerr je;

			nd_jiter_init(&it, &m->val, m->val.raw);
			while (nd_jiter_next(&it, &k, &v, &je) == 1)
				dn_member(d, &k, &v);
		} else
			dn_member(d, &m->key, &m->val);
	}
}

/* The number at the end of k[0..n), or -1. */
static int64_t
dn_trailing(const char *k, size_t n)
{
	size_t b = n;
	int64_t v = 0;

	while (b > 0 && isdigit((unsigned char)k[b - 1]))
		b--;
	if (b == n || n - b > 15)
		return -1;
	for (size_t i = b; i < n; i++)
		v = v * 10 + (k[i] - '0');
	return v;
}

const char *
nd_devnames_get(const nd_devnames *d, const char *k, size_t n,
    double *tflops, double *gbps)
{
	int64_t id = dn_trailing(k, n);
	size_t at = SIZE_MAX;
	uint32_t ki;
	uint64_t *v;

	/* the first entry with a name among those of key k and those whose
	 * id is k's number (deviceProperties: no peaks), in order */
	*tflops = *gbps = 0;
	if (d->keys == NULL)
		return d->all;
	if ((ki = nd_intern_find(d->keys, k, n)) != UINT32_MAX) {
		at = d->agg[ki].name_at;
		*tflops = d->agg[ki].tflops;
		*gbps = d->agg[ki].gbps;
	}
	if (id >= 0 && (v = nd_map64_get(d->ids, (uint64_t)id)) != NULL &&
	    *v - 1 < at)
		at = *v - 1;
	return at != SIZE_MAX ? d->d[at].name : d->all;
}
