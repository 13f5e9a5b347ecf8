/*
 * nd_peak: the built-in table of accelerator peak throughput, for MFU
 * (trace-steps(1)) and rooflines.
 *
 * Figures are vendor datasheet peaks of dense matrix math (no structured
 * sparsity) in TFLOP/s per device as a trace names it: one GPU, or one TPU
 * chip (a /device:TPU:N plane).  The precision is bf16 where the device has
 * it and fp16 on V100 (no bf16).  They are what MFU conventionally divides
 * by; a run in fp32 or fp8 needs --peak-tflops.
 *
 *   key        TFLOP/s  prec  matched in device names (first match wins)
 *   B200        2250    bf16  "B200"
 *   GH200        989    bf16  "GH200"
 *   H200         989    bf16  "H200"
 *   H100 PCIe    756    bf16  "H100 PCIe"
 *   H100 NVL     835    bf16  "H100 NVL"
 *   H100         989    bf16  "H100" (SXM5; "NVIDIA H100 80GB HBM3")
 *   A100         312    bf16  "A100" (SXM4 and PCIe alike)
 *   V100 PCIe    112    fp16  "V100-PCIE", "V100 PCIe"
 *   V100         125    fp16  "V100" (SXM2)
 *   MI300X      1307.4  bf16  "MI300X"
 *   TPU v4       275    bf16  "TPU v4"
 *   TPU v5e      197    bf16  "TPU v5 lite", "TPU v5e", "v5litepod"
 *   TPU v5p      459    bf16  "TPU v5p", "TPU v5"
 *   TPU v6e      918    bf16  "TPU v6 lite", "TPU v6e", "Trillium"
 *
 * Matching is case-insensitive on a substring that is not preceded by a
 * letter or digit and not followed by a digit ("RTX A1000" is not an
 * A100, "GH200" is not an H200 but has its own row).  A key itself
 * ("A100", "tpu v5e") matches its row, so a user may name a device.
 */
#ifndef ND_PEAK_H
#define ND_PEAK_H

#include <stddef.h>

typedef struct nd_peak {
	const char *key;	/* short name, e.g. "A100", "TPU v5e" */
	double tflops;		/* dense peak, TFLOP/s per device */
	const char *prec;	/* "bf16" or "fp16" */
	const char *const *match;	/* NULL-terminated name patterns */
} nd_peak;

/* The row for a device name as a trace gives it ("NVIDIA A100-SXM4-80GB",
 * "TPU v6 Lite", "AMD Instinct MI300X"), or NULL when unknown. */
const nd_peak *nd_peak_find(const char *name, size_t n);
/* The whole table, in matching order. */
const nd_peak *nd_peak_table(size_t *n);

#endif
