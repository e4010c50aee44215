#!/usr/bin/env bash
# Benchmark `evalctl fep evaluate` end to end (read + parse, evaluate, serialise to a file) over
# 10,000 and 100,000 test cases with the four standard checks, every text/value argument a
# JSONPath. Runs the request mode and the streaming JSONL mode, on one core (taskset), and prints
# test cases per second and the time per case (equal times per case = linear).
#
# Usage: scripts/bench-fep.sh [SIZES...]   (default: 10000 100000; needs a release build:
#        cargo build --release). BENCH_DIR=DIR keeps the generated inputs there.
set -euo pipefail
cd "$(dirname "$0")/.."
bin=${EVALCTL:-target/release/evalctl}
[ -x "$bin" ] || { echo "error: $bin not found: run cargo build --release first" >&2; exit 2; }
sizes=("$@"); [ ${#sizes[@]} -gt 0 ] || sizes=(10000 100000)
if [ -n "${BENCH_DIR:-}" ]; then work=$BENCH_DIR; mkdir -p "$work"   # kept, for profiling
else work=$(mktemp -d); trap 'rm -rf "$work"' EXIT; fi
pin=(); command -v taskset >/dev/null && pin=(taskset -c 0)

cat >"$work/checks.json" <<'JSON'
{"checks": [
  {"type": "exact_match", "arguments": {"actual": "$.output.value.answer", "expected": "$.test_case.expected", "case_sensitive": false}},
  {"type": "contains", "arguments": {"text": "$.output.value.answer", "phrases": "$.test_case.metadata.phrases"}},
  {"type": "regex", "arguments": {"text": "$.output.value.answer", "pattern": "^[A-Z][a-z]+$"}},
  {"type": "threshold", "arguments": {"value": "$.output.value.confidence", "min_value": "$.test_case.metadata.min_confidence", "max_value": 1.0}}
]}
JSON

generate() { # N -> tc.jsonl, out.jsonl, request.json
  python3 - "$1" "$work" <<'PY'
import json, sys
n, work = int(sys.argv[1]), sys.argv[2]
cities = ["Paris", "Rome", "Madrid", "Berlin", "Tokyo", "Lisbon", "Vienna", "Oslo"]
with open(f"{work}/tc.jsonl", "w") as tc, open(f"{work}/out.jsonl", "w") as out:
    for i in range(n):
        city = cities[i % len(cities)]
        tc.write(json.dumps({"id": f"case-{i}", "input": f"What is the capital of country {i}?",
                             "expected": city,
                             "metadata": {"phrases": [city[:3]], "min_confidence": 0.5}}) + "\n")
        answer = city if i % 3 else city.lower()
        out.write(json.dumps({"value": {"answer": answer, "confidence": (i % 100) / 100}}) + "\n")
checks = json.load(open(f"{work}/checks.json"))["checks"]
with open(f"{work}/request.json", "w") as req:
    req.write('{"test_cases": [')
    req.write(",".join(open(f"{work}/tc.jsonl").read().split("\n")[:-1]))
    req.write('], "outputs": [')
    req.write(",".join(open(f"{work}/out.jsonl").read().split("\n")[:-1]))
    req.write('], "checks": ' + json.dumps(checks) + "}")
PY
}

measure() { # LABEL N CMD... -> one line: wall time, and CPU time (user + sys: less noisy on a
  local label=$1 n=$2; shift 2 # busy machine)
  local start end cpu
  start=$(date +%s%N)
  /usr/bin/time -o "$work/cpu" -f "%U %S" "${pin[@]}" "$@" >"$work/result.json" || [ $? -eq 1 ]
  cpu=$(tail -1 "$work/cpu")
  end=$(date +%s%N)
  awk -v l="$label" -v n="$n" -v ns=$((end - start)) -v cpu="$cpu" -v bytes="$(wc -c <"$work/result.json")" 'BEGIN {
    split(cpu, t, " "); c = t[1] + t[2]; s = ns / 1e9
    printf "%-8s %7d cases  wall %6.3f s %8.0f cases/s  cpu %6.3f s %8.0f cases/s %6.2f us/case  %6.1f MB out\n",
      l, n, s, n / s, c, n / c, c * 1e6 / n, bytes / 1e6 }'
}

for n in "${sizes[@]}"; do
  generate "$n"
  measure request "$n" "$bin" fep evaluate "$work/request.json"
  measure stream "$n" "$bin" fep evaluate --test-cases "$work/tc.jsonl" --outputs "$work/out.jsonl" --checks "$work/checks.json"
done
