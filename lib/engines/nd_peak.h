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
 * Bandwidth is the peak HBM (device memory) bandwidth of the same device in
 * GB/s (10^9 bytes per second), from the same datasheets; the roofline of
 * trace-roofline(1) and trace-report(1) divides by it.  Where a product
 * comes in several memory sizes the row is the variant named: H100 SXM5
 * 80GB HBM3, GH200 with 96GB HBM3 (the 144GB HBM3e variant has 4900),
 * A100 SXM4 80GB (the 80GB PCIe card has 1935; 40GB cards have their own
 * row).  Google publishes TPU bandwidth per chip.
 *
 *   key        TFLOP/s  GB/s  prec  matched in device names (first wins)
 *   B200        2250    8000  bf16  "B200"
 *   GH200        989    4000  bf16  "GH200"
 *   H200         989    4800  bf16  "H200"
 *   H100 PCIe    756    2000  bf16  "H100 PCIe", "H100-PCIe"
 *   H100 NVL     835    3900  bf16  "H100 NVL"
 *   H100         989    3350  bf16  "H100" (SXM5; "NVIDIA H100 80GB HBM3")
 *   A100 40GB    312    1555  bf16  "A100-SXM4-40GB", "A100-PCIE-40GB",
 *                                   "A100 40GB"
 *   A100         312    2039  bf16  "A100" (80GB; SXM4 and PCIe alike)
 *   V100 PCIe    112     900  fp16  "V100-PCIE", "V100 PCIe"
 *   V100         125     900  fp16  "V100" (SXM2)
 *   MI300X      1307.4  5300  bf16  "MI300X"
 *   TPU v4       275    1200  bf16  "TPU v4"
 *   TPU v5e      197     819  bf16  "TPU v5 lite", "TPU v5e", "v5litepod"
 *   TPU v5p      459    2765  bf16  "TPU v5p", "TPU v5"
 *   TPU v6e      918    1640  bf16  "TPU v6 lite", "TPU v6e", "Trillium"
 *
 * Matching is case-insensitive on a substring that is not preceded by a
 * letter or digit and not followed by a digit ("RTX A1000" is not an
 * A100, "GH200" is not an H200 but has its own row).  A key itself
 * ("A100", "tpu v5e") matches its row, so a user may name a device.
 *
 * Device names in a stream (nd_devnames): the `meta` record of a source
 * (or its "header" object) may name its devices with
 *   "deviceProperties"  Kineto's array of {id, name, ...}: id N names the
 *                       device whose key ends in the number N;
 *   "devices"           an object from device key to a name, or to an
 *                       object with "name" or "device_type_string" and
 *                       optionally "peak_teraflops_per_second" and
 *                       "peak_hbm_bw_gigabytes_per_second" (XPlane's
 *                       device capability stats);
 *   "device_name"       one name for every device of the source.
 * A device's key is its spans' `device`, else their `process`, else
 * "pid N" (nd_span_device_key in nd_steps.h).
 */
#ifndef ND_PEAK_H
#define ND_PEAK_H

#include "nd_buf.h"
#include "nd_event.h"

#include <stddef.h>

typedef struct nd_peak {
	const char *key;	/* short name, e.g. "A100", "TPU v5e" */
	double tflops;		/* dense peak, TFLOP/s per device */
	double gbps;		/* HBM bandwidth, GB/s per device */
	const char *prec;	/* "bf16" or "fp16" */
	const char *const *match;	/* NULL-terminated name patterns */
} nd_peak;

/* The row for a device name as a trace gives it ("NVIDIA A100-SXM4-80GB",
 * "TPU v6 Lite", "AMD Instinct MI300X"), or NULL when unknown. */
const nd_peak *nd_peak_find(const char *name, size_t n);
/* --device NAME with --peak-tflops/--peak-gbps (<= 0: not given): a name
 * the table does not know needs both peaks, else exit 2 saying so; `see`
 * is where the table is printed (e.g. "--print-peaks"). */
void nd_peak_check_device(const char *device, double tflops, double gbps,
    const char *see);
/* The whole table, in matching order. */
const nd_peak *nd_peak_table(size_t *n);
/* The table as text (--print-peaks): a "# key..." header line, then one
 * tab-separated line per row: key, TFLOP/s, GB/s, precision, names. */
void nd_peak_print(nd_buf *b);

/* Device names of one source, from its meta record(s) (see above). */
typedef struct nd_devnames nd_devnames;

nd_devnames *nd_devnames_new(void);
void nd_devnames_free(nd_devnames *d);
/* Forget everything (a new source begins). */
void nd_devnames_reset(nd_devnames *d);
/* A meta record of the current source. */
void nd_devnames_meta(nd_devnames *d, const nd_event *meta);
/* The name of the device with key k[0..n) (NULL when unknown), and the
 * peaks the trace states for it (0 when it states none).  The string is
 * owned by d and valid until the next reset or meta. */
const char *nd_devnames_get(const nd_devnames *d, const char *k, size_t n,
    double *tflops, double *gbps);

#endif
