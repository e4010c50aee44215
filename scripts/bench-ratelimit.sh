#!/usr/bin/env bash
# The rate-limit benchmark: 2,000 generations at 64 in flight against a local OpenAI-compatible
# server that allows 1,200 requests a minute (scripts/fake-ratelimited-llm.py: a bucket of 20
# refilled at 20/s, 429 with Retry-After, retry-after-ms and x-ratelimit-* headers beyond that,
# 100 ms per completion), at the default --retries: the floor is 2,000 / 20 per second = 100 s.
# Each workload gets a server of its own. Reports the wall time against the floor, failed
# generations and the 429s the server sent; evalctl's target is within 1.05x the floor, no failed
# generation and fewer 429s than 10% of the completions.
# Workloads (each flag adds its own; no flag: --tasks and --generate):
#   --tasks       `evalctl tasks run` of 2,000 tasks at -j 64
#   --generate    `evalctl run --generate` of one candidate prompt over a 2,000-example dataset,
#                 one task model, the built-in checks as evaluator, -j 64
#   --promptfoo   the same workload through promptfoo (its openai provider, maxConcurrency 64)
#   --inspect-ai  and through inspect_ai (--model openai/... -M responses_api=false, adaptive
#                 connections up to 64), and again with a fixed --max-connections 64
#   --compare     all of the above, side by side
# promptfoo and inspect_ai run at their defaults otherwise; they are installed into BENCH_TOOLS
# (default /tmp/evalctl-bench-tools) when missing (needs npm and network access); their rows
# only report. CI never runs them.
# Usage: scripts/bench-ratelimit.sh [--quick] [--silent] [--tasks] [--generate] [--promptfoo] [--inspect-ai] [--compare]
#        --quick: 400 generations, floor 20 s; it only reports: its first contact, 64 requests at
#        once to a bucket of 20 before any header was read, draws about 44 429s, too many for the
#        target's 10% of 400.
#        --silent: the server says nothing of its limit (a bare 429, no x-ratelimit-* header), and
#        the target is no failed generation alone (evalctl waits out such 429s one second at a
#        time, so the time and the 429s only report).
#        EVALCTL=PATH benchmarks another binary (default: target/release/evalctl, else
#        target/debug/evalctl; pacing waits on timers, so a debug build measures the same).
#        Needs python3. Exits 1 when an evalctl workload misses a target.
set -euo pipefail
cd "$(dirname "$0")/.."
tasks=2000 concurrency=64 rpm=1200 quick= silent= workloads=
for arg; do
  case $arg in
    --quick) tasks=400 quick=1 ;;
    --silent) silent=--silent ;;
    --tasks) workloads+=" tasks" ;;
    --generate) workloads+=" generate" ;;
    --promptfoo) workloads+=" promptfoo" ;;
    --inspect-ai) workloads+=" inspect_ai inspect_ai_fixed" ;;
    --compare) workloads+=" tasks generate promptfoo inspect_ai inspect_ai_fixed" ;;
    *) echo "usage: scripts/bench-ratelimit.sh [--quick] [--silent] [--tasks] [--generate] [--promptfoo] [--inspect-ai] [--compare]" >&2
       exit 2 ;;
  esac
done
[ -n "$workloads" ] || workloads="tasks generate"
bin=${EVALCTL:-target/release/evalctl}
[ -x "$bin" ] || bin=target/debug/evalctl
[ -x "$bin" ] || { echo "error: no evalctl binary: run cargo build first" >&2; exit 2; }
tools=${BENCH_TOOLS:-/tmp/evalctl-bench-tools}
work=$(mktemp -d)
server_pid=
cleanup() { [ -n "$server_pid" ] && kill "$server_pid" 2>/dev/null; rm -rf "$work"; }
trap cleanup EXIT

# The workload's inputs, in each tool's format: the same 2,000 questions, each answered "4".
python3 - "$work" "$tasks" "$concurrency" <<'PY'
import json, sys
work, count, concurrency = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
questions = [f"Q: {i} + 1\nA:" for i in range(count)]
with open(f"{work}/tasks.jsonl", "w") as f:
    for i, q in enumerate(questions):
        f.write(json.dumps({"task_id": f"t{i}", "category": "arithmetic", "prompt": q, "targets": ["4"],
                            "metric_name": "exact_match", "post_process": "strip_whitespace"}) + "\n")
