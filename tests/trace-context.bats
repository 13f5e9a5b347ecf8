#!/usr/bin/env bats
# trace-context: the spans around matching spans (grep -C for timelines).
# Hand-made streams with the exact expected output; random streams checked
# against an independent whole-stream oracle (tools/context_check.py); a real
# profile cross-checked with a short python script.

load helpers
bats_require_minimum_version 1.5.0

META='{"type":"meta","schema":"ndtrace/1","source":"t.pb","format":"xplane","origin_ns":0,"host":null,"rank":null,"producer":"hand 1"}'

setup() {
	T="$BATS_TEST_TMPDIR"
	TOOLS="$BATS_TEST_DIRNAME/tools"
}

# span TS DUR NAME [PID TID]
span() {
	printf '{"type":"span","ts_ns":%s,"dur_ns":%s,"name":"%s","pid":%s,"tid":%s}\n' \
	    "$1" "$2" "$3" "${4:-1}" "${5:-1}"
}

# dspan TS DUR NAME PID TID THREAD: a span of device TPU:(PID-1)
dspan() {
	printf '{"type":"span","ts_ns":%s,"dur_ns":%s,"name":"%s","pid":%s,"tid":%s,"process":"/device:TPU:%s","thread":"%s","device":"TPU:%s"}\n' \
	    "$1" "$2" "$3" "$4" "$5" $(($4 - 1)) "$6" $(($4 - 1))
}

# the span lines of a stream, in the expected form: line + context
ctx() { # MATCH ROLE OFFSET
	printf ',"context":{"match":%s,"role":"%s","offset_ns":%s}}' "$1" "$2" "$3"
}
with() { # SPAN-LINE MATCH ROLE OFFSET
	printf '%s%s\n' "${1%\}}" "$(ctx "$2" "$3" "$4")"
}

flat() { # one timeline, a match in the middle
	echo "$META"
	span 0 10 a; span 10 10 b; span 20 10 c; span 30 5 X; span 35 5 d
	span 40 5 e; span 50 5 f
	echo '{"type":"end","events":7,"spans":7,"skipped":{},"warnings":[]}'
}

@test "a match in the middle: N before, the match, N after; meta kept, end recounted" {
	flat > "$T/s.ndjson"
	run trace-context -C 2 X "$T/s.ndjson"
	assert_success
	assert_output - <<E
$META
$(with "$(span 10 10 b)" 1 before -20)
$(with "$(span 20 10 c)" 1 before -10)
$(with "$(span 30 5 X)" 1 match 0)
$(with "$(span 35 5 d)" 1 after 5)
$(with "$(span 40 5 e)" 1 after 10)
{"type":"end","events":7,"spans":5,"skipped":{},"warnings":[]}
E
	trace-context -C 2 X "$T/s.ndjson" | trace-check
	# -A and -B apart, and over -C wherever it stands
	run bash -c "trace-context -B 1 -C 0 -A 3 X '$T/s.ndjson' | jq -r 'select(.type==\"span\") | .name' | tr '\n' ' '"
	assert_output "c X d e f "
	run bash -c "trace-context -C 0 X < '$T/s.ndjson' | jq -r 'select(.type==\"span\") | .name'"
	assert_output "X"
}

@test "matches at the start and at the end of a timeline" {
	flat > "$T/s.ndjson"
	run trace-context -B 1 -A 1 --regex '^[af]$' "$T/s.ndjson"
	assert_success
	assert_output - <<E
$META
$(with "$(span 0 10 a)" 1 match 0)
$(with "$(span 10 10 b)" 1 after 10)
$(with "$(span 40 5 e)" 2 before -10)
$(with "$(span 50 5 f)" 2 match 0)
{"type":"end","events":7,"spans":4,"skipped":{},"warnings":[]}
E
}

nested() {
	echo "$META"
	span 0 100 step; span 0 50 fwd; span 10 5 mm; span 15 0 mark
	span 20 5 mm; span 50 50 bwd; span 60 5 mm; span 70 5 add
}

