#!/usr/bin/env bash
# The noise dataset and the short session recorded on an NVIDIA H200
# (tests/fixtures/fla-h200-noise/ by tests/device/noise.sh and base_ref.sh,
# tests/fixtures/fla-h200-session2/ by tests/device/session2.sh), replayed on
# a machine without a GPU:
#   1. every benchmark process's raw log through `optloop parse` gives the
#      median runs.tsv recorded for it, on the shape runs.tsv names, and
#      agrees with the --json that process wrote (median, p20, p80); the
#      dataset has what it promises (>= 8 unchanged-kernel runs per shape,
#      >= 4 interleaved pairs per shape, the two kernels told apart by the
#      tree's git label);
#   2. FLA's --base REF mode: with PYTHONPATH set, the "old" column read the
#      current tree (the normalize kernel's times, not the unchanged one's);
#      without it, the old column is missing;
#   3. the session: every stored run's raw log through `optloop parse`
#      against the medians, geomean and gate in its database, its OPT_LOG.md
#      through `optloop import`, and the session once more through the
#      engine on the recorded output (full-gate baseline, iteration 1, its
#      confirm fast, keep accepted).
. "$(dirname "$0")/lib.sh"
nfx="$OPTLOOP_ROOT/tests/fixtures/fla-h200-noise"
sfx="$OPTLOOP_ROOT/tests/fixtures/fla-h200-session2"
export NFX="$nfx" SFX="$sfx"

# ---- 1. the noise dataset ----
out=$(python3 - "$OPTLOOP" <<'PY'
import csv, json, os, subprocess, sys
fx = os.environ["NFX"]
rows = list(csv.DictReader(open(os.path.join(fx, "runs.tsv")), delimiter="\t"))
for r in rows:
    log = os.path.join(fx, r["log"])
    j = json.loads(subprocess.run([sys.argv[1], "parse", log, "--json", "--exit-status", r["exit"]],
                                  capture_output=True, text=True).stdout)
    ok = len(j["rows"]) == 1 and j["complete"] and j["gate"] == "none"
    if ok:
        p = j["rows"][0]
        key = " ".join([p["mode"]] + [f"{a}={p[a]}" for a in "BTHD"] + [p["op"]])
        ok = key == r["shape"] and p["new_ms"] == float(r["median_ms"]) and p["base_ms"] is None
        res = json.load(open(os.path.join(fx, "json", os.path.basename(log)[:-4] + ".json")))["results"]
        ok = ok and len(res) == 1 and round(res[0]["median_ms"], 3) == p["new_ms"]
        ok = ok and all(repr(res[0][k]) == r[k2] for k, k2 in
                        (("median_ms", "median_json_ms"), ("p20_ms", "p20_ms"), ("p80_ms", "p80_ms")))
        ok = ok and res[0]["p20_ms"] <= res[0]["median_ms"] <= res[0]["p80_ms"]
        label = j["columns"]["new"]
        ok = ok and j["env"]["device"] == "NVIDIA H200"
        print(f"label {r['kernel']} {label}")
    print(f"{'ok' if ok else 'MISMATCH'} seq {r['seq']} {r['kernel']} {r['shape']} {r['median_ms']}")
logs = sorted(os.listdir(os.path.join(fx, "logs")))
print("logs-listed", logs == sorted(os.path.basename(r["log"]) for r in rows))
for s in sorted({r["shape"] for r in rows}):
    base = sum(1 for r in rows if r["shape"] == s and r["kernel"] == "base")
    rounds = {}
    for r in rows:
        if r["shape"] == s:
            rounds.setdefault(r["round"], []).append(r["kernel"])
    pairs = sum(1 for k in rounds.values() if k == ["base", "norm"])
    print(f"count {s}: base {base >= 8} pairs {pairs >= 4}")
PY
)
t_is "every process of runs.tsv was replayed" "$(printf '%s\n' "$out" | grep -c ' seq ')" 48
t_unlike "each raw log parses to its recorded median, shape, --json median/p20/p80" "$out" MISMATCH
t_is "every raw log is in runs.tsv" "$(printf '%s\n' "$out" | grep logs-listed)" "logs-listed True"
t_is "three shapes, each with >= 8 unchanged runs and >= 4 interleaved pairs" \
	"$(printf '%s\n' "$out" | grep -c 'count .*: base True pairs True')" 3
