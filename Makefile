# ndtrace — see README.md.  `make demo` and `make check` do all set-up.
PREFIX ?= /usr/local
BINDIR ?= $(PREFIX)/bin
MANDIR ?= $(PREFIX)/share/man
BASHCOMPDIR ?= $(PREFIX)/share/bash-completion/completions
ZSHCOMPDIR ?= $(PREFIX)/share/zsh/vendor-completions
FISHCOMPDIR ?= $(PREFIX)/share/fish/vendor_completions.d
DESTDIR ?=

CC ?= cc
# Link-time optimisation lets the JSON scanner inline into the record
# decoder across files (-30 % instructions per record); gcc only, as
# clang's needs its own linker plugin.
LTO ?= $(if $(findstring clang,$(CC)),,-flto=auto)
OPT ?= -O2 -g $(LTO)
SAN ?=
BUILD ?= build
WARN = -Wall -Wextra -Werror
LIB_DIRS = core ingest engines report svg
CPPFLAGS_ND = -D_GNU_SOURCE -Ilib $(addprefix -Ilib/,$(LIB_DIRS)) -I$(BUILD)/gen
CFLAGS_ND = -std=c11 $(OPT) $(WARN) $(SAN) $(CFLAGS)
LDLIBS_ND = -lprotobuf-c -lcsv -lcrypto -lz -lm -pthread $(LDLIBS)

