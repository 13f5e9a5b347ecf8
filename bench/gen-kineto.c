/*
 * gen-kineto: write a realistic PyTorch profiler (Kineto) trace, seeded and
 * reproducible, for benchmarks and tests of chrome2ndjson.
 *
 *   gen-kineto [-jm] [-e events] [-r rank] [-s seed] [-o file]
 *
 * The layout and the event mix follow real Kineto output (see the
 * fixtures under tests/fixtures/chrome): the native writer's
 * formatting (one member group per line, "ts"/"dur" in microseconds with
 * three decimals, baseTimeNanoseconds after traceEvents), deviceProperties
 * and distributedInfo before it, and Kineto's order of events: the CPU ops
 * of each thread in start order first, then the GPU activities, each
 * runtime call followed by its ac2g flow start, each kernel by its flow
 * end; metadata at the end.  A training step is ProfilerStep#N holding a
 * forward pass (per layer: layer_norm, linear/addmm, gelu, linear, add,
 * with [memory] instants), the backward pass on the autograd thread and an
 * AdamW step; every launch is a cudaLaunchKernel whose correlation id names
 * its kernel on stream 7, with an occasional memcpy/memset.
 *
 * The simulation runs once per output section with the same seed, so the
 * generator holds nothing in memory.
 *
 * -m writes the same trace minified (no whitespace outside strings, as
 * json.dump(separators=(",", ":")) would).  -j writes a JAX-style trace
 * instead (the profiler's trace.json through XProf): XLA ops of a compiled
 * program of 2,000 distinct HLO instructions on 4 devices, each with a long
 * "long_name" (the HLO text with its metadata, 300 to 400 bytes), flops
 * and bytes; an "XLA Modules" span per step and device, a PjitFunction
 * span per step on the host.  Every timeline is in time order (the
 * ordered path of chrome2ndjson(1)).
 */
#include "nd_cli.h"
#include "nd_out.h"
#include "nd_util.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char usage_text[] =
"usage: gen-kineto [-hjmV] [-e events] [-o file] [-r rank] [-s seed]\n"
"  -j  a JAX-style trace (XLA ops with long long_name args)\n"
"  -m  minified JSON\n";

#define PID 48213
#define TID_MAIN 48213
#define TID_BWD 48391
#define GPU_TID 7
#define LAYERS 12

enum { SEC_MAIN, SEC_BWD, SEC_MEM, SEC_GPU, NSEC };

static FILE *out;
static uint64_t rng;
static int section;
static uint64_t nev, target, first_event;
static int64_t cpu_t[2], gpu_t;
static long ext_id, corr_id, ev_idx;
static int stepno;

static uint64_t
rnd(void)
{
	rng ^= rng << 13;
	rng ^= rng >> 7;
	rng ^= rng << 17;
	return rng;
}

static int64_t
jitter(int64_t base)
{
	return base + (int64_t)(rnd() % (uint64_t)(base / 2 + 1));
}

static void
sep(void)
{
	if (!first_event)
		fputs(",\n", out);
	first_event = 0;
}

static void
put_us(const char *key, int64_t ns)
{
	fprintf(out, "\"%s\": %lld.%03lld", key, (long long)(ns / 1000),
	    (long long)(ns % 1000));
}

static void
emit_x(int sec, const char *cat, const char *name, int pid, int tid,
    int64_t ts, int64_t dur, const char *args)
{
	nev++;
	if (sec != section)
		return;
	sep();
	fprintf(out, "  {\n    \"ph\": \"X\", \"cat\": \"%s\", \"name\": \"%s\", "
	    "\"pid\": %d, \"tid\": %d,\n    ", cat, name, pid, tid);
	put_us("ts", ts);
	fputs(", ", out);
	put_us("dur", dur);
	fprintf(out, ",\n    \"args\": {\n      %s\n    }\n  }", args);
}

static void
emit_flow(char ph, int pid, int tid, int64_t ts, long id)
{
	nev++;
	if (section != SEC_GPU)
		return;
	sep();
	fprintf(out, "  {\n    \"ph\": \"%c\", \"id\": %ld, \"pid\": %d, "
	    "\"tid\": %d, ", ph, id, pid, tid);
	put_us("ts", ts);
	fprintf(out, ",\n    \"cat\": \"ac2g\", \"name\": \"ac2g\"%s\n  }",
	    ph == 'f' ? ", \"bp\": \"e\"" : "");
}