with open(f"{work}/dataset.jsonl", "w") as f:
    for i, q in enumerate(questions):
        f.write(json.dumps({"id": f"t{i}", "question": q, "expected": "4"}) + "\n")
with open(f"{work}/prompt.txt", "w") as f:
    f.write("{{question}}")
with open(f"{work}/checks.json", "w") as f:
    json.dump({"checks": [{"type": "exact_match", "arguments": {
        "actual": "$.output.value", "expected": "$.test_case.expected"}}]}, f)
# promptfoo: one prompt, one test per question with an `equals` assertion (JSON is YAML).
with open(f"{work}/promptfooconfig.yaml", "w") as f:
    json.dump({"prompts": ["{{question}}"],
               "providers": [{"id": "openai:chat:bench-m", "config": {"apiBaseUrl": "PROVIDER_BASE_URL"}}],
               "defaultTest": {"assert": [{"type": "equals", "value": "4"}]},
               "tests": [{"vars": {"question": q}} for q in questions],
               "evaluateOptions": {"maxConcurrency": concurrency}}, f)
# inspect_ai: a task of generate() and match().
with open(f"{work}/samples.jsonl", "w") as f:
    for i, q in enumerate(questions):
        f.write(json.dumps({"id": f"t{i}", "input": q, "target": "4"}) + "\n")
with open(f"{work}/bench_task.py", "w") as f:
    f.write("from inspect_ai import Task, task\n"
            "from inspect_ai.dataset import json_dataset\n"
            "from inspect_ai.scorer import match\n"
            "from inspect_ai.solver import generate\n\n\n"
            "@task\n"
            "def bench():\n"
            f"    return Task(dataset=json_dataset({work + '/samples.jsonl'!r}), solver=generate(), scorer=match())\n")
PY

# Install the tools --compare runs, when missing.
install_tools() {
  if [ ! -x "$tools/promptfoo/node_modules/.bin/promptfoo" ]; then
    echo "installing promptfoo into $tools/promptfoo" >&2
    mkdir -p "$tools/promptfoo"
    npm install --prefix "$tools/promptfoo" --no-audit --no-fund promptfoo >&2
  fi
  if [ ! -x "$tools/inspect/bin/inspect" ]; then
    echo "installing inspect_ai into $tools/inspect" >&2
    python3 -m venv "$tools/inspect"
    "$tools/inspect/bin/pip" install --quiet inspect_ai openai >&2
  fi
}
case $workloads in *promptfoo*|*inspect*) install_tools ;; esac

# Start a fresh server: $port.
serve() {
  [ -n "$server_pid" ] && kill "$server_pid" 2>/dev/null
  rm -f "$work/port"
  python3 scripts/fake-ratelimited-llm.py --rpm "$rpm" $silent >"$work/port" 2>>"$work/server.log" &
  server_pid=$!
  for _ in $(seq 100); do [ -s "$work/port" ] && break; sleep 0.05; done
  port=$(head -1 "$work/port")
}

