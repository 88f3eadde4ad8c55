# guards_lib.sh — a fresh copy of the demo project with an optloop
# workspace, for the guard tests.  Source after lib.sh.
#
#   demo_ws DIR [KERNEL]    copy assets/demo to DIR as a git repository, init the
#                           chunk_linear_attn workspace (kernel path KERNEL,
#                           default the kernel file) and fill the contract
export DEMO_BENCH_WARMUP_MS=5 DEMO_BENCH_REP_MS=20 # keep the suite quick

demo_ws() {
	local d=$1 kernel=${2:-ops/linear_attn/chunk.c}
	cp -R "$OPTLOOP_ROOT/assets/demo" "$d"
	rm -rf "$d/build"
	git -C "$d" init -q -b main
	git -C "$d" add -A
	git -C "$d" commit -qm "demo project"
	(cd "$d" && "$OPTLOOP" init --op chunk_linear_attn --kernel "$kernel" \
		--test-file tests/ops/test_linear_attn.c --naive ops/linear_attn/naive.c \
		--verify "./verify --op chunk_linear_attn" >/dev/null &&
		"$OPTLOOP" contract --set "target=every gate shape, 1.2x" --set languages=C \
			--set "promotion=full gate green, confirmed win" >/dev/null)
}
# state: the workspace state from status --json
state() { "$OPTLOOP" status --json | sed -n 's/^  "state": "\(.*\)",$/\1/p'; }
# set_chunk N: the kernel's one tuning knob
set_chunk() { sed -i "s/^#define CHUNK_SIZE .*/#define CHUNK_SIZE $1/" ops/linear_attn/chunk.c; }