@test "parents, outermost first, written once for neighbouring matches" {
	nested > "$T/n.ndjson"
	run trace-context -C 0 mm "$T/n.ndjson"
	assert_success
	assert_output - <<E
$META
$(with "$(span 0 100 step)" 1 parent -10)
$(with "$(span 0 50 fwd)" 1 parent -10)
$(with "$(span 10 5 mm)" 1 match 0)
$(with "$(span 20 5 mm)" 2 match 0)
$(with "$(span 50 50 bwd)" 3 parent -10)
$(with "$(span 60 5 mm)" 3 match 0)
E
	trace-context -C 0 mm "$T/n.ndjson" | trace-check
}

@test "nested matches: a parent that matches is a match; before skips parents; --table lists shared spans per match" {
	nested > "$T/n.ndjson"
	run trace-context -C 1 --regex '^(fwd|mm)$' "$T/n.ndjson"
	assert_success
	assert_output - <<E
$META
$(with "$(span 0 100 step)" 1 parent 0)
$(with "$(span 0 50 fwd)" 1 match 0)
$(with "$(span 10 5 mm)" 2 match 0)
$(with "$(span 15 0 mark)" 2 after 5)
$(with "$(span 20 5 mm)" 3 match 0)
$(with "$(span 50 50 bwd)" 3 after 30)
$(with "$(span 60 5 mm)" 4 match 0)
$(with "$(span 70 5 add)" 4 after 10)
E
	# match 3's "before" is mark (the last span that had ended), match
	# 4's is mm at 20: fwd and its children precede it in stream order
	run trace-context --table -C 1 --regex '^(fwd|mm)$' "$T/n.ndjson"
	assert_success
	assert_output - <<'E'
match 1: fwd (pid 1 tid 1, source 0) at ts_ns 0
  role     start    dur  name
  parent     0ns  100ns  step
  match      0ns   50ns  fwd
  after    +10ns    5ns  mm

match 2: mm (pid 1 tid 1, source 0) at ts_ns 10
  role     start    dur  name
  parent   -10ns  100ns  step
  parent   -10ns   50ns  fwd
  match      0ns    5ns  mm
  after     +5ns    0ns  mark

match 3: mm (pid 1 tid 1, source 0) at ts_ns 20
  role     start    dur  name
  parent   -20ns  100ns  step
  parent   -20ns   50ns  fwd
  before    -5ns    0ns  mark
  (gap)     -5ns    5ns
  match      0ns    5ns  mm
  (gap)     +5ns   25ns
  after    +30ns   50ns  bwd

match 4: mm (pid 1 tid 1, source 0) at ts_ns 60
  role     start    dur  name
  parent   -60ns  100ns  step
  parent   -10ns   50ns  bwd
  before   -40ns    5ns  mm
  (gap)    -35ns   35ns
  match      0ns    5ns  mm
  (gap)     +5ns    5ns
  after    +10ns    5ns  add
E
}

@test "equal times: identical intervals nest, a zero-length span encloses nothing" {
	{ echo "$META"; span 10 10 P; span 10 10 Q; span 10 0 z; span 20 5 X; } > "$T/e.ndjson"
	# P and Q end where X starts: both ended, so "before", with z
	run trace-context -B 3 -A 0 X "$T/e.ndjson"
	assert_output - <<E
$META
$(with "$(span 10 10 P)" 1 before -10)
$(with "$(span 10 10 Q)" 1 before -10)
$(with "$(span 10 0 z)" 1 before -10)
$(with "$(span 20 5 X)" 1 match 0)
E
	# of two spans with the same start and length the first encloses
	run trace-context -C 1 Q "$T/e.ndjson"
	assert_output - <<E
$META
$(with "$(span 10 10 P)" 1 parent 0)
$(with "$(span 10 10 Q)" 1 match 0)
$(with "$(span 10 0 z)" 1 after 0)
E
	run trace-context -C 1 z "$T/e.ndjson"
	assert_output - <<E
$META
$(with "$(span 10 10 P)" 1 parent 0)
$(with "$(span 10 10 Q)" 1 parent 0)
$(with "$(span 10 0 z)" 1 match 0)
$(with "$(span 20 5 X)" 1 after 10)
E
}

