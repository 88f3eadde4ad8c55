# confirm_lib.sh — the demo project with a real win for the statistics and
# confirm tests (after lib.sh):
#   demo_repeated REPS  the demo in $d (cwd) as a one-commit git repository,
#                   its kernel's outer loop run REPS times over, so that
#                   removing the repetition is a real win the statistics must
#                   see through the noise.  Sets d and kernel.
#   confirm_setup [VERIFY]  the demo in $d (cwd), the baseline computing
#                   everything four times over, logged and committed; then
#                   the kernel edited to three times (a real 1.33x win, below
#                   the 1.5x implausibility flag).  VERIFY: the validation
#                   command (default: the demo's ./verify).
#   confirm_workspace REPS TARGET  demo_repeated REPS, confirm_bench, and the
#                   workspace made on it: init with $T_TMP/bench as the
#                   validation command, the contract's Target TARGET, C, and
#                   promotion on a full gate and a confirmed win.
#   confirm_bench   writes $T_TMP/bench: the demo's ./verify for the gate; with
#                   --no-gate a benchmark whose times follow the kernel in the
#                   work tree (50 ms per repetition of its outer loop, a small
#                   spread by run), so the confirm's verdict does not depend on
#                   the load of the machine running the tests.
# Sets kernel (the kernel's path) and db (the workspace database).
confirm_bench() {
	cat >"$T_TMP/bench" <<'SH'
#!/bin/sh
case " $* " in *" --no-gate "*) ;; *) exec ./verify "$@" ;; esac
c="$(dirname "$0")/bench-count"
n=$(cat "$c" 2>/dev/null || echo 0); n=$((n + 1)); echo "$n" >"$c"
reps=$(sed -n 's/.*for (int rep = 0; rep < \([0-9]*\);.*/\1/p' ops/linear_attn/chunk.c)
case $((n % 4)) in 0) f=1.003 ;; 1) f=0.998 ;; 2) f=0.997 ;; *) f=1.002 ;; esac
printf '\n  [chunk_linear_attn] Warming up 3 shape(s)...\n'
sleep 1
eq================================================================================
printf '%s\n  Machine: demo bench | CPU sh\n%s\n' "$eq" "$eq"
printf '  fwd        B      T    H    D  op                            main[0000000](ms)\n'
for s in "2 512 4 64 1" "1 1024 2 128 2" "4 512 4 32 0.5"; do
	set -- $s
	ms=$(awk -v r="${reps:-1}" -v f="$f" -v k="$5" 'BEGIN { printf "%.3f", 50 * r * f * k }')
	printf '          ----------------------------------------------------------------------\n'
	printf '  %12d %6d %4d %4d  chunk_linear_attn  %30s\n' "$1" "$2" "$3" "$4" "$ms"
done
printf '%s\n' "$eq"
SH
	chmod +x "$T_TMP/bench"
}

demo_repeated() {
	d="$T_TMP/demo"
	cp -R "$OPTLOOP_ROOT/assets/demo" "$d"
	rm -rf "$d/build"
	cd "$d" || exit 1
	kernel=ops/linear_attn/chunk.c
	python3 - "$kernel" "$1" <<'PY'
import sys
p, reps = sys.argv[1], sys.argv[2]
s = open(p).read()
a = "\tfor (int b = 0; b < B; b++)\n"
assert a in s
s = s.replace(a, "\tfor (int rep = 0; rep < %s; rep++)\n" % reps + a, 1)
open(p, "w").write(s)
PY
	git init -q -b main && git add -A && git commit -qm "demo project" || exit 1
}

confirm_workspace() {
	demo_repeated "$1"
	confirm_bench
	"$OPTLOOP" init --op chunk_linear_attn --kernel "$kernel" --test-file tests/ops/test_linear_attn.c \
		--naive ops/linear_attn/naive.c --verify "$T_TMP/bench --op chunk_linear_attn" >/dev/null
	"$OPTLOOP" contract --set "target=$2" --set languages=C \
		--set "promotion=full gate, confirmed win" >/dev/null
}

confirm_setup() {
	local verify=${1:-./verify --op chunk_linear_attn}
	demo_repeated 4
	db=profile/chunk_linear_attn-opt/optloop.db
	"$OPTLOOP" init --op chunk_linear_attn --kernel "$kernel" --test-file tests/ops/test_linear_attn.c \
		--naive ops/linear_attn/naive.c --verify "$verify" >/dev/null
	"$OPTLOOP" contract --set "target=all three shapes, 1.2x" --set languages=C \
		--set "promotion=full gate, confirmed win" >/dev/null
	DEMO_BENCH_WARMUP_MS=1 DEMO_BENCH_REP_MS=${SETUP_REP_MS:-1} "$OPTLOOP" verify >/dev/null 2>&1
	"$OPTLOOP" log --direction baseline --status base >/dev/null && "$OPTLOOP" commit >/dev/null
	t_is "baseline logged and committed" \
		"$("$OPTLOOP" status --json | python3 -c 'import json,sys; print(json.load(sys.stdin)["state"])')" ready
	python3 -c 'import sys; p=sys.argv[1]; s=open(p).read(); a="rep < 4;"; assert a in s; open(p,"w").write(s.replace(a,"rep < 3;",1))' "$kernel"
}
