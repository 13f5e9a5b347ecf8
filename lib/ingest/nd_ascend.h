/*
 * nd_ascend: what the traces of torch_npu (PyTorch on Huawei Ascend NPUs,
 * ASCEND_PROFILER_OUTPUT/trace_view.json) mean beyond the Trace Event
 * Format, for chrome2ndjson and for the stream's device-op rule
 * (nd_kind_of):
 *  - times written as JSON strings holding a decimal number of
 *    microseconds ("ts": "1699529623106750.125"), read exactly;
 *  - the processes it names: "Ascend Hardware" (device streams) and
 *    "Communication" (HCCL collectives) hold device work; "Overlap
 *    Analysis" and "AI Core Freq" are lanes derived from them, which
 *    repeat time the device lanes hold; "Python" and "CANN" are host;
 *  - the device a device process is: "NPU:N".
 */
#ifndef ND_ASCEND_H
#define ND_ASCEND_H

#include "nd_json.h"

#include <stddef.h>
#include <stdint.h>

/* A string value whose text is a JSON number: *num is that number (a
 * slice of the string's text), 0.  -1 otherwise (escapes, spaces, any
 * other text). */
int nd_ascend_strnum(const nd_jval *v, nd_jval *num);

enum {
	ND_ASC_NONE = 0,
	ND_ASC_DEVICE,		/* "Ascend Hardware": tasks on device streams */
	ND_ASC_COMM,		/* "Communication": HCCL collectives */
	ND_ASC_DERIVED		/* "Overlap Analysis", "AI Core Freq" */
};

/* The lane a process name is (exact, case-sensitive), ND_ASC_NONE for
 * any other name.  Inline: most names are ruled out by their length
 * (12 to 16 bytes), without a call, on every event that asks. */
int nd_ascend_lane_of(const char *p, size_t n);

static inline int
nd_ascend_lane(const char *p, size_t n)
{
	return p == NULL || n < 12 || n > 16 ? ND_ASC_NONE :
	    nd_ascend_lane_of(p, n);
}

/* The device number of a device process: CANN writes the device id in the
 * low 5 bits of the pid of every device process ((pid << k) |
 * (sort index << 5) | device id). */
int nd_ascend_devno(int64_t pid);

#endif
