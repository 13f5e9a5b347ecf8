/*
 * trace-roofline: achieved TFLOP/s, GB/s and arithmetic intensity of the
 * ops of a stream against the roofline of their device: compute- or
 * memory-bound, and how close to the roof.  See trace-roofline(1); the
 * engine is lib/engines/nd_roofline (and lib/engines/nd_peak, lib/engines/nd_by).
 */
#include "nd_by.h"
#include "nd_cli.h"
#include "nd_drive.h"
#include "nd_event.h"
#include "nd_json.h"
#include "nd_out.h"
#include "nd_peak.h"
#include "nd_roofline.h"
#include "nd_scan.h"
#include "nd_util.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char usage_text[] =
"usage: trace-roofline [-hV] [-b keys] [-k N] [-p X] [--timelines which] [--device name] [--peak-gbps Y] [--print-peaks] [--table | --csv] [-o file] [file ...]\n"
"  -k, --top N          rows to show (default 20; 0: all)\n"
"  -b, --by keys        group by these keys: name (default), family, class,\n"
"                       scope, device, ... or args.X\n"
"      --timelines which auto (default: device ops when they have flops,\n"
"                       else host spans), device, host or all\n"
"      --device name    the device every span ran on (a table name or a\n"
"                       device name such as 'NVIDIA A100-SXM4-80GB')\n"
"  -p, --peak-tflops X  compute peak of a device, TFLOP/s\n"
"      --peak-gbps Y    memory bandwidth of a device, GB/s\n"
"      --print-peaks    print the built-in peak table and exit\n"
"      --table          an aligned table for people\n"
"      --csv            CSV with a header line\n"
"  -o, --output file    write to file (atomically) instead of stdout\n"
"  -h, --help           show this help and exit\n"
"  -V, --version        show the version and exit\n";

enum { OPT_BY = 256, OPT_TIMELINES, OPT_DEVICE, OPT_PEAK_TFLOPS,
	OPT_PEAK_GBPS, OPT_PRINT_PEAKS, OPT_TABLE, OPT_CSV };
enum { FMT_JSON, FMT_TABLE, FMT_CSV };

/* Output keys of a roofline row: a --by key may not take one of these. */
static const char *const row_keys[] = {
	"type", "row", "args", "count", "total_ns", "flops_count", "flops_ns",
	"flops", "bytes", "tflops", "gbps", "intensity", "device_name",
	"peak_tflops", "peak_gbps", "pct_of_peak", "ridge", "bound",
	"attainable_tflops", "pct_of_roofline"
};

static void
roof_record(void *ctx, const nd_event *ev, const nd_source_info *si)
{
	nd_roofline_record(ctx, ev, si);
}

/* Durations only, no nesting: one reading in any order. */
static int
roof_end(void *ctx)
{
	(void)ctx;
	return ND_DRIVE_OK;
}

static void
write_json(nd_out *o, const nd_by *by, const nd_roofline_row *rows, size_t n,
    const nd_roofline_sum *sum)
{
	nd_buf *b = nd_out_buf(o);
	nd_jw w;

	for (size_t i = 0; i < n; i++) {
		const nd_roofline_row *x = &rows[i];

		nd_jw_init(&w, b);
		nd_jw_obj(&w);
		nd_jw_kcstr(&w, "type", "roofline");
		nd_jw_kuint(&w, "row", i + 1);
		nd_by_json(by, &w, x->key, x->keylen);
		nd_roofline_row_json(&w, x);
		nd_jw_obj_end(&w);
		nd_buf_addc(b, '\n');
		nd_out_commit(o);
	}
	nd_jw_init(&w, b);
	nd_jw_obj(&w);
	nd_jw_kcstr(&w, "type", "roofline_summary");
	nd_roofline_sum_json(&w, sum);
	nd_jw_kuint(&w, "shown", n);
	nd_jw_obj_end(&w);
	nd_buf_addc(b, '\n');
	nd_out_commit(o);
}

#define NCOL 8

