/*
 * nd-unit: a driver that exposes lib/ modules to the bats tests, one
 * subcommand per module, so each module is tested through its real API.
 *
 *   nd-unit cat FILE            nd_in: copy decompressed bytes to stdout
 *   nd-unit sha256 FILE         nd_in: SHA-256 of the stored bytes
 *   nd-unit offset FILE         nd_in: decompressed length
 *   nd-unit lines FILE          nd_lines: "<lineno> <len> <nonl>" per line
 *   nd-unit reemit FILE         nd_stream + nd_event_write round trip
 *   nd-unit fields FILE         nd_event typed fields, one line per record
 *   nd-unit escape              nd_json_put_str of stdin bytes
 *   nd-unit name WIDTH          nd_name_short of each line of stdin
 *   nd-unit duration ARG...     nd_parse_duration
 *   nd-unit durtext NS...       nd_fmt_dur, nd_fmt_dur_f, nd_fmt_dur_spaced
 *   nd-unit natsort             the lines of stdin sorted by nd_name_natcmp
 *   nd-unit fixed SCALE NUM...  nd_json_fixed
 *   nd-unit double NUM...       nd_json_put_double(strtod(NUM))
 *   nd-unit intern WORD...      nd_intern ids
 *   nd-unit map64 N             nd_map64 insert/delete/lookup self-check
 *   nd-unit out FILE TEXT       nd_out atomic write of TEXT
 *   nd-unit out-fail FILE       nd_out: write then die (no file must remain)
 *   nd-unit xperr FILE...       nd_xpconv_convert_mem of each file in one
 *                               process: "FILE: ok" or the error value
 *   nd-unit chromeerr [-t] FILE...  the same with nd_kineto_convert (-t:
 *                               on its reader thread, as chrome2ndjson)
 *   nd-unit device FILE...      nd_event_kind per span: "KIND\tNAME" with
 *                               KIND host, device or annot
 *   nd-unit ingest KIND FILE [BUDGET]  the ingest engines on one thread:
 *                               KIND chrome (nd_kineto, items pushed one by
 *                               one, BUDGET records before streaming) or
 *                               xplane (nd_xpconv); the stream on stdout
 *   nd-unit stepsum W D         nd_stepsum, warmup W, drop-last D (0/1), of
 *                               stdin lines "num dur [source [ts wait]]"
 *   nd-unit stepsum-partial S D FILE  nd_stepsum_read_partial of FILE's
 *                               step_rec/step_dev records (source base S,
 *                               device base D), written back as a partial
 *                               (nd_stepsum_write_partial)
 */
#include "nd_buf.h"
#include "nd_check.h"
#include "nd_cli.h"
#include "nd_event.h"
#include "nd_hash.h"
#include "nd_in.h"
#include "nd_json.h"
#include "nd_kineto.h"
#include "nd_lines.h"
#include "nd_name.h"
#include "nd_out.h"
#include "nd_stepsum.h"
#include "nd_stream.h"
#include "nd_xpconv.h"
#include "nd_util.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* The stream's error, if it ended on one, ends the program. */
static void
stream_ok(const nd_stream *st)
{
	if (nd_stream_err(st) != NULL)
		nd_err_exit(nd_stream_err(st));
}

static int
cmd_cat(const char *path)
{
	nd_in *in = nd_in_open(path);
	nd_out *o = nd_out_open(NULL);
	char buf[65536];
	size_t r;

	while ((r = nd_in_read(in, buf, sizeof buf)) > 0)
		nd_out_write(o, buf, r);
	if (nd_in_err(in) != NULL)
		nd_err_exit(nd_in_err(in));	/* errors are values */
	nd_out_close(o);
	nd_in_close(in);
	return 0;
}

static int
cmd_sha256(const char *path)
{
	nd_in *in = nd_in_open_hashed(path);
	char hex[65];

	nd_in_sha256(in, hex);
	if (nd_in_err(in) != NULL)
		nd_err_exit(nd_in_err(in));
	printf("%s\n", hex);
	nd_in_close(in);
	return 0;
}

