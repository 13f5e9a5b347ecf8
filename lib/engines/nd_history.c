/*
 * nd_history: see nd_history.h and trace-diff(1), HISTORY.
 */
#include "nd_history.h"

#include "nd_event.h"
#include "nd_json.h"
#include "nd_util.h"

#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <signal.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

/* Metrics kept in a history line. */
static const char *const hist_metrics[] = {
	"step.median", "step.p90", "step.mean", "share.communication",
	"share.idle"
};
#define NHM 5

void
nd_history_line(nd_buf *b, const char *label, long long now,
    const nd_diff *d, const nd_verdict *v, const nd_diff_side *before,
    const nd_diff_side *after)
{
	char ts[32];
	struct tm tm;
	time_t t = (time_t)now;
	nd_jw w;

	gmtime_r(&t, &tm);
	strftime(ts, sizeof ts, "%Y-%m-%dT%H:%M:%SZ", &tm);
	nd_jw_init(&w, b);
	nd_jw_obj(&w);
	nd_jw_kcstr(&w, "type", "history");
	nd_jw_kcstr(&w, "time", ts);
	nd_jw_kint(&w, "time_s", now);
	nd_jw_key(&w, "label");
	if (label != NULL)
		nd_jw_cstr(&w, label);
	else
		nd_jw_null(&w);
	nd_jw_kcstr(&w, "status", nd_verdict_name(v->status));
	nd_jw_key(&w, "fired");
	nd_jw_arr(&w);
	for (size_t i = 0; i < v->nfired; i++)
		nd_jw_cstr(&w, v->fired[i].rule->id);
	nd_jw_arr_end(&w);
	nd_jw_key(&w, "metrics");
	nd_jw_obj(&w);
	for (int i = 0; i < NHM; i++) {
		const nd_delta *x = nd_diff_find(d, hist_metrics[i]);
		int ns = x != NULL && x->kind == ND_DK_STEP;

		if (x == NULL)
			continue;
		nd_jw_key(&w, hist_metrics[i]);
		nd_jw_obj(&w);
		if (ns) {
			nd_jw_kint(&w, "before_ns", (int64_t)llround(x->before));
			nd_jw_kint(&w, "after_ns", (int64_t)llround(x->after));
			nd_jw_kint(&w, "delta_ns", (int64_t)llround(x->delta));
		} else {
			nd_jw_kdbl(&w, "before", x->before);
			nd_jw_kdbl(&w, "after", x->after);
			nd_jw_kdbl(&w, "delta", x->delta);
		}
		nd_jw_key(&w, "pct");
		if (x->has_pct)
			nd_jw_dbl(&w, round(x->pct * 100) / 100);
		else
			nd_jw_null(&w);
		nd_jw_obj_end(&w);
	}
	nd_jw_obj_end(&w);
	nd_jw_key(&w, "before");
	nd_diff_put_side(&w, before);
	nd_jw_key(&w, "after");
	nd_diff_put_side(&w, after);
	nd_jw_obj_end(&w);
	nd_buf_addc(b, '\n');
}

/* Under the lock: when a past writer died mid-line (no final '\n'), cut the
 * fragment off so that this line starts a line of its own.  *size is the
 * file's length, updated.  0 ok; -1 with errno. */
static int
drop_fragment(int fd, const char *path, off_t *size)
{
	char buf[4096];
	off_t end = *size, pos = end;

	if (end == 0)
		return 0;
	if (pread(fd, buf, 1, end - 1) != 1)
		return -1;
	if (buf[0] == '\n')
		return 0;
	/* Back to the previous newline, a block at a time: reads only the
	 * fragment. */
	while (pos > 0) {
		size_t n = pos > (off_t)sizeof buf ? sizeof buf : (size_t)pos;
		off_t base = pos - (off_t)n;

		if (pread(fd, buf, n, base) != (ssize_t)n)
			return -1;
		while (n > 0 && buf[n - 1] != '\n')
			n--;
		pos = base + (off_t)n;
		if (n > 0)
			break;
	}
	if (ftruncate(fd, pos) != 0)
		return -1;
	nd_warn("%s: dropped an incomplete last line (%lld bytes) left by an "
	    "interrupted write", path, (long long)(end - pos));
	*size = pos;
	return 0;
}

