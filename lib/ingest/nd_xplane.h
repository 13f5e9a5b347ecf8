/*
 * nd_xplane: walk an XSpace (the XPlane profile format, lib/ingest/xplane.proto)
 * held in memory, with nd_pb, without a heap structure per event.
 *
 *	nd_xspace *xs = nd_xspace_open(buf, len, name);	   top level only
 *	for (i = 0; i < xs->nplanes; i++) {
 *		nd_xp_plane *pl = nd_xp_plane_load(xs, i);  metadata + lines
 *		for (j = 0; j < pl->nlines; j++) {
 *			nd_xp_evit it;
 *			nd_xp_event ev;
 *			nd_xp_events(&it, pl, &pl->lines[j]);
 *			while (nd_xp_event_next(&it, &ev)) {
 *				nd_xp_statit si;
 *				nd_xp_stat st;
 *				nd_xp_event_stats(&si, pl, &ev);
 *				while (nd_xp_stat_next(&si, &st)) ...
 *			}
 *		}
 *		nd_xp_plane_free(pl);
 *	}
 *	nd_xspace_close(xs);
 *
 * Strings are slices of the buffer (not NUL-terminated, not validated as
 * UTF-8).  Metadata ids are resolved to dense indexes when a plane is
 * loaded; an event or stat that names a metadata id the plane does not
 * define, and any malformed wire data, is an error value ("NAME: byte N:
 * message", nd_pb.h): the XSpace keeps the first, every walk over it then
 * ends (a load returns what it read, an iterator returns 0), and
 * nd_xspace_err() returns it.  A caller asks nd_xspace_err() after each
 * step it trusts the result of.  Memory: the plane's metadata tables and
 * line headers, nothing per event.
 *
 * Ownership: nd_xspace_open and nd_xp_plane_load return objects the caller
 * frees (nd_xspace_close, nd_xp_plane_free); everything else points into
 * them or into the buffer, which must outlive them.
 */
#ifndef ND_XPLANE_H
#define ND_XPLANE_H

#include "nd_pb.h"

#include <stddef.h>
#include <stdint.h>

typedef struct nd_xp_str {
	const char *p;
	size_t n;
} nd_xp_str;

/* A slice of the buffer: an encoded message or a repeated field's span. */
typedef struct nd_xp_raw {
	const unsigned char *p;
	size_t n;
} nd_xp_raw;

typedef struct nd_xspace {
	nd_pb r;			/* over the whole buffer */
	nd_err err;			/* the first error of any walk */
	size_t nplanes;
	nd_xp_raw *planes;		/* each plane's encoded message */
	nd_xp_str *errors, *warnings, *hostnames;
	size_t nerrors, nwarnings, nhostnames;
} nd_xspace;

typedef struct nd_xp_statmd {
	int64_t id;
	nd_xp_str name;
} nd_xp_statmd;

typedef struct nd_xp_evmd {
	int64_t id;
	nd_xp_str name;			/* e.g. the full HLO text */
	nd_xp_str display_name;		/* e.g. "fusion.12" (may be empty) */
	nd_xp_raw body;			/* the XEventMetadata message */
	int has_stats;
} nd_xp_evmd;

typedef struct nd_xp_line {
	int64_t id, display_id, timestamp_ns, duration_ps;
	nd_xp_str name, display_name;
	nd_xp_raw body;			/* the XLine message */
	const unsigned char *first_event;	/* NULL: no events */
} nd_xp_line;

typedef struct nd_xp_plane {
	size_t index;			/* in the XSpace */
	int64_t id;
	nd_xp_str name;
	nd_xp_raw body;
	nd_xp_line *lines;
	size_t nlines;
	nd_xp_evmd *evmd;		/* dense, in wire order */
	uint32_t nevmd;
	nd_xp_statmd *statmd;
	uint32_t nstatmd;
	int has_stats;			/* plane stats (field 6) present */

	/* id -> index lookup (private) */
	struct nd_xp_idmap *ev_map, *st_map;
	nd_pb r;
} nd_xp_plane;

/* One event.  has_time: it has an offset (or neither oneof member, which
 * proto3 reads as offset 0); otherwise it is an aggregate with
 * num_occurrences and no time. */
typedef struct nd_xp_event {
	uint32_t md;			/* index into plane->evmd */
	int has_time;
	int64_t offset_ps, duration_ps, num_occurrences;
	const unsigned char *at;	/* the event message (for errors) */
	nd_xp_raw body;
	const unsigned char *first_stat;	/* NULL: no stats */
} nd_xp_event;