static const char *const kernels[] = {
	"void at::native::(anonymous namespace)::vectorized_layer_norm_kernel<float, float>(int, float, float const*, float const*, float const*, float*, float*, float*)",
	"sm80_xmma_gemm_f32f32_f32f32_f32_tn_n_tilesize128x128x16_stage4_warpsize2x2x1_ffma_aligna4_alignc4_execute_kernel__5x_cublas",
	"void at::native::vectorized_elementwise_kernel<4, at::native::GeluCUDAKernelImpl(at::TensorIteratorBase&, at::native::GeluType)::{lambda()#2}::operator()() const::{lambda()#2}::operator()() const::{lambda(float)#1}, at::detail::Array<char*, 2> >(int, at::native::GeluCUDAKernelImpl(at::TensorIteratorBase&, at::native::GeluType)::{lambda()#2}::operator()() const::{lambda()#2}::operator()() const::{lambda(float)#1}, at::detail::Array<char*, 2>)",
	"ampere_sgemm_128x64_nn",
	"void at::native::vectorized_elementwise_kernel<4, at::native::CUDAFunctor_add<float>, at::detail::Array<char*, 3> >(int, at::native::CUDAFunctor_add<float>, at::detail::Array<char*, 3>)",
	"void at::native::(anonymous namespace)::multi_tensor_apply_kernel<at::native::(anonymous namespace)::TensorListMetadata<4>, at::native::(anonymous namespace)::FusedAdamMathFunctor<float, 4, (at::native::ADAM_MODE)1, false>, double*, double, double, double, double, double, bool, double*, double*>(at::native::(anonymous namespace)::TensorListMetadata<4>, at::native::(anonymous namespace)::FusedAdamMathFunctor<float, 4, (at::native::ADAM_MODE)1, false>, double*, double, double, double, double, double, bool, double*, double*)",
	"ncclDevKernel_AllReduce_Sum_f32_RING_LL(ncclDevComm*, unsigned long, ncclWork*)",
};

/* A cudaLaunchKernel at ts on a CPU thread (tid), its kernel on the GPU. */
static int64_t
launch(int tid, int64_t ts, int k, int64_t kdur)
{
	char args[1024];
	int64_t rdur = jitter(4000), kts;
	long c = ++corr_id;

	snprintf(args, sizeof args, "\"External id\": %ld, \"cbid\": 211, "
	    "\"correlation\": %ld", ext_id, c);
	emit_x(SEC_GPU, "cuda_runtime", "cudaLaunchKernel", PID, tid, ts,
	    rdur, args);
	emit_flow('s', PID, tid, ts, c);
	kts = ts + jitter(6000);
	if (kts < gpu_t)
		kts = gpu_t + 1000;
	gpu_t = kts + kdur;
	snprintf(args, sizeof args, "\"queued\": 0, \"device\": 0, "
	    "\"context\": 1,      \"stream\": 7, \"correlation\": %ld, "
	    "\"External id\": %ld,      \"registers per thread\": %d,      "
	    "\"shared memory\": %d,      \"blocks per SM\": %.6f,      "
	    "\"warps per SM\": %.6f,      \"grid\": [%d, 1, 1],      "
	    "\"block\": [256, 1, 1],      \"est. achieved occupancy %%\": %d",
	    c, ext_id, 32 + (int)(rnd() % 96), (int)(rnd() % 4) * 16384,
	    (double)(rnd() % 100000) / 1000.0,
	    (double)(rnd() % 800000) / 1000.0, 1 + (int)(rnd() % 4096),
	    (int)(rnd() % 100));
	emit_x(SEC_GPU, "kernel", kernels[k], 0, GPU_TID, kts, kdur, args);
	emit_flow('f', 0, GPU_TID, kts, c);
	return rdur;
}

