/*
 * nd_rundir: files, run directories and log directories (nd_rundir.h).
 */
#include "nd_rundir.h"
#include "nd_util.h"

#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

void
nd_strv_add(nd_strv *sv, char *s)
{
	nd_grow(&sv->v, &sv->cap, sv->n + 1, sizeof *sv->v);
	sv->v[sv->n++] = s;
}

void
nd_strv_free(nd_strv *sv)
{
	for (size_t i = 0; i < sv->n; i++)
		free(sv->v[i]);
	free(sv->v);
	memset(sv, 0, sizeof *sv);
}

/* A path for --list: one line whatever it holds.  Backslash, tab,
 * newline and the other control bytes are escaped as C does, so a line
 * is one path and a tab separates it from a skipped entry's reason. */
static void
put_path(const char *s)
{
	for (const unsigned char *p = (const unsigned char *)s; *p; p++)
		if (*p == '\\')
			fputs("\\\\", stdout);
		else if (*p == '\n')
			fputs("\\n", stdout);
		else if (*p == '\t')
			fputs("\\t", stdout);
		else if (*p < 0x20 || *p == 0x7f)
			printf("\\x%02x", *p);
		else
			putchar(*p);
}

void
nd_rundir_list(const nd_strv *files, const nd_rundir_skips *sk)
{
	for (size_t i = 0; i < files->n; i++) {
		put_path(files->v[i]);
		putchar('\n');
	}
	for (size_t i = 0; sk != NULL && i < sk->path.n; i++) {
		put_path(sk->path.v[i]);
		printf("\tskipped: %s\n", sk->why.v[i]);
	}
	nd_stdout_flush();
}

/* A matching entry that is not read: said once on stderr, kept for
 * --list. */
static void
skip(nd_rundir_skips *sk, const char *path, const char *why)
{
	nd_warn("%s: skipped: %s", path, why);
	if (sk == NULL)
		return;
	nd_strv_add(&sk->path, nd_xstrdup(path));
	nd_strv_add(&sk->why, nd_xstrdup(why));
}

void
nd_rundir_skips_free(nd_rundir_skips *sk)
{
	nd_strv_free(&sk->path);
	nd_strv_free(&sk->why);
}

/* Why a matching name is not a file to read; NULL when it is one. */
static const char *
not_a_file(const char *p)
{
	struct stat sb;

	if (stat(p, &sb) != 0) {
		if (errno == ELOOP)
			return "a symbolic link loop";
		if (errno == ENOENT && lstat(p, &sb) == 0 &&
		    S_ISLNK(sb.st_mode))
			return "a dangling symbolic link";
		return strerror(errno);
	}
	if (S_ISREG(sb.st_mode))
		return NULL;
	if (S_ISFIFO(sb.st_mode))
		return "a FIFO, not a regular file";
	if (S_ISDIR(sb.st_mode))
		return "a directory, not a regular file";
	return "not a regular file";
}

static int
cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

static char *
join(const char *dir, const char *name)
{
	size_t n = strlen(dir);
	char *p = nd_xmalloc(n + strlen(name) + 2);

	sprintf(p, "%s%s%s", dir, n > 0 && dir[n - 1] == '/' ? "" : "/", name);
	return p;
}

static int
is_dir(const char *p)
{
	struct stat sb;

	return stat(p, &sb) == 0 && S_ISDIR(sb.st_mode);
}

/* The matching regular files directly in dir, sorted; the other
 * matching entries go to sk (not said when sk is NULL: a look for runs). */
static void
list_files(const char *dir, nd_rundir_match match, nd_strv *out,
    nd_rundir_skips *sk, int say)
{
	DIR *d = opendir(dir);
	struct dirent *e;
	size_t first = out->n;
	nd_strv bad = { 0 };

	if (d == NULL)
		return;
	while ((e = readdir(d)) != NULL) {
		char *p;

		if (!match(e->d_name))
			continue;
		p = join(dir, e->d_name);
		nd_strv_add(not_a_file(p) == NULL ? out : &bad, p);
	}
	closedir(d);
	if (out->n - first > 1)
		qsort(out->v + first, out->n - first, sizeof *out->v, cmp_str);
	if (say && bad.n > 1)
		qsort(bad.v, bad.n, sizeof *bad.v, cmp_str);
	for (size_t i = 0; say && i < bad.n; i++) {
		const char *w = not_a_file(bad.v[i]);

		skip(sk, bad.v[i], w != NULL ? w : "changed while read");
	}
	nd_strv_free(&bad);
}

