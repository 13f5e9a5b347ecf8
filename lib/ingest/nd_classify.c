/*
 * nd_classify: the rule table, its TSV form, and a cache of answers.
 *
 * Matching: rules are tried in order.  A rule matches when every pattern
 * column that is not "*" finds a match (nd_rx_exec, unanchored) in its field;
 * an absent field is matched as the empty string.  The first matching rule
 * that gives a class decides the class, and the first matching rule that
 * gives a family decides the family; a rule may give "*" for one of the two
 * and so decide only the other (this is how "aten::mm is a matmul" and
 * "everything with cat cpu_op is host work" are written once each instead
 * of once per combination).  What no rule decides is "other".
 *
 * Speed: profiles repeat a few thousand distinct ops millions of times, so
 * answers are cached per distinct (name, long_name, cat, process, thread)
 * and the regexes run once per distinct op.  The cache is bounded; when it
 * fills it is emptied and refilled (names that never repeat, such as
 * Python object addresses, cannot grow it without bound).  Below it, each
 * regex runs once per distinct value of its field (struct memo): one name
 * on many devices or threads is many ops but one test of each name
 * pattern, and the name patterns are most of the cost.
 */
#include "nd_buf.h"
#include "nd_classify.h"
#include "nd_hash.h"
#include "nd_launch.h"	/* ND_LAUNCH_API */
#include "nd_rx.h"
#include "nd_util.h"

#include <errno.h>
#include <regex.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { F_NAME, F_LONG, F_CAT, F_PROC, F_THREAD, NFIELD };
#define NCOL (2 + NFIELD)

static const char *const colname[NCOL] = {
	"class", "family", "name", "long_name", "cat", "process", "thread"
};

static const char *const classes[] = {
	"compute", "communication", "memory", "host", "stall", "other", NULL
};

/* Bounds of the answer cache (overridable to test the eviction path). */
#ifndef CACHE_MAX_ENTRIES
#define CACHE_MAX_ENTRIES ((size_t)1 << 20)
#endif
#ifndef CACHE_MAX_BYTES
#define CACHE_MAX_BYTES ((size_t)64 << 20)
#endif

struct rule {
	const char *cls;	/* a classes[] entry, or NULL for "*" */
	char *family;		/* NULL for "*" */
	char *pat[NFIELD];	/* NULL for "*" */
	regex_t re[NFIELD];
	char *comment;		/* comment lines just above the rule, or NULL */
};

struct centry {
	uint64_t hash;
	char *key;		/* the five fields, each followed by a NUL */
	size_t klen;
	const char *cls, *family;
};

/* Per field: each distinct value seen, and per value and rule the answer
 * of the rule's pattern for that field in 2 bits (0 not asked yet, 1
 * match, 2 no match).  About 60 bytes a value: a name that never repeats
 * costs little.  Emptied with the cache, its bytes counted in the
 * cache's. */
struct mval {
	uint64_t hash;
	uint32_t off, len;	/* in text */
};

struct memo {
	uint32_t *slot;		/* open addressing: value index + 1, 0 empty */
	size_t mask;
	struct mval *val;
	size_t n, cap;
	nd_buf text;
	uint8_t *res;		/* rowbytes per value */
	size_t capres;
};

struct cache {
	struct centry *tab;	/* open addressing; key == NULL: empty */
	size_t mask, n, bytes;
	struct memo memo[NFIELD];
};

struct nd_rules {
	struct rule *rules;
	size_t n, cap;
	struct cache *cache;	/* mutable behind a const nd_rules * */
};

#define R(c, f, n, l, k, p, t) \
	c "\t" f "\t" n "\t" l "\t" k "\t" p "\t" t

/*
 * The built-in table, in the TSV form nd_rules_load reads, so that
 * --print-rules prints exactly what is used and the parser checks it.
 * Regex backslashes are doubled for C.
 */
