#!/usr/bin/env bash
# The rate-limit benchmark: `evalctl tasks run` against a local OpenAI-compatible server that
# allows 1,200 requests a minute (scripts/fake-ratelimited-llm.py: a bucket of 20 refilled at
# 20/s, 429 with Retry-After, retry-after-ms and x-ratelimit-* headers beyond that, 100 ms per
# completion), 2,000 generations at -j 64 and the default --retries: the floor is
# 2,000 / 20 per second = 100 s. Reports the wall time against the floor, failed generations and
# the 429s the server sent; the target is within 1.05x the floor, no failed generation and fewer
# 429s than 10% of the completions.
# Usage: scripts/bench-ratelimit.sh [--quick]   (--quick: 400 generations, floor 20 s; it only
#        reports: its first contact, 64 requests at once to a bucket of 20 before any header
#        was read, draws 44 429s, too many for the target's 10% of 400)
#        EVALCTL=PATH benchmarks another binary (default: target/release/evalctl, else
#        target/debug/evalctl; pacing waits on timers, so a debug build measures the same).
#        Needs python3. Exits 1 when a target is missed.
set -euo pipefail
cd "$(dirname "$0")/.."
tasks=2000 concurrency=64 rpm=1200
[ "${1:-}" = "--quick" ] && tasks=400
bin=${EVALCTL:-target/release/evalctl}
[ -x "$bin" ] || bin=target/debug/evalctl
[ -x "$bin" ] || { echo "error: no evalctl binary: run cargo build first" >&2; exit 2; }
work=$(mktemp -d)
server_pid=
cleanup() { [ -n "$server_pid" ] && kill "$server_pid" 2>/dev/null; rm -rf "$work"; }
trap cleanup EXIT
python3 - "$work/tasks.jsonl" "$tasks" <<'PY'
import json, sys
with open(sys.argv[1], "w") as f:
    for i in range(int(sys.argv[2])):
        f.write(json.dumps({"task_id": f"t{i}", "category": "arithmetic", "prompt": f"Q: {i} + 1\nA:",
                            "targets": ["4"], "metric_name": "exact_match",
                            "post_process": "strip_whitespace"}) + "\n")
PY
python3 scripts/fake-ratelimited-llm.py --rpm "$rpm" >"$work/port" &
server_pid=$!
for _ in $(seq 100); do [ -s "$work/port" ] && break; sleep 0.05; done
port=$(head -1 "$work/port")
start=$(python3 -c 'import time; print(time.monotonic())')
set +e
BENCH_API_KEY=sk-bench "$bin" tasks run --no-config "$work/tasks.jsonl" --format json \
  --model bench/m --base-url "http://127.0.0.1:$port/v1" -j "$concurrency" >"$work/run.json" 2>"$work/stderr"
code=$?
set -e
python3 - "$work/run.json" "$start" "$tasks" "$rpm" "$code" "$port" "${1:-}" <<'PY'
import json, sys, time, urllib.request
run_file, start, tasks, rpm, code, port, mode = sys.argv[1:]
wall = time.monotonic() - float(start)
tasks, rpm = int(tasks), float(rpm)
floor = tasks / (rpm / 60)
stats = json.load(urllib.request.urlopen(f"http://127.0.0.1:{port}/stats"))
with open(run_file) as f:
    run = json.load(f)
failed = len(run["generation"]["failed"])
ok = wall <= 1.05 * floor and failed == 0 and stats["rejected"] < 0.1 * stats["completions"]
print(f"tasks run, {tasks} generations at -j 64, {rpm:.0f} requests/min: {wall:.1f} s "
      f"({wall / floor:.3f}x the {floor:.0f} s floor), exit {code}, {failed} failed, "
      f"{stats['completions']} completions, {stats['rejected']} 429s; "
      f"{'meets' if ok else 'MISSES'} the target (1.05x, 0 failed, 429s < 10% of completions)")
sys.exit(0 if ok or mode == "--quick" else 1)
PY