int
nd_history_append(const char *path, const char *line, size_t n)
{
	int fd = open(path, O_RDWR | O_APPEND | O_CREAT | O_CLOEXEC, 0644);
	int e = 0, regular;
	off_t size = 0;
	struct stat st;
	struct sigaction ign, xfsz;

	if (fd < 0 && errno == EACCES)	/* write-only: no repair */
		fd = open(path, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC,
		    0644);
	if (fd < 0)
		return -1;
	while (flock(fd, LOCK_EX) != 0)
		if (errno != EINTR) {
			e = errno;
			close(fd);
			errno = e;
			return -1;
		}
	if (fstat(fd, &st) != 0) {
		e = errno;
		goto out;
	}
	regular = S_ISREG(st.st_mode);
	size = st.st_size;
	if (regular && (fcntl(fd, F_GETFL) & O_ACCMODE) == O_RDWR &&
	    drop_fragment(fd, path, &size) != 0) {
		e = errno;
		goto out;
	}
	/* Over the file size limit, write(2) fails with EFBIG and this takes
	 * the line back, instead of dying of SIGXFSZ with a fragment left. */
	memset(&ign, 0, sizeof ign);
	ign.sa_handler = SIG_IGN;
	sigaction(SIGXFSZ, &ign, &xfsz);
	while (n > 0) {
		ssize_t w = write(fd, line, n);

		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0) {
			e = w < 0 ? errno : EIO;
			break;
		}
		line += w;
		n -= (size_t)w;
	}
	/* A short write (a full disk) leaves part of a line: cut it off. */
	if (e != 0 && regular)
		(void)ftruncate(fd, size);
	sigaction(SIGXFSZ, &xfsz, NULL);
out:
	(void)flock(fd, LOCK_UN);
	if (close(fd) != 0 && e == 0)
		e = errno;
	if (e != 0) {
		errno = e;
		return -1;
	}
	return 0;
}

/* ---- trend ---- */

struct hrec {
	int status;		/* 0 pass, 1 warn, 2 fail */
	char *label, *time;
	int has_med;
	int64_t med_ns;
	int has_pct;
	double med_pct;
};

struct rcount {
	char *id;
	uint64_t n;
};

static int
member(const nd_jval *obj, const char *base, const char *key, nd_jval *out)
{
	nd_jiter it;
	nd_jval k, v;
	nd_jerr e;

	if (obj == NULL || obj->type != ND_JOBJ)
		return 0;
	nd_jiter_init(&it, obj, base);
	while (nd_jiter_next(&it, &k, &v, &e) == 1)
		if (nd_jstr_eq(&k, key)) {
			*out = v;
			return 1;
		}
	return 0;
}

static char *
dupstr(const nd_jval *v)
{
	nd_buf b = ND_BUF_INIT;
	char *r;

	if (v == NULL || v->type != ND_JSTR)
		return NULL;
	nd_json_unescape(v, &b);
	r = nd_xstrndup(b.p != NULL ? b.p : "", b.len);
	nd_buf_free(&b);
	return r;
}

static int
rcount_cmp(const void *a, const void *b)
{
	const struct rcount *x = a, *y = b;

	if (x->n != y->n)
		return x->n > y->n ? -1 : 1;
	return strcmp(x->id, y->id);
}