/* An op with one launch; returns its end. */
static int64_t
op(int tid, int64_t ts, const char *name, const char *child, int k,
    int64_t kdur)
{
	char args[1024];
	int sec = tid == TID_MAIN ? SEC_MAIN : SEC_BWD;
	int64_t t = ts + jitter(3000), end, cts = 0, cend = 0;
	long id = ++ext_id, cid = 0;

	if (child != NULL) {
		cid = ++ext_id;
		cts = t;
		t += jitter(2000);
	}
	t += launch(tid, t, k, kdur);
	if (child != NULL) {
		cend = t + jitter(1500);
		t = cend;
	}
	end = t + jitter(2000);
	snprintf(args, sizeof args, "\"External id\": %ld, \"Record function "
	    "id\": 0, \"Concrete Inputs\": [\"\", \"\", \"\"], \"Input type\": "
	    "[\"float\", \"float\", \"float\"], \"Input Strides\": [[1024, 1], "
	    "[1024, 1], [1]], \"Input Dims\": [[64, 1024], [1024, 1024], "
	    "[1024]], \"Ev Idx\": %ld", id, ev_idx++);
	emit_x(sec, "cpu_op", name, PID, tid, ts, end - ts, args);
	if (child != NULL) {
		snprintf(args, sizeof args, "\"External id\": %ld, \"Record "
		    "function id\": 0, \"Input Dims\": [[64, 1024], "
		    "[1024, 1024]], \"Ev Idx\": %ld", cid, ev_idx++);
		emit_x(sec, "cpu_op", child, PID, tid, cts, cend - cts, args);
	}
	return end;
}

static void
memory(int tid, int64_t ts, long bytes)
{
	nev++;
	if (section != SEC_MEM)
		return;
	sep();
	fprintf(out, "  {\n    \"ph\": \"i\", \"cat\": \"cpu_instant_event\", "
	    "\"s\": \"t\", \"name\": \"[memory]\",\n    \"pid\": %d, "
	    "\"tid\": %d,\n    ", PID, tid);
	put_us("ts", ts);
	fprintf(out, ",\n    \"args\": {\n      \"Total Reserved\": 2147483648, "
	    "\"Total Allocated\": %ld, \"Bytes\": %ld, \"Addr\": %llu, "
	    "\"Device Id\": 0, \"Device Type\": 1, \"Ev Idx\": %ld\n    }\n  }",
	    1000000000 + bytes, bytes, 139000000000000ULL +
	    (unsigned long long)(rnd() % 1000000) * 512, ev_idx++);
}

static void
annotation(int tid, const char *name, int64_t ts, int64_t end)
{
	char args[128];
	int sec = tid == TID_MAIN ? SEC_MAIN : SEC_BWD;

	snprintf(args, sizeof args, "\"External id\": %ld, \"Record function "
	    "id\": 0, \"Ev Idx\": %ld", ++ext_id, ev_idx++);
	emit_x(sec, "user_annotation", name, PID, tid, ts, end - ts, args);
}

/* One training step.  Ops are written in start order (parent, then its
 * child); a user annotation is written when it ends, after the ops it
 * holds, so each CPU thread is a few ordered runs, as in real files. */
static void
step(void)
{
	int64_t t0 = cpu_t[0], t = t0 + 20000, fw0, fwe, bt, opt0;
	char name[64];

	fw0 = t;
	for (int l = 0; l < LAYERS; l++) {
		int64_t l0 = t;

		snprintf(name, sizeof name, "model.layers.%d", l);
		t = op(TID_MAIN, t + 1000, "aten::layer_norm",
		    "aten::native_layer_norm", 0, jitter(20000));
		memory(TID_MAIN, t, 262144);
		t = op(TID_MAIN, t + 1000, "aten::linear", "aten::addmm", 1,
		    jitter(90000));
		memory(TID_MAIN, t, 1048576);
		t = op(TID_MAIN, t + 1000, "aten::gelu", NULL, 2, jitter(15000));
		t = op(TID_MAIN, t + 1000, "aten::linear", "aten::addmm", 3,
		    jitter(90000));
		t = op(TID_MAIN, t + 1000, "aten::add", NULL, 4, jitter(8000));
		t += 2000;
		annotation(TID_MAIN, name, l0, t);
	}
	fwe = t + 1000;
	annotation(TID_MAIN, "forward", fw0, fwe);
	/* backward on the autograd thread */
	bt = fwe + 5000 > cpu_t[1] ? fwe + 5000 : cpu_t[1];
	for (int l = LAYERS - 1; l >= 0; l--) {
		int64_t e0 = bt;

		bt = op(TID_BWD, bt + 1000, "AddmmBackward0", "aten::mm", 1,
		    jitter(90000));
		bt = op(TID_BWD, bt + 500, "AddmmBackward0", "aten::mm", 3,
		    jitter(90000));
		bt = op(TID_BWD, bt + 500, "GeluBackward0",
		    "aten::gelu_backward", 2, jitter(15000));
		bt = op(TID_BWD, bt + 500, "NativeLayerNormBackward0",
		    "aten::native_layer_norm_backward", 0, jitter(30000));
		bt += 1000;
		emit_x(SEC_BWD, "cpu_op", "autograd::engine::evaluate_function: "
		    "AddmmBackward0", PID, TID_BWD, e0, bt - e0, "\"External "
		    "id\": 0, \"Sequence number\": 1, \"Fwd thread id\": 1");
	}
	cpu_t[1] = bt + 1000;
	t = bt + 2000;
	if (stepno % 4 == 0)
		t = op(TID_MAIN, t, "c10d::allreduce_", "nccl:all_reduce", 6,
		    jitter(400000));
	opt0 = t;
	for (int g = 0; g < 4; g++)
		t = op(TID_MAIN, t + 1000, "aten::_fused_adamw_", NULL, 5,
		    jitter(60000));
	t += 2000;
	annotation(TID_MAIN, "Optimizer.step#AdamW.step", opt0, t);
	t += 5000;
	if (gpu_t > t)
		t = gpu_t + 10000;	/* synchronize at the end of the step */
	snprintf(name, sizeof name, "ProfilerStep#%d", stepno);
	annotation(TID_MAIN, name, t0, t);
	cpu_t[0] = t + 1000;
	stepno++;
}

