# kernelbench — a KernelBench-style evaluation that prints one key per line:
#   COMPILED: True
#   CORRECT: True
#   RUNTIME: 0.412 ms
#   REF_RUNTIME: 0.951 ms
#   SPEEDUP: 2.31x
# There is no banner: a CORRECT line judges the whole problem, so the scope is full.
# Format: assets/patterns/README.md.
@name kernelbench
@description KernelBench-style COMPILED/CORRECT/RUNTIME/REF_RUNTIME/SPEEDUP lines
@default_scope full

fail       ^\s*COMPILED:\s*(?i:false|no|0)\b
ignore     ^\s*COMPILED:
pass       ^\s*CORRECT:\s*(?i:true|yes|1)\b
fail       ^\s*CORRECT:\s*(?i:false|no|0)\b
field      ^\s*REF_RUNTIME:\s*(?<base_ms>[-+]?\d*\.?\d+(?:[eE][-+]?\d+)?)\s*(?:ms)?\s*$
field      ^\s*RUNTIME:\s*(?<new_ms>[-+]?\d*\.?\d+(?:[eE][-+]?\d+)?)\s*(?:ms)?\s*$
field      ^\s*SPEEDUP:\s*(?<speedup>[-+]?\d*\.?\d+(?:[eE][-+]?\d+)?)\s*x?\s*$
traceback  ^Traceback \(most recent call last\):
warning    ^\s*(?:WARNING|Warning):?\s+(?<msg>.*?)\s*$