typedef enum {
	ND_XP_NONE = 0,			/* no value set */
	ND_XP_DOUBLE, ND_XP_UINT, ND_XP_INT, ND_XP_STR, ND_XP_BYTES, ND_XP_REF
} nd_xp_kind;

typedef struct nd_xp_stat {
	uint32_t md;			/* index into plane->statmd */
	nd_xp_kind kind;
	union {
		double d;
		uint64_t u;
		int64_t i;
		uint32_t ref;		/* REF: index into plane->statmd */
	} v;
	nd_xp_str s;			/* STR, BYTES */
	const unsigned char *at;
} nd_xp_stat;

typedef struct nd_xp_evit {
	nd_pb r;			/* over the line, from the first event */
	const nd_xp_plane *pl;
} nd_xp_evit;

typedef struct nd_xp_statit {
	nd_pb r;
	const nd_xp_plane *pl;
	uint32_t field;			/* the stats field of the message */
} nd_xp_statit;

/* A running check of an XSpace's top level while its bytes arrive, and a
 * count of what the tables of nd_xspace_open and nd_xp_plane_load will
 * hold, so that a reader can refuse a file before holding it all:
 *
 *	nd_xp_tally t = { 0 };
 *	while (more bytes appended to buf) {
 *		nd_xspace_tally(&t, buf, len);
 *		if (t.bad) stop reading: nd_xspace_open(buf, len) will report
 *		    the error it would report for the whole file;
 *		(len or t.need, plus t.planes, t.lines, t.metadata, too big?)
 *	}
 *
 * Nothing is reported and nothing allocated here. */
typedef struct nd_xp_tally {
	size_t pos;		/* complete top-level fields end here */
	uint64_t need;		/* the field at pos ends at need (0: unknown) */
	uint64_t planes, lines, metadata;	/* in the complete planes */
	int bad;		/* an invalid field at pos */
} nd_xp_tally;

void nd_xspace_tally(nd_xp_tally *t, const void *buf, size_t n);

/* Parse the top level: the planes' extents, errors, warnings, hostnames.
 * An empty buffer is an error (an XSpace with nothing in it).  Never NULL:
 * the errors are nd_xspace_err()'s. */
nd_xspace *nd_xspace_open(const void *buf, size_t n, const char *name);
/* The first error met in any walk of xs, or NULL. */
const nd_err *nd_xspace_err(const nd_xspace *xs);
void nd_xspace_close(nd_xspace *xs);

/* The id and name of plane i, without loading it. */
void nd_xp_plane_peek(const nd_xspace *xs, size_t i, int64_t *id,
    nd_xp_str *name);
/* Load plane i: metadata tables (ids resolved) and line headers.  With
 * want_metadata 0, only the line headers are read (cheap). */
nd_xp_plane *nd_xp_plane_load(const nd_xspace *xs, size_t i,
    int want_metadata);
void nd_xp_plane_free(nd_xp_plane *pl);

/* Iterate the events of a line (the plane must be loaded with metadata). */
void nd_xp_events(nd_xp_evit *it, const nd_xp_plane *pl,
    const nd_xp_line *ln);
/* The same from the event whose message starts at `at` (an nd_xp_event.at
 * of that line): the next call returns that event. */
void nd_xp_events_at(nd_xp_evit *it, const nd_xp_plane *pl,
    const nd_xp_line *ln, const unsigned char *at);
int nd_xp_event_next(nd_xp_evit *it, nd_xp_event *ev);

void nd_xp_event_stats(nd_xp_statit *it, const nd_xp_plane *pl,
    const nd_xp_event *ev);
void nd_xp_evmd_stats(nd_xp_statit *it, const nd_xp_plane *pl,
    const nd_xp_evmd *md);
void nd_xp_plane_stats(nd_xp_statit *it, const nd_xp_plane *pl);
int nd_xp_stat_next(nd_xp_statit *it, nd_xp_stat *st);

/* Index of a metadata id, or UINT32_MAX. */
uint32_t nd_xp_evmd_find(const nd_xp_plane *pl, int64_t id);
uint32_t nd_xp_statmd_find(const nd_xp_plane *pl, int64_t id);

/* Naming conventions of the format (see xplane2ndjson(1)). */
/* "TPU:0" for "/device:TPU:0", "NAME" for "/device:CUSTOM:NAME", "CPU"
 * for "/host:CPU"; 0 when the plane is neither a device nor a host. */
int nd_xp_device_of(nd_xp_str plane, nd_xp_str *device);
int nd_xp_is_device_plane(nd_xp_str plane);

#endif