static int
str_cmp(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

static void
sparkline(nd_buf *out, const struct hrec *r, size_t n)
{
	static const char lv[] = "_.-~=+*#";
	int64_t lo = INT64_MAX, hi = INT64_MIN;

	for (size_t i = 0; i < n; i++)
		if (r[i].has_med) {
			if (r[i].med_ns < lo)
				lo = r[i].med_ns;
			if (r[i].med_ns > hi)
				hi = r[i].med_ns;
		}
	for (size_t i = 0; i < n; i++) {
		int k = 0;

		if (!r[i].has_med) {
			nd_buf_addc(out, ' ');
			continue;
		}
		if (hi > lo)
			k = (int)((double)(r[i].med_ns - lo) * 7.0 /
			    (double)(hi - lo) + 0.5);
		nd_buf_addc(out, lv[k]);
	}
}

/* What nd_history_trend reads from a history file. */
struct trend {
	const char *path;
	struct hrec *rec;		/* the records, in file order */
	size_t nrec, caprec;
	char **ids;			/* every fired rule id, repeated */
	size_t nids, capids;
	struct rcount *rc;		/* the ids counted, most fired first */
	size_t nrc, caprc;
	size_t bad;			/* lines that are no history record */
	uint64_t counts[3];		/* pass, warn, fail */
	nd_buf latest;			/* the last record as written */
};

/* Add one line (not empty) of the history file to t. */
static void
trend_line(struct trend *t, nd_event *ev, const char *line, size_t len,
    nd_buf *scratch)
{
	const nd_jval *st, *fired, *metrics;
	nd_jval med, x;
	nd_everr err;
	struct hrec h;

	if (nd_event_decode(ev, line, len, scratch, &err) != 0 ||
	    !nd_str_eq(ev->type_name, "history") ||
	    (st = nd_event_get(ev, "status")) == NULL) {
		t->bad++;
		return;
	}
	memset(&h, 0, sizeof h);
	h.status = nd_jstr_eq(st, "fail") ? 2 : nd_jstr_eq(st, "warn") ?
	    1 : 0;
	t->counts[h.status]++;
	h.label = dupstr(nd_event_get(ev, "label"));
	h.time = dupstr(nd_event_get(ev, "time"));
	metrics = nd_event_get(ev, "metrics");
	if (member(metrics, line, "step.median", &med)) {
		if (member(&med, line, "after_ns", &x) &&
		    nd_json_int(&x, &h.med_ns) == 0)
			h.has_med = 1;
		if (member(&med, line, "pct", &x) && x.type == ND_JNUM) {
			h.has_pct = 1;
			h.med_pct = nd_json_double(&x);
		}
	}
	if ((fired = nd_event_get(ev, "fired")) != NULL &&
	    fired->type == ND_JARR) {
		nd_jiter it;
		nd_jval v;
		nd_jerr je;

		nd_jaiter_init(&it, fired, line);
		while (nd_jaiter_next(&it, &v, &je) == 1) {
			char *id = dupstr(&v);

			if (id == NULL)
				continue;
			if (t->nids == t->capids)
				nd_grow(&t->ids, &t->capids, t->nids + 1,
				    sizeof *t->ids);
			t->ids[t->nids++] = id;
		}
	}
	if (t->nrec == t->caprec)
		nd_grow(&t->rec, &t->caprec, t->nrec + 1, sizeof *t->rec);
	t->rec[t->nrec++] = h;
	nd_buf_reset(&t->latest);
	nd_buf_add(&t->latest, line, len);
}

static void
trend_read(struct trend *t)
{
	FILE *f = fopen(t->path, "r");
	char *line = NULL;
	size_t cap = 0;
	ssize_t len;
	nd_buf scratch = ND_BUF_INIT;
	nd_event ev;

	if (f == NULL)
		nd_die_errno(ND_EXIT_ERROR, "%s", t->path);
	nd_event_init(&ev);
	while ((len = getline(&line, &cap, f)) > 0) {
		while (len > 0 && (line[len - 1] == '\n' || line[len - 1] == '\r'))
			len--;
		if (len > 0)
			trend_line(t, &ev, line, (size_t)len, &scratch);
	}
	if (ferror(f))
		nd_die_errno(ND_EXIT_ERROR, "%s", t->path);
	fclose(f);
	free(line);
	nd_event_free(&ev);
	nd_buf_free(&scratch);
}

/* Count each rule by sorting the ids: n log n however many differ. */
static void
trend_count_rules(struct trend *t)
{
	if (t->nids > 0)
		qsort(t->ids, t->nids, sizeof *t->ids, str_cmp);
	for (size_t i = 0; i < t->nids; i++) {
		if (t->nrc > 0 && strcmp(t->rc[t->nrc - 1].id, t->ids[i]) == 0) {
			free(t->ids[i]);
			t->rc[t->nrc - 1].n++;
			continue;
		}
		if (t->nrc == t->caprc)
			nd_grow(&t->rc, &t->caprc, t->nrc + 1, sizeof *t->rc);
		t->rc[t->nrc].id = t->ids[i];
		t->rc[t->nrc++].n = 1;
	}
	free(t->ids);
	t->ids = NULL;
	if (t->nrc > 0)
		qsort(t->rc, t->nrc, sizeof *t->rc, rcount_cmp);
}

static void
trend_table(const struct trend *t, size_t first, nd_buf *out)
{
	const struct hrec *rec = t->rec;
	size_t nrec = t->nrec;

	nd_buf_addf(out, "history %s: %zu records (pass %llu, warn %llu, "
	    "fail %llu)", t->path, nrec, (unsigned long long)t->counts[0],
	    (unsigned long long)t->counts[1], (unsigned long long)t->counts[2]);
	if (t->bad > 0)
		nd_buf_addf(out, ", %zu unreadable lines", t->bad);
	nd_buf_addc(out, '\n');
	if (nrec > 0) {
		const struct hrec *l = &rec[nrec - 1];

		nd_buf_addf(out, "latest: %s %s %s\n",
		    l->time ? l->time : "-",
		    l->label ? l->label : "(no label)",
		    nd_verdict_name(l->status == 2 ? ND_RULE_FAIL :
		    l->status == 1 ? ND_RULE_WARN : 0));
	}
	if (t->nrc > 0) {
		nd_buf_adds(out, "rules fired most:\n");
		for (size_t i = 0; i < t->nrc && i < 10; i++)
			nd_buf_addf(out, "  %6llu  %s\n",
			    (unsigned long long)t->rc[i].n, t->rc[i].id);
	}
	nd_buf_addf(out, "step median (after), last %zu: [", nrec - first);
	sparkline(out, rec + first, nrec - first);
	nd_buf_adds(out, "]\n");
	for (size_t i = first; i < nrec; i++) {
		nd_buf_addf(out, "  %-20s %-24.24s %-4s ",
		    rec[i].time ? rec[i].time : "-",
		    rec[i].label ? rec[i].label : "-",
		    rec[i].status == 2 ? "fail" : rec[i].status == 1 ?
		    "warn" : "pass");
		if (rec[i].has_med)
			nd_buf_addf(out, "%12.3fms", (double)rec[i].med_ns /
			    1e6);
		else
			nd_buf_addf(out, "%14s", "-");
		if (rec[i].has_pct)
			nd_buf_addf(out, " %+8.2f%%", rec[i].med_pct);
		nd_buf_addc(out, '\n');
	}
}

static void
trend_json(const struct trend *t, size_t first, nd_buf *out)
{
	const struct hrec *rec = t->rec;
	nd_jw w;

	nd_jw_init(&w, out);
	nd_jw_obj(&w);
	nd_jw_kcstr(&w, "type", "trend");
	nd_jw_kcstr(&w, "history", t->path);
	nd_jw_kuint(&w, "records", t->nrec);
	nd_jw_kuint(&w, "bad_lines", t->bad);
	nd_jw_key(&w, "counts");
	nd_jw_obj(&w);
	nd_jw_kuint(&w, "pass", t->counts[0]);
	nd_jw_kuint(&w, "warn", t->counts[1]);
	nd_jw_kuint(&w, "fail", t->counts[2]);
	nd_jw_obj_end(&w);
	nd_jw_key(&w, "latest");
	if (t->nrec > 0)
		nd_jw_raw(&w, t->latest.p, t->latest.len);
	else
		nd_jw_null(&w);
	nd_jw_key(&w, "rules");
	nd_jw_arr(&w);
	for (size_t i = 0; i < t->nrc; i++) {
		nd_jw_obj(&w);
		nd_jw_kcstr(&w, "rule", t->rc[i].id);
		nd_jw_kuint(&w, "fired", t->rc[i].n);
		nd_jw_obj_end(&w);
	}
	nd_jw_arr_end(&w);
	nd_jw_key(&w, "series");
	nd_jw_arr(&w);
	for (size_t i = first; i < t->nrec; i++) {
		nd_jw_obj(&w);
		nd_jw_key(&w, "label");
		if (rec[i].label != NULL)
			nd_jw_cstr(&w, rec[i].label);
		else
			nd_jw_null(&w);
		if (rec[i].time != NULL)
			nd_jw_kcstr(&w, "time", rec[i].time);
		nd_jw_kcstr(&w, "status", rec[i].status == 2 ? "fail" :
		    rec[i].status == 1 ? "warn" : "pass");
		if (rec[i].has_med)
			nd_jw_kint(&w, "median_ns", rec[i].med_ns);
		if (rec[i].has_pct)
			nd_jw_kdbl(&w, "median_pct", rec[i].med_pct);
		nd_jw_obj_end(&w);
	}
	nd_jw_arr_end(&w);
	nd_jw_obj_end(&w);
	nd_buf_addc(out, '\n');
}

void
nd_history_trend(const char *path, size_t last, int table, nd_buf *out)
{
	struct trend t;
	size_t first;

	memset(&t, 0, sizeof t);
	t.path = path;
	trend_read(&t);
	trend_count_rules(&t);
	first = last > 0 && t.nrec > last ? t.nrec - last : 0;
	if (table)
		trend_table(&t, first, out);
	else
		trend_json(&t, first, out);
	for (size_t i = 0; i < t.nrec; i++) {
		free(t.rec[i].label);
		free(t.rec[i].time);
	}
	for (size_t i = 0; i < t.nrc; i++)
		free(t.rc[i].id);
	free(t.rec);
	free(t.rc);
	nd_buf_free(&t.latest);
}