static void
run(int sec, uint64_t seed)
{
	section = sec;
	rng = seed * 0x9e3779b97f4a7c15ULL + 1;
	nev = 0;
	cpu_t[0] = cpu_t[1] = 1000000;
	gpu_t = 0;
	ext_id = corr_id = ev_idx = 0;
	stepno = 1;
	while (nev < target)
		step();
}

/* -m: a stream that drops whitespace outside strings on its way to the
 * real output. */
typedef struct minify {
	FILE *to;
	int instr, esc;
} minify;

static ssize_t
minify_write(void *cookie, const char *p, size_t n)
{
	minify *m = cookie;

	for (size_t i = 0; i < n; i++) {
		char c = p[i];

		if (m->instr) {
			if (m->esc)
				m->esc = 0;
			else if (c == '\\')
				m->esc = 1;
			else if (c == '"')
				m->instr = 0;
		} else if (c == '"')
			m->instr = 1;
		else if (c == ' ' || c == '\n' || c == '\t')
			continue;
		if (putc(c, m->to) == EOF)
			return -1;
	}
	return (ssize_t)n;
}

/* ---- -j: a JAX-style trace ---- */

#define JAX_DEVICES 4
#define JAX_OPS 2000
#define JAX_HOST 100

static const char *const hlo_kinds[] = {
	"fusion", "convolution", "dot", "copy", "transpose", "reduce",
	"all-reduce", "custom-call", "broadcast", "select", "add", "multiply"
};

static const char *const jax_parts[] = {
	"attention/dot_general", "attention/softmax", "mlp/dot_general",
	"mlp/gelu", "layer_norm/reduce_sum", "layer_norm/rsqrt",
	"transpose(jvp(attention))/dot_general", "add_any", "convert_element_type"
};

static void
jax_op(int d, int i, int64_t ts, int64_t dur)
{
	const char *k = hlo_kinds[i % (int)(sizeof hlo_kinds /
	    sizeof hlo_kinds[0])];
	int blk = i / 80, line = 100 + (i * 37) % 900;

	fprintf(out, ",\n{\"pid\":%d,\"tid\":1,\"ts\":%lld.%03lld,"
	    "\"dur\":%lld.%03lld,\"ph\":\"X\",\"name\":\"%s.%d\",\"args\":{"
	    "\"long_name\":\"%%%s.%d = bf16[8,%d,4096]{2,1,0:T(8,128)(2,1)} "
	    "%s(bf16[8,%d,1024]{2,1,0:T(8,128)(2,1)} %%param.%d, "
	    "bf16[1024,4096]{1,0:T(8,128)(2,1)} %%get-tuple-element.%d), "
	    "kind=kOutput, calls=%%fused_computation.%d, metadata={op_name="
	    "\\\"jit(train_step)/jit(main)/transformer/block_%d/%s\\\" "
	    "source_file=\\\"/workspace/model/transformer.py\\\" "
	    "source_line=%d}\",\"hlo_module\":\"jit_train_step\","
	    "\"program_id\":\"7714423841372217641\",\"flops\":%llu,"
	    "\"bytes_accessed\":%llu}}",
	    d + 1, (long long)(ts / 1000), (long long)(ts % 1000),
	    (long long)(dur / 1000), (long long)(dur % 1000), k, i, k, i,
	    128 << (i % 4), k, 128 << (i % 4), i % 64, i + 1, i, blk,
	    jax_parts[i % (int)(sizeof jax_parts / sizeof jax_parts[0])],
	    line, (unsigned long long)(rnd() % 100000000000ULL),
	    (unsigned long long)(rnd() % 1000000000ULL));
}

