# fla — flash-linear-attention's verify and run output
#   python -m benchmarks.ops.verify --op OP [--gate-k EXPR] [--base REF] [--no-gate]
#   python benchmarks/ops/run.py --op OP ...
# Also the demo project, which prints the same shapes of output.
# Format: assets/patterns/README.md.  First match wins, top to bottom.
@name fla
@description flash-linear-attention benchmarks/ops verify.py and run.py

# pytest's live log (INFO lines, section rules) is the bulk of a verify log:
# settle those lines first so they cost one cheap test each.
ignore       ^(?:INFO|DEBUG)\s
ignore       ^-{8,} (?:live log|Captured)

# Result tables: "fwd  B  T  H  D  op  main[ce250a9](ms) opt-a[35f8256](ms)  speedup",
# an optional L column before B, shape cells only on the first row of a group,
# "-" for a missing baseline cell.  Rows and rules count only inside a table.
table_header ^\s*(?<mode>[A-Za-z][\w-]*)\s+(?:(?<L>L)\s+)?B\s+T\s+H\s+D\s+op\b\s*(?<cols>.*?)\s*$
table_rule   ^\s*(?:={8,}|-{8,})\s*$
table_row    ^\s+(?<dims>(?:\d+|-)(?:\s+(?:\d+|-)){3,4})\s+(?<op>[A-Za-z_][\w.:/-]*)\s+(?<vals>(?:[-+]?[\d.]|-|inf|nan).*?)\s*$
table_row    ^\s+(?<op>[A-Za-z_][\w.:/-]*)\s+(?<vals>(?:[-+]?[\d.]|-|inf|nan).*?)\s*$

# "Machine: NVIDIA H200 | CUDA 13.0 | PyTorch 2.11.0+cu130 | Triton 3.6.0 | opt-a[35f8256]"
# The first field is the device; the others are recognised by the env.* roles.
env          ^\s*Machine:\s*(?<fields>.*?)\s*$
env.backend  ^(?<v>(?:CUDA|ROCm|HIP|NPU|CPU|XPU|MPS|MUSA|MLU)\b.*)$
env.pytorch  ^PyTorch\s+(?<v>\S+)
env.triton   ^Triton\s+(?<v>\S+)
env.label    ^(?<branch>[^\s\[\]]+)\[(?<sha>[0-9A-Za-z]{4,40})\]$

# The gate.
banner       ^\s*Correctness gate:\s*(?<test>\S+)\s+\((?:full|-k\s+(?<k>.*))\)\s*$
pass         ^\s*GATE PASSED\b
fail         ^\s*GATE FAILED\b
missing      ^\s*Gate test not found\b
nogate       ^\s*\*+\s*(?<msg>WARNING:\s*--no-gate\b.*?)\s*\**\s*$

# pytest: one test per line (-v, or the outcome alone after live logs),
# -q dots, and the closing summary.
case         ^(?<name>[^\s:]+::\S+)\s+(?<outcome>PASSED|FAILED|ERROR|SKIPPED|XFAIL|XPASS)\b(?:.*\[\s*(?<pct>\d+)%\])?
case         ^(?<outcome>PASSED|FAILED|ERROR|SKIPPED|XFAIL|XPASS)\s+\[\s*(?<pct>\d+)%\]\s*$
# pytest-xdist's workers (-n N): "[gw3] [ 42%] PASSED tests/ops/test_x.py::test_y[...]"
case         ^\[gw\d+\]\s+\[\s*(?<pct>\d+)%\]\s+(?<outcome>PASSED|FAILED|ERROR|SKIPPED|XFAIL|XPASS)\s+(?<name>[^\s:]+::\S+)
dots         ^(?:\S+\.py\s+)?(?<dots>[.FEsxX]+)\s+\[\s*(?<pct>\d+)%\]\s*$
summary      ^=*\s*(?<counts>(?:\d+ [a-z]+)(?:, \d+ [a-z]+)*|no tests ran) in [\d.]+s\b

traceback    ^Traceback \(most recent call last\):

# Benchmark phases, shown beside the progress bar while the run goes:
# "  [chunk_linear_attn] Warming up 6 shape(s)...", "  [chunk_linear_attn] Warmup done.",
# "  Benchmarking at 'main' (via git worktree)...".
stage        ^\s*\[[\w.-]+\]\s+(?<stage>Warming up \d+ shape\S*|Warmup done)
stage        ^\s*(?<stage>Benchmarking at '[^']*')

# Harness warnings (Python's logging prints "WARNING:logger:msg", pytest's live log
# "WARNING  logger:file.py:12 msg", or just msg).
warning      ^(?:(?:WARNING|ERROR)(?::[\w.]*:|\s+(?:[\w.]+:[\w.]+:\d+\s+)?))?\s*(?<msg>Failed to benchmark\b.*)$
warning      ^(?:(?:WARNING|ERROR)(?::[\w.]*:|\s+(?:[\w.]+:[\w.]+:\d+\s+)?))?\s*(?<msg>(?:Warmup|Bench|Input generation) failed for\b.*)$
warning      ^(?:(?:WARNING|ERROR)(?::[\w.]*:|\s+(?:[\w.]+:[\w.]+:\d+\s+)?))?\s*(?<msg>No compatible shapes for\b.*)$
warning      ^\s*(?<msg>No results to display\.)
