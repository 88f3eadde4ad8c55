#!/usr/bin/env bash
# The rows the protocol never records, on the demo: a floor row needs a
# passing gate and the named bound with its number, and its kernel goes back
# to the best like a drop (a failed kernel is never left in HEAD); a
# work-skipping "win" (8x, flagged implausible) is neither suggested nor kept,
# not even --unconfirmed, until its flags are explained; an edit made while
# verify runs makes the run an attempt that names the file, never a row that
# commits the edit as measured.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/confirm_lib.sh"

export DEMO_BENCH_WARMUP_MS=1 DEMO_BENCH_REP_MS=1
state() { "$OPTLOOP" status --json | jget state; }
reps() { sed -i "s/rep < [0-9]*;/rep < $1;/" "$kernel"; }
lastrow() { grep -E '^\| [0-9]+ \|' profile/chunk_linear_attn-opt/OPT_LOG.md | tail -n 1; }

confirm_workspace 8 "every shape at least 1.3x"
"$OPTLOOP" verify >/dev/null 2>&1
"$OPTLOOP" noise --runs 2 >/dev/null 2>&1
"$OPTLOOP" log --direction baseline --commit >/dev/null
t_is "baseline logged and committed" "$(state)" ready
base_head=$(git rev-parse HEAD)

# ---- 1. floor: a passing gate and a named bound; the kernel goes back ------
sed -i 's/ot\[j\] += a \* vs\[j\];/ot[j] += 2 * a * vs[j];/' "$kernel"
t_exit "a broken kernel fails the gate (exit 1)" 1 "$OPTLOOP" verify
out=$("$OPTLOOP" log --direction "double the term" --status floor 2>&1); rc=$?
t_is "floor without --bound is a usage error (exit 2)" "$rc" 2
t_like "  saying what a floor row needs" "$out" "a floor row needs the named bound and its number"
out=$("$OPTLOOP" log --direction "double the term" --status floor --bound "HBM bandwidth: 3.1 of 4.8 TB/s" 2>&1); rc=$?
t_is "floor on a failed gate is refused (exit 3)" "$rc" 3
t_like "  saying to drop it" "$out" "floor refused: iteration 1's gate is fail.*Log it as drop"
t_is "  nothing was written" "$(state) $(git rev-parse HEAD)" "measured $base_head"
t_exit "--bound with another status is a usage error" 2 \
	"$OPTLOOP" log --direction x --status drop --bound "HBM: 3 TB/s"
"$OPTLOOP" log --direction "double the term" --status drop --commit >/dev/null
t_is "dropped: the kernel is the best again" "$(git diff "$base_head" -- "$kernel")" ""

reps 7
t_exit "a real 1.14x change passes" 0 "$OPTLOOP" verify
t_exit "floor --bound without a number is refused" 2 \
	"$OPTLOOP" log --direction "one fewer repetition" --status floor --bound "HBM bandwidth"
out=$("$OPTLOOP" log --direction "one fewer repetition" --status floor \
	--bound "launch overhead: 4.1 us of 4.3 us" --commit --json 2>&1); rc=$?
t_is "floor with a passing gate and a bound is logged and committed" "$rc" 0
t_like "  the row names the bound" "$(lastrow)" '^\| 2 \| one fewer repetition \(floor: launch overhead: 4\.1 us of 4\.3 us\) \|.*\| floor \|$'
t_like "  and the commit's trailers do" "$(git log -n 1 --format=%B HEAD~1)" \
	'Optloop-Direction: one fewer repetition \(floor: launch overhead: 4\.1 us of 4\.3 us\)'
t_like "  its kernel goes back to the best in a commit of its own" "$(git log -n 1 --format=%B HEAD)" \
	'restore the best kernel \(iteration 0\) after iteration 2'
t_is "  the tree is the best's" "$(git diff "$base_head" -- "$kernel")" ""
t_is "  and the best is still the baseline" "$("$OPTLOOP" status --json | jget best.iter)" 0

# ---- 2. an implausible "win" is not suggested, not kept ---------------------
reps 1
out=$("$OPTLOOP" verify --json 2>/dev/null); rc=$?
t_is "8x: the work-skipping kernel passes its gate" "$rc" 0
t_like "verify flagged it implausible" "$(printf '%s' "$out" | jget flags)" 'implausible'
s=$("$OPTLOOP" status --json)
t_is "status does not suggest keep" "$(printf '%s' "$s" | jget suggest)" revert
t_like "  it asks for a confirm first, saying the flags are unexplained" "$(printf '%s' "$s" | jget next)" \
	'^confirm iteration 3: .*flagged implausible.*not explained.*promote --explain'
out=$("$OPTLOOP" log --direction "skip the repetition" --status keep 2>&1); rc=$?
t_is "keep is refused (exit 3)" "$rc" 3
t_like "  saying why and what would make it right" "$out" \
	"keep refused: iteration 3's speedup is flagged implausible.*promote --explain TEXT --iter 3"