static const char *const builtin_rules[] = {
"# Python stack frames and GPU-timeline copies of user annotations repeat",
"# time that the ops under them already account for: decided first.",
R("host", "python", "*", "*", "^python_function$", "*", "*"),
R("other", "*", "*", "*", "^gpu_user_annotation$", "*", "*"),
"",
"# Lines that XProf derives from other lines (modules, steps, framework",
"# scopes): their time is already counted by the ops and kernels below, so",
"# they are containers (class other), never compute.  TPU waits first.",
R("stall", "sync", "^(dependency-wait|barrier-cores)$", "*", "*", "*", "*"),
R("other", "module", "*", "*", "*", "^/device:", "^XLA Modules$"),
R("other", "step", "*", "*", "*", "^/device:", "^Steps$"),
R("other", "scope", "*", "*", "*", "^/device:",
    "^(Framework (Name Scope|Ops)|TensorFlow (Name Scope|Ops)|Source code|XLA TraceMe|Launch Stats)$"),
"# The lanes torch_npu derives from an Ascend NPU's device lanes.",
R("other", "*", "*", "*", "*", "^(Overlap Analysis|AI Core Freq)$", "*"),
"",
"# XLA compiler passes on the host (\"all-reduce-combiner\" is not a",
"# collective): compile time, before the name rules below see them.",
R("host", "compile",
    "^XLA::|^(JF|LSRAv2) |^tpu[-_]|spmd|[-_ ](combiner|decomposer|simplifier|reassociate|legalizer|normalizer|normalization|compaction|reorder|for-cse|setter|code-motion|converter|rewriter|expander|pipeliner(-forward|-backward)?|partitioner|propagation|folding|sinking|mover|remover|canonicalizer|inliner|elimination|removal|assigner|asyncifier|deduplicator|unification)$|^(dce|cse|algsimp|rematerialization)$",
    "*", "*", "^/host:", "*"),
"",
"# Communication, on the device (XLA collectives, NCCL/RCCL kernels, HCCL's hcom_ ops) and on",
"# the host (c10d, ProcessGroup and their record_function labels).  Before",
"# everything else: these names also contain \"reduce\", \"gather\", \"copy\".",
"# Expert-parallel all-to-all of MoE layers: DeepEP's dispatch, combine and",
"# notify kernels (deep_ep::), DeepSeek's (dpsk::ep::); custom all-reduce",
"# kernels (vLLM's and SGLang's cross_device_reduce); NVSHMEM, MSCCL and",
"# symmetric-memory kernels below the named collectives.  Their names say",
"# nothing of NCCL.",
R("communication", "all-to-all", "deep_ep::|dpsk::ep::", "*", "*", "*", "*"),
R("communication", "all-reduce", "cross_device_reduce", "*", "*", "*", "*"),
R("communication", "reduce-scatter", "reduce[-_ ]?scatter", "*", "*", "*", "*"),
R("communication", "all-gather", "all[-_ ]?gather|^CollectiveGather", "*", "*", "*", "*"),
R("communication", "all-reduce", "all[-_ ]?reduce|^CollectiveReduce", "*", "*", "*", "*"),
R("communication", "all-to-all", "all[-_ ]?(2|to)[-_ ]?all", "*", "*", "*", "*"),
R("communication", "collective-permute", "collective[-_]?permute|(^|[^[:alpha:]])ppermute", "*", "*", "*", "*"),
R("communication", "send-recv",
    "^(send|recv)(-start|-done)?([._][0-9]+)*$|nccl(dev)?kernel_(sendrecv|send|recv)|^hcom_(send|receive|recv)|^(nccl|gloo|c10d|mpi):+_?(send|recv|isend|irecv|batch_isend_irecv)|^_(host)?(send|recv)$|RecvDone$",
    "*", "*", "*", "*"),
R("communication", "broadcast",
    "collective[-_]?broadcast|nccl(dev)?kernel_broadcast|^hcom_broadcast|^(nccl|gloo|c10d|mpi):+_?broadcast|^CollectiveBcast",
    "*", "*", "*", "*"),
R("communication", "collective", "^nccl|^rccl|^hcom_|^hccl|^c10d::|^(gloo|mpi|ucc):|record_param_comms", "*", "*", "*", "*"),
R("communication", "collective", "nvshmem|msccl[a-z_]*kernel|^msccl|symm_mem|symmetric_memory", "*", "*", "*", "*"),
R("communication", "collective", "*", "*", "*", "Megascale", "*"),
"",
"# Stalls: a timeline blocked on another one.  Blocking synchronisation,",
"# waits, and the training loop waiting for its next batch (the data",
"# loader: whatever work it does, the step cannot go on meanwhile).",
R("stall", "dataloader",
    "dataloader|data_load|load_batch|wait_for_batch|IteratorGetNext",
    "*", "*", "*", "*"),
R("stall", "sync",
    "^(cuda|hip)(Device|Stream|Event|Ctx|Thread)Synchronize|^cu(Ctx|Stream|Event)Synchronize",
    "*", "*", "*", "*"),
R("stall", "sync", "*", "*", "^cuda_sync$", "*", "*"),
R("stall", "sync", "^wait|wait\\(\\)|[^[:alpha:]]wait([^[:alpha:]]|$)|^barrier", "*", "*", "*", "*"),
"",
"# CUDA/HIP runtime and driver calls (host work; blocking ones are above).",
R("host", "launch", ND_LAUNCH_API, "*", "*", "*", "*"),
R("host", "sync", "^(cuda|hip|cu)(StreamWaitEvent|EventQuery|StreamQuery)", "*", "*", "*", "*"),
R("host", "memcpy", "^(cuda|hip|cu)Memcpy", "*", "*", "*", "*"),
R("host", "memset", "^(cuda|hip|cu)Memset", "*", "*", "*", "*"),
R("host", "alloc",
    "^(cuda|hip|cu)(Malloc|Free|HostAlloc|HostMalloc|HostFree|MemAlloc|MemFree|MemPool)|^Memory(Allocation|Deallocation)$|^\\[memory\\]$",
    "*", "*", "*", "*"),
R("host", "runtime", "*", "*", "^(cuda_runtime|runtime|cuda_driver|mtia_runtime)$", "*", "*"),
R("host", "runtime", "*", "*", "*", "^CANN$", "*"),
"",
"# Data movement on the device: copy engines, memset, XLA copies.",
R("memory", "memcpy", "*", "*", "^(gpu_memcpy|memcpy)$", "*", "*"),
R("memory", "dma", "^dma_request", "*", "^mtia", "*", "*"),
R("memory", "memset", "*", "*", "^(gpu_memset|memset)$", "*", "*"),
R("memory", "*",
    "^Memcpy( |[HDP]to[HDP]|[HDP]2[HDP])|^Memset( |$)|^__amd_rocclr_(copy|fill)|^(async-)?copy([-_.]|$)|direct_copy_kernel",
    "*", "*", "^/device:", "*"),
R("memory", "*",
    "^Memcpy( |[HDP]to[HDP]|[HDP]2[HDP])|^Memset( |$)|^__amd_rocclr_(copy|fill)|^(async-)?copy([-_.]|$)|direct_copy_kernel",
    "*", "^(kernel|xla_op|hlo_op|tpu_op)$", "*", "*"),
"",
"# Families, wherever the op ran: aten::mm on the host and a gemm kernel",
"# on the device are both matmul; the class is decided further down.",
R("*", "memcpy", "^Memcpy( |[HDP]to[HDP]|[HDP]2[HDP])|^__amd_rocclr_copy", "*", "*", "*", "*"),
R("*", "memset", "^Memset( |$)|^__amd_rocclr_fill", "*", "*", "*", "*"),
R("*", "python", "^\\$", "*", "*", "^/host:", "*"),
R("*", "launch",
    "Executable::Execute|^PJRT_LoadedExecutable_Execute$|ExecuteThunks|^PjitFunction\\(",
    "*", "*", "*", "*"),
R("*", "attention", "^custom-call", "fmha|flash|fused_attn|cudnn\\$mha", "*", "*", "*"),
R("*", "convolution", "^custom-call", "cudnn\\$conv|miopen\\$conv", "*", "*", "*"),
R("*", "matmul", "^custom-call|^fusion", "cublas|hipblas|rocblas|\\$gemm|triton_gemm|triton_nested_gemm", "*", "*", "*"),
R("*", "attention",
    "attention|attn|flash|fmha|sdpa|scaled_dot_product",
    "*", "*", "*", "*"),
R("*", "convolution",
    "conv([^e]|$)|fprop|dgrad|wgrad|winograd|scudnn|cask_cudnn|igemm_(fwd|bwd|wrw)|im[23]d?2col|col2im",
    "*", "*", "*", "*"),
R("*", "matmul",
    "gemm|gemv|matmul|einsum|cublas|cutlass|^Cijk_|hipblas|rocblas|(^|[^[:alpha:]])(dot|mm|bmm|addmm|baddbmm|addbmm|addmv|mv|linear|tensordot|_?scaled_mm)([^[:alpha:]]|$)|(addmm|mm|bmm|linear|dot)backward",
    "*", "*", "*", "*"),
R("*", "embedding", "embed|pooled_embs", "*", "*", "*", "*"),
R("*", "optimizer",
    "optimizer|^optim|adam([^a]|$)|adagrad|sgd|rmsprop|shampoo|_foreach_|multi_tensor_apply|^(Resource)?Apply[A-Z]|zero_grad",
    "*", "*", "*", "*"),
R("*", "loss", "loss|cross_?entropy|nll", "*", "*", "*", "*"),
R("*", "norm",
    "norm([^a]|$|aliz)|bn_(fw|bw)|GammaBetaBackward|RowwiseMoments|welford",
    "*", "*", "*", "*"),
R("*", "softmax", "softmax", "*", "*", "*", "*"),
R("*", "step", "^ProfilerStep#|^(train|eval|test)_?step|^step([#_ 0-9]|$)", "*", "*", "*", "*"),
R("*", "random",
    "random|rng|philox|dropout|bernoulli|uniform|normal_|^aten::rand|threefry",
    "*", "*", "*", "*"),
R("*", "pooling", "(max|avg|average|adaptive|lp)_?pool|reduce[-_]window", "*", "*", "*", "*"),
R("*", "sort", "sort|topk", "*", "*", "*", "*"),
R("*", "gather-scatter",
    "gather|scatter|index_(select|add|copy|put|fill|reduce)|^aten::index(_put_?)?$|indexSelect|indexFunc|indexing_backward|IndexBackward|dynamic[-_](update[-_])?slice",
    "*", "*", "*", "*"),
R("*", "fusion", "fusion|^triton_|^fused_", "*", "*", "*", "*"),
R("*", "convert",
    "convert|^Cast$|ConversionOp|(bfloat16|half|float|float8|fp8)_copy_kernel|quantiz",
    "*", "*", "*", "*"),
R("*", "copy",
    "^(async-)?copy([-_.]|$)|direct_copy_kernel|copyBuffer|^aten::(copy_|to|_to_copy|clone|contiguous|_?pin_memory)$|(^|: )(Clone|ToCopy|CopySlices)Backward[0-9]*$",
    "*", "*", "*", "*"),
R("*", "reduce",
    "reduce|DeviceScan|cumsum|cumprod|^aten::(sum|mean|amax|amin|max|min|argmax|argmin|prod|var|std|var_mean|std_mean|all|any|logsumexp)$|^(Sum|Mean|Max|Min|Prod|All|Any|ArgMax|ArgMin)$|(^|: )(Sum|Mean|Max|Min|Amax|Amin|Prod|Var|Std|Cumsum)Backward[0-9]*$",
    "*", "*", "*", "*"),
R("*", "layout",
    "transpose|concatenate|CatArrayBatchedCopy|nchwToNhwc|nhwcToNchw|permute|^(slice|pad|reshape|bitcast|broadcast|reverse|iota)([._][0-9]+)*$|^wrapped_(slice|broadcast|concatenate|transpose)|^aten::(view|_reshape_alias|reshape|as_strided_?|t|numpy_T|expand|expand_as|broadcast_tensors|slice|slice_backward|narrow|select|select_backward|squeeze_?|unsqueeze_?|flatten|unflatten|split|split_with_sizes|chunk|_?cat|concat|stack|pad|constant_pad_nd|unbind|alias|_unsafe_view|view_as|type_as|detach_?|lift_fresh|roll|flip|repeat|repeat_interleave|resolve_conj|resolve_neg|conj)$|^detach_?$|(^|: )(View|T|UnsafeView|Expand|Reshape|ReshapeAlias|Split|SplitWithSizes|Select|Slice|Squeeze|Unsqueeze|Permute|Cat|Stack|Repeat)Backward[0-9]*$|^(Reshape|ConcatV2|Concat|Pack|Unpack|Slice|StridedSlice|Squeeze|ExpandDims|Tile|Pad|PadV2|Split|SplitV|Identity)$",
    "*", "*", "*", "*"),
R("*", "elementwise",
    "elementwise|EigenMetaKernel|SubTensorOp|scalePackedTensor|^(add|subtract|multiply|divide|maximum|minimum|negate|exponential|exponential-minus-one|log|log-plus-one|tanh|logistic|rsqrt|sqrt|cbrt|power|abs|sign|select|compare|and|or|xor|not|clamp|erf|erf_inv|cosine|sine|tan|atan2|floor|ceil|remainder|is-finite|shift[-_](left|right[-_]logical|right[-_]arithmetic))([._][0-9]+)*$|^aten::(add|sub|rsub|mul|div|neg|exp|log|sqrt|rsqrt|pow|abs|relu|gelu|silu|sigmoid|tanh|clamp|clamp_min|clamp_max|where|masked_fill|fill|zero|threshold|threshold_backward|gelu_backward|silu_backward|sigmoid_backward|tanh_backward|addcmul|addcdiv|lerp|sign|bitwise_not|eq|ne|lt|le|gt|ge|nan_to_num|reciprocal|maximum|minimum|cos|sin|erf|tril|triu|hardtanh|leaky_relu|square|logical_(and|or|not|xor)|log2|log1p|exp2|expm1|logit|logit_backward|remainder|divide|true_divide|floor_divide|fmod|trunc|round|ceil|floor|sgn|mish|hardswish|hardsigmoid|softplus|elu)_?$|(^|: )(Add|Sub|Rsub|Mul|Div|Pow|Relu|Gelu|Silu|Sigmoid|Tanh|Sqrt|Rsqrt|Exp|Log|Neg|Abs|Clamp|Threshold|Where|MaskedFill|Logit|Hardtanh|LeakyRelu|Elu|Softplus)Backward[0-9]*$|^(AddV2|AddN|BiasAdd|BiasAddGrad|Mul|Sub|RealDiv|Relu|ReluGrad|Gelu|Tanh|TanhGrad|Sigmoid|GreaterEqual|Greater|Less|LessEqual|Equal|Select|SelectV2|Rsqrt|Sqrt|Square|SquaredDifference|Pow|Neg|Exp|Log|Maximum|Minimum|Reciprocal)$",
    "*", "*", "*", "*"),
R("*", "alloc", "^aten::(empty|empty_strided|empty_like|new_empty|new_empty_strided|new_zeros|new_ones|new_full|zeros|zeros_like|ones|ones_like|full|full_like|scalar_tensor|arange|resize_|resize_as_|set_|record_stream)$", "*", "*", "*", "*"),
R("*", "sync", "^aten::(item|_local_scalar_dense)$", "*", "*", "*", "*"),
R("*", "dataloader", "*", "*", "*", "*", "^tf_data"),
"",
"# Class from where the op ran, for ops the rules above left open.",
R("host", "*", "*", "*",
    "^(cpu_op|operator|user_annotation|python_function|cuda_runtime|runtime|cuda_driver|trace|cpu_instant_event|python_annotation|xla_host)$",
    "*", "*"),
R("compute", "*", "*", "*", "^(kernel|gpu_op|xla_op|hlo_op|tpu_op)$", "*", "*"),
R("compute", "*", "*", "*", "^(AI_CORE|AI_VECTOR_CORE|AI_CPU|MIX_AIC|MIX_AIV)$", "*", "*"),
R("other", "*", "*", "*", "*", "^(/host:metadata|Task Environment)$", "*"),
R("compute", "*", "*", "*", "*", "^/device:", "*"),
R("host", "*", "*", "*", "*", "^/host:|^CPU functions$", "*"),
R("compute", "*", "*", "*", "*", "*", "^stream[ #]?[0-9]"),
R("host", "*",
    "^aten::|^autograd::|^torch[.:]|^c10::|^ProfilerStep#|^Optimizer\\.|^enumerate\\(|Backward[0-9]*$",
    "*", "*", "*", "*"),
NULL
};

