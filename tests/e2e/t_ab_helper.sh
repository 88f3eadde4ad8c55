#!/usr/bin/env bash
# The in-process A/B helper (assets/bench/optloop_ab.py) on a real Python
# project in a real git repository: both versions in one process with their
# own modules (a late import finds its own tree), A B B A blocks, the A/A
# mode, the gate, FLA's old/new table as optloop parses it, its errors; then
# the loop through it: noise --paired records A/A pairs, confirm --paired
# decides by their spread.  No CUDA here: the helper says that graph replay
# needs one and reads eager time.
. "$(dirname "$0")/lib.sh"

py=""
for p in python3 /usr/bin/python3; do
	"$p" -m pytest --version >/dev/null 2>&1 && { py=$p; break; }
done
[ -n "$py" ] || py=python3
AB="$OPTLOOP_ROOT/assets/bench/optloop_ab.py"
export TMPDIR="$T_TMP/tmp"
mkdir -p "$TMPDIR"
d="$T_TMP/proj"
mkdir -p "$d/kern" "$d/ref" "$d/tests" "$d/bench"
cd "$d" || exit 1
git init -q -b main .
: >kern/__init__.py
cat >kern/ops.py <<'PY'
from kern.util import twice


def op(xs, reps):
    """sum of 2*x over xs, computed reps times over (the slow part)"""
    s = 0
    for _ in range(reps):
        s = 0
        for x in xs:
            s += twice(x)
    return s


def which():
    from kern import late  # a late import: must find this tree's module
    return late.VERSION
PY
echo 'def twice(x): return x + x' >kern/util.py
echo 'VERSION = "base"' >kern/late.py
cat >ref/naive.py <<'PY'
def naive(xs):
    return sum(2 * x for x in xs)
PY
cat >tests/test_kern.py <<'PY'
import sys, os
sys.path.insert(0, os.path.join(os.path.dirname(__file__), ".."))
from kern.ops import op
from ref.naive import naive


def test_op():
    for n in (1, 5, 64):
        assert op(list(range(n)), 2) == naive(list(range(n)))
PY
cat >bench/inputs.py <<'PY'
def make(N, R):
    return (list(range(N)), R)
PY
git add -A && git commit -qm "kernel: reps passes" || exit 1
base=$(git rev-parse HEAD)
# the candidate: the same sum in half the passes (a 2x win)
sed -i 's/for _ in range(reps):/for _ in range(max(1, reps \/\/ 2)):/' kern/ops.py
echo 'VERSION = "work"' >kern/late.py
shapes='{"N64_R8": {"N": 64, "R": 8}, "N32_R8": {"N": 32, "R": 8}}'
# The checks that read times use the process's CPU time (--clock cpu): the
# suite shares the machine, and a block that lost the CPU would read slow on
# the wall clock.  The default, wall time, is run once below.
ab() { "$py" "$AB" --callable kern.ops:op --inputs bench.inputs:make --shapes "$shapes" --side-ms 200 --clock cpu "$@"; }

out=$(ab --base HEAD --json "$T_TMP/ab.json" 2>&1); rc=$?
t_is "A/B: exit 0" "$rc" 0
printf '%s\n' "$out" >"$T_TMP/ab.log"
p=$("$OPTLOOP" parse "$T_TMP/ab.log" --patterns fla --json)
rows() { python3 -c 'import json,sys; j=json.load(sys.stdin); print(" ".join("%s:%s" % (r["op"], 1.5 <= r["base_ms"] / r["new_ms"] <= 2.6) for r in j["rows"]))'; }
t_is "optloop parse reads one row per shape, both columns, the 2x win" "$(printf '%s' "$p" | rows)" \
	"op/N64_R8:True op/N32_R8:True"
t_like "  the columns name the best's commit and the work tree" \
	"$(printf '%s' "$p" | jget columns.base) $(printf '%s' "$p" | jget columns.new)" "^base\[${base:0:7}\] work\["
t_like "each shape says what was timed, by which clock, with its block error" "$out" \
	'\[optloop-ab\] N64_R8 fwd: eager \(CPU time\) [0-9.]+ / [0-9.]+ ms, \+[0-9.]+% \(± [0-9.]+%, [0-9]+ ABBA quads\)'