out=$("$OPTLOOP" log --direction "skip the repetition" --status keep --unconfirmed "looks fine" 2>&1); rc=$?
t_is "keep --unconfirmed is refused too (exit 3)" "$rc" 3
t_like "  --unconfirmed does not apply" "$out" "--unconfirmed does not apply to an unexplained implausible speedup"
"$OPTLOOP" confirm --max-pairs 8 >"$T_TMP/confirm.out" 2>&1
t_like "the confirm says fast, held back by the flags" "$(cat "$T_TMP/confirm.out")" "^confirm: fast"
t_is "after a confirm held it back, status suggests drop" "$("$OPTLOOP" status --json | jget suggest)" drop
t_like "  or the explanation" "$("$OPTLOOP" status --json | jget next)" \
	'flagged implausible.*not explained.*promote --explain TEXT, then log it; else log it.*--status drop'
t_exit "  and keep is still refused" 3 "$OPTLOOP" log --direction "skip the repetition" --status keep
out=$("$OPTLOOP" promote --explain "the repetition was redundant: every shape still computes its output once" --json 2>&1)
t_is "promote --explain applies to the measured iteration by default" "$(printf '%s' "$out" | jget explained.iteration)" 3
t_unlike "once explained, status no longer says implausible" "$("$OPTLOOP" status --json | jget next)" 'implausible'
t_exit "  and the explained win may be kept" 0 "$OPTLOOP" log --direction "skip the repetition" --status keep --commit
t_is "  it is the best" "$("$OPTLOOP" status --json | jget best.iter)" 3
t_like "  its row's vs best is marked as the confirm's" "$(lastrow)" '^\| 3 \| .* \| \+[0-9.]+% \(confirm\) \| keep \|$'
t_like "  and OPT_LOG.md says where each vs best comes from" \
	"$(grep '^Bench (median ms) is' profile/chunk_linear_attn-opt/OPT_LOG.md)" \
	"^Bench \(median ms\) is the geomean, over the shapes, of each shape's median time in the iteration's own verify run.*marked \(confirm\)"

# ---- 5. an edit made while verify runs --------------------------------------
cat >"$T_TMP/slow" <<SH
#!/bin/sh
touch "$T_TMP/started"
sleep 3
exec "$T_TMP/bench" "\$@"
SH
chmod +x "$T_TMP/slow"
"$OPTLOOP" contract --set "validation=$T_TMP/slow --op chunk_linear_attn" >/dev/null
sed -i 's|/\* Tokens per chunk|/* Tokens per chunk (measured)|' "$kernel"
measured=$(sha1sum <"$kernel")
"$OPTLOOP" verify >"$T_TMP/v.out" 2>&1 &
pid=$!
for _ in $(seq 50); do [ -e "$T_TMP/started" ] && break; sleep 0.1; done
printf '/* typed while the verify ran */\n' >>"$kernel"
wait "$pid"
t_is "verify with an edit during the run exits 4 (an attempt)" "$?" 4
t_like "  it says the kernel changed and which file" "$(cat "$T_TMP/v.out")" \
	'the kernel changed while it ran \(ops/linear_attn/chunk\.c\)'
s=$("$OPTLOOP" status --json)
t_is "  no row is due: the change is to be verified again" "$(printf '%s' "$s" | jget state)" editing
t_like "  status says why" "$(printf '%s' "$s" | jget next)" "last run was an attempt.*changed while it ran"
out=$("$OPTLOOP" log --direction "comment" --status revert 2>&1); rc=$?
t_is "  log is refused (exit 3)" "$rc" 3
t_like "  as an attempt" "$out" 'was an attempt, not an iteration: the kernel changed while it ran'
t_unlike "  nothing was committed" "$(git log -n 1 --format=%s)" 'iter 4'
t_exit "verify again measures the tree as it is" 0 "$OPTLOOP" verify
t_ok "  now it is logged" "$OPTLOOP" log --direction "comment on the chunk size" --status revert --commit
t_like "  the row's commit holds the edit that was measured" "$(git show HEAD~1:"$kernel" | tail -n 1)" \
	'typed while the verify ran'
t_is "  (the version before the edit was never recorded as measured)" \
	"$(git log --format=%H -- "$kernel" | while read -r c; do git show "$c:$kernel" | sha1sum; done | grep -c "^${measured%% *}")" 0

# ---- 4. a -k keep that the full gate then fails is not the best ------------
"$OPTLOOP" contract --set "validation=$T_TMP/bench --op chunk_linear_attn" >/dev/null
"$OPTLOOP" report final >/dev/null 2>&1
final_rc=$?
best_before=$("$OPTLOOP" status --json | jget best.iter)
best_kernel=$(git show HEAD:"$kernel" | sha1sum)
next=$("$OPTLOOP" status --json | jget iteration)
# the state is no longer carried across chunks: wrong from the third chunk on
sed -i 's/S\[(size_t)i \* D + j\] += acc;/S[(size_t)i * D + j] = acc;/' "$kernel"
t_exit "the -k subset (one chunk) passes" 0 "$OPTLOOP" verify --gate-k T63
# (its screen verdict may raise a flag on this loaded machine: explained)
"$OPTLOOP" promote --explain "the state is set, not added: no faster, no slower" >/dev/null
t_ok "  kept on the subset, unconfirmed" "$OPTLOOP" log --direction "set the state, do not add" \
	--status keep --unconfirmed "subset gate only so far" --commit
