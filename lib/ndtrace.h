/*
 * ndtrace.h: the public header of libndtrace, the library every ndtrace
 * program links.  A program of its own includes this header alone and
 * links -lndtrace (pkg-config ndtrace); examples/topk.c is one.
 *
 * What it offers: reading ndtrace streams (nd_stream, nd_event; ndtrace(7)
 * is the contract), the readers that make them from profiles (XPlane,
 * Chrome/Kineto, memory snapshots and timelines), the engines that answer
 * (nd_top, nd_regions, nd_roofline, nd_gapsrun, nd_stepsrun, nd_diffrun,
 * nd_memrun, nd_report_run, ... each an nd_engine), the one driver that
 * feeds them (nd_run: reading, order policy, --merge framing, output),
 * and output written atomically (nd_out).  The fuzzers (fuzz/) include
 * this header alone.  Errors: the readers of profiles (nd_in, the XPlane
 * decoder and converter, the Chrome reader and Kineto converter, the
 * pickle and memory-timeline readers) and the record decoder return them
 * as values (nd_err.h and their own); the stream readers and the engines
 * behind nd_run still end the program with one line on stderr and exit
 * status 2 (nd_util.h), as the programs do.
 */
#ifndef NDTRACE_H
#define NDTRACE_H

/* the stream, its records, reading, output, errors */
#include "nd_buf.h"
#include "nd_cli.h"
#include "nd_event.h"
#include "nd_err.h"
#include "nd_in.h"
#include "nd_json.h"
#include "nd_out.h"
#include "nd_sha256.h"
#include "nd_stream.h"
#include "nd_util.h"
/* the engine contract and the driver */
#include "nd_engine.h"
#include "nd_partial.h"
#include "nd_run.h"
/* ingest: profiles to streams */
#include "nd_chrome.h"
#include "nd_classify.h"
#include "nd_kineto.h"
#include "nd_memtl.h"
#include "nd_pickle.h"
#include "nd_xpconv.h"
#include "nd_xplane.h"
/* the engines */
#include "nd_check.h"
#include "nd_classrun.h"
#include "nd_contextout.h"
#include "nd_diffrun.h"
#include "nd_gaps.h"
#include "nd_gapsout.h"
#include "nd_launch.h"
#include "nd_mem.h"
#include "nd_memrun.h"
#include "nd_pipe.h"
#include "nd_piperun.h"
#include "nd_regions.h"
#include "nd_roofline.h"
#include "nd_scan.h"
#include "nd_steps.h"
#include "nd_stepsrun.h"
#include "nd_stepsum.h"
#include "nd_tochrome.h"
#include "nd_top.h"

/* the report (trace-report) */
#include "nd_report.h"

#endif