t_like "the work tree's column says it is not HEAD" "$out" "work\[$(git rev-parse --short HEAD)-dirty\]\(ms\)"
out=$("$py" "$AB" --callable kern.ops:op --inputs bench.inputs:make --shapes "$shapes" --side-ms 100 --base HEAD 2>&1); rc=$?
t_is "by default the wall clock (exit 0)" "$rc" 0
t_like "  and the note says eager time, no more" "$out" \
	'\[optloop-ab\] N64_R8 fwd: eager [0-9.]+ / [0-9.]+ ms, [-+][0-9.]+% \(± [0-9.]+%, [0-9]+ ABBA quads\)'
t_like "  and that graph replay needs CUDA: the verdict reads eager time" "$out" \
	'graph: none, no CUDA device: graph replay needs one; the verdict reads eager time'
t_is "--json: per shape eager time of both sides, the basis, no graph" \
	"$(python3 -c 'import json,sys; j=json.load(open(sys.argv[1])); print([(r["shape"], r["basis"], r["class"], "graph" in r, r["eager"]["quads"] >= 2) for r in j["results"]])' "$T_TMP/ab.json")" \
	"[('N64_R8', 'eager', 'unknown', False, True), ('N32_R8', 'eager', 'unknown', False, True)]"
t_is "the best's tree was taken out of git and removed again" "$(ls "$TMPDIR" | grep -c '^optloop-ab-' || true)" 0

# a torch callable, forward and forward+backward (where this Python has
# torch; on CPU: graph replay needs CUDA)
if "$py" -c 'import torch' 2>/dev/null; then
	mkdir -p tk && : >tk/__init__.py
	printf 'import torch\n\n\ndef op(q, k, v):\n    return torch.tril(q @ k.transpose(-1, -2)) @ v\n' >tk/ops.py
	printf 'import torch\n\n\ndef make(B, T, H, D):\n    torch.manual_seed(0)\n    return tuple(torch.randn(B, H, T, D, requires_grad=True) for _ in range(3))\n' >bench/tin.py
	out=$("$py" "$AB" --callable tk.ops:op --inputs bench.tin:make --modes fwd fwdbwd --clock cpu \
		--shapes '{"B1_T128_H2_D32": {"B": 1, "T": 128, "H": 2, "D": 32}}' --side-ms 100 2>&1); rc=$?
	printf '%s\n' "$out" >"$T_TMP/torch.log"
	t_is "torch: forward and forward+backward timed (exit 0)" "$rc" 0
	t_is "  optloop reads one row per mode, the machine line names PyTorch" \
		"$("$OPTLOOP" parse "$T_TMP/torch.log" --patterns fla --json | python3 -c 'import json,sys; j=json.load(sys.stdin); print([(r["mode"], r["T"], r["new_ms"] > 0) for r in j["rows"]], j["env"]["pytorch"] is not None)')" \
		"[('fwd', 128, True), ('fwdbwd', 128, True)] True"
	rm -rf tk bench/tin.py
else
	t_skip "torch callable" "no Python here has torch"
fi

# each side runs its own modules, late imports too
iso=$("$py" - "$AB" "$base" <<'PY'
import importlib.util, sys
spec = importlib.util.spec_from_file_location("optloop_ab", sys.argv[1])
ab = importlib.util.module_from_spec(spec); spec.loader.exec_module(ab)
tmp, sha = ab.extract(".", sys.argv[2], [])
a, b = ab.Side("base", tmp, "a"), ab.Side("work", ".", "b")
fa = a.load(["kern.ops"])[0].which
fb = b.load(["kern.ops"])[0].which
out = []
for side, f in ((a, fa), (b, fb), (a, fa)):
    side.enter()
    out.append(f())
    side.leave()
ab.shutil.rmtree(tmp)
print(" ".join(out), "kern" in sys.modules)
PY
)
t_is "one process, two trees: a late import finds its own side's module" "$iso" "base work base False"

