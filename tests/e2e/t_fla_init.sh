#!/usr/bin/env bash
# init in an FLA-shaped tree decides both scopes from the call graph (the
# imports, followed file to file): frozen is what the gate test's
# references reach, and the gate's support code; the kernel is what the
# op's function runs.  Kernel code both run is frozen with a notice, an op whose
# reference is its own code is refused, nothing that does not exist is
# frozen; contract --check holds the paths to it.
# The tree is written by tests/fixtures/make_fla_tree.sh; the shapes are
# those of upstream FLA: chunk_delta_rule, chunk_retention and
# chunk_lightning_attn compare against fused_recurrent_* re-exported by the
# package, chunk_gdn and chunk_kda also against naive_*_gate in gate.py,
# rwkv7-style tests import references from their modules, and
# naive_attnres is the reference itself.
. "$(dirname "$0")/lib.sh"
d="$T_TMP/fla"
"$OPTLOOP_ROOT/tests/fixtures/make_fla_tree.sh" "$d"
cd "$d" || exit 1

frozen() { "$OPTLOOP" --op "$1" status --json | python3 -c 'import json,sys; print(" ".join(json.load(sys.stdin)["frozen"]))'; }

# a package re-export of the fused_recurrent reference; no naive.py
out=$("$OPTLOOP" init --op chunk_delta 2>&1); rc=$?
t_is "chunk_* against fused_recurrent_*: init succeeds" "$rc" 0
t_like "it says which reference it found and where" "$out" \
	'reference fused_recurrent_delta \(imported from fla.ops.delta, defined in fla/ops/delta/fused_recurrent.py\): frozen'
t_like "the kernel is the file of the op's function" "$out" \
	"kernel: fla/ops/delta/chunk.py: the op's function chunk_delta"
t_is "the frozen scope: the test, the reference, the conftest, the test's helper, the harness and pytest's configuration" \
	"$(frozen chunk_delta)" \
	"tests/ops/test_delta.py fla/ops/delta/fused_recurrent.py tests/conftest.py fla/utils/_device.py fla/utils/_testing.py benchmarks/ops/registry.py pyproject.toml"
t_like "  each with why, through the function that uses it" "$out" \
	'frozen: fla/utils/_device.py \(device\) <- tests/conftest.py \(poison\): the gate test.s conftest'
t_like "  the helper too" "$out" 'frozen: fla/utils/_testing.py: the gate test.s helper assert_close'
t_unlike "the package's other files are neither" "$out" 'fla/ops/delta/utils.py'
t_unlike "a naive.py that does not exist is not frozen" "$(frozen chunk_delta)" 'naive.py'

# func_name, gate.py and naive.py references, a multi-line import
out=$("$OPTLOOP" init --op chunk_gdn 2>&1); rc=$?
t_is "func_name and gate references: init succeeds" "$rc" 0
t_is "gate.py and naive.py are frozen, the fused gate kernel is not named" "$(frozen chunk_gdn)" \
	"tests/ops/test_gated.py fla/ops/gated/gate.py fla/ops/gated/naive.py tests/conftest.py fla/utils/_device.py benchmarks/ops/registry.py pyproject.toml"
t_like "the op's function is found by func_name" "$out" 'op function chunk_gated: defined in fla/ops/gated/chunk.py'

# an aliased import from the reference's module
"$OPTLOOP" init --op chunk_rwkv >/dev/null 2>&1
t_like "an aliased reference is followed to its module" "$(frozen chunk_rwkv)" \
	"^tests/ops/test_rwkv.py fla/ops/rwkv/fused_recurrent.py "

# the reference's real kernel lies in fla/ops/common, behind a thin wrapper,
# and the op's kernels are another op's chunk code and the common kernels
out=$("$OPTLOOP" init --op chunk_ret 2>&1); rc=$?
t_is "a reference through fla/ops/common: init succeeds" "$rc" 0
t_like "  the wrapped common kernel is frozen, with the path to it" "$out" \
	'frozen: fla/ops/common/fused_recurrent.py \(fused_recurrent\) <- fla/ops/ret/fused_recurrent.py: reference fused_recurrent_ret'
t_like "  the kernel is every file the op runs, in the order its code uses them" "$out" \
	'kernel: fla/ops/ret/chunk.py, fla/ops/sgla/chunk.py, fla/ops/common/chunk_o.py, fla/ops/common/chunk_h.py;'