@test "several timelines and sources: windows stay on their timeline; sources without a match write nothing" {
	for s in A B C; do
		{
			echo "${META/t.pb/$s.pb}"
			span 0 5 a; span 0 5 x 1 2; span 5 5 X; span 6 1 y 1 2
			span 10 5 b; span 20 1 X 1 2
			echo '{"type":"end","spans":6}'
		} > "$T/$s.ndjson"
	done
	sed -i 's/"X"/"W"/' "$T/B.ndjson"
	run trace-context -C 1 X "$T/A.ndjson" "$T/B.ndjson" "$T/C.ndjson"
	assert_success
	assert_output - <<E
${META/t.pb/A.pb}
$(with "$(span 0 5 a)" 1 before -5)
$(with "$(span 5 5 X)" 1 match 0)
$(with "$(span 10 5 b)" 1 after 5)
$(with "$(span 6 1 y 1 2)" 2 before -14)
$(with "$(span 20 1 X 1 2)" 2 match 0)
{"type":"end","spans":5}
${META/t.pb/C.pb}
$(with "$(span 0 5 a)" 3 before -5)
$(with "$(span 5 5 X)" 3 match 0)
$(with "$(span 10 5 b)" 3 after 5)
$(with "$(span 6 1 y 1 2)" 4 before -14)
$(with "$(span 20 1 X 1 2)" 4 match 0)
{"type":"end","spans":5}
E
	# one stream of three sources reads the same as three files
	cat "$T/A.ndjson" "$T/B.ndjson" "$T/C.ndjson" | trace-context -C 1 X > "$T/cat.out"
	trace-context -C 1 X "$T/A.ndjson" "$T/B.ndjson" "$T/C.ndjson" > "$T/args.out"
	cmp "$T/cat.out" "$T/args.out"
	run trace-check -v "$T/cat.out"
	assert_output "trace-check: 14 records, 10 spans, 2 sources, 0 problems"
}

# TPU:0 ops, TPU:0 Steps, TPU:1 ops and a host thread; the host thread is
# written first, as xplane2ndjson writes planes one after the other.
devices() {
	echo "$META"
	span 0 40 h1 100 1; span 40 20 h2 100 1; span 60 20 h3 100 1
	dspan 0 30 o1 1 1 "XLA Ops"; dspan 30 20 X 1 1 "XLA Ops"
	dspan 50 10 o2 1 1 "XLA Ops"; dspan 0 100 s1 1 2 Steps
	dspan 25 30 t1 2 1 "XLA Ops"; span 80 5 h4 100 1
}

@test "--overlapping: the device's other timelines and host timelines, not other devices" {
	devices > "$T/d.ndjson"
	# the answer of the spans in time order (the stream gives its
	# timelines one after the other, so it is read again in time order):
	# when X arrives, s1, h1 and h2 overlap it, t1 is another device's
	run trace-context -B 2 -A 0 --overlapping X "$T/d.ndjson"
	assert_success
	assert_output - <<E
$META
$(with "$(dspan 0 30 o1 1 1 "XLA Ops")" 1 before -30)
$(with "$(dspan 30 20 X 1 1 "XLA Ops")" 1 match 0)
$(with "$(dspan 0 100 s1 1 2 Steps)" 1 overlap -30)
$(with "$(span 0 40 h1 100 1)" 1 overlap -30)
$(with "$(span 40 20 h2 100 1)" 1 overlap 10)
E
	trace-context -B 2 -A 0 --overlapping X "$T/d.ndjson" | trace-check
	# in time order every overlapping span is open when X arrives or comes
	# after it: --lookback bounds memory and does not change the answer
	names() { trace-context "$@" X "$T/d.ndjson" | jq -r 'select(.type=="span") | .name' | sort | tr '\n' ' '; }
	run names -C 0 --overlapping
	assert_output "X h1 h2 s1 "
	run names -C 0 --overlapping --lookback 1
	assert_output "X h1 h2 s1 "
	run names -C 0 --overlapping --lookback 0
	assert_output "X h1 h2 s1 "
	run names -B 2 -A 0 --overlapping --lookback 0
	assert_output "X h1 h2 o1 s1 "
	# the same records in time order (interleaved by jq) or reversed give
	# the same bytes
	trace-context -B 2 -A 1 --overlapping X "$T/d.ndjson" > "$T/d.out"
	jq -c -s '(map(select(.type == "meta")) + (map(select(.type == "span"))
	    | sort_by(.ts_ns, -.dur_ns, .pid, .tid)))[]' "$T/d.ndjson" |
	    trace-context -B 2 -A 1 --overlapping X | cmp - "$T/d.out"
	"$PY" "$TOOLS/shuffle_stream.py" --reverse < "$T/d.ndjson" |
	    trace-context -B 2 -A 1 --overlapping X | cmp - "$T/d.out"
	# read twice only for a match: without one the answer is empty in
	# any order
	ND_DRIVE_STATS=1 run --separate-stderr trace-context --overlapping X "$T/d.ndjson"
	[ "$stderr" = "trace-context: 2 passes, 0 bytes of stdin spooled" ] || fail "$stderr"
	ND_DRIVE_STATS=1 run --separate-stderr trace-context --overlapping nosuch "$T/d.ndjson"
	assert_output ''
	[ "$stderr" = "trace-context: 1 pass, 0 bytes of stdin spooled" ] || fail "$stderr"
	run trace-context -B 2 -A 1 --table --overlapping X "$T/d.ndjson"
	assert_output - <<'E'