out=$(ab --base HEAD --aa 2>&1); rc=$?
printf '%s\n' "$out" >"$T_TMP/aa.log"
t_is "A/A: exit 0" "$rc" 0
t_is "  both columns are the best, twice" \
	"$("$OPTLOOP" parse "$T_TMP/aa.log" --patterns fla --json | python3 -c 'import json,sys; j=json.load(sys.stdin); print(j["columns"]["base"][:5], j["columns"]["new"][:5], all(0.75 <= r["base_ms"] / r["new_ms"] <= 1.33 for r in j["rows"]))')" \
	"aa-1[ aa-2[ True"

# an inputs module that imports the kernel's package does not make the
# work tree's copy stand in for the best's
printf 'from kern.util import twice\n\n\ndef make(N, R):\n    return ([twice(0)] * 0 + list(range(N)), R)\n' >bench/inputs2.py
out=$("$py" "$AB" --callable kern.ops:op --inputs bench.inputs2:make --shapes "$shapes" --side-ms 200 --clock cpu --base HEAD 2>&1); rc=$?
printf '%s\n' "$out" >"$T_TMP/i2.log"
t_is "an inputs module importing the kernel's package: both sides still their own" \
	"$rc $("$OPTLOOP" parse "$T_TMP/i2.log" --patterns fla --json | rows)" "0 op/N64_R8:True op/N32_R8:True"
rm -f bench/inputs2.py

t_exit "an unknown --base is a usage error" 2 ab --base no-such-ref
t_like "  that says what to give" "$(ab --base no-such-ref 2>&1)" "no commit 'no-such-ref' in the repository"
t_exit "shapes that are not JSON: usage error" 2 "$py" "$AB" --callable kern.ops:op --inputs bench.inputs:make --shapes '{N64' --base HEAD
t_exit "--aa without --base: usage error" 2 ab --aa
out=$("$py" "$AB" --callable kern.ops:op --inputs bench.nope:make --shapes "$shapes" 2>&1); rc=$?
t_is "an inputs module the tree lacks: usage error, one line naming it" \
	"$rc $(printf '%s\n' "$out" | wc -l)" "2 1"
t_like "  what to give" "$out" '^optloop_ab: --inputs bench.nope:make: no module bench.nope from the work tree .*e\.g\. bench\.inputs:make'
out=$("$py" "$AB" --callable kern.ops:op --inputs bench.inputs:nope --shapes "$shapes" 2>&1); rc=$?
t_is "an inputs function the module lacks: usage error" "$rc" 2
t_like "  that says so" "$out" '^optloop_ab: --inputs bench.inputs:nope: module bench.inputs has no nope '
out=$(ab --shapes '{"N64": {"N": 64}}' 2>&1); rc=$?
t_is "a shape its inputs cannot be made for: nothing timed, exit 1" "$rc" 1
t_like "  the warning names the shape" "$out" "Input generation failed for op @ N64: .*'R'"
t_like "  the last line says nothing was timed" "$(printf '%s\n' "$out" | tail -1)" \
	'^optloop_ab: no shape was timed \(the warnings above say why\)$'
# a best whose module does not import (a commit made beside the work tree)
blob=$(printf 'def op(:\n' | git hash-object -w --stdin)
GIT_INDEX_FILE="$T_TMP/idx" git read-tree HEAD
GIT_INDEX_FILE="$T_TMP/idx" git update-index --cacheinfo "100644,$blob,kern/ops.py"
broken=$(git commit-tree "$(GIT_INDEX_FILE="$T_TMP/idx" git write-tree)" -p HEAD -m broken)
out=$(ab --base "$broken" 2>&1); rc=$?
t_is "a side that does not import: exit 1" "$rc" 1
t_like "  naming the side and the module" "$out" 'the base side \(.*\) failed to import kern.ops:op; both versions must import in one process'

if "$py" -m pytest --version >/dev/null 2>&1; then
	out=$(ab --gate tests/test_kern.py 2>&1); rc=$?
	printf '%s\n' "$out" >"$T_TMP/g.log"
	t_is "--gate: a green gate, then the benchmark (exit 0)" "$rc" 0
	t_is "  optloop reads the gate and one column" \
		"$("$OPTLOOP" parse "$T_TMP/g.log" --patterns fla --json | python3 -c 'import json,sys; j=json.load(sys.stdin); print(j["gate"], j["gate_scope"], len(j["rows"]), j["columns"]["base"])')" \
		"pass full 2 None"
	sed -i 's/s += twice(x)/s += twice(x) + 1/' kern/ops.py
	out=$(ab --gate tests/test_kern.py 2>&1); rc=$?
	printf '%s\n' "$out" >"$T_TMP/r.log"
	t_is "a red gate: exit 1, no benchmark" "$rc $("$OPTLOOP" parse "$T_TMP/r.log" --patterns fla --json | jget gate) $(printf '%s' "$out" | grep -c 'ABBA')" "1 fail 0"
	git checkout -q kern/ops.py