static int
cmd_offset(const char *path)
{
	nd_in *in = nd_in_open(path);
	char buf[4096];

	while (nd_in_read(in, buf, sizeof buf) > 0)
		;
	if (nd_in_err(in) != NULL)
		nd_err_exit(nd_in_err(in));
	printf("%llu %s\n", (unsigned long long)nd_in_offset(in),
	    nd_in_is_gzip(in) ? "gzip" : "plain");
	nd_in_close(in);
	return 0;
}

static int
cmd_lines(const char *path, const char *max)
{
	nd_in *in = nd_in_open(path);
	nd_lines *lr = nd_lines_open(in);
	size_t len;
	int nonl;

	if (max != NULL)
		nd_lines_set_max(lr, (size_t)atoll(max));
	while (nd_lines_next(lr, &len, &nonl) != NULL)
		printf("%llu %zu %d\n", (unsigned long long)nd_lines_lineno(lr),
		    len, nonl);
	if (nd_lines_err(lr) != NULL)
		nd_err_exit(nd_lines_err(lr));
	nd_lines_close(lr);
	nd_in_close(in);
	return 0;
}

static int
cmd_reemit(char **paths, int n)
{
	nd_stream *st = nd_stream_open(paths, n);
	nd_out *o = nd_out_open(NULL);
	nd_event ev;

	nd_event_init(&ev);
	while (nd_stream_next(st, &ev)) {
		nd_event_write(nd_out_buf(o), &ev);
		nd_out_commit(o);
	}
	stream_ok(st);
	nd_out_close(o);
	nd_event_free(&ev);
	nd_stream_close(st);
	return 0;
}

static void
pstr(const char *k, nd_str s)
{
	if (s.p != NULL)
		printf(" %s=%.*s", k, (int)s.n, s.p);
}

static int
cmd_fields(char **paths, int n)
{
	nd_stream *st = nd_stream_open(paths, n);
	nd_event ev;

	nd_event_init(&ev);
	while (nd_stream_next(st, &ev)) {
		printf("src=%u type=%s", ev.source, nd_evtype_name(ev.type));
		if (ev.has & ND_HAS_TS)
			printf(" ts=%lld", (long long)ev.ts_ns);
		if (ev.has & ND_HAS_DUR)
			printf(" dur=%lld", (long long)ev.dur_ns);
		if (ev.has & ND_HAS_PID)
			printf(" pid=%lld", (long long)ev.pid);
		if (ev.has & ND_HAS_TID)
			printf(" tid=%lld", (long long)ev.tid);
		if (ev.has & ND_HAS_RANK)
			printf(" rank=%lld", (long long)ev.rank);
		if (ev.has & ND_HAS_STEP)
			printf(" step=%lld", (long long)ev.step);
		pstr("name", ev.name);
		pstr("scope", ev.scope);
		if (ev.args.type == ND_JOBJ)
			printf(" args=%.*s", (int)ev.args.len, ev.args.raw);
		printf(" members=%zu\n", ev.nmembers);
	}
	nd_event_free(&ev);
	stream_ok(st);
	nd_stream_close(st);
	return 0;
}

/* Each line of stdin shortened by nd_name_short to width. */
static int
cmd_name(const char *width)
{
	char *line = NULL;
	size_t cap = 0;
	ssize_t n;
	nd_buf b = ND_BUF_INIT;

	while ((n = getline(&line, &cap, stdin)) > 0) {
		if (line[n - 1] == '\n')
			n--;
		nd_buf_reset(&b);
		nd_name_short(line, (size_t)n, (size_t)atoi(width), &b);
		printf("%.*s\n", (int)b.len, b.p);
	}
	free(line);
	nd_buf_free(&b);
	return 0;
}

static int
cmd_escape(void)
{
	nd_buf in = ND_BUF_INIT, out = ND_BUF_INIT;
	char buf[4096];
	size_t r;

	while ((r = fread(buf, 1, sizeof buf, stdin)) > 0)
		nd_buf_add(&in, buf, r);
	nd_json_put_str(&out, in.p ? in.p : "", in.len);
	printf("%s\n", out.p);
	nd_buf_free(&in);
	nd_buf_free(&out);
	return 0;
}

