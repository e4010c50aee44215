#!/usr/bin/env bash
# Regenerate the vendored gRPC code, and with the FEP document as argument first re-extract the
# document's fixtures. Usage: scripts/gen-proto.sh [flexible-evaluation-protocol.md]
#
# With the document: its `.proto` (section 5.2), OpenAPI document (section 5.1) and the JSON
# Schemas of the responses (sections 2.3.4, 2.3.5, 4.1 and 4.2) are copied verbatim, as the document
# writes them, into tests/fep_document/.
#
# Then examples/gen_proto.rs (pure Rust: protox and tonic-prost-build, no system protoc) writes
# from proto/fep/v1/fep.proto: src/server/proto/fep.v1.rs (messages and servers) and
# tests/serve_support/fep_v1_client.rs (evalctl's clients); from tests/fep_document/fep.proto:
# tests/fep_document/fep.v1.rs (the document's messages and clients, which the gRPC tests use).
# The test proto_codegen:: fails when a checked-in file differs from what this writes.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
if [ $# -gt 0 ]; then
  document="$1"
  fixtures="$root/tests/fep_document"
  mkdir -p "$fixtures/schemas"
  # block HEADING [LABEL]: the lines of the first fenced block after the first heading that
  # contains HEADING (and after the first line below it that starts with LABEL).
  block() {
    awk -v heading="$1" -v label="${2:-}" '
      !found && /^#/ && index($0, heading) { found = 1; labelled = (label == ""); next }
      found && !labelled && index($0, label) == 1 { labelled = 1; next }
      found && labelled && /^```/ { if (inside) { done = 1; exit } inside = 1; next }
      inside { print }
      END { if (!done) { print "no block after " heading " " label > "/dev/stderr"; exit 1 } }
    ' "$document"
  }
  block '## 5.1 REST API' > "$fixtures/openapi.yaml"
  block '## 5.2 gRPC API' > "$fixtures/fep.proto"
  block '2.3.4 Check Result Format' '##### Schema' > "$fixtures/schemas/check_result.json"
  block '**`exact_match`**' '##### Results Schema' > "$fixtures/schemas/exact_match.results.json"
  for check in contains regex threshold; do
    block "**\`$check\`**" '##### Response Schema' > "$fixtures/schemas/$check.results.json"
  done
  block '## 4.1 Test Case Result Format' '##### Schema' > "$fixtures/schemas/test_case_result.json"
  block '## 4.2 Evaluation Run Result Format' > "$fixtures/schemas/evaluation_run_result.json"
fi
cargo run --quiet --manifest-path "$root/Cargo.toml" --example gen_proto
