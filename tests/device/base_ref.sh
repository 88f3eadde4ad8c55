#!/usr/bin/env bash
# FLA's paired mode on a machine with no network: verify.py --base REF
# benchmarks the current tree, then REF in a temporary git worktree in a
# subprocess (after a `pip install -e .` there), and prints old / new /
# speedup columns.  Here the normalize change is committed on a branch
# `norm` of a copy of the FLA clone and REF is its parent (main), so a
# working --base would show the old kernel in the old column.
#
#   STATE=/tmp/dev15 BUNDLE=... DEADLINE=EPOCH tests/device/base_ref.sh
#
# Run A sets PYTHONPATH to the tree, as the optloop sessions do; run B (when
# time is left) runs without it.  The harness is run through the same
# wrapper the sessions use (fla_verify_small.py: FLA's verify.py with the
# shape table swapped), with --no-gate.
set -uo pipefail
state=${STATE:?}
bundle=${BUNDLE:?}
deadline=${DEADLINE:?}
here=$(cd "$(dirname "$0")" && pwd)
res=$state/res/base-ref
mkdir -p "$res" "$state/steps"
left() { echo $((deadline - $(date +%s))); }
t=$state/fla-pair
if [ ! -d "$t/.git" ]; then
	rm -rf "$t.tmp"
	# from noise.sh's upstream tree: the session's clone has moved on by now
	cp -a "$state/fla-base" "$t.tmp" || exit 1
	git -C "$t.tmp" checkout -q -b norm
	sed -i 's/denom = (q \* scale \* k_cum).sum(-1, keepdim=True) + 1e-10/denom = (q * k_cum).sum(-1, keepdim=True) * scale + 1e-10/' \
		"$t.tmp/fla/ops/linear_attn/utils.py"
	git -C "$t.tmp" diff --quiet && { echo "!! the normalize sed changed nothing"; exit 1; }
	git -C "$t.tmp" -c user.name=optloop -c user.email=session@optloop.invalid \
		commit -qam "normalize: scale the [B,T,H,1] dot product, not q"
	mv "$t.tmp" "$t"
fi
cp "$here/fla_verify_small.py" "$t/fla_verify_small.py"
export OPTLOOP_FLA_SHAPES='{"B8_T8192_H16_D64": {"B": 8, "T": 8192, "H": 16, "D": 64}, "B16_T4096_H32_D64": {"B": 16, "T": 4096, "H": 32, "D": 64}, "B4_T2048_H16_D64": {"B": 4, "T": 2048, "H": 16, "D": 64}}'
cd "$t" || exit 1
{
	echo "tree: branch $(git rev-parse --abbrev-ref HEAD) at $(git rev-parse --short HEAD), parent $(git rev-parse --short HEAD~1)"
	git log --oneline -2
	echo "pip show (fla installed in the environment?):"
	python3 -m pip show flash-linear-attention fla-core 2>&1 | head -5
} >"$res/tree.txt" 2>&1
one() { # NAME PYTHONPATH-or-empty
	local name=$1 pp=$2 s e rc
	[ -e "$state/steps/base-ref-$name" ] && return 0
	if [ "$(left)" -lt 100 ]; then
		echo "== base-ref: out of time before run $name ($(left)s left)"
		return 1
	fi
	echo "== base-ref run $name ($(left)s left)"
	s=$(date +%s.%N)
	if [ -n "$pp" ]; then
		PYTHONPATH=$pp timeout $(($(left) - 10)) python3 fla_verify_small.py --op chunk_linear_attn \
			--no-gate --modes fwd --base HEAD~1 >"$res/$name.log" 2>&1
	else
		env -u PYTHONPATH timeout $(($(left) - 10)) python3 fla_verify_small.py --op chunk_linear_attn \
			--no-gate --modes fwd --base HEAD~1 >"$res/$name.log" 2>&1
	fi
	rc=$?
	e=$(date +%s.%N)
	printf '%s\t%s\t%s\t%d\n' "$name" "${pp:+PYTHONPATH=<fla> }python3 fla_verify_small.py --op chunk_linear_attn --no-gate --modes fwd --base HEAD~1" \
		"$(python3 -c "print(f'{$e - $s:.3f}')")" "$rc" >>"$res/timings.tsv"
	git worktree list >>"$res/$name.worktrees.txt" 2>&1
	touch "$state/steps/base-ref-$name"
	tail -12 "$res/$name.log"
}
one pythonpath "$t" && one no-pythonpath ""
