#!/usr/bin/env bash
# What surrounds an FLA op's gate and benchmark, beyond the call graph of
# t_fla_init.sh: an op implemented outside the repository, the pytest
# configuration the gate reads, the backends the benchmark may dispatch to,
# and the op's own benchmark shapes as the contract's Target names them.
# The tree is written by tests/fixtures/make_fla_tree.sh.
. "$(dirname "$0")/lib.sh"
d="$T_TMP/fla"
"$OPTLOOP_ROOT/tests/fixtures/make_fla_tree.sh" "$d"
cd "$d" || exit 1

frozen() { "$OPTLOOP" --op "$1" status --json | python3 -c 'import json,sys; print(" ".join(json.load(sys.stdin)["frozen"]))'; }

# an op the registry imports from an installed package (flash_attn)
out=$("$OPTLOOP" init --op flash_ext 2>&1); rc=$?
t_is "an op implemented outside the repository: init refuses (exit 3)" "$rc" 3
t_like "  saying where it comes from" "$out" \
	'the op flash_ext is not implemented in this repository: benchmarks/ops/registry.py imports flash_ext_func from flash_ext_pkg, an installed package'
t_like "  and what the user can do" "$out" "optimize it in the flash_ext_pkg package's own repository"
t_unlike "  not a missing test path" "$out" 'frozen path .* does not exist'
t_ok "  nothing was created" test ! -e profile/flash_ext-opt

# pytest's configuration is frozen with the gate test: a changed addopts in
# pyproject.toml could thin the gate while it still reads "(full)"
out=$("$OPTLOOP" init --op chunk_delta 2>&1); rc=$?
t_is "init in a tree whose pyproject.toml configures pytest succeeds" "$rc" 0
t_like "  pyproject.toml is frozen" "$(frozen chunk_delta)" ' pyproject.toml'
t_like "  saying why" "$out" \
	'frozen: pyproject.toml: pytest.s configuration of the gate \(\[tool.pytest.ini_options\]\)'
t_like "  the conftest on the test's path is frozen too" "$(frozen chunk_delta)" ' tests/conftest.py'
out=$("$OPTLOOP" init --op chunk_rwkv --kernel fla/ops/rwkv/chunk.py --kernel pyproject.toml 2>&1); rc=$?
t_is "--kernel pyproject.toml: a usage error (exit 2)" "$rc" 2
t_like "  saying it configures the gate" "$out" \
	'kernel path pyproject.toml configures the gate \(pytest reads its \[tool.pytest.ini_options\]\).*addopts.*"\(full\)"'
t_ok "  nothing was created" test ! -e profile/chunk_rwkv-opt
"$OPTLOOP" --op chunk_delta contract --set "target=every shape >= 1.1x" --set languages=Triton \
	--set "promotion=full gate" >/dev/null
printf '\n[tool.pytest.ini_options.x]\naddopts = "-k not_slow"\n' >>pyproject.toml
sed -i 's/return q/return q + 0/' fla/ops/delta/chunk.py
out=$("$OPTLOOP" --op chunk_delta verify --include pyproject.toml 2>&1); rc=$?
t_is "verify --include pyproject.toml: refused (exit 3)" "$rc" 3
t_like "  saying it configures the gate" "$out" \
	'verify refused: --include pyproject.toml: it configures the gate \(pytest reads its \[tool.pytest.ini_options\]\).*"\(full\)"'
t_unlike "  and it did not join the kernel" "$("$OPTLOOP" --op chunk_delta status --json)" '"pyproject.toml",$'
git checkout -q pyproject.toml fla/ops/delta/chunk.py
printf '[pytest]\naddopts = -q\n' >pytest.ini
out=$("$OPTLOOP" --op chunk_delta verify --include pytest.ini 2>&1); rc=$?
t_is "verify --include pytest.ini (a new file): refused (exit 3)" "$rc" 3
t_like "  saying it configures the gate" "$out" 'pytest.ini: it configures the gate'
rm -f pytest.ini

# the Target's shapes are the op's own: default_shapes when it has them,
# else SHAPE_CONFIGS; a name that names none of them, and a factor of 1x or
# below, fail the check
"$OPTLOOP" init --op parallel_ds >/dev/null 2>&1
"$OPTLOOP" --op parallel_ds contract --set "target=every shape >= 1.2x" --set languages=Triton \
	--set "promotion=full gate" >/dev/null
t_exit "an op with default_shapes: every shape is a complete contract" 0 \
	"$OPTLOOP" --op parallel_ds contract --check
"$OPTLOOP" --op parallel_ds contract --set "target=fwd B1_T8K_H1_HQ32_D128_S16 >= 1.2x" >/dev/null
t_exit "  one of its own shape names, as FLA spells them, passes" 0 \
	"$OPTLOOP" --op parallel_ds contract --check
"$OPTLOOP" --op parallel_ds contract --set "target=B4_T4096_H64_D128 >= 1.2x" >/dev/null
out=$("$OPTLOOP" --op parallel_ds contract --check 2>&1); rc=$?
t_is "  a SHAPE_CONFIGS name it never runs fails the check" "$rc" 1
t_like "  naming its own shapes" "$out" \
	"Target: B4_T4096_H64_D128 names none of parallel_ds's benchmark shapes \\(its default_shapes in benchmarks/ops/registry.py: B1_T8K_H1_HQ32_D128_S16, L32_B1_T8K_D2K\\), so the benchmark never runs it; name one of those\$"