else
	t_skip "--gate" "no Python here has pytest"
fi

# ---- the loop through the helper ----
git reset -q --hard "$base"
verify="$py $AB --callable kern.ops:op --inputs bench.inputs:make --shapes '$shapes' --side-ms 200 --clock cpu --gate tests/test_kern.py"
"$OPTLOOP" init --op kern --kernel kern --test-file tests/test_kern.py --naive ref/naive.py \
	--verify "$verify" >/dev/null 2>&1
t_is "init on the helper" "$?" 0
"$OPTLOOP" contract --set "target=both shapes, 1.2x" --set languages=Python \
	--set "promotion=full gate, confirmed win" >/dev/null
db=profile/kern-opt/optloop.db
"$OPTLOOP" verify >/dev/null 2>&1 && "$OPTLOOP" log --direction baseline --status base >/dev/null 2>&1 &&
	"$OPTLOOP" commit >/dev/null 2>&1
t_is "baseline verified, logged, committed" "$?" 0
best=$(git rev-parse HEAD)
j=$("$OPTLOOP" noise --paired --runs 3 --json 2>/dev/null); rc=$?
t_is "noise --paired: exit 0" "$rc" 0
t_is "  three A/A runs, each a pair of its own" \
	"$(sqlite3 "$db" "SELECT count(*), group_concat(DISTINCT role) FROM stats_runs WHERE session = $(printf '%s' "$j" | jget session)")" "3|pair"
t_like "  each run got the best's commit" "$(sqlite3 "$db" "SELECT command FROM runs WHERE kind = 'noise' ORDER BY id DESC LIMIT 1")" "--no-gate --base $best\$"
t_is "  the spread of one pair is measured per shape, the ratios near 1" \
	"$(printf '%s' "$j" | python3 -c 'import json,sys; j=json.load(sys.stdin); print(j["paired"], [(s["pair_noise"] is not None, abs(s["pair_median"]) < 0.25) for s in j["shapes"]])')" \
	"True [(True, True), (True, True)]"
t_like "  and said" "$("$OPTLOOP" noise --paired --runs 2 2>&1)" 'A/A: median ratio [-+][0-9.]+%, spread of one pair [0-9.]+%'

sed -i 's/for _ in range(reps):/for _ in range(max(1, reps * 3 \/\/ 4)):/' kern/ops.py
"$OPTLOOP" verify >/dev/null 2>&1
out=$("$OPTLOOP" confirm --paired --max-pairs 8 --json 2>"$T_TMP/err"); rc=$?
sed 's/^/# /' "$T_TMP/err" | grep -E "after pair|optloop:"
# The first pair is checked against the candidate's verify, one process
# timed while the other suites load both cores: when a loaded moment put
# the two apart, confirm refuses (exit 4) and says to confirm --paired
# again, which is what a user does (up to three times: under the full
# suite's load two first pairs in a row have met it).
for _ in 1 2 3; do
	[ "$rc" = 4 ] && grep -q 'confirm --paired again' "$T_TMP/err" || break
	echo "# the first pair disagreed with the loaded verify; confirming again, as the message says"
	out=$("$OPTLOOP" confirm --paired --max-pairs 8 --json 2>"$T_TMP/err"); rc=$?
	sed 's/^/# /' "$T_TMP/err" | grep -E "after pair|optloop:"
done
t_is "confirm --paired of a 1.33x win in one process: promoted" \
	"$rc $(printf '%s' "$out" | jget verdict) $(printf '%s' "$out" | jget promoted)" "0 fast True"
t_is "  every run one in-process pair" \
	"$(sqlite3 "$db" "SELECT group_concat(DISTINCT role) FROM stats_runs WHERE session = $(printf '%s' "$out" | jget session)")" pair
