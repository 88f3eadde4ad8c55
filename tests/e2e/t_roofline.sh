#!/usr/bin/env bash
# Physics as evidence on the demo: every verify records a roofline against
# this CPU's measured peaks (verify prints one line, --json carries it); the
# demo's real wins (loop interchanges, another chunk size) are never flagged;
# a kernel that returns early for the benchmark's long sequences (the gate's
# are short) passes the gate, reads thousands of times faster, and is flagged
# impossible with its arithmetic: keep, keep --unconfirmed and promote
# --explain are refused (exit 3), a confirm of it does not promote, the due
# step offers drop, and TRAPS.md's
# implausible-speedup entry is hit; the confirm's runs carry their roofline
# too, the candidate's impossible.  A malformed Cost: is refused with what
# to write; a Peak: from the contract replaces the measured peaks.  (Three
# rows after the last real win stall the loop: the steps are packed into
# three iterations.)  report nogo names the bound the best's run shows
# (with the baseline's share at that shape), or says why it shows none.
# Then stop --reason floor without --bound computes the bound from the
# best's run, or refuses when no shape is at a limit.  Last, a project whose
# shapes have no cost model says why once, not once a shape.
. "$(dirname "$0")/lib.sh"

d="$T_TMP/demo"
cp -R "$OPTLOOP_ROOT/assets/demo" "$d"
rm -rf "$d/build"
cd "$d" || exit 1
git init -q -b main . && git add -A && git commit -q -m "demo project"
export DEMO_BENCH_REP_MS=20 DEMO_BENCH_WARMUP_MS=5
kernel=ops/linear_attn/chunk.c
jq_() { # PYTHON-EXPR over the JSON on stdin as j
	python3 -c 'import json,sys; j=json.load(sys.stdin); print(eval(sys.argv[1]))' "$1"
}
state_suggest() { "$OPTLOOP" status --json | jq_ 'j.get("suggest")'; }
edit() { # python replace in the kernel, failing loudly
	python3 - "$kernel" "$1" "$2" <<'PY'
import sys
p, a, b = sys.argv[1:]
s = open(p).read()
assert a in s, a
open(p, "w").write(s.replace(a, b, 1))
PY
}

"$OPTLOOP" init --op chunk_linear_attn --kernel "$kernel" --test-file tests/ops/test_linear_attn.c \
	--naive ops/linear_attn/naive.c --verify "./verify --op chunk_linear_attn" >/dev/null
"$OPTLOOP" contract --set "target=the three bench shapes, 1.2x" --set languages=C \
	--set "promotion=full gate, confirmed win" >/dev/null

out=$("$OPTLOOP" contract --set "cost=family=linear_attn; dtype=int3" 2>&1); rc=$?
t_is "a Cost: with an unknown dtype is refused (exit 2)" "$rc" 2
t_like "  saying what to write" "$out" 'dtype "int3" is not fp32, tf32, bf16, fp16 or fp8'
t_ok "the demo's cost: linear attention in fp32" "$OPTLOOP" contract --set "cost=family=linear_attn; dtype=fp32"

# ---- the baseline: a roofline against this CPU's measured peaks ------------
out=$("$OPTLOOP" verify 2>&1)
t_like "verify prints the roofline line" "$out" \
	'roofline: this CPU \(measured here\): (compute|memory|launch)-bound.* at fwd B=.*; 0 impossible'
"$OPTLOOP" log --direction baseline >/dev/null && "$OPTLOOP" commit >/dev/null

# ---- real wins are never flagged ---------------------------------------------
check_real() { # name: verify --json, no impossible flag, below each measured peak
	local name=$1 j
	j=$("$OPTLOOP" verify --json 2>/dev/null)
	t_is "$name: gate passes" "$(printf '%s' "$j" | jq_ 'j["gate"]')" pass
	t_is "$name: not flagged impossible" "$(printf '%s' "$j" | jq_ '"impossible" in j["flags"]')" False
	t_is "$name: the JSON carries the roofline of 3 shapes, 0 impossible" \
		"$(printf '%s' "$j" | jq_ '(len(j["verdict_detail"]["roofline"]["shapes"]), j["verdict_detail"]["roofline"]["impossible"])')" "(3, 0)"
	t_is "$name: measured peaks, fp32 cost" \
		"$(printf '%s' "$j" | jq_ 'j["verdict_detail"]["roofline"]["peaks"]["measured"]')" True
	t_is "$name: every bandwidth share below 100%" \
		"$(printf '%s' "$j" | jq_ 'all(s["bw_share"] < 1 for s in j["verdict_detail"]["roofline"]["shapes"])')" True
	echo "# $name: $(printf '%s' "$j" | jq_ 'j["verdict_detail"]["roofline"]["line"]')"
}
keep_real() { # name: a real win is kept (explained when read as implausible)
	"$OPTLOOP" promote --explain "$1: a real loop-order change, the gate passes" >/dev/null
	t_ok "$1: it can be kept" "$OPTLOOP" log --direction "$1" --status keep --unconfirmed "a real win"
	"$OPTLOOP" commit >/dev/null
}
edit "					for (int j = 0; j < D; j++) {
						float acc = 0.0f;
						for (int i = 0; i < D; i++)
							acc += qt[i] * S[(size_t)i * D + j];
						ot[j] = acc;
					}" "					for (int j = 0; j < D; j++)
						ot[j] = 0.0f;
					for (int i = 0; i < D; i++)
						for (int j = 0; j < D; j++)
							ot[j] += qt[i] * S[(size_t)i * D + j];"
