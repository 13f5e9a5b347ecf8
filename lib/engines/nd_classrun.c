/*
 * nd_classrun: trace-classify as a filter engine (nd_classrun.h).
 */
#include "nd_classrun.h"

#include "nd_json.h"
#include "nd_out.h"
#include "nd_util.h"

#include <stdlib.h>

struct nd_classrun {
	const nd_rules *rules;
	nd_out *o;
	nd_buf longname;	/* args.long_name, unescaped */
};

static void
eng_start(void *self, nd_out *o)
{
	((nd_classrun *)self)->o = o;
}

static void
eng_record(void *self, const nd_event *ev, const nd_source_info *si)
{
	nd_classrun *c = self;
	nd_buf *b = nd_out_buf(c->o);

	(void)si;
	if (ev->type == ND_EV_SPAN || ev->type == ND_EV_INSTANT) {
		nd_class_in in;
		nd_class_out out;
		nd_jval ln;
		nd_event w = *ev;	/* shallow: written, not kept */

		in.name = ev->name;
		in.cat = ev->cat;
		in.process = ev->process;
		in.thread = ev->thread;
		in.long_name = ND_STR_NONE;
		if (nd_event_arg(ev, "long_name", &ln) && ln.type == ND_JSTR) {
			nd_buf_reset(&c->longname);
			nd_json_unescape(&ln, &c->longname);
			in.long_name.p = c->longname.p != NULL ?
			    c->longname.p : "";
			in.long_name.n = c->longname.len;
		}
		nd_classify(c->rules, &in, &out);
		w.cls = nd_str_c(out.cls);
		w.family = nd_str_c(out.family);
		nd_event_write(b, &w);
	} else {
		nd_buf_add(b, ev->line, ev->len);
		nd_buf_addc(b, '\n');
	}
	nd_out_commit(c->o);
}

nd_classrun *
nd_classrun_new(const nd_rules *r)
{
	nd_classrun *c = nd_xcalloc(1, sizeof *c);

	c->rules = r;
	return c;
}

nd_engine
nd_classrun_engine(nd_classrun *c)
{
	nd_engine e = {
		.name = "classify",
		.self = c,
		.record = eng_record,
		.start = eng_start,
	};

	return e;
}

void
nd_classrun_free(nd_classrun *c)
{
	if (c == NULL)
		return;
	nd_buf_free(&c->longname);
	free(c);
}
