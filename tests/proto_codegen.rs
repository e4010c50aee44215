//! The vendored gRPC code is exactly what `scripts/gen-proto.sh` generates: evalctl's messages,
//! servers and clients from `proto/fep/v1/fep.proto`, and the client the gRPC tests use from the
//! FEP document's own `.proto` (`tests/fep_document/fep.proto`, section 5.2 as written); and
//! evalctl's `.proto` only adds fields to the document's.

#[allow(dead_code)]
#[path = "../examples/gen_proto.rs"]
mod gen_proto;

use std::path::Path;

#[test]
fn the_checked_in_grpc_code_is_what_the_protos_generate() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let generated = gen_proto::generated(root);
    assert_eq!(generated.len(), 3);
    for (path, text) in generated {
        let checked_in = std::fs::read_to_string(root.join(&path))
            .unwrap_or_else(|err| panic!("{}: {err}", path.display()));
        assert!(
            checked_in == text,
            "{} is not what its .proto generates: run {}",
            path.display(),
            gen_proto::SCRIPT
        );
    }
}

/// Every message and field of a `.proto` file (`Message.field` → number, label, type, type
/// name, proto3 `optional`) and every RPC (`Service/Method` → input, output, server streaming).
fn shape(include: &Path, file: &str) -> std::collections::BTreeMap<String, String> {
    let descriptors = protox::compile([include.join(file)], [include]).unwrap();
    let file = descriptors
        .file
        .iter()
        .find(|descriptor| descriptor.package() == "fep.v1")
        .unwrap();
    let mut shape = std::collections::BTreeMap::new();
    for message in &file.message_type {
        shape.insert(message.name().to_string(), "message".to_string());
        for field in &message.field {
            shape.insert(
                format!("{}.{}", message.name(), field.name()),
                format!(
                    "{} {:?} {:?} {} optional={}",
                    field.number(),
                    field.label(),
                    field.r#type(),
                    field.type_name(),
                    field.proto3_optional()
                ),
            );
        }
    }
    for service in &file.service {
        for method in &service.method {
            shape.insert(
                format!("{}/{}", service.name(), method.name()),
                format!(
                    "{} -> {} streaming={}",
                    method.input_type(),
                    method.output_type(),
                    method.server_streaming()
                ),
            );
        }
    }
    shape
}

/// evalctl's `proto/fep/v1/fep.proto` is the FEP document's `.proto` with fields added, never
/// changed: a client built from the document's file reads and writes every message evalctl
/// serves. What evalctl leaves out (the standard check types' typed arguments and results, the
/// batch messages) is no part of a service.
#[test]
fn evalctls_proto_is_the_documents_with_fields_added() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let document = shape(&root.join("tests/fep_document"), "fep.proto");
    let evalctl = shape(&root.join("proto"), "fep/v1/fep.proto");
    let changed: Vec<_> = document
        .iter()
        .filter(|(name, _)| {
            evalctl
                .get(*name)
                .is_some_and(|shape| *shape != document[*name])
        })
        .collect();
    assert_eq!(changed, Vec::<(&String, &String)>::new());
    let left_out: Vec<&str> = document
        .keys()
        .filter(|name| !name.contains('.') && !evalctl.contains_key(*name))
        .map(String::as_str)
        .collect();
    assert_eq!(
        left_out,
        [
            "BatchEvaluationRequest",
            "BatchEvaluationResponse",
            "BatchOptions",
            "BatchSummary",
            "CheckValue",
            "ContainsArguments",
            "ContainsResult",
            "ExactMatchArguments",
            "ExactMatchResult",
            "RegexArguments",
            "RegexFlags",
            "RegexResult",
            "ThresholdArguments",
            "ThresholdConfig",
            "ThresholdResult",
        ]
    );
    let added: Vec<(&str, &str)> = evalctl
        .iter()
        .filter(|(name, _)| !document.contains_key(*name))
        .map(|(name, shape)| (name.as_str(), shape.as_str()))
        .collect();
    assert_eq!(
        added,
        [
            (
                "EvaluationProgress.test_case_result",
                "6 Optional Message .fep.v1.TestCaseResult optional=true"
            ),
            ("Output.id", "3 Optional String  optional=true"),
        ]
    );
}
