#!/usr/bin/env bash
# Nothing runs that the user cannot see, and nothing hostile is stored: the
# probe command comes from the environment or the default, never from the
# database, and status and verify show every command that runs through
# /bin/sh -c; control and bidirectional characters in log's texts, trap
# texts and the commands optloop runs are refused; file names from the
# repository are spelled out, and shell-quoted in a command to paste.
. "$(dirname "$0")/lib.sh"
export DEMO_BENCH_REP_MS=${DEMO_BENCH_REP_MS:-40} DEMO_BENCH_WARMUP_MS=${DEMO_BENCH_WARMUP_MS:-10}

d="$T_TMP/demo"
"$OPTLOOP" demo "$d" >/dev/null 2>&1 || { t_fail "demo project"; t_done; exit 1; }
cd "$d" || exit 1
W=profile/chunk_linear_attn-opt
jget() {
	python3 -c 'import json,sys
v=json.load(sys.stdin)
for k in sys.argv[1].split("."):
    v=v[int(k)] if isinstance(v,list) else v[k]
print("null" if v is None else v)' "$1"
}

# --- the probe: never a command stored in optloop.db ------------------------
planted="$T_TMP/planted-ran"
sqlite3 "$W/optloop.db" "INSERT OR REPLACE INTO meta(key, value) VALUES
	('probe.command', 'touch $planted'), ('probe.apps_command', 'touch $planted.apps')"
out=$("$OPTLOOP" status 2>&1)
t_like "status shows the validation command" "$out" '^verify: +\./verify --op chunk_linear_attn$'
t_like "status shows the probe command (the default)" "$out" \
	'^probe: +nvidia-smi --query-gpu=.* \(default; \$OPTLOOP_PROBE sets another\)$'
t_like "and the compute-process query" "$out" '^ +nvidia-smi --query-compute-apps=pid'
t_like "and that they run through /bin/sh -c" "$out" '^run by: +/bin/sh -c in the repository'
t_unlike "the command stored in the database is not shown as the probe" "$out" 'touch'
out=$("$OPTLOOP" verify 2>&1); rc=$?
t_is "baseline verify passes" "$rc" 0
t_like "verify says what it runs before the output" "$(printf '%s' "$out" | head -1)" \
	'^optloop: running \./verify --op chunk_linear_attn \(through /bin/sh -c; GPU probe before and after: nvidia-smi'
t_ok "the probe command planted in the database never ran" test ! -e "$planted"
t_ok "nor the planted compute-process query" test ! -e "$planted.apps"
t_ok "baseline logged and committed" "$OPTLOOP" log --direction baseline --commit

# the environment sets the probe, and status and verify say so
cat >"$T_TMP/smi" <<'EOF'
#!/bin/sh
echo "index, name, utilization.gpu [%]"
echo "0, Test GPU, 0 %"
EOF
chmod +x "$T_TMP/smi"
export OPTLOOP_PROBE="$T_TMP/smi" OPTLOOP_PROBE_APPS=""
out=$("$OPTLOOP" status 2>&1)
t_like "status names the probe from the environment" "$out" \
	"^probe: +$T_TMP/smi \\(from \\\$OPTLOOP_PROBE / \\\$OPTLOOP_PROBE_APPS\\)$"
t_unlike "an empty OPTLOOP_PROBE_APPS turns the process query off" "$out" 'query-compute-apps'
json=$("$OPTLOOP" status --json)
t_is "status --json: commands.probe" "$(printf '%s' "$json" | jget commands.probe)" "$T_TMP/smi"
t_is "status --json: commands.probe_source" "$(printf '%s' "$json" | jget commands.probe_source)" environment
t_is "status --json: commands.validation" "$(printf '%s' "$json" | jget commands.validation)" \
	"./verify --op chunk_linear_attn"
echo "/* one change */" >>ops/linear_attn/chunk.c
json=$("$OPTLOOP" verify --json 2>"$T_TMP/verify.err"); rc=$?
t_is "verify --json exits 0" "$rc" 0
t_is "verify --json: probe_command" "$(printf '%s' "$json" | jget probe_command)" "$T_TMP/smi"
t_like "verify --json says what it runs on stderr" "$(cat "$T_TMP/verify.err")" \
	"^optloop: running \\./verify --op chunk_linear_attn \\(through /bin/sh -c; GPU probe before and after: $T_TMP/smi\\)"
