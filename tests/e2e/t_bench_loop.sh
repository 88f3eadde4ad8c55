#!/usr/bin/env bash
# The loop_commit benchmark (tests/bench/b_loop_commit.sh) still drives the
# loop to its end: it makes a change, verifies, logs and commits round after
# round through the CLI and the engine, beside plain git commits, and a rule
# the loop gains can stop it (a kernel change committed outside optloop
# once did, and the benchmark reported "engine failed" where no test
# looked).  Two rounds (a rule may stop the second); its times are make bench's, not checked here.
. "$(dirname "$0")/lib.sh"

out=$(LOOP_BENCH_ROUNDS=2 BENCH_TMP="$T_TMP" bash "$OPTLOOP_ROOT/tests/bench/b_loop_commit.sh" 2>&1); rc=$?
printf '%s\n' "$out" | sed 's/^/# /'
t_is "the benchmark ran to its end (exit 0)" "$rc" 0
t_like "  each form was timed" "$out" '^bench loop_commit_engine: median [0-9.]+ ms wall'
t_like "  and the summary line judged the target" "$(printf '%s\n' "$out" | tail -1)" \
	'^bench loop_commit: log --commit \(one process\) median [0-9.]+ ms, .* (PASS|MISS)$'
t_done