match 1: X (pid 1 tid 1, /device:TPU:0 XLA Ops, source 0) at ts_ns 30
  role     start    dur  name
  before   -30ns   30ns  o1
  match      0ns   20ns  X
  after    +20ns   10ns  o2
  -- pid 1 tid 2, /device:TPU:0 Steps
  overlap  -30ns  100ns  s1
  -- pid 100 tid 1
  overlap  -30ns   40ns  h1
  overlap  +10ns   20ns  h2
E
}

@test "a span of two matches is written once, for the first; order per timeline is kept" {
	# S arrives after M1 and overlaps it; X2's window reaches back over b
	# and S: b must come out before S although S was claimed first
	{ echo "$META"; span 0 5 a 100 1; span 5 5 b 100 1
	  dspan 12 3 M1 1 1 "XLA Ops"; span 10 10 S 100 1; span 25 5 X2 100 1
	  span 30 5 c 100 1; } > "$T/t.ndjson"
	run trace-context -B 2 -A 0 --overlapping --regex '^(M1|X2)$' "$T/t.ndjson"
	assert_success
	assert_output - <<E
$META
$(with "$(dspan 12 3 M1 1 1 "XLA Ops")" 1 match 0)
$(with "$(span 5 5 b 100 1)" 2 before -20)
$(with "$(span 10 10 S 100 1)" 1 overlap -2)
$(with "$(span 25 5 X2 100 1)" 2 match 0)
E
	trace-context -B 2 -A 0 --overlapping --regex '^(M1|X2)$' "$T/t.ndjson" | trace-check
	run bash -c "trace-context --table -B 2 -A 0 --overlapping --regex '^(M1|X2)\$' '$T/t.ndjson' | grep -c ' S\$'"
	assert_output 2
}

@test "--key: top-level keys, args.X, non-strings by their JSON text" {
	{
		echo "$META"
		echo '{"type":"span","ts_ns":0,"dur_ns":5,"name":"a","pid":1,"tid":1,"step":12,"scope":"f/attn","args":{"stream":7}}'
		echo '{"type":"span","ts_ns":5,"dur_ns":5,"name":"b","pid":1,"tid":1,"step":13,"scope":"f/mlp","args":{"stream":"7"}}'
		echo '{"type":"span","ts_ns":10,"dur_ns":5,"name":"c","pid":1,"tid":1,"step":null,"args":{"stream":null}}'
	} > "$T/k.ndjson"
	names() { trace-context -C 0 "$@" "$T/k.ndjson" | jq -r 'select(.type=="span") | .name' | tr '\n' ' '; }
	run names --key step 13
	assert_output "b "
	run names --key scope f/attn
	assert_output "a "
	run names --key args.stream 7
	assert_output "a b "
	run names --key scope --regex '^f/'
	assert_output "a b "
	run names --key name c
	assert_output "c "
	run trace-context --key step null "$T/k.ndjson"
	assert_failure 1
	assert_output ""
	run trace-context --key "" x "$T/k.ndjson"
	assert_failure 2
	assert_output "trace-context: invalid value for --key: ''"
}