static const char print_header[] =
"# ndtrace classification rules: trace-classify --rules FILE reads this.\n"
"# One rule per line, seven columns separated by tabs:\n"
"#   class  family  name  long_name  cat  process  thread\n"
"# class: compute, communication, memory, host, stall, other, or * (leave\n"
"# it to a later rule); family: a word, or *.  The other columns are POSIX\n"
"# extended regexes, case-insensitive and unanchored, tested against the\n"
"# op's fields (an absent field is the empty string); * matches anything.\n"
"# Rules are tried in order: the first matching rule that gives a class\n"
"# decides the class, the first that gives a family decides the family;\n"
"# what no rule decides is \"other\".  Lines starting with # are comments.\n";

static nd_rules *deflt;

static int
valid_family(const char *s)
{
	if (*s == '\0')
		return 0;
	for (; *s != '\0'; s++)
		if (!((*s >= 'a' && *s <= 'z') || (*s >= 'A' && *s <= 'Z') ||
		    (*s >= '0' && *s <= '9') || *s == '-' || *s == '_' ||
		    *s == '.'))
			return 0;
	return 1;
}

/* Parse one rule line (tabs between columns, runs of tabs allowed) into
 * r (zeroed first; what it holds is freed with the table).  0, or -1 with
 * err filled, "path:lineno: message". */