unset OPTLOOP_PROBE OPTLOOP_PROBE_APPS

# --- control characters in log's texts ---------------------------------------
esc=$(printf '\033')
before=$(cat "$W/OPT_LOG.md")
head_before=$(git rev-parse HEAD)
out=$("$OPTLOOP" log --direction "tile ${esc}]0;owned${esc}\\ 64" --status drop 2>&1); rc=$?
t_is "an ESC in --direction is a usage error (exit 2)" "$rc" 2
t_like "and the message says what and where" "$out" \
	'--direction holds a control character \(ESC, at byte 6\).*give plain text'
out=$("$OPTLOOP" log --direction "tile 64" --axis "$(printf 'tiles\a')" --status drop 2>&1); rc=$?
t_is "a BEL in --axis: exit 2" "$rc" 2
t_like "named as a byte" "$out" '--axis holds a control character \(0x07, at byte 6\)'
out=$("$OPTLOOP" log --direction "$(printf 'tile \302\233 2J')" --status drop 2>&1); rc=$?
t_is "a C1 CSI (U+009B) in --direction: exit 2" "$rc" 2
t_like "named by its code point" "$out" 'U\+009B'
out=$("$OPTLOOP" log --direction "$(printf 'tile \342\200\256 46 elit')" --status drop 2>&1); rc=$?
t_is "a bidi override (U+202E) in --direction: exit 2" "$rc" 2
t_like "  named as one, with its code point" "$out" \
	'--direction holds a bidirectional control character \(U\+202E, at byte 6\)'
out=$("$OPTLOOP" log --direction "$(printf 'tile \377\376 64')" --status drop 2>&1); rc=$?
t_is "bytes that are not UTF-8 in --direction: exit 2" "$rc" 2
t_like "  named with the byte" "$out" '--direction is not valid UTF-8 \(byte 0xff at byte 6\)'
out=$("$OPTLOOP" log --direction "$(printf 'tile \300\257')" --status drop 2>&1); rc=$?
t_is "an overlong UTF-8 form: exit 2" "$rc" 2
out=$("$OPTLOOP" log --direction "   " --status drop 2>&1); rc=$?
t_is "a blank --direction: exit 2" "$rc" 2
t_like "  saying a blank one says nothing" "$out" 'a blank one says nothing'
t_is "nothing was logged" "$(cat "$W/OPT_LOG.md")" "$before"
t_is "nothing was committed" "$(git rev-parse HEAD)" "$head_before"
t_ok "plain text, a tab and a newline folded into spaces, other scripts kept, is logged" \
	"$OPTLOOP" log --direction "$(printf 'tile\t64\nrows \303\251 \342\206\222')" --status drop --commit
t_like "as one line" "$(grep -E '^\| 1 \|' "$W/OPT_LOG.md")" '^\| 1 \| tile 64 rows é → \|'
t_unlike "no ESC anywhere in OPT_LOG.md" "$(cat "$W/OPT_LOG.md")" "$esc"
t_unlike "nor in the history" "$(git log --format=%B)" "$esc"

# --- control characters in the commands optloop runs ----------------------------
# A CR or ESC would let the terminal show "./verify" while the shell runs
# something else: refused on --set, and in a hand-edited docs/draft.md.
hidden="$T_TMP/hidden-ran"
out=$("$OPTLOOP" contract --set "validation=touch $hidden"$'\r\033[2K'"./verify --op chunk_linear_attn" 2>&1); rc=$?
t_is "contract --set refuses a validation command with CR and ESC (exit 2)" "$rc" 2
t_like "  naming the character and where" "$out" 'validation command given holds a control character \(0x0d, at byte [0-9]+\)'
t_like "  the contract is unchanged" "$("$OPTLOOP" status 2>&1)" '^verify: +\./verify --op chunk_linear_attn$'
t_exit "contract --set refuses an ESC in the benchmark command too" 2 \
	"$OPTLOOP" contract --set "benchmark=./bench"$'\033[8m'" --quiet"
# A bidi override shows "./verify --op chunk_linear_attn" while the shell
# reads the words in another order.
rlo=$(printf '\342\200\256')
out=$("$OPTLOOP" contract --set "validation=./verify --op chunk_linear_attn ${rlo}mr- #" 2>&1); rc=$?
t_is "contract --set refuses a validation command with a bidi override (exit 2)" "$rc" 2
t_like "  naming the character and where" "$out" \
	'validation command given holds a bidirectional control character \(U\+202E, at byte 33\)'
