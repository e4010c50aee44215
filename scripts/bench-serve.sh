#!/usr/bin/env bash
# Benchmark `evalctl serve` on loopback: 1-test-case POST /evaluate requests over keep-alive
# from oha (cargo install oha) or wrk (apt-get install wrk), 32 connections, 20 s; then one
# 100,000-case request timed end to end. Release build (EVALCTL_BIN=path: use that binary, no
# build, e.g. to run an older one back to back); a throw-away database.
# Usage: scripts/bench-serve.sh [SECONDS]
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
seconds="${1:-20}"
bin="${EVALCTL_BIN:-$root/target/release/evalctl}"
[ -n "${EVALCTL_BIN:-}" ] || cargo build --release --quiet --manifest-path "$root/Cargo.toml"
work="$(mktemp -d)"
trap 'kill "$server" 2>/dev/null; wait "$server" 2>/dev/null; rm -rf "$work"' EXIT
"$bin" serve --listen 127.0.0.1:0 --grpc-listen 127.0.0.1:0 \
  --db "$work/serve.db" 2>"$work/stderr" &
server=$!
for _ in $(seq 100); do grep -q '^REST listening' "$work/stderr" && break; sleep 0.1; done
base="$(sed -n 's/^REST listening on //p' "$work/stderr")"
one='{"test_cases":[{"id":"t1","input":"What is the capital of France?","expected":"Paris"}],"outputs":[{"value":"Paris"}],"checks":[{"type":"exact_match","arguments":{"actual":"$.output.value","expected":"$.test_case.expected"}}]}'
if command -v oha >/dev/null; then
  oha -z "${seconds}s" -c 32 --no-tui -m POST -H 'Content-Type: application/json' -d "$one" "$base/evaluate"
elif command -v wrk >/dev/null; then
  printf 'wrk.method = "POST"\nwrk.body = [[%s]]\nwrk.headers["Content-Type"] = "application/json"\n' "$one" > "$work/post.lua"
  wrk -t 2 -c 32 -d "${seconds}s" --latency -s "$work/post.lua" "$base/evaluate"
else
  echo "neither oha nor wrk is installed (cargo install oha, or apt-get install wrk)" >&2
  exit 2
fi
python3 - "$work/big.json" <<'PY'
import json, sys
n = 100_000
json.dump({"test_cases": [{"id": f"t{i}", "input": "q", "expected": "Paris"} for i in range(n)],
           "outputs": [{"value": "Paris" if i % 2 else "Lyon"} for i in range(n)],
           "checks": [{"type": "exact_match", "arguments": {"actual": "$.output.value", "expected": "$.test_case.expected"}}]},
          open(sys.argv[1], "w"))
PY
start=$(date +%s.%N)
curl -sf -o /dev/null -H 'Content-Type: application/json' --data-binary @"$work/big.json" "$base/evaluate"
end=$(date +%s.%N)
python3 -c "s=$end-$start; print(f'100,000-case request: {s:.2f} s, {100000/s:,.0f} cases/s')"
