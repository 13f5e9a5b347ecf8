# examples/diff.mk -- from two profiles to the reports, the diff, the gate and
# a history line.  A make fragment: include it, or run it on its own:
#
#   make -f examples/diff.mk diff                 # generated TPU profiles
#   make -f examples/diff.mk diff BEFORE=run1/ AFTER=run2/ LABEL=pr-123
#
# BEFORE and AFTER are each a trace file (*.xplane.pb, *.json, *.json.gz) or
# a profile directory (every such file under it, in name order, becomes one
# source of that side).  Without them two XPlane profiles are generated with
# gen-xplane (seeds DIFF_SEED_BEFORE and DIFF_SEED_AFTER).
#
# Outputs in DIFF_DIR: before.ndjson after.ndjson (the streams),
# before.report after.report (trace-steps --summary and trace-topk tables),
# diff.ndjson (delta and verdict records), diff.txt (the table) and the line
# appended to DIFF_HISTORY.  `diff` fails when the gate fails (exit 1 of
# trace-diff); `diff-trend` summarises the history.

ND_BIN ?= build/bin
DIFF_DIR ?= examples/out/diff
DIFF_EVENTS ?= 20000
DIFF_SEED_BEFORE ?= 1
DIFF_SEED_AFTER ?= 2
DIFF_RULES ?= --fail-on 'step.median>+5%' --fail-on 'step.p90>+10%' \
	--warn-on 'share.communication>+0.05' --warn-on 'share.idle>+0.05'
DIFF_HISTORY ?= $(DIFF_DIR)/history.jsonl
LABEL ?= $(shell date -u +%Y%m%dT%H%M%SZ)
BEFORE ?= $(DIFF_DIR)/gen-before.xplane.pb
AFTER ?= $(DIFF_DIR)/gen-after.xplane.pb

.PHONY: diff diff-reports diff-trend diff-clean

diff: $(DIFF_DIR)/diff.ndjson diff-reports
	@cat $(DIFF_DIR)/diff.txt
	@tail -1 $(DIFF_DIR)/diff.ndjson
	@# the gate: the verdict of the records just written, as an exit status
	@status=$$(tail -1 $(DIFF_DIR)/diff.ndjson | sed -n 's/.*"status":"\([a-z]*\)".*/\1/p'); \
	    echo "gate: $$status"; [ "$$status" != fail ]

diff-reports: $(DIFF_DIR)/before.report $(DIFF_DIR)/after.report

diff-trend:
	$(ND_BIN)/trace-diff --history $(DIFF_HISTORY) --trend --table

diff-clean:
	rm -rf $(DIFF_DIR)

$(DIFF_DIR)/gen-before.xplane.pb:
	@mkdir -p $(DIFF_DIR)
	$(ND_BIN)/gen-xplane --kind tpu --seed $(DIFF_SEED_BEFORE) --events $(DIFF_EVENTS) -o $@

$(DIFF_DIR)/gen-after.xplane.pb:
	@mkdir -p $(DIFF_DIR)
	$(ND_BIN)/gen-xplane --kind tpu --seed $(DIFF_SEED_AFTER) --events $(DIFF_EVENTS) -o $@

# A trace file or a profile directory -> one ndtrace stream ($1 in, $2 out).
define nd_ingest
	@mkdir -p $(DIFF_DIR)
	@if [ -d '$(1)' ]; then find '$(1)' -type f \( -name '*.xplane.pb' \
	    -o -name '*.json' -o -name '*.json.gz' \) | LC_ALL=C sort; \
	else echo '$(1)'; fi | while read -r f; do \
	    case "$$f" in \
	    *.xplane.pb) $(ND_BIN)/xplane2ndjson "$$f" ;; \
	    *) $(ND_BIN)/chrome2ndjson "$$f" ;; \
	    esac || exit 2; \
	done >'$(2).tmp' && mv '$(2).tmp' '$(2)'
	@[ -s '$(2)' ] || { echo "diff.mk: no trace in $(1)" >&2; rm -f '$(2)'; exit 2; }
endef

$(DIFF_DIR)/before.ndjson: $(BEFORE)
	$(call nd_ingest,$(BEFORE),$@)

$(DIFF_DIR)/after.ndjson: $(AFTER)
	$(call nd_ingest,$(AFTER),$@)

$(DIFF_DIR)/%.report: $(DIFF_DIR)/%.ndjson
	{ $(ND_BIN)/trace-steps --summary $< | tail -1; \
	  $(ND_BIN)/trace-topk --table -k 15 $<; } >$@.tmp && mv $@.tmp $@

# The diff and the gate in one run: records, table, one history line.  The
# records are kept even when the gate fails (exit 1); exit 2 (an error,
# identical traces) stops here.
$(DIFF_DIR)/diff.ndjson: $(DIFF_DIR)/before.ndjson $(DIFF_DIR)/after.ndjson
	$(ND_BIN)/trace-diff --table $(DIFF_RULES) $^ >$(DIFF_DIR)/diff.txt; \
	    [ $$? -le 1 ]
	$(ND_BIN)/trace-diff $(DIFF_RULES) --history $(DIFF_HISTORY) \
	    --label '$(LABEL)' -o $@.tmp $^; [ $$? -le 1 ] && mv $@.tmp $@