@test "--regex is a POSIX ERE searched in the value; a bad one is a usage error" {
	flat > "$T/s.ndjson"
	run bash -c "trace-context -C 0 --regex '[ace]' '$T/s.ndjson' | jq -r 'select(.type==\"span\") | .name' | tr '\n' ' '"
	assert_output "a c e "
	run trace-context --regex 'a(' "$T/s.ndjson"
	assert_failure 2
	assert_output --partial "trace-context: --regex 'a(': "
	# exact by default: no substring match
	run trace-context X. "$T/s.ndjson"
	assert_failure 1
}

@test "no match: status 1 and no output, like grep" {
	flat > "$T/s.ndjson"
	run trace-context nothing "$T/s.ndjson"
	assert_failure 1
	assert_output ""
	run trace-context --table nothing "$T/s.ndjson"
	assert_failure 1
	assert_output ""
}

@test "--max stops reading as soon as the last match is complete" {
	{ flat | sed '$d'; echo 'not json'; } > "$T/m.ndjson"
	run trace-context -C 1 --max 1 --regex '^[bc]$' "$T/m.ndjson"
	assert_success
	assert_output - <<E
$META
$(with "$(span 0 10 a)" 1 before -10)
$(with "$(span 10 10 b)" 1 match 0)
$(with "$(span 20 10 c)" 1 after 10)
E
	# without --max it reads on and meets the bad line
	run trace-context -C 1 --regex '^[bc]$' "$T/m.ndjson"
	assert_failure 2
	assert_output --partial "m.ndjson:9: invalid JSON"
	# an open after-window keeps it reading to the end of the source
	run bash -c "trace-context -A 9 --max 1 a '$T/m.ndjson'"
	assert_failure 2
}

@test "| head -1 ends quietly with status 0" {
	"$ND_BIN/gen-stream" -n 50000 > "$T/g.ndjson"
	runp "trace-context --regex . '$T/g.ndjson' | head -1"
	assert_success
	assert_output --partial '"type":"meta"'
	runp "trace-context --table --regex . '$T/g.ndjson' | head -1"
	assert_success
	assert_output --partial "match 1: "
}

@test "memory is bounded by the windows: the same spans held for 20k and 200k spans" {
	"$ND_BIN/gen-stream" -n 20000 > "$T/s.ndjson"
	"$ND_BIN/gen-stream" -n 200000 > "$T/l.ndjson"
	held() { ND_CONTEXT_STATS=1 trace-context "$@" 2>&1 >/dev/null | sed 's/.*at most //'; }
	small=$(held -C 5 --regex '^copy' "$T/s.ndjson")
	large=$(held -C 5 --regex '^copy' "$T/l.ndjson")
	assert_equal "$large" "$small"
	# 4 timelines of one open span and 5 ended ones each, plus the match's
	# after-window: a few dozen at most
	[ "${small%% *}" -le 40 ] || fail "held $small"
	# --overlapping: rings of --lookback spans instead of -B
	small=$(held -C 5 --overlapping --lookback 50 --regex '^copy' "$T/s.ndjson")
	large=$(held -C 5 --overlapping --lookback 50 --regex '^copy' "$T/l.ndjson")
	assert_equal "$large" "$small"
	[ "${small%% *}" -le 240 ] || fail "held $small"
}

