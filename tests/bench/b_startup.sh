#!/usr/bin/env bash
# Start-up cost of the binary: the floor under every CLI step an agent takes.
# Target: a mean under 10 ms per `optloop version` over 200 runs.
set -u
n=200
start=$(date +%s%N)
for _ in $(seq $n); do "$OPTLOOP" version >/dev/null; done
end=$(date +%s%N)
us=$(( (end - start) / n / 1000 ))
verdict=PASS; [ "$us" -lt 10000 ] || verdict=MISS
echo "bench startup: $us us per 'optloop version' over $n runs [target < 10000 us] $verdict"
