#!/usr/bin/env bash
# Benchmark `evalctl fep evaluate` end to end (read + parse, evaluate, serialise to a file) over
# 10,000 and 100,000 test cases with the four standard checks, every text/value argument a
# JSONPath. Runs the request mode and the streaming JSONL mode and prints test cases per second,
# the time per case (equal times per case = linear) and whether each run meets its target; exits 1
# when one does not. Two measures:
#
#   scripts/bench-fep.sh               one core (taskset), CPU time (user + sys): the target is
#                                      BENCH_TARGET (default 100,000) test cases per second of CPU.
#   BENCH_WALL=1 scripts/bench-fep.sh  every core (fep evaluate runs a worker per core), the whole
#                                      process's wall time: the target is BENCH_TARGET (default
#                                      150,000) test cases per second of wall time.
#
# Usage: scripts/bench-fep.sh [SIZES...]   (default: 10000 100000; needs a release build:
#        cargo build --release). BENCH_DIR=DIR keeps the generated inputs there; BENCH_RUNS=N
#        (default 3; take more on a busy machine) takes the best of N runs; EVALCTL=PATH
#        benchmarks another binary (compare two binaries in turns on a shared machine).
set -euo pipefail
cd "$(dirname "$0")/.."
bin=${EVALCTL:-target/release/evalctl}
[ -x "$bin" ] || { echo "error: $bin not found: run cargo build --release first" >&2; exit 2; }
sizes=("$@"); [ ${#sizes[@]} -gt 0 ] || sizes=(10000 100000)
if [ -n "${BENCH_DIR:-}" ]; then work=$BENCH_DIR; mkdir -p "$work"   # kept, for profiling
else work=$(mktemp -d); trap 'rm -rf "$work"' EXIT; fi
wall=${BENCH_WALL:-}
pin=(); [ -z "$wall" ] && command -v taskset >/dev/null && pin=(taskset -c 0)

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

# Test cases per second: of CPU time on one core, or of wall time on every core.
if [ -n "$wall" ]; then target=${BENCH_TARGET:-150000}; measured=wall
else target=${BENCH_TARGET:-100000}; measured=cpu; fi
runs=${BENCH_RUNS:-3}            # each measurement is the best of this many runs
misses=0

measure() { # LABEL N CMD... -> one line: wall and CPU time (user + sys, from getrusage: less noisy
  local label=$1 n=$2; shift 2 # on a busy machine), best of $runs, and whether $measured meets $target
  python3 - "$label" "$n" "$runs" "$target" "$measured" "$work/result.json" "${pin[@]}" "$@" <<'PY' || misses=$((misses + 1))
import os, resource, subprocess, sys, time
label, n, runs, target, measured, out = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4]), sys.argv[5], sys.argv[6]
command = sys.argv[7:]
best = None
for _ in range(runs):
    if os.path.exists(out):
        os.remove(out)  # truncating the last run's output inside the timing would be counted
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    with open(out, "wb") as sink:
        code = subprocess.run(command, stdout=sink).returncode
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if code not in (0, 1):
        sys.exit(f"error: {label}: evalctl exited {code}")
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    best = (wall, cpu) if best is None else (min(best[0], wall), min(best[1], cpu))
wall, cpu = best
verdict = "meets" if n / (wall if measured == "wall" else cpu) >= target else "MISSES"
print(f"{label:<8} {n:7d} cases  wall {wall:6.3f} s {n / wall:8.0f} cases/s  cpu {cpu:6.3f} s "
      f"{n / cpu:8.0f} cases/s {cpu * 1e6 / n:6.2f} us/case  {os.path.getsize(out) / 1e6:6.1f} MB out  "
      f"{verdict} {target} cases/s ({measured})")
sys.exit(0 if verdict == "meets" else 1)
PY
}

for n in "${sizes[@]}"; do
  generate "$n"
  measure request "$n" "$bin" fep evaluate "$work/request.json"
  measure stream "$n" "$bin" fep evaluate --test-cases "$work/tc.jsonl" --outputs "$work/out.jsonl" --checks "$work/checks.json"
done
if [ "$misses" -gt 0 ]; then
  echo "$misses run(s) below the target of $target cases/s of $measured time"; exit 1
fi
echo "every run meets the target of $target cases/s of $measured time"