/* Step records read with bases and written back in a partial. */
static int
cmd_stepsum_partial(const char *sb, const char *db, char *path)
{
	nd_stepsum *s = nd_stepsum_new();
	nd_stream *st = nd_stream_open(&path, 1);
	nd_out *o = nd_out_open(NULL);
	nd_partial_w pw;
	nd_event ev;
	nd_jw w;

	nd_event_init(&ev);
	while (nd_stream_next(st, &ev))
		if (!nd_stepsum_read_partial(s, st, &ev,
		    (uint32_t)strtoul(sb, NULL, 10),
		    (uint32_t)strtoul(db, NULL, 10), NULL, NULL))
			nd_die(2, "not a step record");
	stream_ok(st);	/* a record refused: the stream's error */
	nd_partial_begin(&pw, o, &w, "stepsum_test");
	nd_jw_obj_end(&w);
	nd_buf_addc(nd_out_buf(o), '\n');
	nd_partial_commit(&pw);
	nd_stepsum_write_partial(s, &pw);
	nd_partial_end(&pw);
	nd_out_close(o);
	nd_event_free(&ev);
	stream_ok(st);
	nd_stream_close(st);
	nd_stepsum_free(s);
	return 0;
}

/* The step summary of stdin's records as text: job steps, the steady
 * window, its statistics, classes and the stragglers. */
static int
cmd_stepsum(const char *w, const char *d)
{
	nd_stepsum *s = nd_stepsum_new();
	const nd_stepsum_res *r;
	nd_stepsum_rec x;
	char line[256];
	long long num, dur, ts, wait;
	unsigned src;
	int n;

	while (fgets(line, sizeof line, stdin) != NULL) {
		memset(&x, 0, sizeof x);
		src = 0;
		ts = wait = 0;
		n = sscanf(line, "%lld %lld %u %lld %lld", &num, &dur, &src, &ts,
		    &wait);
		if (n < 2)
			continue;
		x.num = num;
		x.dur = dur;
		x.source = src;
		x.ts = ts;
		x.wait = wait;
		x.bd.compute_ns = dur;
		nd_stepsum_add(s, &x);
	}
	nd_stepsum_finish(s, atoll(w), atoi(d));
	r = nd_stepsum_result(s);
	printf("jobs %zu\n", r->nsteps);
	for (size_t i = 0; i < r->nsteps; i++)
		printf("job %lld %lld\n", (long long)r->num[i],
		    (long long)r->dur[i]);
	printf("window %zu %zu applied %d\n", r->first, r->last, r->applied);
	printf("steady %llu %lld %lld %lld %lld %lld\n",
	    (unsigned long long)r->steady.count, (long long)r->steady.median,
	    (long long)r->steady.mean, (long long)r->steady.min,
	    (long long)r->steady.max, (long long)r->bd_total);
	if (r->steady.count > 0)
		printf("steps %lld %lld\n", (long long)r->first_step,
		    (long long)r->last_step);
	for (int c = 0; c < r->cl.nclass; c++)
		printf("class %s %llu %lld period %lld\n", r->cl.c[c].name,
		    (unsigned long long)r->cl.c[c].st.count,
		    (long long)r->cl.c[c].representative,
		    (long long)(r->cl.c[c].has_period ? r->cl.c[c].period : 0));
	for (size_t i = 0; i < r->nrs; i++)
		printf("rankstep %lld %zu straggler %u lag %lld\n",
		    (long long)r->win[r->rs[i].first].num, r->rs[i].n,
		    r->win[r->rs[i].first + r->rs[i].sg.straggler].source,
		    (long long)r->rs[i].sg.lag_ns);
	if (r->has_named)
		printf("named %u\n", r->named);
	nd_stepsum_free(s);
	return 0;
}

