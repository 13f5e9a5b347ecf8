/*
 * nd_classrun: trace-classify as a filter engine for nd_run
 * (nd_engine.h): "class" and "family" of every span and instant set from
 * a rule table (nd_classify.h), every other record passed through byte for
 * byte, in stream order.
 */
#ifndef ND_CLASSRUN_H
#define ND_CLASSRUN_H

#include "nd_classify.h"
#include "nd_engine.h"

typedef struct nd_classrun nd_classrun;

/* r is borrowed: it outlives the run. */
nd_classrun *nd_classrun_new(const nd_rules *r);
nd_engine nd_classrun_engine(nd_classrun *c);
void nd_classrun_free(nd_classrun *c);

#endif
