#!/usr/bin/env bash
# Benchmarks of `tasks run`, as whole processes (scripts/timeit.py: median of
# BENCH_RUNS runs after a warm-up), with the release binary:
#   1. the 10 fixture tasks (two of them code_exec, so python3 runs five assertion scripts) with
#      the fixture model command, which answers at once (target: well under 1 s; the script
#      checks < 0.5 s);
#   2. 1,000 generated tasks with a 50 ms native model (scripts/bench-answerer.c) at -j 32,
#      against the ideal 1,000 x 50 ms / 32 = 1.5625 s (target: within 1.3x).
# Usage: cargo build --release && scripts/bench-tasks.sh   (needs cc and python3; EVALCTL=PATH
#        benchmarks another binary; BENCH_RUNS=N, default 5). Exits 1 when a target is missed.
set -euo pipefail
cd "$(dirname "$0")/.."
bin=$(realpath "${EVALCTL:-target/release/evalctl}")
[ -x "$bin" ] || { echo "error: $bin not found: run cargo build --release first" >&2; exit 2; }
runs=${BENCH_RUNS:-5}
work=$(mktemp -d); trap 'rm -rf "$work"' EXIT
cc -O2 -o "$work/answerer" scripts/bench-answerer.c
python3 - "$work/tasks.jsonl" <<'PY'
import json, sys
with open(sys.argv[1], "w") as f:
    for i in range(1000):
        f.write(json.dumps({"task_id": f"t{i}", "category": "arithmetic", "prompt": f"Q: {i} + 1\nA:",
                            "targets": ["1"], "metric_name": "exact_match",
                            "post_process": "strip_whitespace"}) + "\n")
PY
misses=0
measure() { # LIMIT_SECONDS LABEL COMMAND...
  local limit=$1 label=$2; shift 2
  local result; result=$(python3 scripts/timeit.py --json --runs "$runs" -- "$@")
  python3 - "$result" "$limit" "$label" <<'PY' || misses=$((misses + 1))
import json, sys
result, limit, label = json.loads(sys.argv[1]), float(sys.argv[2]), sys.argv[3]
ok = result["wall"] < limit
print(f"{label}: median {result['wall']:.3f} s (min {result['min']:.3f}, max {result['max']:.3f}), "
      f"cpu {result['cpu']:.3f} s; {'meets' if ok else 'MISSES'} < {limit:.3f} s")
sys.exit(0 if ok else 1)
PY
}
measure 0.5 "10 fixture tasks, instant model command" \
  "$bin" tasks run --no-config fixtures/tasks/tasks.jsonl --model-command "sh fixtures/tasks/model.sh" --format json
measure "$(python3 -c 'print(1.3 * 1000 * 0.05 / 32)')" "1,000 tasks, 50 ms model, -j 32 (ideal 1.563 s)" \
  "$bin" tasks run --no-config "$work/tasks.jsonl" --model-command "$work/answerer 50 1" -j 32 --format json
[ "$misses" -eq 0 ] || { echo "$misses target(s) missed"; exit 1; }
