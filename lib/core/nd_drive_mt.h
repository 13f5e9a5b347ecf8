/*
 * nd_drive_mt: nd_drive's reading loop with reading and decoding on a
 * second thread, so that a program whose analysis is CPU-bound
 * (trace-report, trace-diff) gets up to the decoder's share of its time
 * back on a second core.
 *
 * The decoding thread runs the stream (nd_stream_next_kept) into batches
 * that own their line bytes and decoded records; the calling thread hands
 * each record to cb.record in input order.  A ring of ND_DRIVE_MT_BATCHES
 * batches bounds the memory; a full ring or an empty one waits on a
 * condition variable, never spinning.  The decoder's errors (nd_die on
 * that thread: a bad line, an unreadable file, a gzip error...) are held
 * until every record before them has been handed on, then raised by the
 * calling thread: the same message and exit status after the same records
 * as one thread.  Everything the analysis does (the string ids of
 * nd_event_sid included) stays on the calling thread.
 *
 * The choice (nd_drive_mt_threads): NDTRACE_THREADS=2 (or more) a
 * decoding thread; unset, empty, 0 or 1 one thread.  One is the default:
 * on the 2-core machines measured (bench/RESULTS.notes) the hand-off and
 * the records crossing cores cost the analysis thread what the decoder
 * saved, so two threads took the same wall time for +50 % CPU.
 */
#ifndef ND_DRIVE_MT_H
#define ND_DRIVE_MT_H

#include "nd_drive.h"
#include "nd_stream.h"

#define ND_DRIVE_MT_BATCHES 4

/* 1 or 2: the threads a reading should use (NDTRACE_THREADS).  An invalid
 * value dies (exit 2). */
int nd_drive_mt_threads(void);

/* Every record of st (opened, nothing read yet) to cb->record, decoded on
 * a second thread: 0; -1 when no thread could be started (nothing read:
 * the caller reads st on its own). */
int nd_drive_mt_records(nd_stream *st, const nd_drive_cb *cb);

#endif
