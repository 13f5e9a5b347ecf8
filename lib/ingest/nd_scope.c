/*
 * nd_scope: framework op paths -> ndtrace scope paths.
 *
 * The rule is stated once, in nd_scope.h (and for users in
 * trace-classify(1)); this file follows it step by step: add_path splits
 * (step 1) and drops the op (step 2), add_seg rewrites one segment (step 3)
 * and joins (step 4).
 */
#include "nd_scope.h"

#include <string.h>

#define MAX_NEST 32	/* wrappers inside wrappers; deeper is kept verbatim */

static const char *const wrappers[] = {
	"jit", "pjit", "jvp", "transpose", "vmap", "pmap", "xmap",
	"named_call", "remat", "checkpoint", "xla_computation", NULL
};

static const char *const plumbing[] = {
	"pallas_call", "shard_map", "custom_jvp_call", "custom_vjp_call",
	"custom_jvp_call_jaxpr", "custom_vjp_call_jaxpr", "closed_call",
	"core_call", "remat_call", "xla_call", "xla_pmap", "while", "body",
	"cond", "scan", "checkpoint", "remat", "rematted_computation", NULL
};

static int
word_in(const char *s, size_t n, const char *const *list)
{
	for (; *list != NULL; list++)
		if (strlen(*list) == n && memcmp(*list, s, n) == 0)
			return 1;
	return 0;
}

/* "branch_0_fun", "branch_12_fun": the arms of lax.cond / lax.switch. */
static int
is_branch(const char *s, size_t n)
{
	size_t i = 7;

	if (n < 12 || memcmp(s, "branch_", 7) != 0 ||
	    memcmp(s + n - 4, "_fun", 4) != 0)
		return 0;
	for (; i < n - 4; i++)
		if (s[i] < '0' || s[i] > '9')
			return 0;
	return i > 7;
}

static int
is_plumbing(const char *s, size_t n)
{
	return word_in(s, n, plumbing) || word_in(s, n, wrappers) ||
	    is_branch(s, n);
}

/* Index of the bracket closing the one at s[open], or n if unbalanced. */
static size_t
match_close(const char *s, size_t n, size_t open)
{
	int depth = 0;

	for (size_t i = open; i < n; i++) {
		switch (s[i]) {
		case '(': case '[': case '{':
			depth++;
			break;
		case ')': case ']': case '}':
			if (--depth == 0)
				return i;
			break;
		}
	}
	return n;
}

/* Find a top-level "name=VALUE" inside the annotation a[0..n) (without its
 * brackets). */
static int
annot_name(const char *a, size_t n, const char **v, size_t *vn)
{
	int depth = 0;

	for (size_t i = 0; i < n; i++) {
		char c = a[i];

		if (c == '(' || c == '[' || c == '{')
			depth++;
		else if (c == ')' || c == ']' || c == '}')
			depth--;
		else if (depth == 0 && n - i > 5 && memcmp(a + i, "name=", 5) == 0 &&
		    (i == 0 || a[i - 1] == ' ' || a[i - 1] == ',')) {
			size_t j = i + 5;

			while (j < n && a[j] != ' ' && a[j] != ',')
				j++;
			*v = a + i + 5;
			*vn = j - (i + 5);
			return *vn > 0;
		}
	}
	return 0;
}

static void add_path(const char *s, size_t n, int drop_last, nd_buf *out,
    size_t start, int nest);

/* jnp.einsum names its scope by its equation ("bsd,de->bse"): letters,
 * commas, dots (ellipsis) and one "->". */
static int
is_einsum(const char *s, size_t n)
{
	int arrow = 0;

	for (size_t i = 0; i < n; i++) {
		char c = s[i];

		if (c == '-' && i + 1 < n && s[i + 1] == '>') {
			arrow++;
			i++;
		} else if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
		    c == ',' || c == '.' || c == ' '))
			return 0;
	}
	return arrow == 1;
}

static void
add_seg(const char *s, size_t n, nd_buf *out, size_t start, int nest)
{
	const char *v;
	size_t open, vn;

	while (n > 0 && (*s == ' ' || *s == '\t')) {
		s++;
		n--;
	}
	while (n > 0 && (s[n - 1] == ' ' || s[n - 1] == '\t'))
		n--;
	if (n == 0)
		return;

	/* Trailing "[...]" annotation. */
	if (s[n - 1] == ']' && nest < MAX_NEST) {
		open = 0;
		while (open < n && s[open] != '[' && s[open] != '(')
			open++;
		if (open < n && s[open] == '[' && match_close(s, n, open) == n - 1 &&
		    memchr(s + open, '=', n - open) != NULL) {
			if (annot_name(s + open + 1, n - open - 2, &v, &vn) &&
			    is_plumbing(s, open)) {
				add_seg(v, vn, out, start, nest + 1);
				return;
			}
			add_seg(s, open, out, start, nest + 1);
			return;
		}
	}

	/* Wrapper "w(inner)". */
	if (s[n - 1] == ')' && nest < MAX_NEST) {
		open = 0;
		while (open < n && s[open] != '(')
			open++;
		if (open < n && match_close(s, n, open) == n - 1 &&
		    word_in(s, open, wrappers)) {
			add_path(s + open + 1, n - open - 2, 0, out, start,
			    nest + 1);
			return;
		}
	}

	if (is_plumbing(s, n))
		return;
	if (out->len > start)
		nd_buf_addc(out, '/');
	if (is_einsum(s, n)) {
		nd_buf_adds(out, "einsum(");
		nd_buf_add(out, s, n);
		nd_buf_addc(out, ')');
		return;
	}
	nd_buf_add(out, s, n);
}

/* 1 when every bracket in s[0..n) is closed in order: only then do
 * brackets protect a '/' (a truncated name is split at every '/'). */
static int
balanced(const char *s, size_t n)
{
	int depth = 0;

	for (size_t i = 0; i < n; i++) {
		if (s[i] == '(' || s[i] == '[' || s[i] == '{')
			depth++;
		else if ((s[i] == ')' || s[i] == ']' || s[i] == '}') &&
		    --depth < 0)
			return 0;
	}
	return depth == 0;
}

static void
add_path(const char *s, size_t n, int drop_last, nd_buf *out, size_t start,
    int nest)
{
	size_t i, seg = 0, last = 0;
	int depth = 0, flat = !balanced(s, n);

	for (i = 0; i < n; i++) {
		char c = s[i];

		if (c == '(' || c == '[' || c == '{')
			depth++;
		else if (c == ')' || c == ']' || c == '}')
			depth--;
		else if (c == '/' && (depth == 0 || flat))
			last = i + 1;
	}
	if (drop_last) {
		/* The last top-level segment is the op itself. */
		if (last == 0)
			return;
		n = last - 1;
	}
	depth = 0;
	for (i = 0; i <= n; i++) {
		char c = i < n ? s[i] : '/';

		if (c == '(' || c == '[' || c == '{')
			depth++;
		else if (c == ')' || c == ']' || c == '}')
			depth--;
		else if (c == '/' && (depth == 0 || flat || i == n)) {
			add_seg(s + seg, i - seg, out, start, nest);
			seg = i + 1;
		}
	}
}

size_t
nd_scope_normalize(const char *path, size_t n, int drop_last, nd_buf *out)
{
	size_t start = out->len;

	if (path == NULL || n == 0)
		return 0;
	add_path(path, n, drop_last, out, start, 0);
	return out->len - start;
}