static int
parse_rule(char *line, const char *path, size_t lineno, struct rule *r,
    nd_err *err)
{
	char *col[NCOL + 1];
	int ncol = 0, i, e;
	char *p = line;

	memset(r, 0, sizeof *r);
	while (*p != '\0') {
		while (*p == '\t')
			p++;
		if (*p == '\0')
			break;
		if (ncol <= NCOL)
			col[ncol] = p;
		ncol++;
		while (*p != '\0' && *p != '\t')
			p++;
		if (*p == '\t')
			*p++ = '\0';
	}
	if (ncol != NCOL)
		return nd_err_line(err, path, lineno, "expected %d "
		    "tab-separated columns (class family name long_name cat "
		    "process thread), found %d", NCOL, ncol);
	if (strcmp(col[0], "*") != 0) {
		for (i = 0; classes[i] != NULL; i++)
			if (strcmp(col[0], classes[i]) == 0)
				r->cls = classes[i];
		if (r->cls == NULL)
			return nd_err_line(err, path, lineno, "unknown class "
			    "'%s' (expected compute, communication, memory, "
			    "host, stall, other or *)", col[0]);
	}
	if (strcmp(col[1], "*") != 0) {
		if (!valid_family(col[1]))
			return nd_err_line(err, path, lineno, "invalid family "
			    "'%s' (use letters, digits, '-', '_' and '.')",
			    col[1]);
		r->family = nd_xstrdup(col[1]);
	}
	if (r->cls == NULL && r->family == NULL)
		return nd_err_line(err, path, lineno, "rule gives neither a "
		    "class nor a family");
	for (i = 0; i < NFIELD; i++) {
		const char *pat = col[2 + i];

		if (strcmp(pat, "*") == 0)
			continue;
		e = regcomp(&r->re[i], pat, REG_EXTENDED | REG_ICASE | REG_NOSUB);
		if (e != 0) {
			char msg[256];

			regerror(e, &r->re[i], msg, sizeof msg);
			return nd_err_line(err, path, lineno, "bad regex in "
			    "column %s: '%s': %s", colname[2 + i], pat, msg);
		}
		r->pat[i] = nd_xstrdup(pat);
	}
	return 0;
}