static int
cmd_device(char **paths, int n)
{
	static const char *const kinds[] = {
		[ND_KIND_HOST] = "host", [ND_KIND_DEVICE] = "device",
		[ND_KIND_ANNOT] = "annot"
	};
	nd_stream *st = nd_stream_open(paths, n);
	nd_event ev;

	nd_event_init(&ev);
	while (nd_stream_next(st, &ev)) {
		int k = nd_event_kind(&ev);

		if (ev.type != ND_EV_SPAN)
			continue;
		/* the field set at decode and the rule on the fields agree */
		if (k != nd_kind_of(ev.cat, ev.process, ev.thread))
			nd_die(1, "kind %d set at decode, %d by nd_kind_of", k,
			    nd_kind_of(ev.cat, ev.process, ev.thread));
		printf("%s\t%.*s\n", kinds[k], (int)ev.name.n,
		    ev.name.p != NULL ? ev.name.p : "");
	}
	nd_event_free(&ev);
	stream_ok(st);
	nd_stream_close(st);
	return 0;
}

static int
cmd_ingest(char **argv, int argc)
{
	nd_out *out = nd_out_open(NULL);

	if (argc >= 2 && strcmp(argv[0], "chrome") == 0) {
		nd_kineto_opts o = { .quiet = 1, .one_thread = 1 };
		nd_in *in = nd_in_open_hashed(argv[1]);
		nd_chrome *ch = nd_chrome_open(in);
		nd_kineto *k;
		nd_chrome_item it;
		char sha[65];
		int unclosed;

		o.budget = argc == 3 ? (size_t)atol(argv[2]) : 0;
		k = nd_kineto_new(argv[1], nd_in_name(in), &o);
		while (nd_chrome_next(ch, &it) != ND_CHROME_END)
			if (nd_kineto_feed(k, ch, &it) != 0)
				nd_err_exit(nd_kineto_err(k));
		if (nd_chrome_err(ch) != NULL)
			nd_err_exit(nd_chrome_err(ch));
		unclosed = nd_chrome_unclosed(ch);
		nd_chrome_close(ch);
		nd_in_sha256(in, sha);
		nd_kineto_finish(k, sha, unclosed);
		nd_kineto_write(k, out);
		nd_kineto_free(k);
		nd_in_close(in);
	} else if (argc == 2 && strcmp(argv[0], "xplane") == 0) {
		nd_xpconv_opts o = { .one_thread = 1 };
		nd_err err;

		nd_err_clear(&err);
		if (nd_xpconv_convert(argv[1], &o, out, &err) != 0)
			nd_err_exit(&err);
	} else
		nd_die(2, "usage: nd-unit ingest chrome|xplane FILE [BUDGET]");
	nd_out_close(out);
	return 0;
}

/* "PATH: error at byte OFF: MSG" ("at byte -" when it names none). */
static void
print_err(const char *path, const nd_err *e)
{
	if (e->off == ND_ERR_NONE)
		printf("%s: error at byte -: %s\n", path, e->msg);
	else
		printf("%s: error at byte %llu: %s\n", path,
		    (unsigned long long)e->off, e->msg);
}

/* Each XPlane file's bytes converted in this one process (to /dev/null):
 * "FILE: ok" or "FILE: error at byte OFF: MSG", the error a value the
 * process goes on after. */
static int
cmd_xperr(char **paths, int n)
{
	nd_xpconv_opts o = { .one_thread = 1 };

	for (int i = 0; i < n; i++) {
		nd_in *in = nd_in_open(paths[i]);
		nd_buf data = ND_BUF_INIT;
		nd_out *out = nd_out_open("/dev/null");
		nd_err err;

		nd_in_slurp(in, &data);
		nd_err_clear(&err);
		if (nd_xpconv_convert_mem(data.p != NULL ? data.p : "",
		    data.len, paths[i], &o, out, &err) == 0)
			printf("%s: ok\n", paths[i]);
		else
			print_err(paths[i], &err);
		nd_out_close(out);
		nd_buf_free(&data);
		nd_in_close(in);
	}
	return 0;
}

/* The same for Chrome trace JSON files (nd_kineto_convert); threads:
 * the reader thread's path, whose errors must come back the same. */
static int
cmd_chromeerr(char **paths, int n, int threads)
{
	nd_kineto_opts o = { .quiet = 1, .one_thread = !threads };

	for (int i = 0; i < n; i++) {
		nd_out *out = nd_out_open("/dev/null");
		nd_err err;

		nd_err_clear(&err);
		if (nd_kineto_convert(paths[i], &o, out, &err) == 0)
			printf("%s: ok\n", paths[i]);
		else
			print_err(paths[i], &err);
		nd_out_close(out);
	}
	return 0;
}