t_is "  the noise it decided by is the pairs' own spread (A/A sessions and its own)" \
	"$(printf '%s' "$out" | python3 -c 'import json,sys; j=json.load(sys.stdin); print([(x["noise_from"], x["noise_runs"] >= 2) for x in j["shapes"]])')" \
	"[('pairs', True), ('pairs', True)]"
t_like "  and says so" "$(printf '%s' "$out" | jget why)" 'noise from [0-9]+ in-process pairs'

# the verify itself a pair: {best} in the validation command
"$OPTLOOP" log --direction "three quarters of the passes" --status keep --commit >/dev/null 2>&1
t_is "the win logged and committed: the new best" "$?" 0
best=$(git rev-parse HEAD)
"$OPTLOOP" contract --set "validation=$verify --base {best}" >/dev/null
sed -i 's/reps \* 3 \/\/ 4/reps \/\/ 2/' kern/ops.py
j_verify=$("$OPTLOOP" verify --json 2>/dev/null); rc=$?
t_is "verify with {best}: exit 0" "$rc" 0
run=$(sqlite3 "$db" "SELECT max(id) FROM runs WHERE kind = 'verify'")
t_like "  the command carried the best's commit" "$(sqlite3 "$db" "SELECT command FROM runs WHERE id = $run")" "--base $best\$"
t_is "  the run is an in-process pair of its own" "$(sqlite3 "$db" "SELECT session = run_id, role FROM stats_runs WHERE run_id = $run")" "1|pair"
v=$(sqlite3 "$db" "SELECT json FROM stats_verdicts WHERE run_id = $run")
t_is "  its verdict is that pair, judged by the pairs' spread" \
	"$(printf '%s' "$v" | python3 -c 'import json,sys; j=json.load(sys.stdin); print(j["verdict"], j["paired"], [x["noise_from"] for x in j["shapes"]])')" \
	"fast True ['pairs', 'pairs']"

# a measuring command that names {best} is paired without --paired
j=$("$OPTLOOP" noise --runs 2 --json 2>/dev/null); rc=$?
t_is "noise with {best} in the command: A/A pairs without --paired" \
	"$rc $(printf '%s' "$j" | jget paired) $(sqlite3 "$db" "SELECT group_concat(DISTINCT role) FROM stats_runs WHERE session = $(printf '%s' "$j" | jget session)")" \
	"0 True pair"
t_like "  {best} became the best's commit" "$(sqlite3 "$db" "SELECT command FROM runs WHERE kind = 'noise' ORDER BY id DESC LIMIT 1")" "--base $best --no-gate\$"

# the pair verify's figure is the one the row, its commit and status carry
pct() {
	python3 -c 'import sys, math
r=lambda x: int(math.copysign(math.floor(abs(x) + 0.5), x))
p=100*float(sys.argv[1])
if abs(p) >= 9.95: print("%+d%%" % r(p)); sys.exit()
t=r(p*10)
print("0%" if t == 0 else ("%+.1f%%" % (t/10)).replace(".0%","%"))' "$1"
}
vs=$(pct "$(printf '%s' "$j_verify" | jget vs_best)")
t_is "  the pair verify's vs best is its verdict's" "$vs" \
	"$(pct "$(printf '%s' "$v" | python3 -c 'import json,sys; print(json.load(sys.stdin)["vs_best"])')")"
# (half the passes reads 2x: flagged implausible, which keep needs explained)
"$OPTLOOP" promote --explain "half the passes: half the work" >/dev/null 2>&1
"$OPTLOOP" log --direction "half the passes" --status keep --unconfirmed "the pair decides here" \
	--commit >/dev/null 2>&1
t_is "  logged, committed" "$?" 0
row=$(awk -F'|' '$2 ~ /[0-9]/ { r = $6 } END { gsub(/ |\(confirm\)/, "", r); print r }' profile/kern-opt/OPT_LOG.md)
t_is "  the row carries that figure" "$row" "$vs"
t_is "  the commit's trailer too" "$(git log -1 --format=%B | sed -n 's/^Optloop-Vs-Best: //p')" "$vs"
t_is "  and status --json's best" "$(pct "$("$OPTLOOP" status --json | jget best.vs_best)")" "$vs"
t_done
