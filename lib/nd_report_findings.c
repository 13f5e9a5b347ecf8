/*
 * nd_report: the rules of the findings, their thresholds, and which fire
 * (see nd_report.h).
 */
#include "nd_report_int.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* --- rules of the findings --- */

const nd_report_rule nd_rep_rules[] = {
	{ "comm_exposed", 15, "exposed communication, % of steady step time" },
	{ "device_idle", 10, "device idle, % of steady step time" },
	{ "host_bound", 10, "host-only time (no device op runs), "
	    "% of steady step time" },
	{ "memory_ops", 10, "memory ops (copies) not hidden by compute, "
	    "% of steady step time" },
	{ "step_variance", 10, "steady step time stddev, % of the mean" },
	{ "straggler", 5, "largest straggler lag, % of the steady median "
	    "step" },
	{ "dominant_op", 30, "one op's exclusive time, % of all exclusive "
	    "time" },
	{ "launch_gaps", 50, "gaps of cause host_wait or kernel_wait, % of "
	    "all gap time (fires only when device_idle fires)" },
	{ NULL, 0, NULL }
};

const nd_report_rule *
nd_report_rules(void)
{
	return nd_rep_rules;
}

/* --- collected data --- */
static char *
xfmt(const char *fmt, ...) ND_PRINTF(1, 2);

static char *
xfmt(const char *fmt, ...)
{
	va_list ap;
	char *s;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(NULL, 0, fmt, ap);
	va_end(ap);
	s = nd_xmalloc((size_t)n + 1);
	va_start(ap, fmt);
	vsnprintf(s, (size_t)n + 1, fmt, ap);
	va_end(ap);
	return s;
}

/* A duration as text, in slot i of r->durs (valid until reused). */
static const char *
fdur(nd_report *r, int i, int64_t ns)
{
	nd_buf b = { 0 };

	nd_rep_put_dur(&b, ns);
	snprintf(r->durs[i], sizeof r->durs[i], "%.*s", (int)b.len, b.p);
	nd_buf_free(&b);
	return r->durs[i];
}

static void
fire(nd_report *r, int rule, char *statement, char *evidence,
    char *suggestion)
{
	struct finding *f = &r->fnd[r->nfnd++];

	f->rule = rule;
	f->value = r->val[rule];
	f->statement = statement;
	f->evidence = evidence;
	f->suggestion = suggestion;
}

