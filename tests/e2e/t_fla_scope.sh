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

t_done