static uint64_t unit_rng = 88172645463325252ULL;

static uint64_t
unit_rand(void)
{
	unit_rng ^= unit_rng << 13;
	unit_rng ^= unit_rng >> 7;
	unit_rng ^= unit_rng << 17;
	return unit_rng;
}

/* nd_json_double against strtod, bit for bit, on n generated JSON numbers
 * (integers up to 20 digits, fractions, exponents) and the arguments. */
static int
cmd_jdouble(int n, char **extra, int nextra)
{
	char num[64];
	unsigned long bad = 0;

	for (int i = 0; i < n + nextra; i++) {
		nd_jval v = { ND_JNUM, num, 0, 0 };
		double a, b;
		int len = 0;

		if (i >= n)
			len = snprintf(num, sizeof num, "%s", extra[i - n]);
		else {
			int nd = 1 + (int)(unit_rand() % 20);
			int kind = (int)(unit_rand() % 4);

			if (unit_rand() % 3 == 0)
				num[len++] = '-';
			num[len++] = (char)('1' + unit_rand() % 9);
			for (int d = 1; d < nd; d++)
				num[len++] = (char)('0' + unit_rand() % 10);
			if (kind == 1 || kind == 3) {
				num[len++] = '.';
				for (int d = (int)(unit_rand() % 8); d >= 0; d--)
					num[len++] = (char)('0' + unit_rand() % 10);
			}
			if (kind >= 2)
				len += snprintf(num + len, sizeof num - (size_t)len,
				    "e%d", (int)(unit_rand() % 70) - 35);
			num[len] = '\0';
		}
		v.len = (size_t)len;
		a = nd_json_double(&v);
		b = strtod(num, NULL);
		if (memcmp(&a, &b, sizeof a) != 0) {
			if (bad++ < 5)
				printf("differs: %s %.17g %.17g\n", num, a, b);
		}
	}
	printf("n=%d bad=%lu\n", n + nextra, bad);
	return bad != 0;
}

/* nd_idmemo against an nd_intern of the tuples' bytes: n tuples of k ids
 * drawn from small domains (so prefixes repeat and collide), the memo
 * holding the intern's id; bad counts disagreements. */
static int
cmd_idmemo(int n, int k)
{
	nd_idmemo *m = nd_idmemo_new();
	nd_intern *ref = nd_intern_new();
	unsigned long bad = 0, hits = 0;
	uint32_t ids[8];

	if (k < 1 || k > 8)
		nd_die(2, "idmemo: 1 to 8 ids");
	for (int i = 0; i < n; i++) {
		uint64_t key;
		uint32_t got, want;

		for (int j = 0; j < k; j++)
			ids[j] = j == k - 1 ? (uint32_t)(unit_rand() % 5000) :
			    (uint32_t)(unit_rand() % 4);
		if (unit_rand() % 7 == 0)
			ids[unit_rand() % (uint64_t)k] = UINT32_MAX;
		want = nd_intern_id(ref, (const char *)ids, k * sizeof *ids);
		got = nd_idmemo_get(m, ids, (size_t)k, &key);
		if (got == UINT32_MAX)
			nd_idmemo_put(m, key, want);
		else if (hits++, got != want)
			bad++;
	}
	printf("n=%d distinct=%u hits=%lu bad=%lu\n", n, nd_intern_count(ref),
	    hits, bad);
	nd_idmemo_free(m);
	nd_intern_free(ref);
	return bad != 0;
}

struct problems {
	char **v;
	size_t n;
};

/* nd_check_fn: "FILE:LINE: message", or the message alone. */
static void
keep_problem(void *ctx, const char *file, uint64_t line, const char *msg)
{
	struct problems *p = ctx;
	char b[1024];

	if (file != NULL)
		snprintf(b, sizeof b, "%s:%llu: %s", file,
		    (unsigned long long)line, msg);
	else
		snprintf(b, sizeof b, "%s", msg);
	p->v = nd_xrealloc(p->v, (p->n + 1) * sizeof *p->v);
	p->v[p->n++] = nd_xstrdup(b);
}