PROGS = $(patsubst cmd/%.c,%,$(wildcard cmd/*.c))
TOOLS = $(patsubst bench/%.c,%,$(wildcard bench/*.c)) \
	$(patsubst tests/tools/%.c,%,$(wildcard tests/tools/*.c))
LIB_SRC = $(wildcard lib/*/*.c)
PROTO = $(wildcard lib/ingest/*.proto)
PROTO_C = $(patsubst lib/ingest/%.proto,$(BUILD)/gen/%.pb-c.c,$(PROTO))
LIB_OBJ = $(patsubst lib/%.c,$(BUILD)/obj/lib/%.o,$(LIB_SRC)) \
	$(patsubst $(BUILD)/gen/%.c,$(BUILD)/obj/gen/%.o,$(PROTO_C))
BIN = $(addprefix $(BUILD)/bin/,$(PROGS) $(TOOLS)) $(BUILD)/bin/topk-example

.PHONY: all deps demo check check-asan check-valgrind check-valgrind-full \
	check-long test test-asan test-both bench install uninstall clean \
	lint-man fuzz fuzz-build fuzz-long asan
.SUFFIXES:
.SECONDARY:

all: $(BIN)

$(BUILD)/gen/%.pb-c.c $(BUILD)/gen/%.pb-c.h: lib/ingest/%.proto
	@mkdir -p $(BUILD)/gen
	protoc-c --c_out=$(BUILD)/gen -Ilib/ingest $<

$(BUILD)/obj/gen/%.o: $(BUILD)/gen/%.c
	@mkdir -p $(dir $@)
	$(CC) $(CPPFLAGS_ND) $(CFLAGS_ND) -Wno-unused-parameter -MMD -MP -c -o $@ $<

$(BUILD)/obj/%.o: %.c $(PROTO_C)
	@mkdir -p $(dir $@)
	$(CC) $(CPPFLAGS_ND) $(CFLAGS_ND) -MMD -MP -c -o $@ $<

$(BUILD)/libndtrace.a: $(LIB_OBJ)
	@rm -f $@
	ar rcs $@ $^

$(BUILD)/bin/%: $(BUILD)/obj/cmd/%.o $(BUILD)/libndtrace.a
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS_ND) -o $@ $< $(BUILD)/libndtrace.a $(LDLIBS_ND)

# examples/topk.c: a program of its own on the library (ndtrace.h)
$(BUILD)/bin/topk-example: $(BUILD)/obj/examples/topk.o $(BUILD)/libndtrace.a
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS_ND) -o $@ $< $(BUILD)/libndtrace.a $(LDLIBS_ND)

$(BUILD)/bin/%: $(BUILD)/obj/bench/%.o $(BUILD)/libndtrace.a
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS_ND) -o $@ $< $(BUILD)/libndtrace.a $(LDLIBS_ND)

$(BUILD)/bin/%: $(BUILD)/obj/tests/tools/%.o $(BUILD)/libndtrace.a
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS_ND) -o $@ $< $(BUILD)/libndtrace.a $(LDLIBS_ND)

-include $(shell find $(BUILD)/obj -name '*.d' 2>/dev/null)

deps:
	@sh scripts/deps.sh

# The ASan+UBSan variant lives in its own tree.  Its programs carry the
# sanitizer runtimes (clang's default; gcc's needs ASAN_LINK): each starts
# ~0.04 s of CPU sooner than with the shared ones, and a test pass starts
# thousands.
ASAN_BUILD ?= build-asan
ASAN_LINK = $(if $(findstring clang,$(shell $(CC) --version 2>/dev/null)),,-static-libasan -static-libubsan)
asan:
	@$(MAKE) --no-print-directory BUILD=$(ASAN_BUILD) OPT='-O1 -g' \
	    SAN='-fsanitize=address,undefined -fno-sanitize-recover=all -fno-omit-frame-pointer $(ASAN_LINK)' all

test: all
	ND_BIN=$(CURDIR)/$(BUILD)/bin bats tests

test-asan: asan
	ASAN_OPTIONS=detect_leaks=1:abort_on_error=0 UBSAN_OPTIONS=print_stacktrace=1 \
	    ND_BIN=$(CURDIR)/$(ASAN_BUILD)/bin ND_ASAN=1 bats tests

# The whole gate, under 25 minutes on two idle cores: the build, the man
# pages, both test passes side by side, valgrind on a quick set and a fuzz
# smoke run.  The long runs are check-long (every fixture under valgrind,
# the fan-out recipes 200 times, FUZZ_LONG_SECONDS per harness).
# The builds take both cores (JOBS); the tests run two passes side by side.
JOBS ?= 2
check: deps
	@$(MAKE) --no-print-directory -j$(JOBS) all
	@$(MAKE) --no-print-directory -j$(JOBS) asan
	@$(MAKE) --no-print-directory lint-man
	@ND_AFTER_NORMAL='$(MAKE) --no-print-directory check-valgrind && $(MAKE) --no-print-directory fuzz FUZZ_SECONDS=$(CHECK_FUZZ_SECONDS) FUZZ_MEM="$(CHECK_FUZZ_MEM)"' \
	    $(MAKE) --no-print-directory test-both

check-long: deps
	@$(MAKE) --no-print-directory check-valgrind-full
	@$(MAKE) --no-print-directory check-fanout
	@$(MAKE) --no-print-directory fuzz-long

# Both bats passes at once (tests/passes.sh): about the time of the slower.
# make check runs valgrind and the fuzz smoke when the normal pass ends, on
# the core it leaves idle while the ASan pass goes on.
test-both: all asan
	@sh tests/passes.sh $(CURDIR)/$(BUILD) $(CURDIR)/$(ASAN_BUILD)

# valgrind's memcheck over xplane2ndjson, chrome2ndjson and trace-mem: no
# error, no definite leak.  check-valgrind (part of check) takes the small
# real profiles of tests/fixtures, one or more of each producer, and
# generated ones; check-valgrind-full takes every fixture.
check-valgrind: all
	@sh tests/valgrind.sh $(CURDIR)/$(BUILD)/bin quick

check-valgrind-full: all
	@sh tests/valgrind.sh $(CURDIR)/$(BUILD)/bin full

# The documented fan-out recipes (README, cookbook, man pages, bench/fanout.mk)
# FANOUT_RUNS times each in a row beside two busy loops, and the old racy
# form (jobs sharing one pipe) as often: it must fail with its one-line
# message, never merge wrongly.  tests/fanout.bats runs a few of each.
FANOUT_RUNS ?= 200
.PHONY: check-fanout
check-fanout: all
	@bash tests/fanout-stress.sh $(CURDIR)/$(BUILD)/bin \
	    $${ND_FIXTURES:-$(CURDIR)/tests/fixtures} $(FANOUT_RUNS)

# trace-pipeline's fixtures, tests/fixtures/pipeline/: a real pipeline job
# (Debian's python3-torch, gloo, one process a stage) profiled on every
# rank.  Not part of check: the timings differ on every run, so afterwards
# update tests/fixtures/SHA256SUMS (the orders in the manifests stay).
PIPE_GEN = /usr/bin/python3 tests/tools/gen_pipeline.py --out tests/fixtures/pipeline
.PHONY: pipeline-fixtures
pipeline-fixtures:
	$(PIPE_GEN) --schedule 1f1b --stages 2 --microbatches 4
	$(PIPE_GEN) --schedule 1f1b --stages 4 --microbatches 8
	$(PIPE_GEN) --schedule gpipe --stages 4 --microbatches 4
	$(PIPE_GEN) --schedule 1f1b --stages 4 --microbatches 8 --slow-stage 2 --slow-factor 3

lint-man:
	@for m in man/*.[17]; do \
	    out=$$(mandoc -Tlint -Wwarning "$$m" 2>&1); \
	    if [ -n "$$out" ]; then echo "$$out"; exit 1; fi; \
	done; echo "man pages: lint clean"

demo: deps
	@$(MAKE) --no-print-directory all
	@sh examples/demo.sh $(CURDIR)/$(BUILD)/bin

bench: all
	@sh bench/run.sh $(CURDIR)/$(BUILD)/bin

# The library: libndtrace.a, its headers under include/ndtrace/ (ndtrace.h
# the one to include) and ndtrace.pc for pkg-config.
LIBDIR ?= $(PREFIX)/lib
INCDIR ?= $(PREFIX)/include/ndtrace
PCDIR ?= $(LIBDIR)/pkgconfig
VERSION := $(shell sed -n 's/^\#define ND_VERSION "\(.*\)"/\1/p' lib/core/nd_util.h)
LIB_HDR = lib/ndtrace.h $(wildcard lib/*/*.h) $(wildcard $(BUILD)/gen/*.h)

install: all
	install -d $(DESTDIR)$(LIBDIR) $(DESTDIR)$(INCDIR) $(DESTDIR)$(PCDIR)
	install -m 644 $(BUILD)/libndtrace.a $(DESTDIR)$(LIBDIR)
	install -m 644 $(LIB_HDR) $(DESTDIR)$(INCDIR)
	printf '%s\n' 'prefix=$(PREFIX)' 'libdir=$(LIBDIR)' 'includedir=$(INCDIR)' '' \
	    'Name: ndtrace' 'Description: ML training profiles as NDJSON streams, and the engines that answer' \
	    'Version: $(VERSION)' 'Cflags: -I$${includedir}' \
	    'Libs: -L$${libdir} -lndtrace -lprotobuf-c -lcsv -lcrypto -lz -lm -pthread' \
	    > $(DESTDIR)$(PCDIR)/ndtrace.pc
	install -d $(DESTDIR)$(BINDIR) $(DESTDIR)$(MANDIR)/man1 $(DESTDIR)$(MANDIR)/man7 \
	    $(DESTDIR)$(BASHCOMPDIR) $(DESTDIR)$(ZSHCOMPDIR) $(DESTDIR)$(FISHCOMPDIR)
	install -m 755 $(addprefix $(BUILD)/bin/,$(PROGS)) $(DESTDIR)$(BINDIR)
	install -m 644 $(wildcard man/*.1) $(DESTDIR)$(MANDIR)/man1
	install -m 644 $(wildcard man/*.7) $(DESTDIR)$(MANDIR)/man7
	install -m 644 completions/ndtrace.bash $(DESTDIR)$(BASHCOMPDIR)/ndtrace
	for p in $(PROGS); do ln -sf ndtrace $(DESTDIR)$(BASHCOMPDIR)/$$p; done
	install -m 644 completions/_ndtrace $(DESTDIR)$(ZSHCOMPDIR)/_ndtrace
	for p in $(PROGS); do \
	    [ -f completions/fish/$$p.fish ] && install -m 644 completions/fish/$$p.fish $(DESTDIR)$(FISHCOMPDIR); \
	done; true

uninstall:
	rm -f $(DESTDIR)$(LIBDIR)/libndtrace.a $(DESTDIR)$(PCDIR)/ndtrace.pc
	rm -rf $(DESTDIR)$(INCDIR)
	for p in $(PROGS); do rm -f $(DESTDIR)$(BINDIR)/$$p $(DESTDIR)$(MANDIR)/man1/$$p.1 \
	    $(DESTDIR)$(BASHCOMPDIR)/$$p $(DESTDIR)$(FISHCOMPDIR)/$$p.fish; done
	rm -f $(DESTDIR)$(MANDIR)/man7/ndtrace.7 $(DESTDIR)$(BASHCOMPDIR)/ndtrace \
	    $(DESTDIR)$(ZSHCOMPDIR)/_ndtrace

# Fuzzing (clang's libFuzzer): every fuzz/fuzz_*.c is a harness: fuzz_xplane
# (the XPlane decoder), fuzz_xplane2ndjson and fuzz_chrome (the two ingest
# engines' whole conversion, nd_xpconv and nd_kineto, by their library API),
# fuzz_ndjson (the record decoder), fuzz_cli (durations and decimals),
# fuzz_pickle (the pickle reader and trace-mem's analysis), fuzz_pipe (the
# pipeline engine in every output mode, and its partial round trip),
# fuzz_merge (--merge's reading of partial results into the loads of
# trace-topk, -regions, -gaps, -steps, -report and -pipeline).  Every
# input error is a value there: a harness that reaches nd_die aborts.  The
# programs' own error messages are silenced (-close_fd_mask=2); libFuzzer's
# report and a sanitizer's still reach build-fuzz/NAME.log.
FUZZ_SECONDS ?= 60
CHECK_FUZZ_SECONDS ?= 10
FUZZ_LONG_SECONDS ?= 600
# The memory bound of every run.  make check's smoke keeps libFuzzer's RSS
# thread out (a single allocation over 2 GiB still fails it): once, under
# the ASan pass's load, that thread died starting inside ASan's runtime
# (pthread_attr_destroy), on no input of ours (it did not reproduce).
FUZZ_MEM ?= -rss_limit_mb=2048
CHECK_FUZZ_MEM = -rss_limit_mb=0 -malloc_limit_mb=2048
# Where the fuzz build, corpus, logs and crash inputs go.
FUZZ_BUILD ?= build-fuzz
FUZZERS = $(patsubst fuzz/%.c,%,$(wildcard fuzz/fuzz_*.c))
FUZZ_SAN = -fsanitize=address,undefined -fno-sanitize-recover=all
# Small I/O blocks in the fuzz build: a 4 MiB buffer per input would cost
# more than the parsing, and values then straddle block boundaries.
FUZZ_DEFS = -DND_CHROME_BLOCK=4096 -DND_IN_BLOCK=4096 -DND_OUT_FLUSH_AT=4096

fuzz-build:
	@$(MAKE) --no-print-directory -j$(JOBS) BUILD=$(FUZZ_BUILD) CC=clang OPT='-O1 -g' \
	    CFLAGS='$(CFLAGS) $(FUZZ_DEFS)' \
	    SAN='-fsanitize=fuzzer-no-link $(FUZZ_SAN)' $(FUZZ_BUILD)/libndtrace.a
	@for f in $(FUZZERS); do \
	    clang -std=c11 -O1 -g -D_GNU_SOURCE -Ilib $(addprefix -Ilib/,$(LIB_DIRS)) -I$(FUZZ_BUILD)/gen $(WARN) \
	        -fsanitize=fuzzer $(FUZZ_SAN) -o $(FUZZ_BUILD)/$$f fuzz/$$f.c \
	        $(FUZZ_BUILD)/libndtrace.a $(LDLIBS_ND) || exit 1; \
	done

# Run each harness for FUZZ_SECONDS on a corpus seeded by fuzz/seeds.sh
# (and fuzz/seeds-*.sh); a crash leaves its input in $(FUZZ_BUILD)/ and fails
# the target.  First each harness runs the empty input alone (a zero-byte
# crash artefact once sat at the top of the tree).  `make fuzz-long` is the
# long run (FUZZ_LONG_SECONDS each, part of check-long).
fuzz-long:
	@$(MAKE) --no-print-directory fuzz FUZZ_SECONDS=$(FUZZ_LONG_SECONDS)

fuzz: fuzz-build all
	@sh fuzz/seeds.sh $(CURDIR)/$(BUILD)/bin $(FUZZ_BUILD)/corpus
	@for f in $(FUZZERS); do \
	    ASAN_OPTIONS=detect_leaks=0 $(FUZZ_BUILD)/$$f $(FUZZ_BUILD)/corpus/$$f/empty \
	        >$(FUZZ_BUILD)/$$f-empty.log 2>&1 \
	        || { echo "fuzz: $$f fails on the empty input"; tail -40 $(FUZZ_BUILD)/$$f-empty.log; exit 1; }; \
	done; echo "fuzz: every harness takes the empty input"
	@for f in $(FUZZERS); do \
	    echo "fuzz: $$f for $(FUZZ_SECONDS)s"; \
	    ASAN_OPTIONS=detect_leaks=0 $(FUZZ_BUILD)/$$f -max_total_time=$(FUZZ_SECONDS) \
	        -max_len=65536 -timeout=10 $(FUZZ_MEM) -print_final_stats=1 \
	        -close_fd_mask=2 \
	        -artifact_prefix=$(FUZZ_BUILD)/$$f- $(FUZZ_BUILD)/corpus/$$f 2>$(FUZZ_BUILD)/$$f.log \
	        || { tail -40 $(FUZZ_BUILD)/$$f.log; exit 1; }; \
	    grep -E '^(stat::number_of_executed_units|stat::peak_rss_mb)|cov: ' $(FUZZ_BUILD)/$$f.log | tail -3; \
	done

clean:
	rm -rf build build-asan build-fuzz
