#!/usr/bin/env bats
# nd_classify (through tests/tools/nd-unit-classify.c) and trace-classify.

load helpers

setup() {
	T="$BATS_TEST_TMPDIR"
}

# Real op names (from the fixtures in tests/fixtures, or quoted from the
# profilers that write them) with the class and family they must get.
# Columns, " | "-separated: class family name long_name cat process thread;
# "-" is an absent field.
real_table() {
	cat <<'EOF'
compute | fusion | fusion.12 | %fusion.12 = f32[8,128]{1,0} fusion(f32[8,128]{1,0} %p0), kind=kLoop, calls=%fused_computation.12 | - | /device:TPU:0 | XLA Ops
compute | fusion | broadcast_add_fusion.1 | - | - | /device:TPU:0 | XLA Ops
compute | fusion | loop_convert_fusion.3 | - | - | /device:GPU:0 | XLA Ops
compute | fusion | input_reduce_fusion.kd | - | - | /device:GPU:0 | Stream #2
compute | convolution | convolution.3 | - | - | /device:GPU:0 | XLA Ops
compute | matmul | dot.7 | - | - | /device:TPU:0 | XLA Ops
compute | matmul | gemm_fusion_dot.12 | - | - | /device:GPU:0 | XLA Ops
compute | matmul | custom-call.3 | %custom-call.3 = (f32[8,8]{1,0}, s8[4]{0}) custom-call(f32[8,8]{1,0} %a, f32[8,8]{1,0} %b), custom_call_target="__cublas$gemm" | - | /device:GPU:0 | XLA Ops
compute | convolution | custom-call.9 | %custom-call.9 = (f32[1,8,8,4]{3,2,1,0}, u8[0]{0}) custom-call(...), custom_call_target="__cudnn$convForward" | - | /device:GPU:0 | XLA Ops
compute | attention | te_fused_attn_forward_ffi.2 | - | - | /device:GPU:0 | XLA Ops
compute | convert | wrapped_convert.kd | - | - | /device:GPU:0 | Stream #2
compute | layout | broadcast.2 | - | - | /device:TPU:0 | XLA Ops
communication | all-reduce | all-reduce.1 | - | - | /device:TPU:0 | XLA Ops
communication | all-reduce | all-reduce-start.2 | - | - | /device:GPU:0 | XLA Ops
communication | all-reduce | all-reduce-done.2 | - | - | /device:GPU:0 | XLA Ops
communication | all-gather | all-gather-start | - | - | /device:TPU:0 | XLA Ops
communication | reduce-scatter | reduce-scatter.4 | - | - | /device:TPU:0 | XLA Ops
communication | collective-permute | collective-permute-start.1 | - | - | /device:TPU:0 | XLA Ops
communication | send-recv | send | - | - | /device:TPU:0 | XLA Ops
communication | send-recv | recv-done.1 | - | - | /device:TPU:0 | XLA Ops
memory | copy | copy.564 | - | - | /device:TPU:0 | XLA Ops
memory | copy | copy-start | - | - | /device:TPU:0 | Async XLA Ops
memory | copy | copy-done.3 | - | - | /device:TPU:0 | XLA Ops
stall | sync | dependency-wait | - | - | /device:TPU:0 | XLA TraceMe
other | module | jit_f(12190760917235803885) | - | - | /device:TPU:0 | XLA Modules
other | step | 0 | - | - | /device:GPU:4 | Steps
other | scope | MatMul | - | - | /device:GPU:4 | TensorFlow Name Scope
memory | memcpy | MemcpyH2D | - | - | /device:GPU:4 | Stream #135(MemcpyH2D)
memory | memcpy | __amd_rocclr_copyBuffer.kd | - | - | /device:GPU:0 | Stream #16(Kernel)
memory | memset | __amd_rocclr_fillBufferAligned.kd | - | - | /device:GPU:0 | Stream #2
compute | convolution | Im3d2Col.kd | - | - | /device:GPU:0 | Stream #16(Kernel)
compute | matmul | Cijk_Ailk_Bljk_BBS_BH_MT128x128x64_MI16x16x16x1_SN_1LDSB0_APM1_ABV0 | - | - | /device:GPU:0 | Stream #16(Kernel)
compute | random | void tensorflow::functor::FillPhiloxRandomKernelLaunch<tensorflow::random::UniformDistribution<tensorflow::random::PhiloxRandom, Eigen::half> >(unsigned long long const*) | - | - | /device:GPU:4 | Stream #134(Compute)
host | matmul | gemm_fusion_dot.1 | - | - | /host:CPU | python3
host | launch | hipModuleLaunchKernel | - | - | /host:CPU | Host Threads/7
host | launch | PjitFunction(loss_fn) | - | - | /host:CPU | python3
host | compile | all-reduce-combiner | - | - | /host:CPU | switchto-default-SDomainT/3118763
host | compile | XLA::TPU emitting for all-reduce | - | - | /host:CPU | switchto-default-SDomainT/3118763
stall | sync | Wait for donation holds | - | - | /host:CPU | main/3116817
communication | send-recv | _HostRecv | - | - | /host:CPU | tf_gpu_private_4/189954656
host | convert | Cast | - | - | /host:CPU | tf_gpu_private_6/1085868292
communication | all-reduce | ncclKernel_AllReduce_RING_LL_Sum_float(ncclWorkElem) | - | kernel | - | stream 7
communication | all-gather | ncclDevKernel_AllGather_RING_LL | - | kernel | - | -
communication | all-to-all | void deep_ep::intranode::dispatch<8, 768, 8192>(int4*, float*, int*, long*, float*, int*, int*, int4 const*, float const*, long const*, float const*, bool const*, int const*, int, int, int, int, int, int, int, int, void**, int, int, int, int) | - | kernel | - | -
communication | all-to-all | void deep_ep::intranode::combine<__nv_bfloat16, 8, 768>(__nv_bfloat16*, float*, int4 const*, float const*, float const*, int const*, int const*, int, int, int, int, void**, int, int, int) | - | kernel | - | -
communication | all-to-all | void deep_ep::intranode::notify_dispatch<8>(int const*, int*, int, int const*, int*, int, int, int, bool const*, int*, int*, int*, int, void**, int**, int, int, int) | - | kernel | - | -
communication | all-to-all | void deep_ep::internode_ll::dispatch<false, 3, 7168>(void*, float*, int*, long*, int*, int*, int*, void*, int*, void*, long*, void const*, long const*, int*, int*, int, int, int, int, int, int, int, int, int, int, bool) | - | kernel | - | -
communication | all-to-all | dpsk::ep::combine_kernel | - | kernel | - | -
communication | all-reduce | void vllm::cross_device_reduce_1stage<__nv_bfloat16, 8>(vllm::RankData*, vllm::RankSignals, vllm::Signal*, __nv_bfloat16*, int, int) | - | kernel | - | -
communication | all-reduce | void sglang::cross_device_reduce_2stage<half, 4>(sglang::RankData*, sglang::RankSignals, sglang::Signal*, half*, int, int) | - | kernel | - | -
communication | all-reduce | void c10d::symmetric_memory::two_shot_all_reduce_kernel<float, 16, 8>(float**, unsigned long, unsigned long, float*, unsigned long, unsigned long, unsigned int**, unsigned long, unsigned long) | - | kernel | - | -
communication | collective | void nvshmemi_transfer_rma_kernel<(nvshmemi_op_t)0>(void*, void*, unsigned long, int) | - | kernel | - | -
communication | collective | mscclKernel_Sum_float_Simple_false | - | kernel | - | -
communication | send-recv | ncclKernel_SendRecv_RING_SIMPLE_Sum_int8_t(ncclWorkElem) | - | kernel | - | -
compute | matmul | ampere_sgemm_128x64_tn | - | kernel | - | -
compute | matmul | volta_sgemm_128x64_nt | - | Kernel | - | -
compute | matmul | sm90_xmma_gemm_bf16bf16_bf16f32_f32_tn_n_tilesize128x128x64_warpgroupsize1x1x1_execute_segment_k_off_kernel__5x_cublas | - | kernel | - | -
compute | matmul | Cijk_Alik_Bljk_BBS_BH_Bias_HA_S_SAV_UserArgs_MT256x256x64_MI16x16x1 | - | kernel | - | -
compute | matmul | void cutlass::Kernel<cutlass_80_tensorop_s1688gemm_128x128_32x3_nn_align4>(cutlass_80_tensorop_s1688gemm_128x128_32x3_nn_align4::Params) | - | kernel | - | -
compute | elementwise | void at::native::vectorized_elementwise_kernel<4, at::native::CUDAFunctor_add<float>, at::detail::Array<char*, 3> >(int, at::native::CUDAFunctor_add<float>, at::detail::Array<char*, 3>) | - | kernel | - | -
compute | reduce | void at::native::reduce_kernel<512, 1, at::native::ReduceOp<float, at::native::MeanOps<float, float, float, float>, unsigned int, float, 4> >(at::native::ReduceOp<float, at::native::MeanOps<float, float, float, float>, unsigned int, float, 4>) | - | kernel | - | -
memory | copy | void at::native::unrolled_elementwise_kernel<at::native::direct_copy_kernel_cuda(at::TensorIteratorBase&)::{lambda()#2}::operator()() const::{lambda()#8}::operator()() const::{lambda(float)#1}> | - | kernel | - | -
compute | convert | void at::native::vectorized_elementwise_kernel<4, at::native::bfloat16_copy_kernel_cuda(at::TensorIteratorBase&)::{lambda(float)#1}, std::array<char*, 2ul> >(int) | - | kernel | - | -
compute | convolution | void cudnn::detail::dgrad_engine<float, 512, 6, 5, 3, 3, 3, false>(int, int, int, float const*, int, float const*, int, float*, kernel_grad_params) | - | Kernel | - | -
compute | convolution | volta_scudnn_128x64_relu_interior_nn_v1 | - | Kernel | - | -
compute | convolution | sm80_xmma_fprop_implicit_gemm_indexed_tf32f32_tf32f32_f32_nhwckrsc_nchw_tilesize128x128x16_stage4_warpsize2x2x1_g1_tensor16x8x8_alignc4_execute_kernel__5x_cudnn | - | kernel | - | -
compute | convolution | igemm_fwd_gtcx3_nhwc_bf16_bx0_ex1_bt128x128x32_wt32x32x8_ws1x1_wr2x2 | - | kernel | - | -
compute | norm | void cudnn::bn_fw_tr_1C11_kernel_NCHW<float, float, 128, true, 1>(cudnnTensorStruct, float const*) | - | Kernel | - | -
compute | norm | void at::native::(anonymous namespace)::vectorized_layer_norm_kernel<float, float>(int, float, float const*) | - | kernel | - | -
compute | softmax | void (anonymous namespace)::softmax_warp_forward<float, float, float, 4, false, false>(float*, float const*, int, int, int, bool const*) | - | kernel | - | -
compute | loss | void cunn_ClassNLLCriterion_updateOutput_kernel<float, float>(float*, float*, float*, long*, float*, int, int, int, int, long) | - | Kernel | - | -
compute | optimizer | void multi_tensor_apply_kernel<TensorListMetadata<4>, AdamFunctor<float>, float, float, float, float, float, float, adamMode_t, float, int, int>(int) | - | kernel | - | -
compute | attention | void pytorch_flash::flash_fwd_kernel<pytorch_flash::Flash_fwd_kernel_traits<128, 64, 64, 4, false, false, cutlass::bfloat16_t> >(pytorch_flash::Flash_fwd_params) | - | kernel | - | -
compute | attention | fmha_cutlassF_f16_aligned_64x64_rf_sm80 | - | kernel | - | -
compute | attention | attn_fwd | - | kernel | - | -
compute | embedding | void split_embedding_codegen_forward_unweighted_kernel<float, float, float, long, 64ul>(at::GenericPackedTensorAccessor<float, 1ul, at::RestrictPtrTraits, long>) | - | kernel | - | -
compute | sort | void cub::DeviceRadixSortOnesweepKernel<cub::DeviceRadixSortPolicy<long, int, int>::Policy800, false, long, int, int, int>(int*) | - | kernel | - | -
compute | gather-scatter | void at::native::(anonymous namespace)::indexSelectLargeIndex<float, int, unsigned int, 2, 2, -2, true>(at::cuda::detail::TensorInfo<float, unsigned int>) | - | kernel | - | -
compute | pooling | void at::native::(anonymous namespace)::max_pool_forward_nchw<float, float>(int, float const*, long, long, long) | - | kernel | - | -
compute | random | void at::native::(anonymous namespace)::fused_dropout_kernel_vec<float, float, unsigned int, 1, 4, bool>(at::cuda::detail::TensorInfo<float, unsigned int>) | - | kernel | - | -
compute | fusion | triton_poi_fused__unsafe_view_add_0 | - | kernel | - | -
compute | norm | triton_red_fused_native_layer_norm_0 | - | kernel | - | -
compute | layout | batched_transpose_32x32_half | - | kernel | - | -
memory | memcpy | Memcpy HtoD (Pageable -> Device) | - | gpu_memcpy | - | -
memory | memcpy | Memcpy DtoD (Device -> Device) | - | Memcpy | - | -
memory | memset | Memset (Device) | - | gpu_memset | - | -
stall | sync | Stream Sync | - | cuda_sync | - | -
host | launch | cudaLaunchKernel | - | cuda_runtime | - | -
host | launch | cudaGraphLaunch | - | cuda_runtime | - | -
host | launch | cuLaunchKernel | - | cuda_driver | - | -
host | launch | mtiaLaunchKernel | - | mtia_runtime | - | -
host | launch | runFunction | - | mtia_runtime | - | -
host | runtime | mtiaMemcpyAsync | - | mtia_runtime | - | -
host | launch | aclrtLaunchKernel | - | - | - | -
memory | dma | dma_request | - | mtia_ccp_events | - | -
stall | sync | cudaDeviceSynchronize | - | cuda_runtime | - | -
stall | sync | cudaStreamSynchronize | - | Runtime | - | -
stall | sync | hipDeviceSynchronize | - | cuda_runtime | - | -
host | sync | cudaStreamWaitEvent | - | cuda_runtime | - | -
host | sync | cudaEventQuery | - | cuda_runtime | - | -
host | memcpy | cudaMemcpyAsync | - | cuda_runtime | - | -
host | memset | cudaMemsetAsync | - | Runtime | - | -
host | alloc | hipMalloc | - | cuda_runtime | - | -
host | runtime | cudaOccupancyMaxActiveBlocksPerMultiprocessorWithFlags | - | cuda_runtime | - | -
host | matmul | aten::mm | - | cpu_op | - | -
host | matmul | aten::addmm | - | cpu_op | - | -
host | matmul | aten::linear | - | cpu_op | - | -
host | matmul | aten::matmul | - | cpu_op | - | -
host | matmul | autograd::engine::evaluate_function: AddmmBackward0 | - | cpu_op | - | -
host | convolution | aten::conv2d | - | cpu_op | - | -
host | convolution | aten::cudnn_convolution | - | Operator | - | -
host | attention | aten::scaled_dot_product_attention | - | cpu_op | - | -
host | attention | aten::_flash_attention_forward | - | cpu_op | - | -
host | loss | aten::cross_entropy_loss | - | cpu_op | - | -
host | loss | aten::nll_loss | - | Operator | - | -
host | loss | aten::mse_loss | - | cpu_op | - | -
host | optimizer | Optimizer.step#Adam.step | - | user_annotation | - | -
host | optimizer | Optimizer.zero_grad#SGD.zero_grad | - | cpu_op | - | -
host | optimizer | aten::_foreach_add_ | - | cpu_op | - | -
host | norm | aten::layer_norm | - | cpu_op | - | -
host | norm | aten::native_batch_norm | - | cpu_op | - | -
host | softmax | aten::_softmax | - | cpu_op | - | -
host | embedding | aten::embedding | - | cpu_op | - | -
host | copy | aten::copy_ | - | cpu_op | - | -
host | copy | aten::to | - | cpu_op | - | -
host | layout | aten::view | - | cpu_op | - | -
host | elementwise | aten::add_ | - | Operator | - | -
host | reduce | aten::sum | - | cpu_op | - | -
host | alloc | aten::empty_strided | - | cpu_op | - | -
host | sync | aten::item | - | cpu_op | - | -
host | step | ProfilerStep#3 | - | user_annotation | - | -
host | python | torch/nn/modules/module.py(1501): _call_impl | - | python_function | - | -
host | python | torch/distributed/distributed_c10d.py(2050): all_reduce | - | python_function | - | -
communication | all-reduce | c10d::allreduce_ | - | cpu_op | - | -
communication | all-reduce | nccl:all_reduce | - | user_annotation | - | -
communication | all-gather | nccl:_all_gather_base | - | user_annotation | - | -
communication | all-to-all | c10d::alltoall_base_ | - | cpu_op | - | -
communication | all-to-all | ## all2all_data:lengths ## | - | user_annotation | - | -
communication | collective | record_param_comms | - | cpu_op | - | -
stall | dataloader | enumerate(DataLoader)#_SingleProcessDataLoaderIter.__next__ | - | user_annotation | - | -
stall | sync | ## EmbeddingBagCollectionAwaitable wait() ## | - | user_annotation | - | -
other | step | ProfilerStep#3 | - | gpu_user_annotation | - | -
other | optimizer | Optimizer.step#SGD.step | - | gpu_user_annotation | - | -
host | other | ## forward ## | - | user_annotation | - | -
host | step | ProfilerStep#1 | - | - | CPU functions | -
host | matmul | aten::mm | - | - | - | -
communication | all-reduce | gloo:all_reduce | - | - | - | -
stall | dataloader | dataloader | - | - | - | -
other | other | forward | - | - | - | -
other | other | - | - | - | - | -
EOF
}

# The table as nd-unit-classify input (5 tab-separated fields, absent = "").
table_in() {
	sed 's/ | /\t/g' | awk -F'\t' 'BEGIN { OFS = "\t" }
	    { for (i = 1; i <= NF; i++) if ($i == "-") $i = ""; print }' |
	    cut -f3-
}

table_want() {
	sed 's/ | /\t/g' | cut -f1,2
}

@test "built-in table: real op names get their class and family" {
	real_table | table_in > "$T/in.tsv"
	real_table | table_want > "$T/want"
	[ "$(wc -l < "$T/want")" -ge 100 ]
	run nd-unit-classify < "$T/in.tsv"
	assert_success
	paste "$T/want" <(cut -f1 "$T/in.tsv") > "$T/want.named"
	echo "$output" | paste - <(cut -f1 "$T/in.tsv") > "$T/got.named"
	run diff "$T/want.named" "$T/got.named"
	assert_success
}

@test "the cache answers like the rules: repeated and near-identical keys" {
	real_table | table_in > "$T/in.tsv"
	run nd-unit-classify -n 5 < "$T/in.tsv"
	assert_success
	real_table | table_want > "$T/want"
	assert_output "$(cat "$T/want")"
	# The same name in different places, and fields that only differ in
	# where one ends and the next begins, are different keys.
	printf 'copy.3\t\t\t/device:TPU:0\tXLA Ops\ncopy.3\t\t\t/host:CPU\tpython\ncopy.3\t\t\t/device:TPU:0\tXLA Ops\naten::m\tm\tcpu_op\naten::mm\t\tcpu_op\n' > "$T/k.tsv"
	run nd-unit-classify -n 3 < "$T/k.tsv"
	assert_output - <<'E'
memory	copy
host	copy
memory	copy
host	other
host	matmul
E
}

# A stream holding one span per table row, long_name in args.
table_stream() {
	echo '{"type":"meta","schema":"ndtrace/1","source":"t","format":"chrome","origin_ns":0,"host":null,"rank":null,"producer":"hand 1"}'
	real_table | sed 's/ | /\t/g' | jq -Rc '
	    split("\t") | map(if . == "-" then null else . end) as $f |
	    {type: "span", ts_ns: 0, dur_ns: 1, name: ($f[2] // "?"),
	     pid: 1, tid: 1, process: $f[5], thread: $f[6], cat: $f[4],
	     args: (if $f[3] then {long_name: $f[3]} else {} end)} |
	    with_entries(select(.value != null))'
}

@test "trace-classify: spans get the table's class and family" {
	table_stream > "$T/s.ndjson"
	real_table | table_want > "$T/want"
	# The last row has no name at all; the stream has to give one.
	sed -i '$ s/.*/other\tother/' "$T/want"
	run trace-classify "$T/s.ndjson"
	assert_success
	echo "$output" | jq -r 'select(.type=="span") | [.class, .family] | @tsv' > "$T/got"
	run diff "$T/want" "$T/got"
	assert_success
}

@test "trace-classify: unknown keys kept, class and family replaced, instants too" {
	cat > "$T/u.ndjson" <<'E'
{"type":"meta","schema":"ndtrace/1","source":"t","format":"chrome","origin_ns":0,"host":null,"rank":null,"producer":"hand 1","extra":{"k":[1,2]}}
{"type":"span","ts_ns":5,"dur_ns":2,"name":"aten::mm","pid":1,"tid":2,"cat":"cpu_op","class":"stall","family":"loss","zeta":{"a":[true,null]},"args":{"input_dims":[[2,3]],"long_name":7},"alpha":"\u00e9"}
{"type":"instant","ts_ns":6,"name":"cudaStreamSynchronize","pid":1,"tid":2,"cat":"cuda_runtime","mine":1}
E
	run trace-classify "$T/u.ndjson"
	assert_success
	assert_output - <<'E'
{"type":"meta","schema":"ndtrace/1","source":"t","format":"chrome","origin_ns":0,"host":null,"rank":null,"producer":"hand 1","extra":{"k":[1,2]}}
{"type":"span","ts_ns":5,"dur_ns":2,"name":"aten::mm","pid":1,"tid":2,"cat":"cpu_op","class":"host","family":"matmul","args":{"input_dims":[[2,3]],"long_name":7},"zeta":{"a":[true,null]},"alpha":"\u00e9"}
{"type":"instant","ts_ns":6,"name":"cudaStreamSynchronize","pid":1,"tid":2,"cat":"cuda_runtime","class":"stall","family":"sync","mine":1}
E
}

@test "trace-classify: records it does not classify pass through byte for byte" {
	# Odd spacing and key order that a re-encoder would change.
	cat > "$T/p.ndjson" <<'E'
{"type":"meta","schema":"ndtrace/1","source":"t","format":"xplane","origin_ns":0,"host":"h","rank":3,"producer":"hand 1"}
{ "type" : "counter","ts_ns":1,"name":"mem","pid":1,"values":{"bytes":1.50}, "class":"x"}
{"name":"f","type":"flow","ts_ns":1,"pid":1,"tid":1,"id":7}
{"type":"gap","ts_ns":1,"dur_ns":2,"name":"aten::mm","cat":"cpu_op"}
{"type":"end","events":0,"spans":0,"skipped":{},"sha256":"0000000000000000000000000000000000000000000000000000000000000000","suspected_truncation":false,"warnings":[]}
E
	run trace-classify "$T/p.ndjson"
	assert_success
	assert_output "$(cat "$T/p.ndjson")"
	# And in a mixed stream, the non-span lines are untouched.
	table_stream > "$T/s.ndjson"
	cat "$T/p.ndjson" >> "$T/s.ndjson"
	trace-classify "$T/s.ndjson" | tail -n 5 > "$T/tail"
	cmp "$T/p.ndjson" "$T/tail"
}

@test "trace-classify is idempotent and reads stdin, '-' and several files" {
	table_stream > "$T/s.ndjson"
	trace-classify "$T/s.ndjson" > "$T/once"
	trace-classify < "$T/once" > "$T/twice"
	cmp "$T/once" "$T/twice"
	trace-classify - "$T/s.ndjson" < "$T/s.ndjson" > "$T/two"
	cat "$T/once" "$T/once" | cmp - "$T/two"
	gzip -c "$T/s.ndjson" > "$T/s.gz"
	trace-classify "$T/s.gz" | cmp - "$T/once"
}

@test "--print-rules round trip: print, read back, print again is identical" {
	run trace-classify --print-rules
	assert_success
	assert_line --index 0 "# ndtrace classification rules: trace-classify --rules FILE reads this."
	echo "$output" > "$T/r1"
	trace-classify -r "$T/r1" --print-rules > "$T/r2"
	cmp "$T/r1" "$T/r2"
	# Every rule line has seven tab-separated columns.
	run awk -F'\t' '!/^#/ && NF > 0 && NF != 7' "$T/r1"
	assert_output ""
	# ... and classifies exactly as the built-in table.
	real_table | table_in > "$T/in.tsv"
	nd-unit-classify < "$T/in.tsv" > "$T/builtin"
	nd-unit-classify -r "$T/r1" < "$T/in.tsv" > "$T/reread"
	cmp "$T/builtin" "$T/reread"
	table_stream > "$T/s.ndjson"
	trace-classify "$T/s.ndjson" > "$T/a"
	trace-classify --rules="$T/r1" "$T/s.ndjson" > "$T/b"
	cmp "$T/a" "$T/b"
}

@test "--rules: a rule put first overrides the built-in one, nothing else moves" {
	trace-classify --print-rules > "$T/builtin.rules"
	{ printf '# my kernels\n'; printf 'compute\tattention\t^ampere_sgemm\t*\t*\t*\t*\n'; cat "$T/builtin.rules"; } > "$T/my.rules"
	real_table | table_in > "$T/in.tsv"
	nd-unit-classify < "$T/in.tsv" > "$T/before"
	nd-unit-classify -r "$T/my.rules" < "$T/in.tsv" > "$T/after"
	run diff "$T/before" "$T/after"
	assert_failure 1
	# Exactly one row changed: the ampere_sgemm kernel.
	n=$(grep -n '^ampere_sgemm_128x64_tn' "$T/in.tsv" | cut -d: -f1)
	assert_output - <<E
${n}c${n}
< compute	matmul
---
> compute	attention
E
	# Editing a rule in place: make the data loader host work.
	sed 's/^stall\tdataloader\t/host\tdataloader\t/' "$T/builtin.rules" > "$T/dl.rules"
	printf 'dataloader\nenumerate(DataLoader)#_MultiProcessingDataLoaderIter.__next__\t\tuser_annotation\n' > "$T/dl.tsv"
	run nd-unit-classify -r "$T/dl.rules" < "$T/dl.tsv"
	assert_output $'host\tdataloader\nhost\tdataloader'
}

@test "--rules-add: the file's rules before the built-in ones, as --rules with them prepended; in the converters too" {
	trace-classify --print-rules > "$T/builtin.rules"
	printf 'communication\tall-to-all\tmy_moe_(dispatch|combine)\t*\t*\t*\t*\n' > "$T/add.rules"
	cat "$T/add.rules" "$T/builtin.rules" > "$T/all.rules"
	table_stream > "$T/s.nd"
	{ for n in my_moe_dispatch my_moe_combine ampere_sgemm_128x64_tn; do
		printf '{"type":"span","ts_ns":0,"dur_ns":1,"name":"%s","pid":1,"tid":1,"cat":"kernel"}\n' "$n"
	  done; } >> "$T/s.nd"
	trace-classify -r "$T/all.rules" "$T/s.nd" > "$T/want"
	trace-classify --rules-add "$T/add.rules" "$T/s.nd" > "$T/got"
	cmp "$T/want" "$T/got"
	# the added rule decides, the built-in ones the rest
	run bash -c "tail -n 3 '$T/got' | jq -r '[.name, .class, .family] | @tsv'"
	assert_output "$(printf 'my_moe_dispatch\tcommunication\tall-to-all\nmy_moe_combine\tcommunication\tall-to-all\nampere_sgemm_128x64_tn\tcompute\tmatmul')"
	run trace-classify -r "$T/all.rules" --rules-add "$T/add.rules" "$T/s.nd"
	assert_failure 2
	assert_output "trace-classify: --rules and --rules-add exclude each other"
	# chrome2ndjson and xplane2ndjson take it too
	printf 'compute\tmy-family\tmax_pool\t*\t*\t*\t*\n' > "$T/k.rules"
	run bash -c "chrome2ndjson --rules-add '$T/k.rules' '$FIXTURES/chrome/hta_alexnet.json.gz' | jq -r 'select(.type == \"span\" and .family == \"my-family\") | .name' | sort -u"
	assert_output "$(chrome2ndjson "$FIXTURES/chrome/hta_alexnet.json.gz" | jq -r 'select(.type == "span" and (.name | test("max_pool"))) | .name' | sort -u)"
	[ -n "$output" ]
	printf 'compute\tmy-family\t^fusion\t*\t*\t*\t*\n' > "$T/x.rules"
	want=$(xplane2ndjson "$FIXTURES/xplane/tpu_inference_4core.xplane.pb" | jq -s '[.[] | select(.type == "span" and (.name | test("^fusion")) and .class != "other")] | length')
	run bash -c "xplane2ndjson --rules-add '$T/x.rules' '$FIXTURES/xplane/tpu_inference_4core.xplane.pb' | jq -s '[.[] | select(.type == \"span\" and .family == \"my-family\")] | length'"
	[ "$want" -gt 0 ]
	assert_output "$want"
	run chrome2ndjson -r "$T/k.rules" --rules-add "$T/k.rules" /dev/null
	assert_failure 2
	assert_output "chrome2ndjson: --rules and --rules-add exclude each other"
}

@test "rules: class and family are decided separately; nothing decided is other" {
	printf '%s\n' '# families first, classes after' \
	    $'*\tmatmul\tgemm|aten::mm\t*\t*\t*\t*' \
	    '' \
	    $'host\t*\t*\t*\t^cpu_op$\t*\t*' \
	    $'compute\tkernel-ish\t*\t*\t^kernel$\t*\t*' \
	    $'memory\t*\t*\t*\t^$\t^/device:\t*' > "$T/r"
	printf '%s\n' $'aten::mm\t\tcpu_op' $'ampere_sgemm_64x64_nn\t\tkernel' \
	    $'relu_kernel\t\tkernel' $'aten::relu\t\tcpu_op' $'copy.1\t\t\t/device:TPU:0' \
	    $'copy.1\t\txla_op\t/device:TPU:0' 'nothing' > "$T/in.tsv"
	run nd-unit-classify -r "$T/r" < "$T/in.tsv"
	assert_success
	assert_output - <<'E'
host	matmul
compute	matmul
compute	kernel-ish
host	other
memory	other
other	other
other	other
E
	# Comments stay with the rule below them; blank lines and runs of
	# tabs are accepted.
	printf '# zzz-dropped\n\n# b\n# c\nhost\t\t\tx\t*\t*\t*\t*\t*\t\n' > "$T/c"
	run trace-classify -r "$T/c" --print-rules
	assert_success
	assert_output --partial $'\n\n# b\n# c\nhost\tx\t*\t*\t*\t*\t*'
	refute_output --partial 'zzz-dropped'
}

@test "bad rule files: FILE:LINE: message and exit 2" {
	printf '# ok\nhost\tlaunch\tgemm(\t*\t*\t*\t*\n' > "$T/re"
	run trace-classify -r "$T/re" --print-rules
	assert_failure 2
	assert_output "trace-classify: $T/re:2: bad regex in column name: 'gemm(': Unmatched ( or \\("
	printf 'host\tother\t*\t*\t*\t*\t[z-a]\n' > "$T/re2"
	run trace-classify -r "$T/re2" "$T/none"
	assert_failure 2
	assert_output "trace-classify: $T/re2:1: bad regex in column thread: '[z-a]': Invalid range end"
	printf '\n\nhost\tlaunch\tcuda\n' > "$T/cols"
	run trace-classify -r "$T/cols" --print-rules
	assert_failure 2
	assert_output "trace-classify: $T/cols:3: expected 7 tab-separated columns (class family name long_name cat process thread), found 3"
	printf 'host launch cuda * * * *\n' > "$T/spaces"
	run trace-classify -r "$T/spaces" --print-rules
	assert_failure 2
	assert_output "trace-classify: $T/spaces:1: expected 7 tab-separated columns (class family name long_name cat process thread), found 1"
	printf 'hots\tlaunch\t*\t*\t*\t*\t*\n' > "$T/cls"
	run trace-classify -r "$T/cls" --print-rules
	assert_failure 2
	assert_output "trace-classify: $T/cls:1: unknown class 'hots' (expected compute, communication, memory, host, stall, other or *)"
	printf 'host\tmat mul\t*\t*\t*\t*\t*\n' > "$T/fam"
	run trace-classify -r "$T/fam" --print-rules
	assert_failure 2
	assert_output "trace-classify: $T/fam:1: invalid family 'mat mul' (use letters, digits, '-', '_' and '.')"
	printf '*\t*\tx\t*\t*\t*\t*\n' > "$T/none"
	run trace-classify -r "$T/none" --print-rules
	assert_failure 2
	assert_output "trace-classify: $T/none:1: rule gives neither a class nor a family"
	run trace-classify -r "$T/missing" --print-rules
	assert_failure 2
	assert_output "trace-classify: $T/missing: No such file or directory"
	# The same reader serves the library: nd-unit-classify says the same.
	run nd-unit-classify -r "$T/re" < /dev/null
	assert_failure 2
	assert_output "nd-unit-classify: $T/re:2: bad regex in column name: 'gemm(': Unmatched ( or \\("
}

@test "an absent field is matched as the empty string" {
	printf 'stall\tx\t*\t*\t^$\t*\t*\nhost\ty\t*\t*\t*\t*\t*\n' > "$T/r"
	printf '%s\n' '{"type":"meta","schema":"ndtrace/1","source":"t","format":"chrome","origin_ns":0,"host":null,"rank":null,"producer":"hand 1"}' \
	    '{"type":"span","ts_ns":0,"dur_ns":1,"name":"a","pid":1,"tid":1}' \
	    '{"type":"span","ts_ns":0,"dur_ns":1,"name":"a","pid":1,"tid":1,"cat":""}' \
	    '{"type":"span","ts_ns":0,"dur_ns":1,"name":"a","pid":1,"tid":1,"cat":"k"}' > "$T/s"
	run bash -c "trace-classify -r '$T/r' '$T/s' | jq -r 'select(.type==\"span\") | .class + \" \" + .family'"
	assert_output $'stall x\nstall x\nhost y'
}

@test "input errors name file and line; usage errors exit 2" {
	printf '%s\n' '{"type":"meta","schema":"ndtrace/1","source":"t","format":"chrome","origin_ns":0,"host":null,"rank":null,"producer":"hand 1"}' \
	    '{"type":"span","ts_ns":0,"dur_ns":1,"name":"a","pid":1,"tid":1' > "$T/bad"
	run trace-classify "$T/bad"
	assert_failure 2
	assert_line --index 0 --regexp "^trace-classify: $T/bad:2: invalid JSON"
	run trace-classify "$T/nope"
	assert_failure 2
	assert_output "trace-classify: $T/nope: No such file or directory"
	run trace-classify --bogus
	assert_failure 2
	assert_line --index 1 "usage: trace-classify [-hV] [-o file] [-r rules] [--rules-add rules] [--print-rules] [file ...]"
	run trace-classify --print-rules "$T/bad"
	assert_failure 2
	assert_output "trace-classify: --print-rules takes no file arguments"
}

@test "-h prints the usage whose first line is the man page SYNOPSIS; -V the version" {
	run trace-classify -h
	assert_success
	assert_line --index 0 "usage: trace-classify [-hV] [-o file] [-r rules] [--rules-add rules] [--print-rules] [file ...]"
	for o in --output --rules --print-rules --help --version; do
		assert_output --partial -- "$o"
	done
	run trace-classify --version
	assert_success
	assert_output --regexp '^trace-classify \(ndtrace\) [0-9]+\.[0-9]+\.[0-9]+$'
	man="$BATS_TEST_DIRNAME/../man/trace-classify.1"
	run mandoc -Tlint -Wwarning "$man"
	assert_output ""
	run bash -c "mandoc -Tascii '$man' | col -b | awk '/^SYNOPSIS/ { f = 1; next } /^[A-Z]/ { f = 0 } f' | tr -s ' \t\n' '   ' | sed 's/^ *//; s/ *\$//'"
	assert_output "trace-classify [-hV] [-o file] [-r rules] [--rules-add rules] [--print-rules] [file ...]"
}

@test "-o writes atomically: a failed run leaves the old file alone" {
	table_stream > "$T/s.ndjson"
	trace-classify -o "$T/out" "$T/s.ndjson"
	trace-classify "$T/s.ndjson" | cmp - "$T/out"
	echo previous > "$T/keep"
	{ cat "$T/s.ndjson"; echo '{"type":"span"'; } > "$T/broken"
	run trace-classify -o "$T/keep" "$T/broken"
	assert_failure 2
	assert_equal "$(cat "$T/keep")" previous
	run bash -c "ls '$T' | grep -c keep"
	assert_output 1
	# In place, as the man page suggests.
	cp "$T/s.ndjson" "$T/inplace"
	trace-classify -o "$T/inplace" "$T/inplace"
	cmp "$T/inplace" "$T/out"
	trace-classify --print-rules -o "$T/rules"
	trace-classify --print-rules | cmp - "$T/rules"
}

@test "man page examples run as written" {
	cd "$T"
	table_stream > run.ndjson
	n=$(real_table | grep -c '^host | matmul | ')
	run bash -o pipefail -c "trace-classify run.ndjson |
  jq -r 'select(.type==\"span\") | [.class, .family, .dur_ns] | @tsv' |
  awk -F'\t' '{t[\$1\"\t\"\$2] += \$3} END {for (k in t) print t[k]\"\t\"k}' |
  sort -rn | head -n 100"
	assert_success
	assert_line "$n"$'\thost\tmatmul'
	trace-classify --print-rules > my.rules
	printf 'compute\tattention\t^my_attn_\t*\t*\t*\t*\n' > head.rules
	cat head.rules my.rules > all.rules
	echo '{"type":"span","ts_ns":0,"dur_ns":1,"name":"my_attn_fwd","pid":1,"tid":1,"cat":"kernel"}' >> run.ndjson
	trace-classify -r all.rules run.ndjson > run.classified.ndjson
	run bash -c "tail -n 1 run.classified.ndjson | jq -r '.class + \" \" + .family'"
	assert_output "compute attention"
	run bash -o pipefail -c "trace-classify run.ndjson | jq -r 'select(.family==\"other\") | .name' | sort | uniq -c | sort -rn"
	assert_success
	assert_line --regexp '^ +1 forward$'
}

@test "fixtures: ingest output re-classified keeps its classes" {
	need_fixtures
	chrome2ndjson "$FIXTURES/chrome/hta_alexnet.json.gz" > "$T/a.ndjson"
	trace-classify "$T/a.ndjson" > "$T/b.ndjson"
	# Kernels are device work, cpu ops host work (or comm/stall).
	run bash -c "jq -r 'select(.type==\"span\" and .cat==\"kernel\") | .class' '$T/b.ndjson' | sort -u"
	refute_line host
	refute_line other
	run bash -c "jq -r 'select(.type==\"span\" and .cat==\"cpu_op\") | .class' '$T/b.ndjson' | sort -u"
	refute_line compute
	run bash -c "jq -r 'select(.type==\"span\" and .cat==\"kernel\" and (.name|test(\"sgemm\"))) | .family' '$T/b.ndjson' | sort -u"
	assert_output matmul
	trace-check -q "$T/b.ndjson"
}

@test "fixtures: NCCL kernels and calls of a real DLRM rank are communication" {
	need_fixtures
	run bash -o pipefail -c "chrome2ndjson '$FIXTURES'/chrome/dlrm_8ranks/worker0_*.json.gz | trace-classify |
	    jq -r 'select(.type==\"span\" and (.name|test(\"^nccl\"))) | [(.name|sub(\"[(].*\";\"\")), .cat, .class, .family] | @tsv' | sort -u"
	assert_success
	assert_output - <<'E'
nccl:all_reduce	user_annotation	communication	all-reduce
nccl:all_to_all	user_annotation	communication	all-to-all
ncclKernel_AllReduce_RING_LL_Sum_float	kernel	communication	all-reduce
ncclKernel_SendRecv_RING_SIMPLE_Sum_int8_t	kernel	communication	send-recv
E
}

@test "fixtures: TPU XLA ops" {
	need_fixtures
	run bash -o pipefail -c "xplane2ndjson '$FIXTURES/xplane/tpu_inference_4core.xplane.pb' | trace-classify |
	    jq -r 'select(.type==\"span\" and .process==\"/device:TPU:0\" and (.name|test(\"^(all-reduce|copy-start|copy-done|broadcast_add_fusion)\"))) | [.name, .class, .family] | @tsv' |
	    sed 's/\\.[0-9]*\t/\t/' | sort -u"
	assert_success
	assert_output - <<'E'
all-reduce	communication	all-reduce
broadcast_add_fusion	compute	fusion
copy-done	memory	copy
copy-start	memory	copy
E
}