t_like "  the contract is unchanged" "$("$OPTLOOP" status 2>&1)" '^verify: +\./verify --op chunk_linear_attn$'
t_exit "  and so is an isolate (U+2066) in the benchmark command" 2 \
	"$OPTLOOP" contract --set "benchmark=./bench $(printf '\342\201\246')x"
t_exit "  and a C1 control (U+009B, a CSI)" 2 \
	"$OPTLOOP" contract --set "validation=./verify $(printf '\302\233')2J"
cp "$W/docs/draft.md" "$T_TMP/draft.keep"
python3 - "$W/docs/draft.md" "$hidden" <<'PY'
import sys
p, hidden = sys.argv[1], sys.argv[2]
s = open(p).read()
a = "./verify --op chunk_linear_attn"
assert a in s
open(p, "w").write(s.replace(a, "touch " + hidden + "\r\x1b[2K" + a, 1))
PY
out=$("$OPTLOOP" verify 2>&1); rc=$?
t_is "a hand-written draft.md with a hidden command: verify refuses (exit 2)" "$rc" 2
t_like "  saying where and what to do" "$out" \
	'validation command in docs/draft.md holds a control character \(0x0d.*optloop contract --set validation='
t_ok "  and nothing ran" test ! -e "$hidden"
cp "$T_TMP/draft.keep" "$W/docs/draft.md"
python3 - "$W/docs/draft.md" "$hidden" <<'PY'
import sys
p, hidden = sys.argv[1], sys.argv[2]
s = open(p).read()
a = "./verify --op chunk_linear_attn"
open(p, "w").write(s.replace(a, a + "; touch " + hidden + " #\u202e", 1))
PY
out=$("$OPTLOOP" verify 2>&1); rc=$?
t_is "a draft.md whose validation command holds U+202E: verify refuses (exit 2)" "$rc" 2
t_like "  naming it" "$out" 'validation command in docs/draft.md holds a bidirectional control character \(U\+202E'
t_ok "  and nothing ran" test ! -e "$hidden"
cp "$T_TMP/draft.keep" "$W/docs/draft.md"
t_like "with the draft put back, status works again" "$("$OPTLOOP" status 2>&1)" '^verify: +\./verify'
# The probe comes from the environment, where nothing refuses it: what
# status and verify print of it spells every control out.
out=$(OPTLOOP_PROBE="nvidia-smi"$'\r\033[2K'"touch $hidden" "$OPTLOOP" status 2>&1)
t_like "a probe with CR and ESC: status spells them out" "$out" \
	"^probe: +nvidia-smi\\\\r\\\\e\\[2Ktouch $hidden \\(from"
t_unlike "  and prints no control byte" "$out" $'[\r\033]'

# --- a shell comment at the end of the validation command ----------------------
# noise and confirm append --no-gate; a comment would swallow it and the
# gate would run as a benchmark.
"$OPTLOOP" contract --set "validation=./verify --op chunk_linear_attn # the gate, then the bench" >/dev/null
out=$("$OPTLOOP" noise --runs 2 2>&1); rc=$?
t_is "noise with a validation command ending in a comment: exit 3" "$rc" 3
t_like "  saying the comment would swallow --no-gate" "$out" \
	"ends in a shell comment \(from '# the gate.*would swallow the --no-gate"
"$OPTLOOP" contract --set "validation=./verify --op chunk_linear_attn --json 'x#y.json'" >/dev/null
out=$("$OPTLOOP" noise --runs 2 2>&1); rc=$?
t_is "a # inside quotes is no comment: noise runs" "$rc" 0
t_like "  with --no-gate after the quoted word" \
	"$(sqlite3 "$W/optloop.db" "SELECT command FROM runs WHERE kind = 'noise' ORDER BY id DESC LIMIT 1")" \
	"'x#y\\.json' --no-gate\$"
"$OPTLOOP" contract --set "validation=./verify --op chunk_linear_attn" >/dev/null

# --- traps: chosen text is refused, a hand-written TRAPS.md spelled out -------
traps_before=$(cat "$W/TRAPS.md")
out=$("$OPTLOOP" trap add --title "cold ${esc}]52;c;aGk=${esc}\\ cache" --fact f --why w --how h 2>&1); rc=$?
t_is "trap add --title with an ESC is a usage error (exit 2)" "$rc" 2
t_like "  naming the character and where" "$out" \
	'trap not added: --title holds a control character \(ESC, at byte 6\).*give plain text'
