#!/usr/bin/env bash
# Shared kernels: a change to a file other ops and test files also run
# (fla/ops/common/chunk_h.py) lists them (`optloop dependents`); promote
# --check asks for their gates on the best's kernel, and `dependents --run`
# runs them (pytest, for real) and records what they said.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/deps_lib.sh"
deps_workspace "$T_TMP/fla"

out=$("$OPTLOOP" dependents 2>&1); rc=$?
t_is "dependents: exit 0" "$rc" 0
t_like "  names the changed kernel file" "$out" '^  fla/ops/common/chunk_h.py$'
t_like "  the other op that runs it, and how" "$out" \
	'^  op chunk_sgla$'
t_like "  the test file that runs it, its gate not run" "$out" '^  tests/ops/test_sgla.py  \[gate not run\]$'
t_like "  with the import path" "$out" 'fla/ops/common/chunk_h.py \(chunk_fwd_h\) <- fla/ops/sgla/chunk.py \(chunk_sgla\) <- tests/ops/test_sgla.py'
t_unlike "  the op's own gate test is not a dependent" "$out" '^  tests/ops/test_ret.py'
t_unlike "  nor a test that does not reach it" "$out" 'test_l2.py|test_delta.py'
t_like "  a model test that runs it through a registered factory" "$out" \
	'^  tests/models/test_modeling_toy.py  \[gate not run\]$'
t_like "    with the registration on the way" "$out" \
	'fla/models/toy/modeling_toy.py \(ToyModel\) <- fla/models/toy/configuration_toy.py \(ToyConfig\) <- tests/models/test_modeling_toy.py \(test_modeling\): a test file'
t_unlike "  not a test naming it in an f-string" "$out" 'test_release.py'
t_unlike "  nor an op whose file imports it for a function the op never calls" "$out" 'op chunk_fn'
# Each Python file is read once, however many ops and test files reach it.
if command -v strace >/dev/null 2>&1 &&
	strace -qq -o /dev/null true 2>/dev/null; then
	strace -qq -f -e trace=openat -o "$T_TMP/opens" "$OPTLOOP" dependents >/dev/null 2>&1
	# (the kernel's and the frozen files are left out: git hashes the one and
	# the frozen-scope check the other, for the state)
	"$OPTLOOP" status --json | python3 -c 'import json,sys; j = json.load(sys.stdin); print("\n".join(j["kernel"] + j["frozen"]))' \
		| sed "s|^|$PWD/|" >"$T_TMP/kernel"
	t_is "  each other .py file is opened at most once" \
		"$(sed -n 's/.*openat([^"]*"\([^"]*\.py\)".*= [0-9].*/\1/p' "$T_TMP/opens" |
			grep -vxF -f "$T_TMP/kernel" | sort | uniq -d)" ""
	t_like "  (and the walk did open them)" "$(grep -c '\.py"' "$T_TMP/opens")" '^[1-9][0-9]'
else
	t_skip "each .py file is opened at most once" "strace cannot trace here"
fi
j=$("$OPTLOOP" dependents --json)
t_is "  --json: the dependents and their gates" \
	"$(printf '%s' "$j" | python3 -c 'import json,sys; print(" ".join("%s=%s" % (x["name"], x["gate"]) for x in json.load(sys.stdin)["dependents"]))')" \
	"op chunk_sgla=None tests/models/test_modeling_toy.py=not run tests/ops/test_sgla.py=not run"
out=$("$OPTLOOP" promote --check 2>&1)
t_like "promote --check asks for the dependent gates" "$out" \
	'MISSING +dependent gates: not run on the best.s kernel: tests/models/test_modeling_toy.py, tests/ops/test_sgla.py; run them: optloop dependents --run'

py=""
for p in python3 /usr/bin/python3; do
	"$p" -m pytest --version >/dev/null 2>&1 && { py=$p; break; }
done
if [ -n "$py" ]; then
	# the gate test once outside the loop, for the caches: no run recorded
	runs=$(sqlite3 profile/chunk_ret-opt/optloop.db "SELECT count(*) FROM runs")
	out=$(OPTLOOP_PYTHON=$py "$OPTLOOP" warmup 2>&1); rc=$?
	t_is "warmup: exit 0 when the gate test passes" "$rc" 0
	t_like "  pytest ran the gate test" "$out" '1 passed'
	t_like "  and it says so, with its time" "$out" 'warmup: the gate test passed in [0-9.]+ s on 1 worker \(exit 0\)'
	t_is "  no run of the loop was recorded" "$(sqlite3 profile/chunk_ret-opt/optloop.db "SELECT count(*) FROM runs")" "$runs"
	t_like "  an event was" "$("$OPTLOOP" export --json)" '"kind": "warmup"'
	out=$(OPTLOOP_PYTHON=$py "$OPTLOOP" dependents --run 2>&1); rc=$?
	t_is "dependents --run: exit 0 when they pass" "$rc" 0
	t_like "  pytest ran the file" "$out" '1 passed'
	t_like "  and the gate is said" "$out" 'gate: tests/ops/test_sgla.py passed \(exit 0'
	t_like "promote --check counts it" "$("$OPTLOOP" promote --check 2>&1)" \
		'ok +dependent gates: the 2 test files that run the changed kernel files passed'
	# the test broken: the gate fails, and the bar says so
	printf '\n\ndef test_broken():\n    assert False\n' >>tests/ops/test_sgla.py
	git commit -qam "a broken dependent test"
	out=$(OPTLOOP_PYTHON=$py "$OPTLOOP" dependents --run 2>&1); rc=$?
	t_is "a failing dependent gate: exit 1" "$rc" 1
	t_like "  said" "$out" 'gate: tests/ops/test_sgla.py FAILED \(exit 1'
	t_like "  and promote --check names it" "$("$OPTLOOP" promote --check 2>&1)" \
		'MISSING +dependent gates: failed: tests/ops/test_sgla.py \(exit 1\)'
else
	t_skip "dependents --run" "no Python with pytest here"
fi
# the gates run on the kernel compared: another kernel in the tree is refused
printf '# mid-edit\n' >>fla/ops/common/chunk_o.py
t_exit "dependents --run with another kernel in the tree is refused (exit 3)" 3 "$OPTLOOP" dependents --run
out=$("$OPTLOOP" dependents --work 2>&1)
t_like "dependents --work compares the work tree" "$out" 'fla/ops/common/chunk_o.py'
t_done
