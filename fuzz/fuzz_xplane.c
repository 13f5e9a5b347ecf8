/*
 * libFuzzer harness: the XPlane decoder (nd_pb + nd_xplane) driven the way
 * xplane2ndjson drives it: the top level, each plane peeked, loaded without
 * then with metadata, every line's events and their stats, the metadata's
 * and the plane's stats, and a restart from an event (nd_xp_events_at).
 * Malformed input must end in an error value (nd_xspace_err: "fuzz: byte
 * N: ..."), never in a crash or an exit (nd_die is a bug here); every
 * walk then ends, what was allocated is freed the normal way, and what is
 * returned must stay inside the buffer and name metadata that exists.
 */
#include "ndtrace.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

static void
die_is_a_bug(int code)
{
	(void)code;
	abort();	/* the decoder returns its errors */
}

static const unsigned char *lo, *hi;	/* the buffer */

static void
in_buf(const void *p, size_t n)
{
	const unsigned char *q = p;

	if (n == 0)
		return;
	if (q < lo || q > hi || n > (size_t)(hi - q))
		abort();	/* a slice outside the input */
}

static void
stats(nd_xp_statit *si, const nd_xp_plane *pl)
{
	nd_xp_stat st;
	unsigned n = 0;

	while (nd_xp_stat_next(si, &st)) {
		if (st.md >= pl->nstatmd)
			abort();
		if (st.kind == ND_XP_REF && st.v.ref >= pl->nstatmd)
			abort();
		if (st.kind == ND_XP_STR || st.kind == ND_XP_BYTES)
			in_buf(st.s.p, st.s.n);
		if (++n > 1u << 20)
			abort();	/* more stats than bytes: a loop */
	}
}

/* The error, once there is one: a message naming the input and a byte
 * of it. */
static int
failed(const nd_xspace *xs)
{
	const nd_err *e = nd_xspace_err(xs);

	if (e == NULL)
		return 0;
	if (e->code != ND_EXIT_ERROR || strncmp(e->msg, "fuzz: byte ", 11) !=
	    0 || e->off > (size_t)(hi - lo))
		abort();
	return 1;
}

static void
walk(const nd_xspace *xs)
{
	for (size_t i = 0; i < xs->nplanes && !failed(xs); i++) {
		int64_t id;
		nd_xp_str name, dev;
		nd_xp_plane *pl;

		nd_xp_plane_peek(xs, i, &id, &name);
		in_buf(name.p, name.n);
		(void)nd_xp_device_of(name, &dev);
		(void)nd_xp_is_device_plane(name);

		nd_xp_plane_free(nd_xp_plane_load(xs, i, 0));
		pl = nd_xp_plane_load(xs, i, 1);
		if (failed(xs)) {
			nd_xp_plane_free(pl);	/* what it read: freed */
			return;
		}
		for (uint32_t k = 0; k < pl->nevmd; k++) {
			nd_xp_statit si;

			in_buf(pl->evmd[k].name.p, pl->evmd[k].name.n);
			in_buf(pl->evmd[k].display_name.p,
			    pl->evmd[k].display_name.n);
			if (nd_xp_evmd_find(pl, pl->evmd[k].id) >= pl->nevmd)
				abort();
			nd_xp_evmd_stats(&si, pl, &pl->evmd[k]);
			stats(&si, pl);
		}
		for (uint32_t k = 0; k < pl->nstatmd; k++)
			if (nd_xp_statmd_find(pl, pl->statmd[k].id) >=
			    pl->nstatmd)
				abort();
		if (pl->has_stats) {
			nd_xp_statit si;

			nd_xp_plane_stats(&si, pl);
			stats(&si, pl);
		}
		for (size_t j = 0; j < pl->nlines; j++) {
			const nd_xp_line *ln = &pl->lines[j];
			nd_xp_evit it;
			nd_xp_event ev;
			const unsigned char *second = NULL;
			size_t nev = 0;

			in_buf(ln->name.p, ln->name.n);
			in_buf(ln->display_name.p, ln->display_name.n);
			nd_xp_events(&it, pl, ln);
			while (nd_xp_event_next(&it, &ev)) {
				nd_xp_statit si;

				if (ev.md >= pl->nevmd)
					abort();
				in_buf(ev.body.p, ev.body.n);
				if (nev++ == 1)
					second = ev.at;
				nd_xp_event_stats(&si, pl, &ev);
				stats(&si, pl);
			}
			if (second != NULL && !failed(xs)) {
				/* a restart from the second event sees it first */
				nd_xp_events_at(&it, pl, ln, second);
				if (!nd_xp_event_next(&it, &ev) || ev.at != second)
					abort();
			}
		}
		nd_xp_plane_free(pl);
	}
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	/* An exact-size copy: ASan sees any read past the end. */
	unsigned char *buf = malloc(size > 0 ? size : 1);
	nd_xspace *xs;

	memcpy(buf, data, size);
	lo = buf;
	hi = buf + size;
	nd_die_hook = die_is_a_bug;
	xs = nd_xspace_open(buf, size, "fuzz");
	for (size_t k = 0; k < xs->nerrors; k++)
		in_buf(xs->errors[k].p, xs->errors[k].n);
	for (size_t k = 0; k < xs->nhostnames; k++)
		in_buf(xs->hostnames[k].p, xs->hostnames[k].n);
	walk(xs);
	if (size == 0 && !failed(xs))
		abort();	/* an empty file is an error */
	nd_xspace_close(xs);
	free(buf);
	return 0;
}
