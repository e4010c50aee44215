#!/usr/bin/env bash
# Benchmark `evalctl spec score` end to end (read + parse the runs, score, spool and write the
# evaluation records to --output, print the JSON summary) over 10,000 and 100,000 generated runs
# of 20 events each, against a spec with 8 deterministic validators of different types, 4 metrics
# and a hybrid scorecard with two gates (scripts/gen-spec-runs.py writes both). Runs on one core
# (taskset) and prints wall and CPU time, runs per second, the time per run (equal times per run =
# linear), the peak memory (max RSS; equal at both sizes = flat) and whether each size meets the
# target of BENCH_TARGET (default 20,000) runs per second of CPU time; exits 1 when one does not.
# It then prints the pass rate and each validator's pass/fail/error/unavailable counts from the
# summary, so that a fast run of nothing but errors cannot pass unnoticed.
#
# Usage: scripts/bench-spec.sh [SIZES...]   (default: 10000 100000; needs a release build:
#        cargo build --release). BENCH_DIR=DIR keeps the generated inputs there; BENCH_RUNS=N
#        (default 3) takes the best of N runs; EVALCTL=PATH benchmarks another binary.
#        BASELINE=PATH then also runs that binary and this one in turns, BENCH_PAIRS=N (default
#        7) pairs, the output deleted and synced before each run, and prints the median CPU time
#        of each and the median of the pairs' ratios (pairing keeps the ratio meaningful when the
#        machine's speed drifts).
set -euo pipefail
cd "$(dirname "$0")/.."
bin=${EVALCTL:-target/release/evalctl}
[ -x "$bin" ] || { echo "error: $bin not found: run cargo build --release first" >&2; exit 2; }
sizes=("$@"); [ ${#sizes[@]} -gt 0 ] || sizes=(10000 100000)
if [ -n "${BENCH_DIR:-}" ]; then work=$BENCH_DIR; mkdir -p "$work"   # kept, for profiling
else work=$(mktemp -d); trap 'rm -rf "$work"' EXIT; fi
pin=(); command -v taskset >/dev/null && pin=(taskset -c 0)

target=${BENCH_TARGET:-20000}   # runs per second of CPU time on one core
runs=${BENCH_RUNS:-3}           # each measurement is the best of this many runs
misses=0

measure() { # N -> one line: wall and CPU time (user + sys, from getrusage: less noisy on a busy
  # machine) and max RSS, best of $runs, and whether CPU time meets $target; the last run's JSON
  # summary is left in $work/summary.json.
  python3 - "$1" "$runs" "$target" "$work" "${pin[@]}" "$bin" spec score "$work/spec.yaml" \
    "$work/runs.jsonl" --output "$work/out.jsonl" --format json <<'PY' || misses=$((misses + 1))
import os, resource, subprocess, sys, time
n, runs, target, work = int(sys.argv[1]), int(sys.argv[2]), int(sys.argv[3]), sys.argv[4]
command = sys.argv[5:]
best = None
for _ in range(runs):
    if os.path.exists(f"{work}/out.jsonl"):
        os.remove(f"{work}/out.jsonl")  # --output appends
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    with open(f"{work}/summary.json", "wb") as sink:
        code = subprocess.run(command, stdout=sink).returncode
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if code not in (0, 1):
        sys.exit(f"error: spec score over {n} runs: evalctl exited {code}")
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    best = (wall, cpu) if best is None else (min(best[0], wall), min(best[1], cpu))
wall, cpu = best
rss = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024  # KiB -> MiB, this size only
verdict = "meets" if n / cpu >= target else "MISSES"
print(f"{n:7d} runs  wall {wall:7.3f} s {n / wall:7.0f} runs/s  cpu {cpu:7.3f} s {n / cpu:7.0f} runs/s "
      f"{cpu * 1e6 / n:6.1f} us/run  max RSS {rss:5.1f} MiB  "
      f"{os.path.getsize(f'{work}/out.jsonl') / 1e6:6.0f} MB out  {verdict} {target} runs/s (cpu)")
sys.exit(0 if verdict == "meets" else 1)
PY
}

report_outcomes() { # the pass rate and the validators' states from $work/summary.json
  python3 - "$work/summary.json" <<'PY'
import json, sys
summary = json.load(open(sys.argv[1]))
print(f"        pass rate {summary['pass_rate']:.3f} ({summary['passed']} passed, "
      f"{summary['failed']} failed, {summary['undecided']} undecided); validators "
      "pass/fail/error/unavailable:")
print("        " + ", ".join(f"{v['key']} {v['pass']}/{v['fail']}/{v['errors']}/{v['unavailable']}"
                             for v in summary["validators"]))
PY
}

against_baseline() { # N -> one line: median CPU time of $bin and $BASELINE over alternating pairs
  python3 - "$1" "${BENCH_PAIRS:-7}" "$work" "$bin" "$BASELINE" "${pin[@]}" <<'PY'
import os, resource, statistics, subprocess, sys
n, pairs, work, binary, baseline, pin = (int(sys.argv[1]), int(sys.argv[2]), sys.argv[3],
                                         sys.argv[4], sys.argv[5], sys.argv[6:])
out = f"{work}/out.jsonl"
def cpu(program):
    if os.path.exists(out):
        os.remove(out)  # --output appends; the next run writes a new file
    os.sync()           # and the last run's writeback is not charged to this one
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    subprocess.run([*pin, program, "spec", "score", f"{work}/spec.yaml", f"{work}/runs.jsonl",
                    "--output", out, "--format", "json"], stdout=subprocess.DEVNULL,
                   stderr=subprocess.DEVNULL)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
timed = [(cpu(binary), cpu(baseline)) for _ in range(pairs)]
median = statistics.median
print(f"{n:7d} runs  {pairs} pairs  cpu {median(a for a, _ in timed):7.3f} s  baseline "
      f"{median(b for _, b in timed):7.3f} s  ratio {median(a / b for a, b in timed):.3f} "
      f"(median of the pairs; {min(a / b for a, b in timed):.3f}-{max(a / b for a, b in timed):.3f})")
PY
}

for n in "${sizes[@]}"; do
  python3 scripts/gen-spec-runs.py "$n" "$work"
  "$bin" spec validate "$work/spec.yaml" >/dev/null
  measure "$n"
  report_outcomes
  if [ -n "${BASELINE:-}" ]; then against_baseline "$n"; fi
done
if [ "$misses" -gt 0 ]; then
  echo "$misses size(s) below the target of $target runs/s of CPU time"; exit 1
fi
echo "every size meets the target of $target runs/s of CPU time"