t_unlike "  and the message prints no ESC" "$out" "$esc"
out=$("$OPTLOOP" trap add --title "cold ${rlo}ehcac" --fact f --why w --how h 2>&1); rc=$?
t_is "trap add --title with a bidi override: exit 2" "$rc" 2
t_like "  naming it" "$out" '--title holds a bidirectional control character \(U\+202E, at byte 6\)'
t_exit "trap add --fact with a BEL: exit 2" 2 "$OPTLOOP" trap add --title t --fact "$(printf 'a\a')" --why w --how h
t_is "TRAPS.md is unchanged" "$(cat "$W/TRAPS.md")" "$traps_before"
t_ok "plain text is added" "$OPTLOOP" trap add --title "cold cache → é" --fact f --why w --how h
printf '\n## Hand %s]0;owned%s\\ %sdeen\n\n**Fact:** f\n**Why:** w\n**How to apply:** h\n' \
	"$esc" "$esc" "$rlo" >>"$W/TRAPS.md"
out=$("$OPTLOOP" trap list 2>&1)
t_like "trap list shows a title written by hand into TRAPS.md" "$out" 'Hand \\e\]0;owned\\e\\ \\u202edeen$'
t_unlike "  with no ESC or bidi byte" "$out" "[$esc]|$rlo"
printf '%s\n' "$traps_before" >"$W/TRAPS.md"

# --- names of files outside the kernel ---------------------------------------
# The repository's names, not the user's: verify's refusal spells them out,
# and its `--include` suggestion is shell-quoted, so pasting it gives the
# names back and runs nothing they say.
rm -f 'x#y.json' # the noise run's --json above wrote it
osc="notes ${esc}]52;c;cHduZWQ=$(printf '\a') ${rlo}txt.exe"
sub="scratch \$(touch PWNED).txt"
echo note >"$osc"
echo note >"$sub"
out=$("$OPTLOOP" verify 2>&1); rc=$?
t_is "verify with two new files outside the kernel: refused (exit 3)" "$rc" 3
t_unlike "  the refusal prints no ESC, BEL or bidi byte" "$out" "[$esc$(printf '\a')]|$rlo"
t_like "  it names the file, spelled out" "$out" 'notes \\e\]52;c;cHduZWQ=\\x07 \\u202etxt\.exe \(new\)'
suggest=$(printf '%s\n' "$out" | sed -n 's/.*part of the kernel: //p')
t_like "  and suggests --include for each" "$suggest" '^optloop verify --include .* --include '
# pasted into sh with a stand-in optloop that records its arguments
printf '%s\0' verify --include "$osc" --include "$sub" | od -An -c >"$T_TMP/want"
printf '%s\0' verify --include "$sub" --include "$osc" | od -An -c >"$T_TMP/want2"
(cd "$T_TMP" && sh -c 'optloop() { printf "%s\0" "$@" | od -An -c >got; }; eval "$1"' sh "$suggest")
if cmp -s "$T_TMP/got" "$T_TMP/want" || cmp -s "$T_TMP/got" "$T_TMP/want2"; then
	t_pass "  pasted into sh, the suggestion gives both names back, intact"
else
	t_fail "  pasted into sh, the suggestion gives both names back, intact" "$suggest" "$(cat "$T_TMP/got")"
fi
t_ok "  and runs nothing a name says" test ! -e "$T_TMP/PWNED"
rm -f "$sub"
out=$(sh -c 'optloop() { "$OPTLOOP" "$@"; }; eval "$1"' sh \
	"$("$OPTLOOP" verify 2>&1 | sed -n 's/.*part of the kernel: //p')" 2>&1); rc=$?
t_is "the suggestion, run, makes the file part of the kernel and verifies (exit 0)" "$rc" 0
out=$("$OPTLOOP" status 2>&1)
t_like "status lists it in the kernel, spelled out" "$out" '^kernel: .* notes \\e\]52;c;cHduZWQ=\\x07 \\u202etxt\.exe'
t_unlike "  with no ESC, BEL or bidi byte" "$out" "[$esc$(printf '\a')]|$rlo"

t_done