t_is "the two kernels are two trees, told apart by their git labels" \
	"$(printf '%s\n' "$out" | grep '^label' | sort -u)" "label base main[eca5307]
label norm main[7a706f1]"
t_is "the summary script reads runs.tsv" \
	"$(python3 "$OPTLOOP_ROOT/tests/device/noise_summary.py" "$nfx/runs.tsv" | grep -c '^| fwd B=')" 6

# ---- 2. FLA's --base REF on a machine with no network ----
j=$("$OPTLOOP" parse "$nfx/base-ref/pythonpath.log" --exit-status 0 --json)
got=$(printf '%s' "$j" | python3 -c 'import json,sys
j=json.load(sys.stdin)
print(j["columns"]["base"], j["columns"]["new"])
for r in j["rows"]:
    if r["B"] in (8, 16):
        print(r["B"], abs(r["base_ms"] / r["new_ms"] - 1) < 0.01, r["base_ms"] < 1.0 if r["B"] == 8 else r["base_ms"] < 1.85)')
t_is "--base with PYTHONPATH: the old column is the current tree's kernel (within 1 %, below the unchanged 1.034 / 1.913 ms)" \
	"$got" "HEAD[eca5307] norm[05e8fe6]
8 True True
16 True True"
j=$("$OPTLOOP" parse "$nfx/base-ref/no-pythonpath.log" --exit-status 0 --json)
t_is "--base without PYTHONPATH: no old column" \
	"$(printf '%s' "$j" | python3 -c 'import json,sys; j=json.load(sys.stdin); print(j["columns"]["base"], len(j["rows"]))')" "None 3"
t_like "... because the worktree's run.py could not import fla" "$(cat "$nfx/base-ref/no-pythonpath.log")" \
	"ModuleNotFoundError: No module named 'fla'"

# ---- 3. the session ----
out=$(python3 - "$OPTLOOP" <<'PY'
import json, math, os, subprocess, sys
fx = os.environ["SFX"]
tables = json.load(open(os.path.join(fx, "export.json")))["tables"]
samples = {}
for s in tables["samples"]:
    samples.setdefault(s["run_id"], []).append(s)
for run in tables["runs"]:
    name = run["log_path"].rsplit("/", 1)[1]
    j = json.loads(subprocess.run([sys.argv[1], "parse", os.path.join(fx, "trace", name), "--json",
                                   "--exit-status", str(run["exit_status"])],
                                  capture_output=True, text=True).stdout)
    got = sorted((r["B"], r["T"], r["H"], r["D"], r["new_ms"]) for r in j["rows"])
    want = sorted((s["B"], s["T"], s["H"], s["D"], s["new_ms"]) for s in samples.get(run["id"], []))
    ok = got == want and len(got) == 2
    g = math.exp(sum(math.log(r[4]) for r in got) / len(got))
    ok = ok and abs(g - run["bench_ms"]) < 1e-6
    gate = ["none", "pass", "fail", "error", "incomplete", "unverified"][run["gate"]]
    ok = ok and j["gate"] == gate
    print(f"{'ok' if ok else 'MISMATCH'} run {run['id']} iter {run['iter']} {run['kind']} {name} "
          f"gate={j['gate']} scope={j['gate_scope']}")
PY
)
t_is "every stored session run was replayed" "$(printf '%s\n' "$out" | wc -l)" 8
t_unlike "each session log parses to the database's medians, geomean and gate" "$out" MISMATCH
t_like "the baseline ran the full gate" "$out" 'run 1 iter 0 verify iter-0.log gate=pass scope=full'
t_like "iteration 1 ran a -k subset" "$out" 'run 2 iter 1 verify iter-1.log gate=pass scope=subset'
j=$("$OPTLOOP" import "$sfx/OPT_LOG.md" --json)
t_is "import: the two rows" "$(printf '%s' "$j" | python3 -c 'import json,sys
for r in json.load(sys.stdin)["rows"]:
    print(r["iter"], r["status"], r["bench_ms"], r["gate"])')" "0 base 1.415 pass
1 keep 1.318 pass (-k)"
t_is "the device's confirm: fast, 3 pairs, promoted" \
	"$(python3 -c 'import json,sys; j=json.load(open(sys.argv[1])); print(j["verdict"], j["pairs"], j["runs"], j["promoted"])' "$sfx/confirm-json/it1-norm-scale.confirm.json")" \
	"fast 3 6 True"

# The engine again on the recorded output.
repo="$T_TMP/fla"
mkdir -p "$repo/fla/ops/common" "$repo/fla/ops/linear_attn" "$repo/tests/ops"
cd "$repo" || exit 1
git init -q
echo "num_stages = 3" >fla/ops/common/chunk_o.py
echo "stages = [2, 3, 4]" >fla/ops/common/chunk_h.py
echo "denom = (q * scale * k_cum).sum(-1, keepdim=True) + 1e-10" >fla/ops/linear_attn/utils.py
echo "def test_normalize_grad(): pass" >tests/ops/test_linear_attn.py
echo "def naive(): pass" >fla/ops/linear_attn/naive.py
git add -A && git commit -qm upstream
# The probe prints the device's idle reading taken before the session.
sed -n '1,2p' "$sfx/probe-idle.csv" >"$T_TMP/idle.csv"
printf '#!/bin/sh\ncat "%s"\n' "$T_TMP/idle.csv" >"$T_TMP/smi"
cat >"$T_TMP/bench" <<EOF
#!/bin/sh
n=\$(cat "$T_TMP/next"); echo \$((n + 1)) >"$T_TMP/next"
f=\$(sed -n "\${n}p" "$T_TMP/confirm-logs")
[ -n "\$f" ] || { echo "no more recorded confirm runs" >&2; exit 1; }
cat "$sfx/trace/\$f"
EOF
chmod +x "$T_TMP/smi" "$T_TMP/bench"
export OPTLOOP_PROBE="$T_TMP/smi" OPTLOOP_PROBE_APPS=true OPTLOOP_PROBE_SETTLE=0.2
"$OPTLOOP" init --op chunk_linear_attn --kernel fla/ops/common/chunk_o.py \
	--kernel fla/ops/common/chunk_h.py --kernel fla/ops/linear_attn/utils.py \
	--test-file tests/ops/test_linear_attn.py --naive fla/ops/linear_attn/naive.py \
	--verify 'cat "$REPLAY_LOG"; exit 0' >/dev/null
"$OPTLOOP" contract --set "target=chunk_linear_attn fwd, shapes B8-T8192-H16-D64 and B16-T4096-H32-D64 (bf16), >= 3 % geomean speedup" \
	--set "languages=Triton" --set "promotion=full gate" >/dev/null
jget() { python3 -c 'import json,sys
v=json.load(sys.stdin)
for k in sys.argv[1].split("."):
    v=v[int(k)] if isinstance(v,list) else v.get(k)
print("null" if v is None else v)' "$1"; }
j=$(REPLAY_LOG="$sfx/trace/iter-0.log" "$OPTLOOP" verify --json 2>/dev/null)
t_is "the device's full-gate baseline is the baseline (no attempt)" "$(printf '%s' "$j" | jget attempt)" False
t_is "baseline bench: the geomean the device stored" "$(printf '%s' "$j" | jget bench_ms)" 1.414920492
"$OPTLOOP" log --direction "baseline: upstream kernels unchanged" >/dev/null && "$OPTLOOP" commit >/dev/null
echo "denom = (q * k_cum).sum(-1, keepdim=True) * scale + 1e-10" >fla/ops/linear_attn/utils.py
j=$(REPLAY_LOG="$sfx/trace/iter-1.log" "$OPTLOOP" verify --json 2>/dev/null)
t_like "iteration 1: verify sees a possible win" "$(printf '%s' "$j" | jget verdict)" '^(fast|ambiguous)$'
printf '%s\n' confirm-1-run3.log confirm-1-run4.log confirm-1-run5.log confirm-1-run6.log \
	confirm-1-run7.log confirm-1-run8.log >"$T_TMP/confirm-logs"
echo 1 >"$T_TMP/next"
j=$("$OPTLOOP" confirm --max-pairs 3 --cmd "$T_TMP/bench" --json 2>/dev/null)
t_is "iteration 1's confirm on the recorded runs: fast" "$(printf '%s' "$j" | jget verdict)" fast
t_like "the win is the device's +6.3 %" "$(printf '%s' "$j" | jget vs_best)" '^0\.06(2|3|4)'
t_ok "keep is accepted" "$OPTLOOP" log --direction "normalize: scale the [B,T,H,1] dot product, not q" \
	--status keep --axis "memory traffic"
"$OPTLOOP" commit >/dev/null
t_is "iteration 1 is the best" "$("$OPTLOOP" status --json | jget best.iter)" 1
t_done
