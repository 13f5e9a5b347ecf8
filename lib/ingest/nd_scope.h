/*
 * nd_scope: turn framework op paths into ndtrace `scope` paths.
 *
 * A TensorFlow/JAX op path such as
 *   "jit(train_step)/jit(main)/transpose(jvp(block_3))/attention/dot_general"
 * becomes "train_step/main/block_3/attention".  The exact rule (documented
 * for users in trace-classify(1), subsection Scopes; used by the ingest
 * programs):
 *
 *  1. Split on '/' outside (), [] and {}; when the brackets of the whole
 *     path do not balance (a truncated name) split on every '/'.
 *  2. drop_last: the last segment names the op itself (the primitive, e.g.
 *     "dot_general"): drop it.  A path of one segment then has no scope.
 *  3. Trim blanks around each segment, then:
 *     - a trailing "[...]" holding '=' is a parameter annotation (old JAX
 *       "while[cond_nconsts=0 ...]", "pjit[name=f jaxpr=...]"): remove it;
 *       if it holds a top-level "name=X" and what precedes is a wrapper or
 *       plumbing word, the segment is X.  "layers[0]" (no '=') is kept;
 *     - a wrapper "w(inner)", w one of jit, pjit, jvp, transpose, vmap, pmap,
 *       xmap, named_call, remat, checkpoint, xla_computation, is replaced by
 *       inner normalised as a path of its own, repeatedly:
 *       "transpose(jvp(foo))" -> "foo", "jit(a/b)" -> "a/b";
 *     - plumbing segments are dropped: pallas_call, shard_map,
 *       custom_jvp_call, custom_vjp_call (and their _jaxpr forms),
 *       closed_call, core_call, remat_call, xla_call, xla_pmap, while, body,
 *       cond, scan, checkpoint, remat, rematted_computation, branch_N_fun,
 *       and bare wrapper words;
 *     - empty segments ("a//b", "jvp()") are dropped;
 *     - an einsum equation, the name jnp.einsum gives its scope
 *       ("bsd,de->bse": letters, commas, dots, blanks and one "->"), is
 *       written "einsum(bsd,de->bse)" so that it reads as what it is.
 *  4. Join what remains with '/'.  Anything else is kept byte for byte, so
 *     TensorFlow name scopes pass through unchanged.
 */
#ifndef ND_SCOPE_H
#define ND_SCOPE_H

#include "nd_buf.h"

#include <stddef.h>

/* Append the scope derived from `path` (n bytes) to out.  drop_last: the last
 * segment names the op itself and is not part of the scope.  Returns the
 * number of bytes appended (0: no scope). */
size_t nd_scope_normalize(const char *path, size_t n, int drop_last,
    nd_buf *out);

#endif