t_like "  each with the tree of why" "$out" \
	"kernel: fla/ops/common/chunk_h.py \\(chunk_fwd_h\\) <- fla/ops/sgla/chunk.py \\(chunk_sgla\\) <- fla/ops/ret/chunk.py: the op's function chunk_ret"
t_is "  status lists the kernel files" \
	"$("$OPTLOOP" --op chunk_ret status --json | python3 -c 'import json,sys; print(" ".join(json.load(sys.stdin)["kernel"]))')" \
	"fla/ops/ret/chunk.py fla/ops/sgla/chunk.py fla/ops/common/chunk_o.py fla/ops/common/chunk_h.py"

# a parallel gate: pytest-xdist's workers through PYTEST_ADDOPTS, which the
# harness's pytest reads wherever it starts it
rm -rf profile/chunk_ret-opt
"$OPTLOOP" init --op chunk_ret --gate-workers 8 >/dev/null 2>&1
t_like "--gate-workers puts the gate's pytest on that many workers" \
	"$("$OPTLOOP" --op chunk_ret status 2>&1)" "^verify: +PYTEST_ADDOPTS='-n 8' python -m benchmarks.ops.verify --op chunk_ret\$"
t_exit "--gate-workers 0 is a usage error" 2 "$OPTLOOP" init --op chunk_delta --gate-workers 0

# kernel code both the op and its reference run: frozen (the safe default),
# and said once, with the command that optimizes it anyway
out=$("$OPTLOOP" init --op chunk_l2 2>&1); rc=$?
t_is "kernel code shared with the reference: init succeeds" "$rc" 0
t_like "  it is frozen" "$(frozen chunk_l2)" 'fla/modules/l2norm.py'
t_like "  the kernel is the op's file alone" "$out" 'kernel: fla/ops/l2/chunk.py;'
t_like "  one notice names it, with the reference that runs it" "$out" \
	'notice: the op and what its gate test checks it against \(a reference, or what makes both sides. inputs\) both run these kernel files, so they are frozen'
t_like "  the path to it" "$out" \
	'^  fla/modules/l2norm.py \(l2norm\) <- fla/ops/l2/fused_recurrent.py: reference fused_recurrent_l2$'
t_like "  and the command that optimizes it anyway" "$out" \
	'^  optloop init --op chunk_l2 --kernel fla/ops/l2/chunk.py --kernel fla/modules/l2norm.py$'
t_is "  the notice is one block: its lines are lines" "$(printf '%s\n' "$out" | grep -c '^  optloop init')" 1
rm -rf profile/chunk_l2-opt
out=$("$OPTLOOP" init --op chunk_l2 --kernel fla/ops/l2/chunk.py --kernel fla/modules/l2norm.py 2>&1); rc=$?
t_is "  optimized as told: init succeeds" "$rc" 0
t_like "  saying the gate cannot catch an error there" "$out" \
	'fla/modules/l2norm.py: a kernel file by --kernel, though the reference reaches it too \(the gate cannot catch an error there\)'
t_unlike "  and it is not frozen" "$(frozen chunk_l2)" 'l2norm'
t_unlike "  and no notice" "$out" 'notice:'
rm -rf profile/chunk_l2-opt

# a helper both sides take with "from .shared import *": run by both, so frozen
out=$("$OPTLOOP" init --op chunk_star 2>&1); rc=$?
t_is "a helper both sides star-import: init succeeds" "$rc" 0
t_like "  naming it and the reference that runs it" "$out" \
	'^  fla/ops/star/shared.py \(star_helper\) <- fla/ops/star/fused_recurrent.py: reference fused_recurrent_star$'
t_like "  the star-imported helper is frozen" "$(frozen chunk_star)" 'fla/ops/star/shared.py'
t_like "  the kernel is the op's file alone" "$out" 'kernel: fla/ops/star/chunk.py;'
rm -rf profile/chunk_star-opt

# the references are what the test compares the op with: fused_recurrent_nv
# is imported and checked, but only against naive_nv, so it is no reference
out=$("$OPTLOOP" init --op chunk_nv 2>&1); rc=$?
t_is "a test comparing the op with naive only: init succeeds" "$rc" 0
t_like "  the naive version is the reference" "$out" 'reference naive_nv \(imported from fla.ops.nv.naive'
t_unlike "  the fused_recurrent one is not" "$(frozen chunk_nv)" 'fused_recurrent'
t_unlike "  so the kernel file they share is asked about by no one" "$out" 'notice:'
t_like "  and is the op's kernel" "$out" 'kernel: fla/ops/nv/chunk.py, fla/ops/nv/kern.py;'