static void
cells_of(const nd_roofline_row *x, char cell[NCOL][32])
{
	nd_roofline_fig f;

	nd_roofline_figures(x, &f);
	for (int c = 0; c < NCOL; c++)
		snprintf(cell[c], 32, "-");
	nd_fmt_dur(cell[0], 32, x->flops_ns, 0);
	snprintf(cell[1], 32, "%llu", (unsigned long long)x->flops_count);
	if (f.has_tflops)
		snprintf(cell[2], 32, "%.3f", f.tflops);
	if (f.has_bytes) {
		snprintf(cell[3], 32, "%.1f", f.gbps);
		snprintf(cell[4], 32, "%.2f", f.intensity);
	}
	if (f.has_roof) {
		snprintf(cell[5], 32, "%s", f.bound);
		snprintf(cell[6], 32, "%.3f", f.attainable);
		snprintf(cell[7], 32, "%.1f%%", f.pct);
	}
}

static void
write_table(nd_out *o, const nd_by *by, const nd_roofline_row *rows, size_t n,
    const nd_roofline_sum *sum)
{
	static const char *const head[NCOL] = { "Time", "Count", "TFLOP/s",
	    "GB/s", "FLOP/B", "Bound", "Roof TF/s", "% roof" };
	size_t wd[NCOL], nk = nd_by_count(by), *kw;
	char cell[NCOL][32], d1[32], d2[32];
	nd_buf *b = nd_out_buf(o), txt = ND_BUF_INIT;
	const nd_roofline_row *first = n > 0 ? &rows[0] : NULL;
	int uniform = first != NULL && first->peak == 1;

	kw = nd_xcalloc(nk, sizeof *kw);
	for (size_t c = 0; c < NCOL; c++)
		wd[c] = strlen(head[c]);
	for (size_t k = 0; k < nk; k++) {
		const char *name = nd_by_name(by, k, NULL);

		kw[k] = nd_text_width(name, strlen(name));
	}
	for (size_t i = 0; i < n; i++) {
		cells_of(&rows[i], cell);
		for (size_t c = 0; c < NCOL; c++)
			if (strlen(cell[c]) > wd[c])
				wd[c] = strlen(cell[c]);
		for (size_t k = 0; k < nk; k++) {
			nd_by_text(rows[i].key, rows[i].keylen, k, &txt);
			if (nd_text_width(txt.p, txt.len) > kw[k])
				kw[k] = nd_text_width(txt.p, txt.len);
		}
		if (rows[i].peak != 1 || rows[i].peak_tflops !=
		    first->peak_tflops || rows[i].peak_gbps != first->peak_gbps)
			uniform = 0;
	}
	nd_by_table_head(by, b, head, wd, NCOL, kw);
	for (size_t i = 0; i < n; i++) {
		cells_of(&rows[i], cell);
		for (size_t c = 0; c < NCOL; c++)
			nd_buf_addf(b, "%s%*s", c ? "  " : "", (int)wd[c],
			    cell[c]);
		for (size_t k = 0; k < nk; k++) {
			nd_by_text(rows[i].key, rows[i].keylen, k, &txt);
			nd_by_table_key(b, txt.p, txt.len, k, nk, kw);
		}
		nd_by_table_eol(b);
		nd_out_commit(o);
	}
	nd_fmt_dur(d1, sizeof d1, sum->flops_ns, 0);
	nd_fmt_dur(d2, sizeof d2, sum->total_ns, 0);
	nd_buf_addf(b, "\n%llu of %llu spans (%s of %s) on %s timelines "
	    "had flops; %zu groups, %zu shown\n",
	    (unsigned long long)sum->flops_spans,
	    (unsigned long long)sum->spans, d1, d2, sum->timelines,
	    sum->rows, n);
	if (uniform) {
		nd_buf_addf(b, "peak %g TFLOP/s, %g GB/s", first->peak_tflops,
		    first->peak_gbps);
		if (first->peak_tflops > 0 && first->peak_gbps > 0)
			nd_buf_addf(b, ", ridge %.1f FLOP/B",
			    first->peak_tflops * 1e3 / first->peak_gbps);
		if (first->device_name != NULL)
			nd_buf_addf(b, " (%s)", first->device_name);
		nd_buf_addc(b, '\n');
	} else if (n > 0)
		nd_buf_adds(b, "no single device peak: see --device, "
		    "--peak-tflops and --peak-gbps\n");
	nd_out_commit(o);
	nd_buf_free(&txt);
	free(kw);
}