static void
jax_span(int pid, int tid, const char *name, int64_t ts, int64_t dur)
{
	fprintf(out, ",\n{\"pid\":%d,\"tid\":%d,\"ts\":%lld.%03lld,"
	    "\"dur\":%lld.%03lld,\"ph\":\"X\",\"name\":\"%s\"}", pid, tid,
	    (long long)(ts / 1000), (long long)(ts % 1000),
	    (long long)(dur / 1000), (long long)(dur % 1000), name);
}

/* Steps until target events: per step the host span, then per device its
 * module span and its ops (durations drawn first: the module span comes
 * before its ops in the file). */
static void
jax_trace(uint64_t seed)
{
	static int64_t dur[JAX_OPS];
	int64_t t = 1000000;

	rng = seed * 0x9e3779b97f4a7c15ULL + 1;
	fputs("{\"displayTimeUnit\":\"ns\",\"metadata\":{\"highres-ticks\":"
	    "true},\"traceEvents\":[\n{\"pid\":100,\"name\":\"process_name\","
	    "\"ph\":\"M\",\"args\":{\"name\":\"/host:CPU\"}}", out);
	for (int d = 0; d < JAX_DEVICES; d++)
		fprintf(out, ",\n{\"pid\":%d,\"name\":\"process_name\",\"ph\":"
		    "\"M\",\"args\":{\"name\":\"/device:TPU:%d\"}},\n{\"pid\":%d,"
		    "\"tid\":1,\"name\":\"thread_name\",\"ph\":\"M\",\"args\":"
		    "{\"name\":\"XLA Ops\"}},\n{\"pid\":%d,\"tid\":2,\"name\":"
		    "\"thread_name\",\"ph\":\"M\",\"args\":{\"name\":"
		    "\"XLA Modules\"}}", d + 1, d, d + 1, d + 1);
	nev = 0;
	while (nev < target) {
		int64_t total = 0, end = t;

		jax_span(JAX_HOST, 1, "PjitFunction(train_step)", t, 150000);
		nev++;
		for (int d = 0; d < JAX_DEVICES && nev < target; d++) {
			int64_t ts = t + 200000 + 1000 * d;

			total = 0;
			for (int i = 0; i < JAX_OPS; i++)
				total += (dur[i] = jitter(5000)) + 500;
			jax_span(d + 1, 2, "jit_train_step(7714423841372217641)",
			    ts, total);
			nev++;
			for (int i = 0; i < JAX_OPS && nev < target; i++) {
				jax_op(d, i, ts, dur[i]);
				ts += dur[i] + 500;
				nev++;
			}
			if (ts > end)
				end = ts;
		}
		t = end + 100000;
	}
	fputs("\n]}\n", out);
}

