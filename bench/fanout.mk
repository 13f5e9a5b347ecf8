# Fan-out with make -j: one `PROG --partial` per rank stream, then one exact
# `PROG --merge`.  The answer equals `PROG FILES...` on all of them in one
# stream, byte for byte (tests/scaleout.bats checks it).
#
#   make -j2 -f bench/fanout.mk DIR=ranks PROG=trace-topk ARGS='-k 0'
#
# DIR holds the *.ndjson rank streams; the partials go beside them
# (DIR/NAME.PROG.partial) and the merged answer to DIR/PROG.merged.
# PROG and `make` find the programs on PATH (or set BIN).
DIR ?= .
PROG ?= trace-topk
ARGS ?=
BIN ?=
RANKS := $(wildcard $(DIR)/*.ndjson)
PARTS := $(patsubst %.ndjson,%.$(PROG).partial,$(RANKS))

.PHONY: all
all: $(DIR)/$(PROG).merged

$(DIR)/$(PROG).merged: $(PARTS)
	$(BIN)$(PROG) --merge $(ARGS) -o $@ $(PARTS)

$(DIR)/%.$(PROG).partial: $(DIR)/%.ndjson
	$(BIN)$(PROG) --partial -o $@ $<