static void
csv_dbl(nd_buf *b, int has, double v)
{
	nd_buf_addc(b, ',');
	if (has)
		nd_json_put_double(b, v);
}

static void
write_csv(nd_out *o, const nd_by *by, const nd_roofline_row *rows, size_t n)
{
	nd_buf *b = nd_out_buf(o);
	size_t nk = nd_by_count(by);

	for (size_t k = 0; k < nk; k++) {
		const char *name = nd_by_name(by, k, NULL);

		nd_csv_field(b, name, strlen(name));
		nd_buf_addc(b, ',');
	}
	nd_buf_adds(b, "count,total_ns,flops_count,flops_ns,flops,bytes,"
	    "tflops,gbps,intensity,device_name,peak_tflops,peak_gbps,"
	    "pct_of_peak,ridge,bound,attainable_tflops,pct_of_roofline\n");
	for (size_t i = 0; i < n; i++) {
		const nd_roofline_row *x = &rows[i];
		nd_roofline_fig f;

		nd_roofline_figures(x, &f);
		for (size_t k = 0; k < nk; k++) {
			int tag;
			const char *s;
			size_t len;

			if (nd_by_field(x->key, x->keylen, k, &tag, &s, &len))
				nd_csv_field(b, s, len);
			nd_buf_addc(b, ',');
		}
		nd_buf_addf(b, "%llu,%lld,%llu,%lld",
		    (unsigned long long)x->count, (long long)x->total_ns,
		    (unsigned long long)x->flops_count,
		    (long long)x->flops_ns);
		csv_dbl(b, 1, x->flops);
		csv_dbl(b, x->bytes_count == x->flops_count, x->bytes);
		csv_dbl(b, f.has_tflops, f.tflops);
		csv_dbl(b, f.has_bytes, f.gbps);
		csv_dbl(b, f.has_bytes, f.intensity);
		nd_buf_addc(b, ',');
		if (x->device_name != NULL)
			nd_csv_field(b, x->device_name, strlen(x->device_name));
		csv_dbl(b, x->peak == 1 && x->peak_tflops > 0, x->peak_tflops);
		csv_dbl(b, x->peak == 1 && x->peak_gbps > 0, x->peak_gbps);
		csv_dbl(b, f.has_tpeak, f.pct_of_peak);
		csv_dbl(b, f.has_roof, f.ridge);
		nd_buf_addc(b, ',');
		if (f.has_roof)
			nd_buf_adds(b, f.bound);
		csv_dbl(b, f.has_roof, f.attainable);
		csv_dbl(b, f.has_roof, f.pct);
		nd_buf_addc(b, '\n');
		nd_out_commit(o);
	}
}