/* The subdirectories of dir that hold matching files (runs), sorted. */
static void
list_runs(const char *dir, nd_rundir_match match, nd_strv *out)
{
	DIR *d = opendir(dir);
	struct dirent *e;

	if (d == NULL)
		return;
	while ((e = readdir(d)) != NULL) {
		nd_strv f = { 0 };
		char *p;

		if (e->d_name[0] == '.')
			continue;
		p = join(dir, e->d_name);
		if (is_dir(p)) {
			list_files(p, match, &f, NULL, 0);
			if (f.n > 0)
				nd_strv_add(out, nd_xstrdup(e->d_name));
			nd_strv_free(&f);
		}
		free(p);
	}
	closedir(d);
	if (out->n > 1)
		qsort(out->v, out->n, sizeof *out->v, cmp_str);
}

/* The message for a --run that names no run, in msg. */
static void
no_run(char *msg, size_t sz, const char *pdir, const char *run,
    const nd_strv *runs)
{
	char l[2048];
	size_t k = 0;

	l[0] = '\0';
	for (size_t i = 0; i < runs->n && k < sizeof l; i++)
		k += (size_t)snprintf(l + k, sizeof l - k, "%s%s",
		    i ? ", " : "", runs->v[i]);
	snprintf(msg, sz, "%s: no run '%s' (runs: %s)", pdir, run, l);
}

/* The error when path holds no runs: with --run, a run directory itself
 * is not a directory of runs. */
static int
no_runs(const char *path, const char *run, nd_rundir_match match,
    const char *what, nd_err *err)
{
	nd_strv f = { 0 };
	size_t n;

	if (run != NULL) {
		list_files(path, match, &f, NULL, 0);
		n = f.n;
		nd_strv_free(&f);
		if (n > 0)
			return nd_err_set(err, path, ND_ERR_NONE, ND_ERR_NONE,
			    "%s: --run %s: it is a run directory (%zu %s "
			    "file%s in it), not a directory of runs: give it "
			    "without --run", path, run, n, what,
			    n == 1 ? "" : "s");
	}
	return nd_err_set(err, path, ND_ERR_NONE, ND_ERR_NONE, "%s: no %s "
	    "files in it, nor in runs under it or under its plugins/profile",
	    path, what);
}

int
nd_rundir_resolve(const char *path, const char *run, nd_rundir_match match,
    const char *what, nd_strv *files, nd_rundir_skips *sk, int *used_run,
    nd_err *err)
{
	static const char *const sub[] = { "plugins/profile", "profile", "" };
	nd_strv runs = { 0 };
	char *pdir = NULL, *rd;
	size_t before = files->n;
	int rc = 0;

	if (strcmp(path, "-") == 0 || !is_dir(path)) {
		nd_strv_add(files, nd_xstrdup(path));
		return 0;
	}
	if (run == NULL) {
		list_files(path, match, files, sk, 1);
		if (files->n > before)
			return 0;	/* a run directory */
	}
	for (size_t i = 0; i < sizeof sub / sizeof sub[0]; i++) {
		char *c = sub[i][0] ? join(path, sub[i]) : nd_xstrdup(path);

		if (is_dir(c)) {
			list_runs(c, match, &runs);
			if (runs.n > 0) {
				pdir = c;
				break;
			}
		}
		free(c);
	}
	if (pdir == NULL)
		return no_runs(path, run, match, what, err);
	if (run != NULL)
		*used_run = 1;
	rd = join(pdir, run != NULL ? run : runs.v[runs.n - 1]);
	list_files(rd, match, files, sk, 1);
	free(rd);
	if (files->n == before) {
		char msg[4096];

		no_run(msg, sizeof msg, pdir, run, &runs);
		rc = nd_err_set(err, pdir, ND_ERR_NONE, ND_ERR_NONE, "%s",
		    msg);
	}
	free(pdir);
	nd_strv_free(&runs);
	return rc;
}

