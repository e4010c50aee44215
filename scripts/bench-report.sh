#!/usr/bin/env bash
# The HTML report at scale: a 20,000-call results file (10 candidates × 2,000 examples, 2% failed,
# side info with a sentence of reasoning) is rendered by `evalctl report`, then opened in
# headless Chromium; prints the file size, the time to write it, and the page's own render time
# (data-render-ms: parsing the data and drawing every panel and the first table page) and
# Chromium's wall time to load it and dump the DOM, beside the same for an empty page (Chromium's
# own start-up, which no page can avoid). Target: the report renders in under 2 s.
# Needs a release build and `chromium`.
set -euo pipefail
cd "$(dirname "$0")/.."
cargo build --release --quiet
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
python3 - "$work/results.jsonl" <<'PY'
import json, random, sys
random.seed(7)
with open(sys.argv[1], "w") as out:
    for c in range(10):
        for i in range(2000):
            failed = random.random() < 0.02
            score = 0.0 if failed else round(random.betavariate(2 + c % 3, 2), 4)
            line = {"candidate_id": f"prompt-{c}.txt", "split": "train" if i < 1600 else "val",
                    "example_index": i if i < 1600 else i - 1600, "example_line": (i if i < 1600 else i - 1600) + 1,
                    "score": score, "side_info": {} if failed else {"reasoning": f"example {i}: the answer is mostly right <b>{score}</b>"},
                    "error": {"kind": "timeout", "message": "the call did not finish within 30s"} if failed else None,
                    "attempts": 1, "latency_ms": round(random.uniform(5, 900), 3)}
            out.write(json.dumps(line) + "\n")
PY
start=$(date +%s.%N)
./target/release/evalctl report "$work/results.jsonl" -o "$work/report.html" --format text
end=$(date +%s.%N)
echo "write: $(echo "$end - $start" | bc) s, size: $(stat -c %s "$work/report.html") bytes"
flags=(--headless --no-sandbox --disable-gpu --disable-quic --no-first-run --disable-background-networking
       --disable-component-update --disable-sync --user-data-dir="$work/profile")
echo '<!doctype html><title>empty</title>' > "$work/empty.html"
for run in 1 2 3; do
    start=$(date +%s.%N)
    chromium "${flags[@]}" --dump-dom "file://$work/empty.html" >/dev/null 2>&1
    middle=$(date +%s.%N)
    dom=$(chromium "${flags[@]}" --dump-dom "file://$work/report.html" 2>/dev/null)
    end=$(date +%s.%N)
    render=$(grep -o 'data-render-ms="[0-9]*"' <<<"$dom" | head -1)
    echo "chromium run $run: page $render, load + dump $(echo "$end - $middle" | bc) s" \
         "(an empty page: $(echo "$middle - $start" | bc) s)"
done