/* Feed one line (without its newline) to the parser.  Comment lines
 * directly above a rule (no blank line between) are kept with it so that
 * nd_rules_print can reproduce them. */
static int
add_line(nd_rules *rs, char *line, size_t len, const char *path,
    size_t lineno, nd_buf *comment, nd_err *err)
{
	size_t i = 0;
	int rc;

	if (len > 0 && line[len - 1] == '\r')
		line[--len] = '\0';
	while (i < len && (line[i] == ' ' || line[i] == '\t'))
		i++;
	if (i == len) {
		nd_buf_reset(comment);
		return 0;
	}
	if (line[i] == '#') {
		nd_buf_add(comment, line, len);
		nd_buf_addc(comment, '\n');
		return 0;
	}
	if (memchr(line, '\0', len) != NULL)
		return nd_err_line(err, path, lineno, "NUL byte in rule");
	nd_grow(&rs->rules, &rs->cap, rs->n + 1, sizeof *rs->rules);
	rc = parse_rule(line, path, lineno, &rs->rules[rs->n], err);
	if (rc == 0 && comment->len > 0) {
		rs->rules[rs->n].comment = nd_xstrndup(comment->p, comment->len);
		nd_buf_reset(comment);
	}
	rs->n++;	/* a rule refused too: the table frees what it holds */
	return rc;
}