/* ---------- captures: WORKER.TIME.pt.trace.json[.gz] ---------- */

struct capture {
	const char *path;
	size_t wlen;		/* path[0..wlen): directory and worker */
	const char *ts;		/* TIME, digits */
	size_t tslen;
	size_t idx;
};

/* 1 when path names a capture; its worker and time. */
static int
capture_split(const char *path, struct capture *c)
{
	static const char sfx[] = ".pt.trace.json";
	const char *base = strrchr(path, '/');
	size_t n = strlen(path), b, e;

	base = base != NULL ? base + 1 : path;
	b = (size_t)(base - path);
	if (n > 3 && strcmp(path + n - 3, ".gz") == 0)
		n -= 3;
	if (n < b + sizeof sfx - 1 ||
	    strncmp(path + n - (sizeof sfx - 1), sfx, sizeof sfx - 1) != 0)
		return 0;
	e = n - (sizeof sfx - 1);
	n = e;
	while (n > b && path[n - 1] >= '0' && path[n - 1] <= '9')
		n--;
	if (n == e || n < b + 2 || path[n - 1] != '.')
		return 0;
	c->path = path;
	c->wlen = n - 1;
	c->ts = path + n;
	c->tslen = e - n;
	return 1;
}

/* By worker, then newest first (a longer TIME is a finer unit, so later). */
static int
cmp_capture(const void *a, const void *b)
{
	const struct capture *x = a, *y = b;
	size_t m = x->wlen < y->wlen ? x->wlen : y->wlen;
	int r = memcmp(x->path, y->path, m);

	if (r != 0)
		return r;
	if (x->wlen != y->wlen)
		return x->wlen < y->wlen ? -1 : 1;
	if (x->tslen != y->tslen)
		return x->tslen > y->tslen ? -1 : 1;
	r = memcmp(y->ts, x->ts, x->tslen);
	if (r != 0)
		return r;
	return x->idx < y->idx ? -1 : x->idx > y->idx;
}

/* 1 when x and y are one worker's captures of one time (the same capture
 * written twice, as .json and .json.gz). */
static int
same_capture(const struct capture *x, const struct capture *y)
{
	return x->tslen == y->tslen && memcmp(x->ts, y->ts, x->tslen) == 0;
}

void
nd_rundir_newest(nd_strv *files, size_t from, int all, nd_rundir_skips *sk)
{
	size_t n = files->n - from, k = 0, w = from, head = 0, first = 0;
	struct capture *c;
	unsigned char *drop;

	if (n < 2)
		return;
	c = nd_xmalloc(n * sizeof *c);
	drop = calloc(n, 1);
	if (drop == NULL)
		nd_die(ND_EXIT_ERROR, "out of memory");
	for (size_t i = 0; i < n; i++)
		if (capture_split(files->v[from + i], &c[k])) {
			c[k].idx = i;
			k++;
		}
	qsort(c, k, sizeof *c, cmp_capture);
	for (size_t i = 1; i < k; i++) {
		char why[4096];

		if (c[i].wlen != c[head].wlen ||
		    memcmp(c[i].path, c[head].path, c[i].wlen) != 0) {
			head = first = i;
			continue;
		}
		if (!same_capture(&c[i], &c[first])) {
			first = i;
			drop[c[i].idx] = !all;	/* an older capture */
			continue;
		}
		drop[c[i].idx] = 1;
		if (!drop[c[first].idx]) {
			snprintf(why, sizeof why, "the same capture as %s, "
			    "which is read", c[first].path);
			skip(sk, c[i].path, why);
		}
	}
	for (size_t i = 0; i < n; i++) {
		if (drop[i])
			free(files->v[from + i]);
		else
			files->v[w++] = files->v[from + i];
	}
	files->n = w;
	free(drop);
	free(c);
}