kept=$("$OPTLOOP" status --json | jget best.iter)
t_is "  it is the best for now" "$kept" "$next"
t_exit "the full gate on the same kernel fails" 1 "$OPTLOOP" verify
t_is "  the -k keep is no longer the best: the full-gate best is back" \
	"$("$OPTLOOP" status --json | jget best.iter)" "$best_before"
t_like "  status proposes drop" "$("$OPTLOOP" status --json | jget suggest)" '^(drop|revert)$'
t_like "  OPT_LOG.md marks the row: not the best any more" \
	"$(grep -E "^\| $next \|" profile/chunk_linear_attn-opt/OPT_LOG.md)" '\| keep \(unconfirmed\) \(full gate failed\) \|$'
t_like "  and its legend says what the mark means" "$(cat profile/chunk_linear_attn-opt/OPT_LOG.md)" \
	'a keep marked \(full gate failed\) passed a subset gate only'
t_ok "  drop" "$OPTLOOP" log --direction "the full gate on the -k keep" --status drop --commit
t_is "  the drop restored the full-gate best's kernel, not the failed one" \
	"$(sha1sum <"$kernel")" "$best_kernel"
t_is "  report final answers as it did before the -k keep (exit $final_rc)" \
	"$("$OPTLOOP" report final >/dev/null 2>&1; echo $?)" "$final_rc"

# ---- 9. smaller slips: a no-change row, a lint on a revert -----------------
stall=$("$OPTLOOP" status --json | jget stall.count)
t_exit "verify with no kernel change" 0 "$OPTLOOP" verify
t_ok "  logged as revert" "$OPTLOOP" log --direction "the same kernel again" --status revert --commit
t_is "  it tried no direction: the stall count stays $stall" "$("$OPTLOOP" status --json | jget stall.count)" "$stall"
sed -i '1i #pragma GCC optimize ("Ofast")' "$kernel"
out=$("$OPTLOOP" verify 2>&1)
t_like "a lint finding on the diff" "$out" 'lint: +1 trap-lint finding'
t_ok "  a revert needs no --ack (the kernel goes back)" "$OPTLOOP" log --direction "fast math" --status revert --commit
t_unlike "  and the kernel went back" "$(head -n 1 "$kernel")" 'Ofast'

# ---- a validation command that commits the kernel itself -------------------
# (a tiny project of its own: the demo's loop above ends stalled)
cd "$T_TMP" && "$OPTLOOP_ROOT/tests/fixtures/make_tiny_project.sh" "$T_TMP/hc" >/dev/null && cd "$T_TMP/hc" || exit 1
"$OPTLOOP" init --op tiny --kernel kernel --test-file tests/test_compute.sh --naive ref/naive.sh \
	--verify ./verify --target 2x --languages sh --promotion "full gate" >/dev/null
"$OPTLOOP" verify >/dev/null 2>&1 && "$OPTLOOP" log --direction baseline --commit >/dev/null
"$OPTLOOP" contract --set "validation=git commit -qam 'harness snapshot' >/dev/null 2>&1; ./verify" >/dev/null
before=$(git rev-parse HEAD)
sed -i 's/\$(( \$1 \* 2 ))/$(( $1 << 1 ))/' kernel/compute.sh
out=$("$OPTLOOP" verify 2>&1); rc=$?
t_is "a harness that commits the kernel: verify exits 4 (an attempt)" "$rc" 4
t_like "  it says HEAD moved while it ran, and the way back" "$out" \
	"HEAD moved while it ran \(${before:0:12} to [0-9a-f]{12}: a commit optloop did not make.*git reset --soft ${before:0:12}"
t_unlike "  no fast verdict on it" "$out" 'verdict: fast'
out=$("$OPTLOOP" log --direction "harness commit" --status drop 2>&1); rc=$?
t_is "  log is refused (exit 3): no empty row commit" "$rc" 3
t_like "  as an attempt" "$out" 'was an attempt, not an iteration: HEAD moved while it ran'
git reset -q --soft "$before"
t_is "the way out: the commit taken back, the change is the iteration's again" \
	"$("$OPTLOOP" status --json | jget state)" editing
"$OPTLOOP" contract --set "validation=./verify" >/dev/null
t_exit "  and verify measures it" 0 "$OPTLOOP" verify
t_ok "  it is logged" "$OPTLOOP" log --direction "shift" --status drop --commit
t_is "  the row's commit holds the change" \
	"$(git show --format= --name-only "$(git log --format=%H --grep='^Optloop-Iter: 1$')")" kernel/compute.sh

t_done