static nd_rules *
rules_new(void)
{
	nd_rules *rs = nd_xcalloc(1, sizeof *rs);

	rs->cache = nd_xcalloc(1, sizeof *rs->cache);
	return rs;
}

static void
free_default(void)
{
	nd_rules *r = deflt;

	deflt = NULL;
	nd_rules_free(r);
}

/* The built-in rules, after those rs has. */
static void
add_builtin(nd_rules *rs)
{
	nd_buf comment = ND_BUF_INIT;
	char *line;
	nd_err err;

	nd_err_clear(&err);
	for (size_t i = 0; builtin_rules[i] != NULL; i++) {
		line = nd_xstrdup(builtin_rules[i]);
		if (add_line(rs, line, strlen(line), "<built-in rules>", i + 1,
		    &comment, &err) != 0)
			nd_die(ND_EXIT_ERROR, "internal error: %s", err.msg);
		free(line);
	}
	nd_buf_free(&comment);
}

const nd_rules *
nd_rules_default(void)
{
	if (deflt != NULL)
		return deflt;
	deflt = rules_new();
	add_builtin(deflt);
	atexit(free_default);
	return deflt;
}

nd_rules *
nd_rules_load_add(const char *path, nd_err *err)
{
	nd_rules *rs = nd_rules_load(path, err);

	if (rs != NULL)
		add_builtin(rs);
	return rs;
}

nd_rules *
nd_rules_load(const char *path, nd_err *err)
{
	nd_buf comment = ND_BUF_INIT;
	nd_rules *rs;
	FILE *fp;
	char *line = NULL;
	size_t cap = 0, lineno = 0;
	ssize_t n;
	int rc = 0;

	if (strcmp(path, "-") == 0)
		fp = stdin;
	else if ((fp = fopen(path, "r")) == NULL) {
		nd_err_errno(err, path, "%s", path);
		return NULL;
	}
	rs = rules_new();
	errno = 0;
	while (rc == 0 && (n = getline(&line, &cap, fp)) != -1) {
		lineno++;
		if (n > 0 && line[n - 1] == '\n')
			line[--n] = '\0';
		rc = add_line(rs, line, (size_t)n, path, lineno, &comment,
		    err);
	}
	if (rc == 0 && ferror(fp))
		rc = nd_err_errno(err, path, "%s", path);
	free(line);
	nd_buf_free(&comment);
	if (fp != stdin)
		fclose(fp);
	if (rc != 0) {
		nd_rules_free(rs);
		return NULL;
	}
	return rs;
}