# Run tool $1 against $2 (the base URL), its result in $work/$1.out and its stderr in $work/stderr.
launch() {
  local name=$1 base=$2 code
  case $name in
    tasks)
      BENCH_API_KEY=sk-bench "$bin" tasks run --no-config "$work/tasks.jsonl" --format json \
        --model bench/m --base-url "$base" -j "$concurrency" >"$work/$name.out" 2>"$work/stderr" ;;
    generate)
      BENCH_API_KEY=sk-bench "$bin" run --no-config --format json --generate --task-model bench/m \
        --task-base-url "$base" --dataset "$work/dataset.jsonl" --checks "$work/checks.json" \
        -j "$concurrency" "$work/prompt.txt" >"$work/$name.out" 2>"$work/stderr" ;;
    promptfoo)
      sed -i "s|PROVIDER_BASE_URL|$base|" "$work/promptfooconfig.yaml"
      (cd "$work" && OPENAI_API_KEY=sk-bench PROMPTFOO_DISABLE_TELEMETRY=1 PROMPTFOO_DISABLE_UPDATE=1 \
        PROMPTFOO_CONFIG_DIR="$work/promptfoo-home" \
        "$tools/promptfoo/node_modules/.bin/promptfoo" eval -c promptfooconfig.yaml --no-cache \
        --no-progress-bar --no-write --no-table -o "$name.out.json" >"$work/stderr" 2>&1)
      code=$?
      mv "$work/$name.out.json" "$work/$name.out" 2>/dev/null
      return $code ;;
    inspect_ai*)
      # The fake server speaks chat completions, not the Responses API inspect_ai uses by default.
      if [ "$name" = inspect_ai ]; then connections=(--adaptive-connections "$concurrency")
      else connections=(--max-connections "$concurrency"); fi
      (cd "$work" && OPENAI_API_KEY=sk-bench OPENAI_BASE_URL="$base" \
        "$tools/inspect/bin/inspect" eval bench_task.py --model openai/bench-m -M responses_api=false \
        "${connections[@]}" --log-dir inspect-logs --log-format json --display none >"$work/stderr" 2>&1)
      code=$?
      cp "$work"/inspect-logs/*.json "$work/$name.out" 2>/dev/null
      return $code ;;
  esac
}

# Run one workload against a fresh server and report it.
run_workload() {
  local name=$1
  serve
  rm -rf "$work/inspect-logs" "$work/$name.out"
  set +e
  TIMEFORMAT='%R %U %S'
  { time launch "$name" "http://127.0.0.1:$port/v1"; } 2>"$work/time"
  code=$?
  set -e
  python3 - "$name" "$work/$name.out" "$(cat "$work/time")" "$tasks" "$rpm" "$code" "$port" "$quick" \
    "$work/stderr" "$silent" <<'PY'
import json, sys, urllib.request
name, out, times, tasks, rpm, code, port, quick, stderr, silent = sys.argv[1:]
wall, user, system = map(float, times.split())
tasks, rpm = int(tasks), float(rpm)
floor = tasks / (rpm / 60)
stats = json.load(urllib.request.urlopen(f"http://127.0.0.1:{port}/stats"))
try:
    with open(out) as f:
        result = json.load(f)
except (OSError, ValueError):
    sys.stderr.write(open(stderr).read()[-3000:])
    print(f"{name}: no result (exit {code}), {stats['completions']} completions, {stats['rejected']} 429s")
    sys.exit(1)
if name == "tasks":
    label, failed = "tasks run", len(result["generation"]["failed"])
elif name == "generate":
    label, failed = "run --generate", result["calls"]["errors"]
elif name == "promptfoo":
    # A test whose provider call failed has an `error` and no output.
    rows = result["results"]["results"]
    label = "promptfoo"
    failed = tasks - sum(1 for row in rows if (row.get("response") or {}).get("output") is not None)
else:
    samples = result.get("samples") or []
    label = "inspect_ai" + (" (--max-connections 64)" if name.endswith("fixed") else
                            " (--adaptive-connections 64)")
    failed = tasks - sum(1 for s in samples if not s.get("error") and s.get("output", {}).get("choices"))
evalctl = name in ("tasks", "generate")
if silent:
    ok = failed == 0
    verdict = ("meets" if ok else "MISSES") + " the target of a silent limit (0 failed)"
else:
    ok = wall <= 1.05 * floor and failed == 0 and stats["rejected"] < 0.1 * stats["completions"]
    verdict = ("meets" if ok else "MISSES") + " the target (1.05x, 0 failed, 429s < 10% of completions)"
print(f"{label}, {tasks} generations, 64 in flight, {rpm:.0f} requests/min"
      f"{' (silent: bare 429s)' if silent else ''}: {wall:.1f} s "
      f"({wall / floor:.3f}x the {floor:.0f} s floor, {user + system:.1f} s CPU), exit {code}, {failed} failed, "
      f"{stats['completions']} completions, {stats['rejected']} 429s; "
      + (verdict if evalctl else "reported only"))
sys.exit(0 if ok or quick or not evalctl else 1)
PY
}

missed=0
for name in $workloads; do
  run_workload "$name" || missed=1
done
exit "$missed"
