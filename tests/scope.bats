#!/usr/bin/env bats
# nd_scope_normalize, through tests/tools/nd-unit-classify.c -s: one path
# per input line, the scope per output line.  The driver appends to a
# non-empty buffer and checks that the returned count is what was appended.

load helpers

scope() {	# drop the op (last segment), as ingest programs do
	run nd-unit-classify -s -l
}

@test "the header's example: wrappers unwrapped, the op dropped" {
	scope <<'E'
jit(train_step)/jit(main)/transpose(jvp(block_3))/attention/dot_general
E
	assert_success
	assert_output "train_step/main/block_3/attention"
}

@test "nested wrappers unwrap repeatedly; every wrapper name is known" {
	run nd-unit-classify -s <<'E'
transpose(jvp(foo))
vmap(remat(checkpoint(named_call(bar))))
pjit(xla_computation(pmap(xmap(jit(baz)))))
jit(f)/transpose(jvp(vmap(g)))/h
E
	assert_success
	assert_output - <<'E'
foo
bar
baz
f/g/h
E
}

@test "plumbing segments and bare wrapper words are dropped" {
	scope <<'E'
jit(f)/pallas_call/shard_map/custom_jvp_call/custom_vjp_call/x/op
jit(f)/while/body/closed_call/core_call/remat_call/scan/layer/op
jit(f)/cond/branch_1_fun/xla_call/xla_pmap/rematted_computation/y/op
jit/pjit/checkpoint/remat/z/op
jit(f)/branch_fun/branch_x_fun/op
E
	assert_output - <<'E'
f/x
f/layer
f/y
z
f/branch_fun/branch_x_fun
E
}

@test "[...] parameter annotations are removed, name= is used, indexes kept" {
	scope <<'E'
jit(f)/jit(main)/while[cond_nconsts=0 body_nconsts=3]/body/dot_general[dimension_numbers=(([1], [0]), ([], [])) precision=None]
pjit[name=block jaxpr={ lambda ; a:f32[]. let b = c/d in (b,) }]/mlp/add
xla_call[backend=None name=train_step donated=(False,)]/dense/op
layers[0]/mlp/dense
foo[bar=1]/op
E
	assert_output - <<'E'
f/main
block/mlp
train_step/dense
layers[0]/mlp
foo
E
}

@test "a '/' inside brackets does not split; unbalanced brackets split everywhere" {
	scope <<'E'
jit(a/b)/c/op
named_call(x/jvp(y))/op
loss(a/b/op
a)/b/op
E
	assert_output - <<'E'
a/b/c
x/y
loss(a/b
a)/b
E
}

@test "TensorFlow name scopes and other names pass through unchanged" {
	scope <<'E'
replica_0/bert_span_labeler/bert_encoder_1/transformer/layer_0/self_attention/query/einsum/Einsum
gradient_tape/replica_0/bert_span_labeler/bert_encoder_1/transformer/layer_3/output_layer_norm/moments/scalar
block.0/attention/softmax
foo(bar)/<lambda>/op
E
	assert_output - <<'E'
replica_0/bert_span_labeler/bert_encoder_1/transformer/layer_0/self_attention/query/einsum
gradient_tape/replica_0/bert_span_labeler/bert_encoder_1/transformer/layer_3/output_layer_norm/moments
block.0/attention
foo(bar)/<lambda>
E
}

@test "JAX paths from the fixtures" {
	scope <<'E'
jit(loss_fn)/transpose(jvp(bsd,de->bse))/dot_general
jit(loss_fn)/jvp()/te_fused_attn_forward_ffi
jit(_normal)/jit(_normal_real)/jit(_uniform)/shift_right_logical
jit(f)/jit(main)/add
jit(_psum)/jit(main)/reduce_sum
jit(dot)/dot_general
E
	assert_output - <<'E'
loss_fn/einsum(bsd,de->bse)
loss_fn
_normal/_normal_real/_uniform
f/main
_psum/main
dot
E
}

@test "empty input, single segments and empty segments give no scope" {
	# '|' marks each line's end so that empty lines are seen.
	printf '\n/\n//\njvp()\ndot_general\njit(f)\n  \n' > "$BATS_TEST_TMPDIR/e"
	run bash -o pipefail -c "nd-unit-classify -s -l < '$BATS_TEST_TMPDIR/e' | sed 's/\$/|/'"
	assert_success
	assert_output - <<'E'
|
|
|
|
|
|
|
E
	# Without drop_last a lone wrapper is its contents; blanks are trimmed
	# and empty segments dropped.
	printf 'jit(f)\n a / /b//c/ \njvp()\n\n' > "$BATS_TEST_TMPDIR/k"
	run bash -o pipefail -c "nd-unit-classify -s < '$BATS_TEST_TMPDIR/k' | sed 's/\$/|/'"
	assert_output - <<'E'
f|
a/b/c|
|
|
E
}

@test "an einsum equation reads as einsum(equation)" {
	scope <<'E'
jit(loss_fn)/jvp(bsd,de->bse)/dot_general
jit(loss_fn)/transpose(jvp(bsd,de->bse))/dot_general
jit(f)/...ij,jk->...ik/dot_general
jit(f)/a-b/c>d/op
E
	assert_output - <<'E'
loss_fn/einsum(bsd,de->bse)
loss_fn/einsum(bsd,de->bse)
f/einsum(...ij,jk->...ik)
f/a-b/c>d
E
}