# plain utilities (no kernel of their own) are frozen for every op, in silence
out=$("$OPTLOOP" init --op chunk_ut 2>&1); rc=$?
t_is "plain utilities both sides run: init succeeds" "$rc" 0
t_unlike "  with no notice" "$out" 'notice:'
t_like "  the shared one frozen" "$out" \
	'frozen: fla/ops/utils/index.py \(prepare_lens\) <- fla/ops/ut/fused_recurrent.py: reference fused_recurrent_ut \(a plain utility the reference runs too\)'
t_like "  the op's own Triton math too, saying how to optimize it" "$out" \
	'frozen: fla/ops/utils/op.py \(exp\) <- fla/ops/ut/chunk.py: the op.s function chunk_ut \(a plain utility, frozen for every op; --kernel fla/ops/utils/op.py optimizes it\)'
t_like "  the kernel is the op's file alone" "$out" 'kernel: fla/ops/ut/chunk.py;'

# the op's file imports chunk_fwd_h for a function the op never calls
out=$("$OPTLOOP" init --op chunk_fn 2>&1)
t_like "the kernel is what the op's function runs" "$out" 'kernel: fla/ops/fn/chunk.py, fla/ops/common/chunk_o.py;'
t_unlike "  not what its file imports for another function" "$out" 'chunk_h.py'
t_like "  the why names the function that calls it" "$out" \
	'kernel: fla/ops/common/chunk_o.py \(chunk_fwd_o\) <- fla/ops/fn/chunk.py: the op.s function chunk_fn'

# the test makes both sides' inputs with a kernel the op runs inside
out=$("$OPTLOOP" init --op chunk_pool 2>&1); rc=$?
t_is "an input helper the op runs too: init succeeds" "$rc" 0
t_like "  frozen, in the notice" "$out" '^  fla/ops/utils/pooling.py: the test.s input helper mean_pool$'
t_like "  with the command that optimizes it anyway" "$out" \
	'^  optloop init --op chunk_pool --kernel fla/ops/pool/chunk.py --kernel fla/ops/utils/pooling.py$'
rm -rf profile/chunk_nv-opt profile/chunk_ut-opt profile/chunk_fn-opt profile/chunk_pool-opt

# the op wraps another registered op, and the test compares it with that
out=$("$OPTLOOP" init --op chunk_wrap 2>&1); rc=$?
t_is "a test comparing the op with the op it wraps: refused (exit 3)" "$rc" 3
t_like "  saying the reference is the op's own implementation" "$out" \
	"checks chunk_wrap against chunk_inner, which chunk_wrap itself runs \\(fla/ops/inner/chunk.py \\(chunk_inner\\) <- fla/ops/wrap/chunk.py.*the reference is the op's own implementation"

# a reference no file defines: said, with the option that fixes it
out=$("$OPTLOOP" init --op chunk_ghost 2>&1); rc=$?
t_is "an unresolvable reference is a usage error" "$rc" 2
t_like "it names the reference and --frozen" "$out" 'compares against naive_ghost \(from fla.ops.ghost\).*--frozen PATH'
t_is "nothing was created" "$(ls profile 2>/dev/null | grep -c ghost)" 0
printf 'def naive_ghost(q):\n    return q\n' >ref_ghost.py
out=$("$OPTLOOP" init --op chunk_ghost --frozen ref_ghost.py 2>&1); rc=$?
t_is "--frozen names it" "$rc" 0
t_like "and it is frozen" "$(frozen chunk_ghost)" 'ref_ghost.py'

# no reference in the imports
out=$("$OPTLOOP" init --op chunk_bare 2>&1); rc=$?
t_is "a test importing no reference is a usage error" "$rc" 2
t_like "it says so and how to name one" "$out" 'name no reference.*--frozen PATH'
out=$("$OPTLOOP" init --op chunk_bare --frozen fla/ops/bare/expected.py --kernel fla/ops/bare/chunk.py 2>&1); rc=$?
t_is "with --frozen and --kernel it is created" "$rc" 0

# the op is the reference itself; op and reference in one file
out=$("$OPTLOOP" init --op naive_self 2>&1); rc=$?
t_is "an op that is its own reference is refused" "$rc" 3
t_like "with the reason" "$out" 'naive_self is itself a reference'
out=$("$OPTLOOP" init --op chunk_mixed 2>&1); rc=$?
t_is "an op sharing its file with the reference is refused" "$rc" 3
t_like "naming the file" "$out" 'defined in the same file fla/ops/mixed/chunk.py'

