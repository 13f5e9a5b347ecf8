/*
 * nd_scope: turn framework op paths into ndtrace `scope` paths.
 *
 * A TensorFlow/JAX op path such as
 *   "jit(train_step)/jit(main)/transpose(jvp(block_3))/attention/dot_general"
 * becomes "train_step/main/block_3/attention": split on '/', unwrap the
 * transformation wrappers jit(), pjit(), jvp(), transpose(), vmap(),
 * named_call(), remat(), checkpoint(), xla_computation() (repeatedly),
 * drop plumbing segments (pallas_call, shard_map, custom_jvp_call,
 * custom_vjp_call, while, body, cond, closed_call, core_call, ...), drop the
 * last segment when it is the op itself (the primitive name), and drop empty
 * segments.  The rule is documented in xplane2ndjson(1).
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
