#!/bin/sh
# A protocol-v2 evaluator whose score is huge: 1e300 for every call (a raw score under
# --score-range any), so that reports show it in scientific notation.
cat > /dev/null
echo '{"score": 1e300}'