edit "				for (int i = 0; i < D; i++)
					for (int j = 0; j < D; j++) {
						float acc = 0.0f;
						for (int s = t0; s < t1; s++)
							acc += kb[(size_t)s * tok + i] * vb[(size_t)s * tok + j];
						S[(size_t)i * D + j] += acc;
					}" "				for (int s = t0; s < t1; s++)
					for (int i = 0; i < D; i++) {
						float ki = kb[(size_t)s * tok + i];
						const float *vs = vb + (size_t)s * tok;
						for (int j = 0; j < D; j++)
							S[(size_t)i * D + j] += ki * vs[j];
					}"
check_real "two loop interchanges"
keep_real "two loop interchanges"
# the contract's Peak: figures replace the measured peaks
"$OPTLOOP" contract --set "peak=bw=1e15 fp32=1e16" >/dev/null
edit "#define CHUNK_SIZE 64" "#define CHUNK_SIZE 32"
out=$("$OPTLOOP" verify 2>&1)
t_like "chunk size 32: the contract's Peak: is used and said so" "$out" "roofline: contract \(the contract's Peak:\): .*; 0 impossible"
"$OPTLOOP" log --direction "chunk size 32" --status revert >/dev/null && "$OPTLOOP" commit >/dev/null
"$OPTLOOP" contract --set "peak=" >/dev/null

# ---- a kernel that skips the benchmark's long sequences ----------------------
edit "	size_t tok = (size_t)H * D; /* distance between consecutive tokens */
" "	size_t tok = (size_t)H * D; /* distance between consecutive tokens */
	if (T >= 512)
		return; /* the gate's sequences are all shorter */
"
j=$("$OPTLOOP" verify --json 2>/dev/null); rc=$?
t_is "the early return passes the gate" "$rc" 0
t_is "  and is flagged impossible" "$(printf '%s' "$j" | jq_ '"impossible" in j["flags"]')" True
t_is "  on every shape" "$(printf '%s' "$j" | jq_ 'j["verdict_detail"]["roofline"]["impossible"]')" 3
why=$(printf '%s' "$j" | jq_ 'j["verdict_detail"]["roofline"]["impossible_why"][0]')
t_like "  naming the shape and the arithmetic" "$why" \
	"^fwd B=[0-9]+ T=[0-9]+ H=[0-9]+ D=[0-9]+ chunk_linear_attn: 0\.00[0-9]* ms.* for 4\.0 MiB is (over )?[0-9.]+ [GT]B/s, above this CPU's measured [0-9.]+ GB/s \([0-9.]+x, beyond the 4\.00x margin\)$"
echo "# $why"
out=$("$OPTLOOP" status 2>&1)
t_like "status prints the impossible lines" "$out" 'impossible: fwd B='
out=$("$OPTLOOP" log --direction "early return" --status keep 2>&1); rc=$?
t_is "keep is refused (exit 3)" "$rc" 3
t_like "  because the time is impossible, offering drop" "$out" \
	"keep refused: iteration 3's time is impossible .*No explanation lifts an impossible time.*log it as drop"
out=$("$OPTLOOP" log --direction "early return" --status keep --unconfirmed "trust me" 2>&1); rc=$?
t_is "keep --unconfirmed is refused too (exit 3)" "$rc" 3
out=$("$OPTLOOP" promote --explain "it is just fast" 2>&1); rc=$?
t_is "promote --explain is refused (exit 3)" "$rc" 3
t_like "  no explanation lifts it" "$out" "promote --explain refused: iteration 3's time is impossible .*no explanation lifts that"
t_is "the due step suggests drop" "$(state_suggest)" drop
t_like "  and says so" "$("$OPTLOOP" status --json | jq_ 'j["next"]')" 'impossible.*--status drop'
t_like "TRAPS.md's implausible-speedup entry is hit" "$("$OPTLOOP" trap list --iter 3)" '^\[!\] implausible-speedup'
j=$("$OPTLOOP" confirm --max-pairs 2 --json 2>/dev/null); rc=$?
t_is "a confirm of it does not promote (exit 1)" "$rc" 1
t_is "  promoted: false" "$(printf '%s' "$j" | jq_ 'j["promoted"]')" False
t_is "  its flags carry impossible" "$(printf '%s' "$j" | jq_ '"impossible" in j["flags"]')" True
db=profile/chunk_linear_attn-opt/optloop.db
roof_of() { # SQL-EXPR over each confirm run's recorded roofline, role ROLE
	sqlite3 "$db" "SELECT group_concat(DISTINCT coalesce($1, 'none')) FROM runs r JOIN stats_runs s
		ON s.run_id = r.id LEFT JOIN stats_verdicts v ON v.run_id = r.id
		WHERE r.kind = 'confirm' AND s.role = '$2'"
}
t_is "  each of its runs carries the roofline of 3 shapes, the best's" \
	"$(roof_of "json_array_length(v.json, '\$.roofline.shapes')" best)" 3