# paths given by hand must exist, and a kernel path may not be frozen
out=$("$OPTLOOP" init --op chunk_rwkv2 --kernel fla/ops/rwkv --test-file tests/ops/test_rwkv.py \
	--naive fla/ops/rwkv/naive.py --verify true 2>&1); rc=$?
t_is "a frozen path that does not exist is refused" "$rc" 2
t_like "and named" "$out" 'frozen path fla/ops/rwkv/naive.py does not exist'
out=$("$OPTLOOP" init --op chunk_rwkv3 --kernel fla/ops/rwkv/fused_recurrent.py \
	--test-file tests/ops/test_rwkv.py --frozen fla/ops/rwkv/fused_recurrent.py --verify true 2>&1); rc=$?
t_is "a kernel path inside the frozen scope is refused" "$rc" 2
t_like "and named" "$out" 'kernel path fla/ops/rwkv/fused_recurrent.py is frozen'

# the whole repository, or git's own directory, is no kernel: edits there are
# never committed (or commit everything with the kernel), so it is refused
for k in . ./ .git .git/hooks ./.git/info; do
	out=$("$OPTLOOP" init --op chunk_rwkv4 --kernel "$k" --test-file tests/ops/test_rwkv.py \
		--frozen fla/ops/rwkv/fused_recurrent.py --verify true 2>&1); rc=$?
	t_is "--kernel $k is refused as a usage error (exit 2)" "$rc" 2
	case $k in
	*git*) t_like "and says it lies in git's own directory" "$out" \
		"kernel path $k lies in git's own directory, which no commit holds" ;;
	*) t_like "and says it is the whole repository" "$out" \
		"kernel path $k is the whole repository" ;;
	esac
done
ln -s . self
out=$("$OPTLOOP" init --op chunk_rwkv4 --kernel self --test-file tests/ops/test_rwkv.py \
	--frozen fla/ops/rwkv/fused_recurrent.py --verify true 2>&1); rc=$?
t_is "a link to the top of the repository is refused too" "$rc" 2
t_like "as the whole repository" "$out" 'kernel path self is the whole repository'
rm self
t_ok "nothing was created for the refused kernels" test ! -e profile/chunk_rwkv4-opt

# contract --check holds the paths: a frozen file gone, a kernel path gone,
# a kernel path made frozen by hand
for op in chunk_delta chunk_gdn; do
	"$OPTLOOP" --op $op contract --set "target=every shape >= 1.1x" --set languages=Triton \
		--set "promotion=full gate" >/dev/null
done
t_exit "the contract is complete" 0 "$OPTLOOP" --op chunk_delta contract --check
# Target shapes the registry's way: read, and one the registry lacks fails
"$OPTLOOP" --op chunk_delta contract --set "target=fwd B4_T4096_H64_D128 >= 1.1x" >/dev/null
t_exit "a Target shape the registry has: the contract is complete" 0 "$OPTLOOP" --op chunk_delta contract --check
"$OPTLOOP" --op chunk_delta contract --set "target=fwd B4_T4096_H64_D100 >= 1.1x" >/dev/null
out=$("$OPTLOOP" --op chunk_delta contract --check 2>&1); rc=$?
t_is "a Target shape the registry lacks fails the check" "$rc" 1
t_like "  naming it and the registry's shapes" "$out" \
	'Target: B4_T4096_H64_D100 names none of chunk_delta.s benchmark shapes \(SHAPE_CONFIGS in benchmarks/ops/registry.py: B4_T2048_H16_D128, B4_T4096_H64_D128\)'