@test "out of order: read again, the answer of the same spans in time order; spans without their keys: exit 2 with the place" {
	{ echo "$META"; span 5 1 a; span 0 9 b 1 2; span 4 1 c; } > "$T/o.ndjson"
	# the same spans sorted by start, the longer first (jq, not ours)
	sorted() {
		jq -c 'select(.type == "meta")' "$1"
		jq -c 'select(.type == "span")' "$1" | jq -sc 'sort_by(.ts_ns, -.dur_ns)[]'
	}
	sorted "$T/o.ndjson" > "$T/s.ndjson"
	run trace-context -C 1 a "$T/s.ndjson"
	assert_success
	want=$output
	assert_output - <<E
$META
$(with "$(span 4 1 c)" 1 before -1)
$(with "$(span 5 1 a)" 1 match 0)
E
	ND_DRIVE_STATS=1 run --separate-stderr trace-context -C 1 a "$T/o.ndjson"
	assert_success
	assert_equal "$output" "$want"
	assert_equal "$stderr" "trace-context: 2 passes, 0 bytes of stdin spooled"
	# from a pipe: spooled and read back
	ND_DRIVE_STATS=1 run --separate-stderr sh -c 'cat "$1" | trace-context -C 1 a' sh "$T/o.ndjson"
	assert_success
	assert_equal "$output" "$want"
	assert_equal "$stderr" "trace-context: 2 passes, $(wc -c < "$T/o.ndjson") bytes of stdin spooled"
	# three sources, the middle one reversed: the first is written by the
	# first reading, the matches numbered on across the second
	flat | sed 's/"t.pb"/"u.pb"/' > "$T/u.ndjson"
	{ flat; sed -n 1p "$T/u.ndjson"; sed '1d;$d' "$T/u.ndjson" | tac
	  sed -n '$p' "$T/u.ndjson"; flat | sed 's/"t.pb"/"v.pb"/'; } > "$T/m.ndjson"
	{ flat; cat "$T/u.ndjson"; flat | sed 's/"t.pb"/"v.pb"/'; } > "$T/m-sorted.ndjson"
	run trace-context -C 1 X "$T/m-sorted.ndjson"
	assert_success
	want=$output
	run jq -r 'select(.context.role == "match") | .context.match' <<<"$want"
	assert_output $'1\n2\n3'
	run trace-context -C 1 X "$T/m.ndjson"
	assert_success
	assert_equal "$output" "$want"
	{ echo "$META"; echo '{"type":"span","ts_ns":1,"name":"a","pid":1,"tid":1}'; } > "$T/k.ndjson"
	run trace-context a "$T/k.ndjson"
	assert_failure 2
	assert_output "trace-context: $T/k.ndjson:2: span record lacks \"dur_ns\" (an integer)"
	# -o leaves nothing behind on error
	run trace-context -o "$T/out.ndjson" a "$T/k.ndjson"
	assert_failure 2
	[ ! -e "$T/out.ndjson" ]
	run trace-context -o "$T/out.ndjson" -C 0 X <(flat)
	assert_success
	run cat "$T/out.ndjson"
	assert_line --index 1 "$(with "$(span 30 5 X)" 1 match 0)"
}

@test "other records: instants, counters, unknown types are not context; its own output reads back" {
	{
		flat | sed '$d'
		echo '{"type":"instant","ts_ns":31,"name":"i","pid":1,"tid":1}'
		echo '{"type":"counter","ts_ns":31,"name":"m","pid":1,"values":{"b":1}}'
		echo '{"type":"top","name":"X"}'
		echo '{"type":"end","spans":7,"instants":1,"counters":1}'
	} > "$T/r.ndjson"
	run trace-context -C 1 X "$T/r.ndjson"
	assert_success
	assert_output - <<E
$META
$(with "$(span 20 10 c)" 1 before -10)
$(with "$(span 30 5 X)" 1 match 0)
$(with "$(span 35 5 d)" 1 after 5)
{"type":"end","spans":3,"instants":0,"counters":0}
E
	trace-context -C 1 X "$T/r.ndjson" | trace-check
	# the same windows again: the same output (the context key is replaced)
	trace-context -C 1 X "$T/r.ndjson" > "$T/once"
	trace-context -C 1 X "$T/once" > "$T/twice"
	cmp "$T/once" "$T/twice"
}

@test "usage: a pattern is needed, numbers are checked, --help and --version" {
	run trace-context
	assert_failure 2
	assert_line --index 0 "trace-context: no PATTERN given"
	assert_line --index 1 --partial "usage: trace-context "
	run trace-context -A x X
	assert_failure 2
	assert_output "trace-context: invalid value for --after-context: 'x'"
	run trace-context --max 0 X
	assert_failure 2
	assert_output "trace-context: invalid value for --max: '0'"
	run trace-context --help
	assert_success
	assert_line --index 0 --partial "usage: trace-context [-hV]"
	run trace-context --version
	assert_success
	assert_output --regexp '^trace-context \(ndtrace\) [0-9]+\.[0-9]+\.[0-9]+$'
	run trace-context X "$T/missing"
	assert_failure 2
	assert_output "trace-context: $T/missing: No such file or directory"
}