void
nd_rules_opt_set(nd_rules_opt *o, const char *path, int add)
{
	if (o->path != NULL && o->add != add)
		nd_die(ND_EXIT_ERROR, "--rules and --rules-add exclude each "
		    "other");
	o->path = path;
	o->add = add;
}

const nd_rules *
nd_rules_opt_load(const nd_rules_opt *o, nd_rules **loaded)
{
	nd_err err;

	*loaded = NULL;
	if (o->path == NULL)
		return nd_rules_default();
	nd_err_clear(&err);
	*loaded = o->add ? nd_rules_load_add(o->path, &err) :
	    nd_rules_load(o->path, &err);
	if (*loaded == NULL)
		nd_err_exit(&err);
	return *loaded;
}

static void
cache_clear(struct cache *c)
{
	if (c->tab != NULL)
		for (size_t i = 0; i <= c->mask; i++)
			free(c->tab[i].key);
	free(c->tab);
	c->tab = NULL;
	c->mask = 0;
	c->n = 0;
	c->bytes = 0;
	for (int f = 0; f < NFIELD; f++) {
		struct memo *m = &c->memo[f];

		free(m->slot);
		free(m->val);
		nd_buf_free(&m->text);
		free(m->res);
	}
	memset(c->memo, 0, sizeof c->memo);
}

void
nd_rules_free(nd_rules *r)
{
	if (r == NULL || r == deflt)
		return;
	for (size_t i = 0; i < r->n; i++) {
		struct rule *ru = &r->rules[i];

		for (int f = 0; f < NFIELD; f++)
			if (ru->pat[f] != NULL) {
				regfree(&ru->re[f]);
				free(ru->pat[f]);
			}
		free(ru->family);
		free(ru->comment);
	}
	free(r->rules);
	cache_clear(r->cache);
	free(r->cache);
	free(r);
}

void
nd_rules_print(const nd_rules *r, FILE *fp)
{
	fputs(print_header, fp);
	for (size_t i = 0; i < r->n; i++) {
		const struct rule *ru = &r->rules[i];

		/* A blank line keeps the header from sticking to the first
		 * rule when the output is read back. */
		if (ru->comment != NULL)
			fprintf(fp, "\n%s", ru->comment);
		else if (i == 0)
			fputc('\n', fp);
		fprintf(fp, "%s\t%s", ru->cls ? ru->cls : "*",
		    ru->family ? ru->family : "*");
		for (int f = 0; f < NFIELD; f++)
			fprintf(fp, "\t%s", ru->pat[f] ? ru->pat[f] : "*");
		fputc('\n', fp);
	}
}

static void
memo_rehash(struct memo *m)
{
	size_t size = m->slot != NULL ? (m->mask + 1) * 2 : 256;

	free(m->slot);
	m->slot = nd_xcalloc(size, sizeof *m->slot);
	m->mask = size - 1;
	for (size_t i = 0; i < m->n; i++) {
		size_t j = m->val[i].hash & m->mask;

		while (m->slot[j] != 0)
			j = (j + 1) & m->mask;
		m->slot[j] = (uint32_t)i + 1;
	}
}

/* The memo's answers for value v of field f (added if new). */
static uint8_t *
memo_row(const nd_rules *r, int f, const char *v, size_t n)
{
	struct cache *c = r->cache;
	struct memo *m = &c->memo[f];
	size_t rowb = (r->n + 3) / 4, j, old;
	uint64_t h = nd_hash_bytes(v, n);

	if (m->slot == NULL || (m->n + 1) * 2 > m->mask + 1)
		memo_rehash(m);
	for (j = h & m->mask; m->slot[j] != 0; j = (j + 1) & m->mask) {
		const struct mval *e = &m->val[m->slot[j] - 1];

		if (e->hash == h && e->len == n &&
		    (n == 0 || memcmp(m->text.p + e->off, v, n) == 0))
			return m->res + (size_t)(m->slot[j] - 1) * rowb;
	}
	nd_grow(&m->val, &m->cap, m->n + 1, sizeof *m->val);
	m->val[m->n].hash = h;
	m->val[m->n].off = (uint32_t)m->text.len;
	m->val[m->n].len = (uint32_t)n;
	nd_buf_add(&m->text, v, n);
	old = m->capres;
	if (m->n >= old) {
		nd_grow(&m->res, &m->capres, m->n + 1, rowb);
		memset(m->res + old * rowb, 0, (m->capres - old) * rowb);
	}
	m->slot[j] = (uint32_t)++m->n;
	c->bytes += n + rowb + 32;	/* text, answers, entry and slot */
	return m->res + (m->n - 1) * rowb;
}