int
main(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "top", required_argument, NULL, 'k' },
		{ "by", required_argument, NULL, OPT_BY },
		{ "timelines", required_argument, NULL, OPT_TIMELINES },
		{ "device", required_argument, NULL, OPT_DEVICE },
		{ "peak-tflops", required_argument, NULL, OPT_PEAK_TFLOPS },
		{ "peak-gbps", required_argument, NULL, OPT_PEAK_GBPS },
		{ "print-peaks", no_argument, NULL, OPT_PRINT_PEAKS },
		{ "table", no_argument, NULL, OPT_TABLE },
		{ "csv", no_argument, NULL, OPT_CSV },
		{ "output", required_argument, NULL, 'o' },
		ND_CLI_STD_LONGOPTS,
		{ NULL, 0, NULL, 0 }
	};
	nd_roofline_opts ro;
	const char *out = NULL, *byspec = NULL, *bad;
	int c, fmt = FMT_JSON, nfmt = 0, peaks = 0;
	int64_t k = 20;
	nd_by *by;
	nd_roofline *roof;
	nd_drive_opts dopts = { 1, 0 };
	nd_drive_cb dcb;
	nd_drive_res dres;
	const nd_roofline_row *rows;
	nd_roofline_sum sum;
	size_t n;
	nd_out *o;

	nd_init(argv[0]);
	memset(&ro, 0, sizeof ro);
	ro.timelines = ND_ROOF_AUTO;
	while ((c = getopt_long(argc, argv, "b:hk:o:p:V", opts, NULL)) != -1)
		switch (c) {
		case 'h':
			nd_cli_help(usage_text);
		case 'k':
			k = nd_cli_int("-k", optarg, 0, 100000000);
			break;
		case 'o':
			out = optarg;
			break;
		case 'V':
			nd_cli_version();
		case 'b':
		case OPT_BY:
			byspec = optarg;
			break;
		case OPT_TIMELINES:
			if (strcmp(optarg, "auto") == 0)
				ro.timelines = ND_ROOF_AUTO;
			else if ((ro.timelines = nd_scan_timelines(optarg)) < 0)
				nd_die(ND_EXIT_ERROR, "invalid value for "
				    "--timelines: '%s' (auto, device, host or "
				    "all)", optarg);
			break;
		case OPT_DEVICE:
			if (optarg[0] == '\0')
				nd_die(ND_EXIT_ERROR, "invalid value for "
				    "--device: ''");
			ro.device = optarg;
			break;
		case 'p':
		case OPT_PEAK_TFLOPS:
			ro.peak_tflops = nd_cli_double("--peak-tflops", optarg,
			    1e-9, 1e9);
			break;
		case OPT_PEAK_GBPS:
			ro.peak_gbps = nd_cli_double("--peak-gbps", optarg,
			    1e-9, 1e9);
			break;
		case OPT_PRINT_PEAKS:
			peaks = 1;
			break;
		case OPT_TABLE:
			fmt = FMT_TABLE;
			nfmt++;
			break;
		case OPT_CSV:
			fmt = FMT_CSV;
			nfmt++;
			break;
		default:
			nd_cli_usage(usage_text);
		}
	argc -= optind;
	argv += optind;
	if (nfmt > 1)
		nd_die(ND_EXIT_ERROR, "--table and --csv exclude each other");
	if (peaks) {
		o = nd_out_open(out);
		nd_peak_print(nd_out_buf(o));
		nd_out_commit(o);
		nd_out_close(o);
		return ND_EXIT_OK;
	}
	nd_peak_check_device(ro.device, ro.peak_tflops, ro.peak_gbps,
	    "--print-peaks");
	by = nd_by_parse(byspec != NULL ? byspec : "name", row_keys,
	    sizeof row_keys / sizeof *row_keys, &bad);
	if (by == NULL) {
		if (bad[0] == '\0')
			nd_die(ND_EXIT_ERROR, "--by: no key in '%s'", byspec);
		nd_die(ND_EXIT_ERROR, "--by %s: '%s' is an output key of "
		    "roofline rows; it cannot be a group key", byspec, bad);
	}
	roof = nd_roofline_new(&ro, by);
	dcb.ctx = roof;
	dcb.record = roof_record;
	dcb.end = roof_end;
	nd_drive(argv, argc, &dopts, &dcb, &dres);
	if (byspec != NULL)	/* the default key is no typo */
		nd_by_check(by, "--by");
	n = nd_roofline_finish(roof, &rows, &sum);
	if (k > 0 && (size_t)k < n)
		n = (size_t)k;
	o = nd_out_open(out);
	if (fmt == FMT_TABLE)
		write_table(o, by, rows, n, &sum);
	else if (fmt == FMT_CSV)
		write_csv(o, by, rows, n);
	else
		write_json(o, by, rows, n, &sum);
	nd_out_close(o);
	nd_roofline_free(roof);
	nd_by_free(by);
	return ND_EXIT_OK;
}
