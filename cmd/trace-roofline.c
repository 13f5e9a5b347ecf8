/*
 * trace-roofline: achieved TFLOP/s, GB/s and arithmetic intensity of the
 * ops of a stream against the roofline of their device: compute- or
 * memory-bound, and how close to the roof.  See trace-roofline(1); the
 * engine is lib/engines/nd_roofline (and lib/engines/nd_peak, lib/engines/nd_by).
 */
#include "nd_by.h"
#include "nd_cli.h"
#include "nd_event.h"
#include "nd_json.h"
#include "nd_out.h"
#include "nd_peak.h"
#include "nd_roofline.h"
#include "nd_run.h"
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

static int
print_peaks(const char *out)
{
	nd_out *o = nd_out_open(out);

	nd_peak_print(nd_out_buf(o));
	nd_out_commit(o);
	nd_out_close(o);
	return ND_EXIT_OK;
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
	const char *out = NULL, *byspec = NULL;
	int c, fmt = ND_ROOF_JSON, nfmt = 0, peaks = 0;
	int64_t k = 20;
	nd_by *by;
	nd_roofline *roof;
	nd_engine e, *ep = &e;
	/* durations only, no nesting: one reading in any order */
	nd_run_mode mode = { 0, 1, 0, NULL };

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
			fmt = ND_ROOF_TABLE;
			nfmt++;
			break;
		case OPT_CSV:
			fmt = ND_ROOF_CSV;
			nfmt++;
			break;
		default:
			nd_cli_usage(usage_text);
		}
	argc -= optind;
	argv += optind;
	if (nfmt > 1)
		nd_die(ND_EXIT_ERROR, "--table and --csv exclude each other");
	if (peaks)
		return print_peaks(out);
	nd_peak_check_device(ro.device, ro.peak_tflops, ro.peak_gbps,
	    "--print-peaks");
	by = nd_roofline_by(byspec);
	roof = nd_roofline_new(&ro, by);
	/* the default key is no typo */
	e = nd_roofline_engine(roof, fmt, (int)k, byspec != NULL);
	mode.out = out;
	nd_run(&ep, 1, argv, argc, &mode, NULL);
	nd_roofline_free(roof);
	nd_by_free(by);
	return ND_EXIT_OK;
}
