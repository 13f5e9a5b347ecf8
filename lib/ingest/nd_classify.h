/*
 * nd_classify: the class and family of an op, from a documented rule table
 * shared by every ingest program and by trace-classify.
 *
 * class is one of: compute, communication, memory, host, stall, other.
 * family is a semantic group (matmul, convolution, attention, fusion, copy,
 * convert, reduce, elementwise, loss, optimizer, norm, all-reduce,
 * all-gather, reduce-scatter, all-to-all, collective-permute, send-recv,
 * memcpy, memset, other, ...).
 *
 * The table is a list of rules tried in order; the first that matches wins.
 * Each rule tests (POSIX ERE, case-insensitive) some of: the op name, its
 * long name / HLO text, the source category, the process and the thread
 * (an absent field is tested as the empty string).  A rule may leave its
 * class or its family as "*": it then decides only the other one, and the
 * search goes on for the one left open ("first match wins" holds for each
 * of the two separately).  What no rule decides is "other".  Answers are
 * cached per distinct input, so the regexes run once per distinct op; the
 * cache lives in the nd_rules (not thread-safe).
 * `--print-rules` prints the table in the TSV form that `--rules FILE`
 * reads back, so a user starts from the built-in table and edits it.
 */
#ifndef ND_CLASSIFY_H
#define ND_CLASSIFY_H

#include "nd_err.h"
#include "nd_event.h"

#include <stdio.h>

typedef struct nd_rules nd_rules;

/* What a rule can look at.  Any field may be NULL (unknown). */
/* The fields a rule sees, length-counted (a NUL in one is a byte like any
 * other); p NULL: absent, as "". */
typedef struct nd_class_in {
	nd_str name;		/* display name, e.g. "fusion.12", "ncclKernel_..." */
	nd_str long_name;	/* full name / HLO text, e.g. "%fusion.12 = ..." */
	nd_str cat;		/* source category, e.g. "kernel", "cpu_op", "xla_op" */
	nd_str process;		/* e.g. "/device:TPU:0", "/host:CPU" */
	nd_str thread;		/* e.g. "XLA Ops", "Stream #7(...)" */
} nd_class_in;

typedef struct nd_class_out {
	const char *cls;	/* never NULL after nd_classify; owned by rules */
	const char *family;	/* never NULL after nd_classify; owned by rules */
} nd_class_out;

/* The built-in table (a shared, immutable singleton; do not free). */
const nd_rules *nd_rules_default(void);
/* Read a TSV rule file: the table (caller frees with nd_rules_free), or
 * NULL with err filled ("FILE:LINE: message", or the file's own). */
nd_rules *nd_rules_load(const char *path, nd_err *err);
/* The same, the built-in table after the file's rules: a file that adds
 * rules (they come first, so they decide before the defaults). */
nd_rules *nd_rules_load_add(const char *path, nd_err *err);
void nd_rules_free(nd_rules *r);
/* The options -r/--rules FILE and --rules-add FILE of the programs that
 * classify: nd_rules_opt_set records one (exit 2 when both are given);
 * nd_rules_opt_load gives the table: the built-in one, FILE's, or FILE's
 * before the built-in one (add), and in *loaded the table it read (to
 * free; NULL for the built-in one).  A file that cannot be read or parsed
 * ends the program with its error (exit 2). */
typedef struct nd_rules_opt {
	const char *path;
	int add;
} nd_rules_opt;
void nd_rules_opt_set(nd_rules_opt *o, const char *path, int add);
const nd_rules *nd_rules_opt_load(const nd_rules_opt *o, nd_rules **loaded);
/* Print the table in the TSV form nd_rules_load reads. */
void nd_rules_print(const nd_rules *r, FILE *fp);
void nd_classify(const nd_rules *r, const nd_class_in *in, nd_class_out *out);

#endif