void
nd_rep_model_findings(nd_report *r)
{
	double v;

	if (r->dbd_total > 0) {
		r->val[R_COMM] = nd_rep_pct(r->dbd.communication_ns,
		    r->dbd_total);
		r->val[R_IDLE] = nd_rep_pct(r->dbd.idle_ns, r->dbd_total);
		r->val[R_HOST] = nd_rep_pct(r->dbd.host_ns, r->dbd_total);
		r->val[R_MEMORY] = nd_rep_pct(r->dbd.memory_ns, r->dbd_total);
		r->has_val[R_COMM] = r->has_val[R_IDLE] = 1;
		r->has_val[R_HOST] = r->has_val[R_MEMORY] = 1;
	}
	if (r->steady.count >= 2 && r->steady.mean > 0) {
		r->val[R_VARIANCE] = nd_rep_pct(r->steady.stddev,
		    r->steady.mean);
		r->has_val[R_VARIANCE] = 1;
	}
	if (r->rank_steps > 0 && r->steady.median > 0) {
		r->val[R_STRAGGLER] = nd_rep_pct(r->lag_max, r->steady.median);
		r->has_val[R_STRAGGLER] = 1;
	}
	if (r->nops > 0 && r->self_total > 0) {
		r->val[R_TOPOP] = nd_rep_pct(r->ops[0].self, r->self_total);
		r->has_val[R_TOPOP] = 1;
	}
	if (r->gap_total > 0) {
		int64_t launch = 0;

		for (size_t i = 0; i < r->ncauses; i++) {
			const char *c = nd_rep_name_of(r, r->causes[i].id);

			if (strcmp(c, "host_wait") == 0 ||
			    strcmp(c, "kernel_wait") == 0)
				launch += r->causes[i].ns;
		}
		r->val[R_SMALLGAPS] = nd_rep_pct(launch, r->gap_total);
		r->has_val[R_SMALLGAPS] = 1;
	}

	v = r->val[R_COMM];
	if (r->has_val[R_COMM] && v >= r->thr[R_COMM])
		fire(r, R_COMM, xfmt("communication is highly exposed: %.1f %% "
		    "of step time, threshold %g %%", v, r->thr[R_COMM]),
		    xfmt("exposed communication %.1f %%, overlapped with "
		    "compute %.1f %% of step time; top collective: %s",
		    v, nd_rep_pct(r->dbd.overlap_ns, r->dbd_total),
		    r->ncolls ? r->colls[0].key : "none"),
		    xfmt("overlap collectives with compute (async "
		    "collectives, latency-hiding scheduler, gradient bucketing"
		    "), reduce what is communicated (sharding, bf16 "
		    "gradients), or check the interconnect"));
	v = r->val[R_IDLE];
	if (r->has_val[R_IDLE] && v >= r->thr[R_IDLE])
		fire(r, R_IDLE, xfmt("the device is often idle: %.1f %% of "
		    "step time, threshold %g %%", v, r->thr[R_IDLE]),
		    xfmt("%llu gaps, %.1f %% of them (by time) with cause "
		    "host_wait or kernel_wait; largest gap payload: %s",
		    (unsigned long long)r->ngaps, r->val[R_SMALLGAPS],
		    r->npayids ? "see section 6" : "none"),
		    xfmt("see section 6 for the ops that follow the gaps; "
		    "feed the device ahead (prefetch inputs, avoid host "
		    "synchronisation, larger or fused kernels, CUDA graphs)"));
	v = r->val[R_SMALLGAPS];
	if (r->has_val[R_SMALLGAPS] && r->has_val[R_IDLE] &&
	    r->val[R_IDLE] >= r->thr[R_IDLE] && v >= r->thr[R_SMALLGAPS])
		fire(r, R_SMALLGAPS, xfmt("the device waits for launches: "
		    "%.1f %% of gap time is host_wait or kernel_wait, "
		    "threshold %g %%", v, r->thr[R_SMALLGAPS]),
		    xfmt("%llu gaps, total gap time in section 6",
		    (unsigned long long)r->ngaps),
		    xfmt("launch overhead dominates: fuse small ops "
		    "(torch.compile, XLA fusion), use CUDA graphs, raise the "
		    "batch size per launch"));
	v = r->val[R_HOST];
	if (r->has_val[R_HOST] && v >= r->thr[R_HOST])
		fire(r, R_HOST, xfmt("the step is host-bound: the host works "
		    "while no device op runs for %.1f %% of step time, "
		    "threshold %g %%", v, r->thr[R_HOST]),
		    xfmt("host-only time %.1f %% of step time",
		    v),
		    xfmt("move input processing off the training loop "
		    "(more data-loader workers, prefetch), avoid per-step "
		    "Python work and .item()/host synchronisation"));
	v = r->val[R_MEMORY];
	if (r->has_val[R_MEMORY] && v >= r->thr[R_MEMORY])
		fire(r, R_MEMORY, xfmt("memory ops are exposed: %.1f %% of "
		    "step time, threshold %g %%", v, r->thr[R_MEMORY]),
		    xfmt("copies and memsets not overlapped by compute or "
		    "communication: %.1f %% of step time", v),
		    xfmt("pin host memory and copy asynchronously, keep "
		    "tensors on the device, avoid host round trips"));
	v = r->val[R_VARIANCE];
	if (r->has_val[R_VARIANCE] && v >= r->thr[R_VARIANCE]) {
		const nd_step_class *h = r->cl.nclass == 2 ? &r->cl.c[1] : NULL;

		fire(r, R_VARIANCE, xfmt("step time varies: stddev %.1f %% "
		    "of the mean, threshold %g %%", v, r->thr[R_VARIANCE]),
		    h != NULL && h->has_period ?
		    xfmt("two classes: %llu heavy steps every %lld steps "
		    "(phase %lld), heavy median %s vs light %s",
		    (unsigned long long)h->st.count, (long long)h->period,
		    (long long)h->phase, fdur(r, 0, h->st.median),
		    fdur(r, 1, r->cl.c[0].st.median)) :
		    h != NULL ? xfmt("two classes: %llu heavy steps, heavy "
		    "median %s vs light %s", (unsigned long long)h->st.count,
		    fdur(r, 0, h->st.median),
		    fdur(r, 1, r->cl.c[0].st.median)) :
		    xfmt("steady steps: mean %s, stddev %s, min %s, max %s",
		    fdur(r, 0, r->steady.mean), fdur(r, 1, r->steady.stddev),
		    fdur(r, 2, r->steady.min), fdur(r, 3, r->steady.max)),
		    xfmt(h != NULL && h->has_period ? "periodic heavy steps "
		    "are usually checkpointing, evaluation or logging: make "
		    "them asynchronous or less frequent" : "look at the "
		    "slowest steps (trace-steps) for data-loading stalls, "
		    "recompilation or garbage collection"));
	}
	v = r->val[R_STRAGGLER];
	if (r->has_val[R_STRAGGLER] && v >= r->thr[R_STRAGGLER])
		fire(r, R_STRAGGLER, xfmt("rank %lld is a straggler: it is "
		    "ready %s after the median rank, %.1f %% of the "
		    "median step, threshold %g %%", (long long)r->lag_max_rank,
		    fdur(r, 0, r->lag_max), v, r->thr[R_STRAGGLER]),
		    xfmt("step %lld; %zu steps compared across ranks (%s "
		    "clock)", (long long)r->lag_max_step, r->rank_steps,
		    r->rank_abs ? "absolute" : "relative"),
		    xfmt("look at that rank's input pipeline, host and "
		    "device (thermal throttling, noisy neighbours), and at "
		    "load balance across ranks"));
	v = r->val[R_TOPOP];
	if (r->has_val[R_TOPOP] && v >= r->thr[R_TOPOP])
		fire(r, R_TOPOP, xfmt("one op dominates: %s takes %.1f %% of "
		    "exclusive time, threshold %g %%", r->ops[0].key, v,
		    r->thr[R_TOPOP]),
		    xfmt("%llu calls, %s exclusive in total",
		    (unsigned long long)r->ops[0].count,
		    fdur(r, 0, r->ops[0].self)),
		    xfmt("optimise that op first: check its shapes, "
		    "precision and fusion (trace-topk --by name,scope)"));
}