t_is "  and the candidate's" "$(roof_of "json_array_length(v.json, '\$.roofline.shapes')" cand)" 3
t_is "  the best's runs are possible" "$(roof_of "json_extract(v.json, '\$.roofline.impossible')" best)" 0
t_is "  the candidate's impossible on every shape" \
	"$(roof_of "json_extract(v.json, '\$.roofline.impossible')" cand)" 3
out=$("$OPTLOOP" log --direction "early return" --status keep 2>&1); rc=$?
t_is "after the confirm keep is still refused (exit 3)" "$rc" 3
t_ok "drop is logged" "$OPTLOOP" log --direction "early return for long sequences" --status drop
t_ok "and committed" "$OPTLOOP" commit
t_unlike "drop put the best kernel back" "$(cat "$kernel")" 'T >= 512'

# ---- report nogo: the named bound from the measured runs --------------------
# the contract's bandwidth peak put 25% above the best's fastest shape: that
# shape reads memory-bound at 80% (its share is computed from the stored
# samples, so the figure does not move with the machine's load)
best_run=$(sqlite3 "$db" "SELECT run_id FROM iterations WHERE iter = 1")
bw=$(sqlite3 "$db" "SELECT max(json_extract(s.value, '\$.bw')) FROM stats_verdicts v,
	json_each(v.json, '\$.roofline.shapes') s WHERE v.run_id = $best_run")
"$OPTLOOP" contract --set "peak=bw=$(python3 -c "print('%.9g' % ($bw / 0.8))") fp32=1e16" >/dev/null
out=$("$OPTLOOP" report nogo 2>&1); rc=$?
t_is "with no stop, report nogo is complete (exit 0)" "$rc" 0
echo "# $(printf '%s\n' "$out" | grep "Named bound")"
t_like "  its named bound computed from the best's run, beside the baseline's share" "$out" \
	"\*\*Named bound:\*\* memory-bound at 80% of the contract's [0-9.]+ [kMGT]?B/s HBM, from [0-9]+% at the baseline \(fwd B=.*, the best's run $best_run\) \(computed from the measured runs\)"
t_unlike "  the impossible run is not its candidate" "$out" 'candidate:\*\* iteration 3'
"$OPTLOOP" contract --set "peak=bw=1e15 fp32=1e16" >/dev/null
out=$("$OPTLOOP" report nogo 2>&1); rc=$?
t_is "no shape near a limit: report nogo is incomplete (exit 1)" "$rc" 1
t_like "  saying the measured runs name no bound, and why" "$out" \
	"Named bound:\*\* MISSING — record the bound .*; the measured runs name none: no shape of the best \(iteration 1\) is at a limit"

# ---- a computed floor: stop --reason floor without --bound -------------------
"$OPTLOOP" contract --set "peak=bw=1e15 fp32=1e16" >/dev/null
out=$("$OPTLOOP" stop --reason floor 2>&1); rc=$?
t_is "no shape of the best near a limit: stop --reason floor is refused (exit 3)" "$rc" 3
t_like "  with the roofline it read" "$out" \
	"stop refused: no shape of the best \(iteration 1\) is at a limit: none is launch-bound or at 70% of a peak \(roofline: contract"
"$OPTLOOP" contract --set "peak=bw=1e15 fp32=1e16 launch_us=1000000" >/dev/null
out=$("$OPTLOOP" stop --reason floor 2>&1); rc=$?
t_is "every shape below a 1 s launch floor: the floor is computed (exit 0)" "$rc" 0
t_like "  and recorded with its number" "$out" \
	"bound: launch-bound at [0-9.]+ us per call, below the 1000000.0 us launch floor of the contract \(fwd B=.*, the best's run [0-9]+\) \(computed from the best's run\)"
t_is "the loop is stopping" "$("$OPTLOOP" status --json | jq_ 'j["state"]')" stopping

# ---- no cost model: the reason once, however many shapes share it ----------
tiny="$T_TMP/tiny"
"$OPTLOOP_ROOT/tests/fixtures/make_tiny_project.sh" "$tiny" >/dev/null
cd "$tiny" || exit 1
git config user.name "optloop test" && git config user.email "test@optloop.invalid"
"$OPTLOOP" init --op tiny --kernel kernel --test-file tests/test_compute.sh --naive ref/naive.sh \
	--verify ./verify >/dev/null
"$OPTLOOP" contract --set "target=2x" --set languages=sh --set "promotion=full gate, confirmed win" >/dev/null
out=$("$OPTLOOP" verify 2>&1)
t_like "twelve shapes of an op without a cost model: the reason is said once" "$out" \
	'roofline: none \(no cost model for fwd compute\)$'

t_done