t_exit "  verify is refused meanwhile" 3 "$OPTLOOP" --op chunk_delta verify
"$OPTLOOP" --op chunk_delta contract --set "target=every shape >= 1.1x" >/dev/null
git rm -q fla/ops/delta/fused_recurrent.py
out=$("$OPTLOOP" --op chunk_delta contract --check 2>&1); rc=$?
t_is "a frozen file that is gone fails the check" "$rc" 1
t_like "naming it" "$out" 'Frozen: fla/ops/delta/fused_recurrent.py does not exist'
t_exit "verify is refused while it is gone" 3 "$OPTLOOP" --op chunk_delta verify
git checkout -q HEAD -- fla/ops/delta/fused_recurrent.py
t_exit "restored, the contract is complete again" 0 "$OPTLOOP" --op chunk_delta contract --check
"$OPTLOOP" --op chunk_delta contract --set "frozen=tests/ops/test_delta.py, fla/ops/delta" >/dev/null
out=$("$OPTLOOP" --op chunk_delta contract --check 2>&1); rc=$?
t_is "a kernel path inside the frozen scope fails the check" "$rc" 1
t_like "and says why" "$out" 'kernel path fla/ops/delta/chunk.py is frozen'
mv fla/ops/gated fla/ops/gated.moved
out=$("$OPTLOOP" --op chunk_gdn contract --check 2>&1)
t_like "a kernel path that is gone fails the check" "$out" 'kernel path fla/ops/gated/chunk.py does not exist'
mv fla/ops/gated.moved fla/ops/gated
# a workspace made before init refused it, its kernel the whole repository
db=profile/chunk_gdn-opt/optloop.db
was=$(sqlite3 "$db" "SELECT value FROM meta WHERE key = 'kernel'")
sqlite3 "$db" "UPDATE meta SET value = '.' WHERE key = 'kernel'"
out=$("$OPTLOOP" --op chunk_gdn contract --check 2>&1); rc=$?
t_is "a kernel that is the whole repository fails the check" "$rc" 1
t_like "and says why" "$out" 'kernel path \. is the whole repository'
t_exit "verify is refused meanwhile" 3 "$OPTLOOP" --op chunk_gdn verify
sqlite3 "$db" "UPDATE meta SET value = '$was' WHERE key = 'kernel'"

# several workspaces: status lists them instead of asking for --op
out=$("$OPTLOOP" status 2>&1); rc=$?
t_is "status with several workspaces exits 0" "$rc" 0
t_like "it lists each with its state" "$out" '^  chunk_delta +no_contract +0'
t_like "and says how to pick one" "$out" 'next: pick one with --op OP'
j=$("$OPTLOOP" status --json)
t_is "status --json lists them" \
	"$(printf '%s' "$j" | python3 -c 'import json,sys; print(" ".join(w["op"] for w in json.load(sys.stdin)["workspaces"]))')" \
	"chunk_bare chunk_delta chunk_gdn chunk_ghost chunk_ret chunk_rwkv"
t_like "--op after the command picks one" "$("$OPTLOOP" status --op chunk_gdn)" '^op: +chunk_gdn'
t_like "--op=OP after the command too" "$("$OPTLOOP" status --json --op=chunk_rwkv)" '"op": "chunk_rwkv"'
out=$("$OPTLOOP" status --op chunk_delt 2>&1)
t_like "an unknown op gets a did-you-mean" "$out" "no workspace for op 'chunk_delt'.*did you mean --op chunk_delta"
out=$("$OPTLOOP" init --op chunk_gdm 2>&1); rc=$?
t_is "init of an op the registry lacks is a usage error" "$rc" 2
t_like "with the registry's ops and a did-you-mean" "$out" "no register_op entry named 'chunk_gdm'; did you mean chunk_gdn\\? \\(ops: chunk_delta, chunk_gdn"

# ---- a package directory that is a link ---------------------------------------
# fla/ops/delta a link to delta_impl (git tracks the link and the files under
# delta_impl): the scopes hold the paths git tracks, so the unmodified kernel
# is not read as a change.
d2="$T_TMP/fla-link"
"$OPTLOOP_ROOT/tests/fixtures/make_fla_tree.sh" "$d2"
cd "$d2" || exit 1
git mv fla/ops/delta fla/ops/delta_impl && ln -s delta_impl fla/ops/delta && git add fla/ops/delta &&
	git commit -qm "the delta package through a link"
out=$("$OPTLOOP" init --op chunk_delta 2>&1); rc=$?
t_is "an op whose package is a link: init succeeds" "$rc" 0
t_like "the kernel is the file git tracks, not the path through the link" "$out" \
	"kernel: fla/ops/delta_impl/chunk.py: the op's function chunk_delta"
t_is "the frozen reference too, once" "$(frozen chunk_delta)" \
	"tests/ops/test_delta.py fla/ops/delta_impl/fused_recurrent.py tests/conftest.py fla/utils/_device.py fla/utils/_testing.py benchmarks/ops/registry.py pyproject.toml"
"$OPTLOOP" --op chunk_delta contract --set 'target=2x' --set languages=python --set 'promotion=full gate' >/dev/null
t_like "the unmodified kernel is the baseline's (git calls the tree clean)" \
	"$(git status --porcelain; "$OPTLOOP" --op chunk_delta status --json)" '^  "state": "need_baseline",'
out=$("$OPTLOOP" --op chunk_delta verify 2>&1)
t_unlike "  and verify does not read it as a change" "$out" 'differs from HEAD'

t_done
