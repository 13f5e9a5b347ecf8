/*
 * gen-stream: write a reproducible ndtrace stream of N spans with realistic
 * keys and args (TPU-like XLA ops on 4 devices plus host spans), for the
 * benchmarks.  Same seed, same bytes.
 *
 *   gen-stream [-R] [-n spans] [-s seed] [-d devices]
 *
 * By default every span draws its duration (200 ns to 50 us) and its scope
 * at random, the hardest case for aggregations: about 48,000 distinct
 * (name, scope) groups whose histograms span eight octaves.  -R writes what
 * an XLA program looks like instead: each of the 6,000 op names has one
 * scope and one base duration (log-uniform, 1 us to 500 us) with +-5 %
 * jitter, as the same HLO op does in every step, and steps have 5,000 ops
 * a device (the default writes ten steps whatever the length).
 */
#include "nd_buf.h"
#include "nd_event.h"
#include "nd_json.h"
#include "nd_out.h"
#include "nd_util.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static uint64_t rng;

static uint32_t
rnd(uint32_t n)
{
	/* xorshift64*: small, fast, reproducible everywhere */
	rng ^= rng >> 12;
	rng ^= rng << 25;
	rng ^= rng >> 27;
	return (uint32_t)((rng * 2685821657736338717ULL) >> 33) % n;
}

static const char *const ops[] = {
	"fusion", "convolution", "dot", "all-reduce", "copy", "reduce",
	"all-gather", "reduce-scatter", "add", "multiply", "transpose",
	"bitcast", "custom-call", "collective-permute", "convert"
};
static const char *const fams[] = {
	"fusion", "convolution", "matmul", "all-reduce", "copy", "reduce",
	"all-gather", "reduce-scatter", "elementwise", "elementwise",
	"transpose", "other", "other", "collective-permute", "convert"
};
static const char *const scopes[] = {
	"train_step/forward/block_0/attention",
	"train_step/forward/block_0/mlp",
	"train_step/forward/block_1/attention",
	"train_step/forward/block_1/mlp",
	"train_step/backward/block_1/mlp",
	"train_step/backward/block_0/attention",
	"train_step/optimizer",
	"train_step/loss"
};

int
main(int argc, char **argv)
{
	long n = 1000000, devices = 4;
	int c, real = 0;
	nd_out *o;
	nd_buf *b;
	int64_t *ts;

	nd_init(argv[0]);
	rng = 42;
	while ((c = getopt(argc, argv, "Rn:s:d:")) != -1)
		switch (c) {
		case 'R': real = 1; break;
		case 'n': n = atol(optarg); break;
		case 's': rng = (uint64_t)atoll(optarg) * 2654435761ULL + 1; break;
		case 'd': devices = atol(optarg); break;
		default:
			fprintf(stderr, "usage: gen-stream [-R] [-n spans] [-s seed] [-d devices]\n");
			return 2;
		}
	if (devices < 1 || devices > 64 || n < 0)
		nd_die(2, "bad arguments");
	o = nd_out_open(NULL);
	b = nd_out_buf(o);
	nd_meta_write(b, "bench.xplane.pb", "xplane", 1700000000000000000LL,
	    "bench-host", 1, 0);
	ts = nd_xcalloc((size_t)devices, sizeof *ts);
	for (long i = 0; i < n; i++) {
		long d = i % devices;
		uint32_t k = rnd(sizeof ops / sizeof ops[0]);
		uint32_t inst = 0;
		int64_t dur;
		const char *scope = NULL;
		nd_jw w;

		/* The default draws in its original order (same bytes as
		 * before -R existed). */
		if (real) {
			/* a fixed scope and base duration per op name */
			uint64_t hsh;
			double base;

			inst = rnd(400);
			hsh = ((uint64_t)k * 400 + inst + 1) *
			    0x9e3779b97f4a7c15ULL;
			base = 1000.0 * pow(500.0,
			    (double)(hsh >> 11) / 9007199254740992.0);
			scope = scopes[(hsh >> 3) % 8];
			dur = (int64_t)(base * (0.95 + rnd(1001) / 10000.0));
		} else
			dur = 200 + rnd(50000);
		nd_jw_init(&w, b);
		nd_jw_obj(&w);
		nd_jw_kcstr(&w, "type", "span");
		nd_jw_kint(&w, "ts_ns", ts[d]);
		nd_jw_kint(&w, "dur_ns", dur);
		ts[d] += dur + (rnd(10) == 0 ? rnd(20000) : 0);
		nd_jw_key(&w, "name");
		{
			char nm[48];
			snprintf(nm, sizeof nm, "%s.%u", ops[k],
			    real ? inst : rnd(400));
			nd_jw_cstr(&w, nm);
		}
		nd_jw_kint(&w, "pid", d + 1);
		nd_jw_kint(&w, "tid", 3);
		{
			char pn[32], dn[16];
			snprintf(pn, sizeof pn, "/device:TPU:%ld", d);
			snprintf(dn, sizeof dn, "TPU:%ld", d);
			nd_jw_kcstr(&w, "process", pn);
			nd_jw_kcstr(&w, "thread", "XLA Ops");
			nd_jw_kcstr(&w, "device", dn);
		}
		nd_jw_kint(&w, "rank", 0);
		/* -R: steps of 5,000 ops a device, as a training step runs
		 * the same program each time; else ten steps whatever n */
		nd_jw_kint(&w, "step", real ? 10 + i / (devices * 5000) :
		    10 + i / (n / 10 + 1));
		nd_jw_kcstr(&w, "cat", "xla_op");
		nd_jw_kcstr(&w, "class", k == 3 || k == 6 || k == 7 || k == 13 ?
		    "communication" : k == 4 ? "memory" : "compute");
		nd_jw_kcstr(&w, "family", fams[k]);
		nd_jw_kcstr(&w, "scope", real ? scope : scopes[rnd(8)]);
		nd_jw_key(&w, "args");
		nd_jw_obj(&w);
		nd_jw_kint(&w, "flops", (int64_t)rnd(1u << 30) * 64);
		nd_jw_kint(&w, "bytes_accessed", (int64_t)rnd(1u << 28));
		nd_jw_kcstr(&w, "long_name", "%fusion = bf16[8,128,1024]{2,1,0} fusion(%p0, %p1), kind=kLoop");
		nd_jw_kcstr(&w, "tf_op", "jit(train_step)/jit(main)/transformer/block_0/attention/dot_general");
		nd_jw_obj_end(&w);
		nd_jw_obj_end(&w);
		nd_buf_addc(b, '\n');
		nd_out_commit(o);
	}
	nd_buf_adds(b, "{\"type\":\"end\",\"events\":");
	nd_json_put_i64(b, n);
	nd_buf_adds(b, ",\"spans\":");
	nd_json_put_i64(b, n);
	nd_buf_adds(b, ",\"skipped\":{},\"warnings\":[]}\n");
	free(ts);
	nd_out_close(o);
	return 0;
}