@test "random streams: every option against the whole-stream oracle" {
	# context_gen.py: nesting, overruns, zero lengths, ties, several
	# sources, timelines one after the other or interleaved
	if [ -n "${ND_ASAN:-}" ]; then
		run "$PY" "$TOOLS/context_fuzz.py" "$ND_BIN" 1 2 --quick
		assert_output "ok: 48 runs"
	else
		run "$PY" "$TOOLS/context_fuzz.py" "$ND_BIN" 1 6
		assert_output "ok: 324 runs"
	fi
	assert_success
}

@test "a real profile: a named op's neighbours, cross-checked with python" {
	need_fixtures
	"$ND_BIN/xplane2ndjson" "$FIXTURES/xplane/tpu_inference_4core.xplane.pb" > "$T/tpu.ndjson"
	# an op of an XLA Ops line whose name occurs once in the profile
	op=$(jq -r 'select(.type=="span") | [.name, .thread] | @tsv' "$T/tpu.ndjson" |
	    sort | uniq -c | awk '$1 == 1 && $3 == "XLA" && $4 == "Ops" {print $2}' |
	    sort | head -1)
	[ -n "$op" ]
	trace-context -C 3 --key name "$op" "$T/tpu.ndjson" > "$T/ctx.ndjson"
	trace-check "$T/ctx.ndjson"
	# neighbours by hand: the op's timeline in stream order, 3 each side
	# (the XLA Ops lines are flat: nothing encloses an op; checked)
	run "$PY" - "$T/tpu.ndjson" "$T/ctx.ndjson" "$op" <<'PY'
import json, sys
spans = [json.loads(l) for l in open(sys.argv[1])]
spans = [s for s in spans if s["type"] == "span"]
op = sys.argv[3]
m = next(s for s in spans if s["name"] == op)
tl = [s for s in spans if (s["pid"], s["tid"]) == (m["pid"], m["tid"])]
i = tl.index(m)
assert all(s["ts_ns"] + s["dur_ns"] <= t["ts_ns"] for s, t in zip(tl, tl[1:]))
want = [(s["name"], r, s["ts_ns"] - m["ts_ns"]) for s, r in
        [(s, "before") for s in tl[max(0, i - 3):i]] + [(m, "match")] +
        [(s, "after") for s in tl[i + 1:i + 4]]]
got = [json.loads(l) for l in open(sys.argv[2])]
got = [(s["name"], s["context"]["role"], s["context"]["offset_ns"])
       for s in got if s["type"] == "span" and s["context"]["match"] == 1]
print("ok" if got == want else "got %s\nwant %s" % (got, want))
PY
	assert_output "ok"
	# and the whole-stream oracle, with --overlapping and several matches
	for o in "-C 3" "-B 2 -A 1 --overlapping --max 5"; do
		trace-context $o all-reduce "$T/tpu.ndjson" > "$T/o.ndjson"
		trace-check "$T/o.ndjson"
		run "$PY" "$TOOLS/context_check.py" $o all-reduce "$T/tpu.ndjson" "$T/o.ndjson"
		assert_output --regexp '^ok: [1-9][0-9]* matches$'
	done
	trace-context --table $o all-reduce "$T/tpu.ndjson" > "$T/o.txt"
	run "$PY" "$TOOLS/context_check.py" --table $o all-reduce "$T/tpu.ndjson" "$T/o.txt"
	assert_output "ok: 5 matches"
	# the neighbourhood converts for Perfetto: the same spans
	n=$(grep -c '"type":"span"' "$T/ctx.ndjson")
	runp "ndjson2chrome '$T/ctx.ndjson' | jq '.traceEvents | map(select(.ph == \"X\")) | length'"
	assert_success
	assert_output "$n"
}

@test "a PyTorch trace: contexts on nested host threads and GPU streams match the oracle" {
	need_fixtures
	"$ND_BIN/chrome2ndjson" "$FIXTURES/chrome/hta_alexnet.json.gz" > "$T/a.ndjson"
	for o in "-C 2" "-B 3 -A 1 --overlapping"; do
		for p in "aten::to" "--regex ^cuda(Launch|Memcpy)"; do
			trace-context $o $p "$T/a.ndjson" > "$T/o.ndjson"
			trace-check "$T/o.ndjson"
			run "$PY" "$TOOLS/context_check.py" $o $p "$T/a.ndjson" "$T/o.ndjson"
			assert_output --regexp '^ok: [1-9][0-9]* matches$'
		done
	done
}
