#!/usr/bin/env bash
# A sparse checkout: a kernel file outside the sparse set is in the index
# (skip-worktree) and not in the work tree.  It is neither a deletion to
# measure and commit nor a file to put back: the iteration's commit holds
# only what changed in the set, and restores and swaps leave it hidden.
. "$(dirname "$0")/lib.sh"
d="$T_TMP/sparse"
"$OPTLOOP_ROOT/tests/fixtures/make_tiny_project.sh" "$d" >/dev/null
cd "$d" || exit 1
mkdir -p kernel/extra && echo 'echo extra' >kernel/extra/x.sh
git add -A && git commit -qm "a kernel file the sparse set will hide"
"$OPTLOOP" init --op tiny --kernel kernel --test-file tests/test_compute.sh --naive ref/naive.sh \
	--verify ./verify --target 2x --languages sh --promotion "full gate" >/dev/null
"$OPTLOOP" verify >/dev/null 2>&1 && "$OPTLOOP" log --direction baseline --commit >/dev/null ||
	t_fail "baseline"
if ! git sparse-checkout set --no-cone '/*' '!/kernel/extra/' >/dev/null 2>&1; then
	t_skip "sparse checkout" "this git has no sparse-checkout command"
	t_done
	exit 0
fi
state() { "$OPTLOOP" status --json | jget state; }
t_ok "the sparse set hides kernel/extra" test ! -e kernel/extra/x.sh
t_is "a hidden kernel file is no change: the loop is ready" "$(state)" ready
sed -i 's/\$(( \$1 \* 2 ))/$(( $1 << 1 ))/' kernel/compute.sh
t_ok "verify measures the change in the set" "$OPTLOOP" verify
t_like "  and sees no deletion" "$("$OPTLOOP" status)" '^state: +measured'
cand=$(sha1sum <kernel/compute.sh)
"$OPTLOOP" confirm --max-pairs 1 >/dev/null 2>&1
t_is "confirm swaps the best in and out (any verdict): the candidate is back" \
	"$(sha1sum <kernel/compute.sh)" "$cand"
t_ok "  the hidden file stays hidden" test ! -e kernel/extra/x.sh
t_ok "logged as drop and committed" "$OPTLOOP" log --direction shift --status drop --commit
it=$(git log --format=%H --grep='^Optloop-Iter: 1$')
t_is "the iteration's commit holds only the file that changed" \
	"$(git show --format= --name-only "$it")" kernel/compute.sh
t_is "the hidden file is still in HEAD" "$(git ls-tree -r --name-only HEAD kernel/extra)" kernel/extra/x.sh
t_ok "the drop's restore did not write it into the tree" test ! -e kernel/extra/x.sh
t_is "nothing is left changed" "$(git status --porcelain)" ""
t_done
