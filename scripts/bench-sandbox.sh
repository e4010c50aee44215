#!/usr/bin/env bash
# The code_exec sandbox's cost, as whole processes (scripts/timeit.py: median of BENCH_RUNS runs
# after a warm-up), with the release binary:
#   1. one task with 40 assertions (each a script of its own, run one after another), in the
#      sandbox and with --unsafe-code-exec: the difference over 40 is the sandbox's cost per
#      script (target: at most 15 ms over an unsandboxed python3 start);
#   2. `tasks score` over the fixture suite (two code_exec tasks, five scripts) against another
#      binary given as EVALCTL_BASE, e.g. one built from before the sandbox (target: within 1.2x).
# Usage: cargo build --release && scripts/bench-sandbox.sh   (needs python3; EVALCTL=PATH
#        benchmarks another binary; BENCH_RUNS=N, default 7). Exits 1 when a target is missed.
set -euo pipefail
cd "$(dirname "$0")/.."
bin=$(realpath "${EVALCTL:-target/release/evalctl}")
[ -x "$bin" ] || { echo "error: $bin not found: run cargo build --release first" >&2; exit 2; }
runs=${BENCH_RUNS:-7}
work=$(mktemp -d); trap 'rm -rf "$work"' EXIT
python3 - "$work" <<'PY'
import json, sys
work = sys.argv[1]
targets = [f"square({i}) == {i * i}" for i in range(40)]
with open(f"{work}/tasks.jsonl", "w") as f:
    f.write(json.dumps({"task_id": "t", "category": "code_exec", "prompt": "Write square.",
                        "targets": targets, "metric_name": "code_exec",
                        "post_process": "none"}) + "\n")
with open(f"{work}/outputs.jsonl", "w") as f:
    f.write(json.dumps({"task_id": "t", "output": "def square(x):\n    return x * x\n"}) + "\n")
PY
time_of() { python3 scripts/timeit.py --json --runs "$runs" -- "$@"; }
score=("$bin" tasks score "$work/tasks.jsonl" --outputs "$work/outputs.jsonl" --format json)
sandboxed=$(time_of "${score[@]}")
unsandboxed=$(time_of "${score[@]}" --unsafe-code-exec)
# The interpreter itself, as evalctl runs it (python3 on PATH may be a shim that starts another).
python=$(python3 -c 'import sys; print(sys.executable)')
python_start=$(time_of "$python" -I -S -c pass)
misses=0
python3 - "$sandboxed" "$unsandboxed" "$python_start" <<'PY' || misses=$((misses + 1))
import json, sys
sandboxed, unsandboxed, start = (json.loads(arg) for arg in sys.argv[1:4])
per_script = (sandboxed["wall"] - unsandboxed["wall"]) / 40 * 1000
ok = per_script <= 15
print(f"40 scripts: sandboxed median {sandboxed['wall']:.3f} s, unsandboxed {unsandboxed['wall']:.3f} s; "
      f"python3 -I -S -c pass alone {start['wall'] * 1000:.1f} ms")
print(f"sandbox cost per script: {per_script:.1f} ms; {'meets' if ok else 'MISSES'} <= 15 ms")
sys.exit(0 if ok else 1)
PY
if [ -n "${EVALCTL_BASE:-}" ]; then
  fixture=(tasks score fixtures/tasks/tasks.jsonl --outputs fixtures/tasks/outputs.jsonl --format json)
  new=$(time_of "$bin" "${fixture[@]}")
  old=$(time_of "$(realpath "$EVALCTL_BASE")" "${fixture[@]}")
  python3 - "$new" "$old" <<'PY' || misses=$((misses + 1))
import json, sys
new, old = json.loads(sys.argv[1]), json.loads(sys.argv[2])
ratio = new["wall"] / old["wall"]
ok = ratio <= 1.2
print(f"fixture suite: {new['wall']:.3f} s against {old['wall']:.3f} s before: {ratio:.2f}x; "
      f"{'meets' if ok else 'MISSES'} <= 1.2x")
sys.exit(0 if ok else 1)
PY
fi
exit "$misses"