t_exit "  verify is refused meanwhile" 3 "$OPTLOOP" --op parallel_ds verify
"$OPTLOOP" --op parallel_ds contract --set "target=l32_b1_t8k_d2k >= 1.2x" >/dev/null
out=$("$OPTLOOP" --op parallel_ds contract --check 2>&1); rc=$?
t_is "  a name in the wrong case fails the check" "$rc" 1
t_like "  with the name meant" "$out" 'l32_b1_t8k_d2k names none .*\(did you mean L32_B1_T8K_D2K\?\)'
"$OPTLOOP" --op chunk_delta contract --set "target=B4_T4096_H64_D128_X9 >= 1.2x" >/dev/null
out=$("$OPTLOOP" --op chunk_delta contract --check 2>&1); rc=$?
t_is "a name with a part no shape has fails the check" "$rc" 1
t_like "  naming the op's shapes and the one meant" "$out" \
	'B4_T4096_H64_D128_X9 names none of chunk_delta.s benchmark shapes \(SHAPE_CONFIGS in benchmarks/ops/registry.py: B4_T2048_H16_D128, B4_T4096_H64_D128\).*did you mean B4_T4096_H64_D128\?'
out=$("$OPTLOOP" --op chunk_delta contract --set "target=B4_T4096_H64_D128 >= 0.9x" 2>&1); rc=$?
t_is "a Target below 1x is refused when set (exit 2)" "$rc" 2
t_like "  saying it is no speedup" "$out" 'asks for 0.9x, which is no speedup'
sed -i 's/^B4_T4096_H64_D128_X9 >= 1.2x$/every shape >= 0.95x/' profile/chunk_delta-opt/docs/draft.md
out=$("$OPTLOOP" --op chunk_delta contract --check 2>&1); rc=$?
t_is "  and written by hand it fails the check" "$rc" 1
t_like "  saying so" "$out" 'Target: the contract.s Target \("every shape >= 0.95x"\) asks for 0.95x, which is no speedup'

# backends the op's kernels dispatch to (@dispatch): named at init and
# frozen, as the benchmark may run them in place of the op's code; the Env
# line says when this machine would
out=$("$OPTLOOP" init --op chunk_bk --verify 'cat "$REPLAY_LOG"; exit 0' 2>&1); rc=$?
t_is "an op whose kernels dispatch to backends: init succeeds" "$rc" 0
t_like "  naming its own backend, what it needs and what dispatches to it" "$out" \
	"backend fla/ops/bk/backends/tilelang \\(tilelang, when tilelang is installed; FLA_TILELANG\\) can replace code of fla/ops/bk/chunk.py \\(@dispatch\\('bk'\\)\\): frozen, as the benchmark may run it in place of the op's code"
t_like "  and the common one, reached through a common kernel, on Hopper" "$out" \
	"backend fla/ops/common/backends/tilelang \\(tilelang, when tilelang is installed, on Hopper; FLA_TILELANG\\) can replace code of fla/ops/common/chunk_bwd.py \\(@dispatch\\('common'\\)\\): frozen.*add --kernel fla/ops/common/backends/tilelang to the op's kernel files"
t_like "  both frozen, with their registries" "$(frozen chunk_bk)" \
	' fla/ops/bk/backends/tilelang fla/ops/bk/backends/__init__.py fla/ops/bk/backends/triton_ascend fla/ops/common/backends/tilelang fla/ops/common/backends/__init__.py$'
t_like "  an Ascend NPU backend frozen on one line" "$out" \
	'^frozen: fla/ops/bk/backends/triton_ascend: Ascend NPU backends of the same dispatches \(never run on an NVIDIA GPU\)$'
t_like "  the registries on one line" "$out" \
	'^frozen: fla/ops/bk/backends/__init__.py, fla/ops/common/backends/__init__.py: the registries that pick among those backends$'
t_unlike "  and in no kernel" "$("$OPTLOOP" --op chunk_bk status --json)" '"fla/ops/[a-z]*/backends/tilelang",?$.*"frozen"'
"$OPTLOOP" --op chunk_bk contract --set "target=every shape >= 1.1x" --set languages=Triton \
	--set "promotion=full gate" >/dev/null
sed 's/^\(  Correctness gate: .*\) (-k .*)$/\1 (full)/' \
	"$OPTLOOP_ROOT/tests/fixtures/fla-h200-session/small-shapes/trace/iter-0.log" >"$T_TMP/h200.log"
REPLAY_LOG="$T_TMP/h200.log" "$OPTLOOP" --op chunk_bk verify >/dev/null 2>&1
"$OPTLOOP" --op chunk_bk log --direction baseline >/dev/null
t_like "the Env line says when an H200 would dispatch to them" \
	"$(grep '^Env:' profile/chunk_bk-opt/OPT_LOG.md)" \
	'^Env: NVIDIA H200 .* main\[c33b68f\] \| may dispatch to fla/ops/bk/backends/tilelang if tilelang is installed \(FLA_TILELANG=0 turns it off\); fla/ops/common/backends/tilelang if tilelang is installed \(this GPU is Hopper, which its dispatch asks for; FLA_TILELANG=0 turns it off\)$'
rm -rf profile/chunk_bk-opt
out=$("$OPTLOOP" init --op chunk_bk --kernel fla/ops/bk/chunk.py --kernel fla/ops/common/backends/tilelang 2>&1); rc=$?
t_is "--kernel naming a backend: init succeeds" "$rc" 0
t_like "  it is a kernel file" "$out" 'backend fla/ops/common/backends/tilelang .*: a kernel file'
t_unlike "  not frozen" "$(frozen chunk_bk)" 'common/backends/tilelang'
t_like "  its registry still is" "$(frozen chunk_bk)" 'fla/ops/common/backends/__init__.py'
t_unlike "an op that dispatches nowhere names no backend" "$("$OPTLOOP" init --op chunk_rwkv 2>&1)" 'backend'

t_done