int
main(int argc, char **argv)
{
	nd_init("nd-unit");
	if (argc < 2)
		nd_die(2, "usage: nd-unit COMMAND ARGS...");
	if (strcmp(argv[1], "stepsum") == 0 && argc == 4)
		return cmd_stepsum(argv[2], argv[3]);
	if (strcmp(argv[1], "stepsum-partial") == 0 && argc == 5)
		return cmd_stepsum_partial(argv[2], argv[3], argv[4]);
	if (strcmp(argv[1], "cat") == 0 && argc == 3)
		return cmd_cat(argv[2]);
	if (strcmp(argv[1], "sha256") == 0 && argc == 3)
		return cmd_sha256(argv[2]);
	if (strcmp(argv[1], "offset") == 0 && argc == 3)
		return cmd_offset(argv[2]);
	if (strcmp(argv[1], "lines") == 0 && (argc == 3 || argc == 4))
		return cmd_lines(argv[2], argc == 4 ? argv[3] : NULL);
	if (strcmp(argv[1], "reemit") == 0)
		return cmd_reemit(argv + 2, argc - 2);
	if (strcmp(argv[1], "fields") == 0)
		return cmd_fields(argv + 2, argc - 2);
	if (strcmp(argv[1], "device") == 0)
		return cmd_device(argv + 2, argc - 2);
	if (strcmp(argv[1], "escape") == 0)
		return cmd_escape();
	if (strcmp(argv[1], "name") == 0 && argc == 3)
		return cmd_name(argv[2]);
	if (strcmp(argv[1], "ingest") == 0)
		return cmd_ingest(argv + 2, argc - 2);
	if (strcmp(argv[1], "jdouble") == 0 && argc >= 3)
		return cmd_jdouble(atoi(argv[2]), argv + 3, argc - 3);
	if (strcmp(argv[1], "idmemo") == 0 && argc == 4)
		return cmd_idmemo(atoi(argv[2]), atoi(argv[3]));
	if (strcmp(argv[1], "duration") == 0) {
		for (int i = 2; i < argc; i++) {
			int64_t v;

			if (nd_parse_duration(argv[i], &v) == 0)
				printf("%lld\n", (long long)v);
			else
				printf("invalid\n");
		}
		return 0;
	}
	if (strcmp(argv[1], "natsort") == 0) {
		/* natural order (nd_name_natcmp over nd_bytes_cmp) */
		char *v[256];
		size_t n = 0, cap = 0;
		ssize_t len;
		char *line = NULL;

		while (n < 256 && (len = getline(&line, &cap, stdin)) > 0) {
			line[len - 1] = '\0';
			v[n++] = strdup(line);
		}
		free(line);
		for (size_t i = 1; i < n; i++)
			for (size_t j = i; j > 0 && nd_name_natcmp(v[j - 1],
			    strlen(v[j - 1]), v[j], strlen(v[j])) > 0; j--) {
				char *t = v[j];

				v[j] = v[j - 1];
				v[j - 1] = t;
			}
		for (size_t i = 0; i < n; i++) {
			puts(v[i]);
			free(v[i]);
		}
		return 0;
	}
	if (strcmp(argv[1], "check") == 0 && argc >= 3) {
		/* nd_check's problems as values: kept, then printed */
		struct problems pr = { NULL, 0 };
		nd_check *c = nd_check_new(keep_problem, &pr);
		nd_check_counts n;
		nd_err err;

		nd_err_clear(&err);
		for (int i = 2; i < argc; i++)
			if (nd_check_file(c, argv[i], &err) != 0)
				nd_err_exit(&err);
		nd_check_end(c, &n);
		nd_check_free(c);
		for (size_t i = 0; i < pr.n; i++) {
			printf("%s\n", pr.v[i]);
			free(pr.v[i]);
		}
		free(pr.v);
		printf("records %llu spans %llu sources %llu problems %llu\n",
		    (unsigned long long)n.records, (unsigned long long)n.spans,
		    (unsigned long long)n.sources,
		    (unsigned long long)n.problems);
		return 0;
	}
	if (strcmp(argv[1], "atms") == 0) {
		char t[64];

		for (int i = 2; i < argc; i++)
			printf("%s\n", nd_fmt_at_ms(t, sizeof t, atoll(argv[i])));
		return 0;
	}
	if (strcmp(argv[1], "durtext") == 0) {
		/* the one duration-text rule in its three entry points */
		for (int i = 2; i < argc; i++) {
			long long v = atoll(argv[i]);
			char a[64], b[64], c[64];
			nd_buf sp = { 0 };

			nd_fmt_dur(a, sizeof a, v, 1);
			nd_fmt_dur_f(b, sizeof b, (double)v, 1);
			nd_fmt_dur_f(c, sizeof c, v + 0.25, 0);
			nd_fmt_dur_spaced(&sp, v);
			printf("%s %s %s %s\n", a, b, c, sp.p);
			nd_buf_free(&sp);
		}
		return 0;
	}
	if (strcmp(argv[1], "fixed") == 0 && argc >= 3) {
		int scale = atoi(argv[2]);

		for (int i = 3; i < argc; i++) {
			int64_t v;

			if (nd_json_fixed(argv[i], strlen(argv[i]), scale, &v) == 0)
				printf("%lld\n", (long long)v);
			else
				printf("invalid\n");
		}
		return 0;
	}
	if (strcmp(argv[1], "double") == 0) {
		nd_buf b = ND_BUF_INIT;

		for (int i = 2; i < argc; i++) {
			nd_buf_reset(&b);
			nd_json_put_double(&b, strtod(argv[i], NULL));
			printf("%s\n", b.p);
		}
		nd_buf_free(&b);
		return 0;
	}
	if (strcmp(argv[1], "intern") == 0) {
		nd_intern *t = nd_intern_new();

		for (int i = 2; i < argc; i++)
			printf("%u\n", nd_intern_id(t, argv[i], strlen(argv[i])));
		printf("count=%u\n", nd_intern_count(t));
		nd_intern_free(t);
		return 0;
	}
	if (strcmp(argv[1], "map64") == 0 && argc == 3) {
		uint64_t n = (uint64_t)atoll(argv[2]);
		nd_map64 *m = nd_map64_new();
		uint64_t bad = 0;

		for (uint64_t i = 0; i < n; i++)
			*nd_map64_put(m, i * 7919, NULL) = i;
		for (uint64_t i = 0; i < n; i += 2)
			nd_map64_del(m, i * 7919);
		for (uint64_t i = 0; i < n; i++) {
			uint64_t *v = nd_map64_get(m, i * 7919);

			if ((i % 2 == 0) != (v == NULL) || (v && *v != i))
				bad++;
		}
		printf("count=%zu bad=%llu\n", nd_map64_count(m),
		    (unsigned long long)bad);
		nd_map64_free(m);
		return 0;
	}
	if (strcmp(argv[1], "out") == 0 && argc == 4) {
		nd_out *o = nd_out_open(argv[2]);

		nd_out_write(o, argv[3], strlen(argv[3]));
		nd_out_close(o);
		return 0;
	}
	if (strcmp(argv[1], "out-fail") == 0 && argc == 3) {
		nd_out *o = nd_out_open(argv[2]);

		nd_out_write(o, "partial\n", 8);
		nd_out_flush(o);
		nd_die(2, "%s: simulated failure", argv[2]);
	}
	if (strcmp(argv[1], "out-hang") == 0 && argc == 3) {
		nd_out *o = nd_out_open(argv[2]);

		nd_out_write(o, "partial\n", 8);
		nd_out_flush(o);
		printf("ready\n");
		fflush(stdout);
		pause();
		return 0;
	}
	if (strcmp(argv[1], "xperr") == 0 && argc >= 3)
		return cmd_xperr(argv + 2, argc - 2);
	if (strcmp(argv[1], "chromeerr") == 0 && argc >= 4 &&
	    strcmp(argv[2], "-t") == 0)
		return cmd_chromeerr(argv + 3, argc - 3, 1);
	if (strcmp(argv[1], "chromeerr") == 0 && argc >= 3)
		return cmd_chromeerr(argv + 2, argc - 2, 0);
	nd_die(2, "unknown command: %s", argv[1]);
}