/* Rule i's pattern for field f on the memo's value of row. */
static int
memo_match(const struct rule *ru, int f, const char *v, size_t n,
    uint8_t *row, size_t i)
{
	int sh = (int)(i % 4) * 2, a = row[i / 4] >> sh & 3;

	if (a == 0) {
		a = nd_rx_exec(&ru->re[f], v, n, 0, NULL) == 0 ? 1 : 2;
		row[i / 4] |= (uint8_t)(a << sh);
	}
	return a == 1;
}

static void
match_rules(const nd_rules *r, const char *const *fld, const size_t *len,
    nd_class_out *out)
{
	const char *cls = NULL, *fam = NULL;
	uint8_t *row[NFIELD] = { NULL };

	for (size_t i = 0; i < r->n && (cls == NULL || fam == NULL); i++) {
		const struct rule *ru = &r->rules[i];
		int f;

		/* Skip rules that could only decide what is decided. */
		if ((ru->cls == NULL || cls != NULL) &&
		    (ru->family == NULL || fam != NULL))
			continue;
		for (f = 0; f < NFIELD; f++) {
			if (ru->pat[f] == NULL)
				continue;
			if (row[f] == NULL)
				row[f] = memo_row(r, f, fld[f], len[f]);
			if (!memo_match(ru, f, fld[f], len[f], row[f], i))
				break;
		}
		if (f < NFIELD)
			continue;
		if (cls == NULL)
			cls = ru->cls;
		if (fam == NULL)
			fam = ru->family;
	}
	out->cls = cls != NULL ? cls : "other";
	out->family = fam != NULL ? fam : "other";
}

/* The cache's key: each field as its length (4 bytes) and its bytes, so
 * that fields holding NUL cannot run into one another. */
static int
key_eq(const struct centry *e, const char *const *fld, const size_t *len)
{
	const char *k = e->key;

	for (int f = 0; f < NFIELD; f++) {
		uint32_t l;

		memcpy(&l, k, sizeof l);
		if (l != len[f] || memcmp(k + sizeof l, fld[f], len[f]) != 0)
			return 0;
		k += sizeof l + len[f];
	}
	return 1;
}

static void
cache_grow(struct cache *c)
{
	struct centry *old = c->tab;
	size_t oldn = old != NULL ? c->mask + 1 : 0;
	size_t size = oldn ? oldn * 2 : 1024;

	c->tab = nd_xcalloc(size, sizeof *c->tab);
	c->mask = size - 1;
	for (size_t i = 0; i < oldn; i++) {
		size_t j;

		if (old[i].key == NULL)
			continue;
		for (j = old[i].hash & c->mask; c->tab[j].key != NULL;
		    j = (j + 1) & c->mask)
			;
		c->tab[j] = old[i];
	}
	free(old);
}

void
nd_classify(const nd_rules *r, const nd_class_in *in, nd_class_out *out)
{
	struct cache *c = r->cache;
	const char *fld[NFIELD];
	size_t len[NFIELD], klen = 0, j;
	uint64_t h = 0;
	struct centry *e;
	char *k;

	const nd_str *in_f[NFIELD];

	in_f[F_NAME] = &in->name;
	in_f[F_LONG] = &in->long_name;
	in_f[F_CAT] = &in->cat;
	in_f[F_PROC] = &in->process;
	in_f[F_THREAD] = &in->thread;
	for (int f = 0; f < NFIELD; f++) {
		fld[f] = in_f[f]->p != NULL ? in_f[f]->p : "";
		len[f] = in_f[f]->p != NULL ? in_f[f]->n : 0;
		h = nd_hash_u64(h ^ nd_hash_bytes(fld[f], len[f]));
		klen += len[f] + sizeof(uint32_t);
	}

	if (c->tab != NULL)
		for (j = h & c->mask; c->tab[j].key != NULL;
		    j = (j + 1) & c->mask) {
			e = &c->tab[j];
			if (e->hash == h && e->klen == klen &&
			    key_eq(e, fld, len)) {
				out->cls = e->cls;
				out->family = e->family;
				return;
			}
		}

	match_rules(r, fld, len, out);

	if (c->n + 1 > CACHE_MAX_ENTRIES || c->bytes + klen > CACHE_MAX_BYTES)
		cache_clear(c);
	if (c->tab == NULL || (c->n + 1) * 2 > c->mask + 1)
		cache_grow(c);
	for (j = h & c->mask; c->tab[j].key != NULL; j = (j + 1) & c->mask)
		;
	e = &c->tab[j];
	e->hash = h;
	e->klen = klen;
	e->key = k = nd_xmalloc(klen);
	for (int f = 0; f < NFIELD; f++) {
		uint32_t l = (uint32_t)len[f];

		memcpy(k, &l, sizeof l);
		memcpy(k + sizeof l, fld[f], len[f]);
		k += sizeof l + len[f];
	}
	e->cls = out->cls;
	e->family = out->family;
	c->n++;
	c->bytes += klen;
}
