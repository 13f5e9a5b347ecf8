/*
 * ndtrace.h: the public header of libndtrace, the library every ndtrace
 * program links.  A program of its own includes this header alone and
 * links -lndtrace (pkg-config ndtrace); examples/topk.c is one.
 *
 * What it offers: reading ndtrace streams (nd_stream, nd_event; ndtrace(7)
 * is the contract), the engines that answer (nd_top, nd_regions,
 * nd_roofline, ... each an nd_engine), the one driver that feeds them
 * (nd_run: reading, order policy, --merge framing, output), and output
 * written atomically (nd_out).  Input errors end the program with one line
 * on stderr and exit status 2 (nd_util.h), as in the programs.
 */
#ifndef NDTRACE_H
#define NDTRACE_H

#include "nd_buf.h"
#include "nd_cli.h"
#include "nd_engine.h"
#include "nd_event.h"
#include "nd_out.h"
#include "nd_regions.h"
#include "nd_roofline.h"
#include "nd_run.h"
#include "nd_scan.h"
#include "nd_stream.h"
#include "nd_top.h"
#include "nd_util.h"

#endif