int
main(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "events", required_argument, NULL, 'e' },
		{ "output", required_argument, NULL, 'o' },
		{ "rank", required_argument, NULL, 'r' },
		{ "seed", required_argument, NULL, 's' },
		ND_CLI_STD_LONGOPTS,
		{ NULL, 0, NULL, 0 }
	};
	int c, rank = 0, jax = 0;
	minify mz;
	FILE *real;
	uint64_t seed = 1;
	const char *path = NULL;
	nd_out *o;

	nd_init(argv[0]);
	target = 1000000;
	memset(&mz, 0, sizeof mz);
	while ((c = getopt_long(argc, argv, "e:hjmo:r:s:V", opts, NULL)) != -1)
		switch (c) {
		case 'e':
			target = (uint64_t)nd_cli_int("-e", optarg, 1, INT64_MAX);
			break;
		case 'h':
			nd_cli_help(usage_text);
		case 'j':
			jax = 1;
			break;
		case 'm':
			mz.to = stdout;	/* set below */
			break;
		case 'o':
			path = optarg;
			break;
		case 'r':
			rank = (int)nd_cli_int("-r", optarg, 0, 1 << 20);
			break;
		case 's':
			seed = (uint64_t)nd_cli_int("-s", optarg, 0, INT64_MAX);
			break;
		case 'V':
			nd_cli_version();
		default:
			nd_cli_usage(usage_text);
		}
	/* Through nd_out: -o FILE is replaced atomically like every output. */
	o = nd_out_open(path);
	out = real = nd_out_stdio(o);
	if (mz.to != NULL) {
		static const cookie_io_functions_t io = { NULL, minify_write,
		    NULL, NULL };

		mz.to = real;
		if ((out = fopencookie(&mz, "w", io)) == NULL)
			nd_die_errno(ND_EXIT_ERROR, "cannot open a stream");
	}
	if (jax) {
		jax_trace(seed);
		goto done;
	}
	fputs("\n  {\n    \"schemaVersion\": 1,\n    \"deviceProperties\": [\n"
	    "    {\n      \"id\": 0, \"name\": \"NVIDIA A100-SXM4-80GB\", "
	    "\"totalGlobalMem\": 85031714816,\n      \"computeMajor\": 8, "
	    "\"computeMinor\": 0,\n      \"maxThreadsPerBlock\": 1024, "
	    "\"maxThreadsPerMultiprocessor\": 2048,\n      \"regsPerBlock\": "
	    "65536, \"warpSize\": 32,\n      \"sharedMemPerBlock\": 49152, "
	    "\"numSms\": 108\n    }\n  ],\n", out);
	fprintf(out, "  \"distributedInfo\": {\"backend\": \"nccl\", \"rank\": "
	    "%d, \"world_size\": 8, \"pg_count\": 1},\n  \"traceEvents\": [\n",
	    rank);
	first_event = 1;
	for (int sec = 0; sec < NSEC; sec++)
		run(sec, seed);
	sep();
	fprintf(out, "  {\n    \"name\": \"process_name\", \"ph\": \"M\", "
	    "\"ts\": 1000.000, \"pid\": %d, \"tid\": 0,\n    \"args\": {\n"
	    "      \"name\": \"python3\"\n    }\n  },\n", PID);
	fprintf(out, "  {\n    \"name\": \"process_labels\", \"ph\": \"M\", "
	    "\"ts\": 1000.000, \"pid\": %d, \"tid\": 0,\n    \"args\": {\n"
	    "      \"labels\": \"CPU\"\n    }\n  },\n", PID);
	fputs("  {\n    \"name\": \"process_name\", \"ph\": \"M\", \"ts\": "
	    "1000.000, \"pid\": 0, \"tid\": 0,\n    \"args\": {\n      \"name\": "
	    "\"python3\"\n    }\n  },\n", out);
	fputs("  {\n    \"name\": \"process_labels\", \"ph\": \"M\", \"ts\": "
	    "1000.000, \"pid\": 0, \"tid\": 0,\n    \"args\": {\n      "
	    "\"labels\": \"GPU 0\"\n    }\n  },\n", out);
	fprintf(out, "  {\n    \"name\": \"thread_name\", \"ph\": \"M\", \"ts\": "
	    "1000.000, \"pid\": %d, \"tid\": %d,\n    \"args\": {\n      "
	    "\"name\": \"thread %d (python3)\"\n    }\n  },\n", PID, TID_MAIN,
	    TID_MAIN);
	fprintf(out, "  {\n    \"name\": \"thread_name\", \"ph\": \"M\", \"ts\": "
	    "1000.000, \"pid\": %d, \"tid\": %d,\n    \"args\": {\n      "
	    "\"name\": \"thread %d (pt_autograd_0)\"\n    }\n  },\n", PID,
	    TID_BWD, TID_BWD);
	fputs("  {\n    \"name\": \"thread_name\", \"ph\": \"M\", \"ts\": "
	    "1000.000, \"pid\": 0, \"tid\": 7,\n    \"args\": {\n      \"name\": "
	    "\"stream 7 \"\n    }\n  }\n  ],\n", out);
	fputs("  \"traceName\": \"gen-kineto.pt.trace.json\",\n  "
	    "\"displayTimeUnit\": \"ms\",\n  \"baseTimeNanoseconds\": "
	    "1727740000000000000\n}\n", out);
done:
	if ((out != real && fclose(out) != 0) || fclose(real) != 0)
		nd_die_errno(ND_EXIT_ERROR, "%s", path ? path : "<stdout>");
	nd_out_close(o);
	return 0;
}
