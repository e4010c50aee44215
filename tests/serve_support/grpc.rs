//! The gRPC side of the `serve` tests: the clients (the FEP document's, and evalctl's own for its
//! additions), and the requests and credentials the tests send.

/// The FEP document's messages and clients, generated from its own unmodified `.proto`
/// (`tests/fep_document/`, `scripts/gen-proto.sh`): what a client built from the document sees.
#[allow(clippy::all, dead_code, missing_docs)]
pub mod pb {
    include!("../fep_document/fep.v1.rs");
}

/// The messages and server, as the library compiles them.
#[allow(clippy::all, dead_code, missing_docs)]
#[path = "../../src/server/proto/fep.v1.rs"]
mod fep_v1;

/// evalctl's own messages (`proto/fep/v1/fep.proto`) with its vendored clients beside them (it
/// names them as `super::`): for the fields evalctl adds to the document's proto.
#[allow(clippy::all, dead_code, missing_docs)]
pub mod evalctl_pb {
    pub use super::fep_v1::*;
    include!("fep_v1_client.rs");
}

fn text(value: &str) -> Option<pb::OutputValue> {
    Some(pb::OutputValue {
        value: Some(pb::output_value::Value::StringValue(value.into())),
    })
}

/// `n` test cases asking for the capital of France (with their input or without), every other
/// output right, checked by `exact_match`.
pub fn capitals(n: usize, with_input: bool) -> pb::EvaluationRequest {
    let arguments: prost_types::Struct = prost_types::Struct {
        fields: [
            ("actual", "$.output.value"),
            ("expected", "$.test_case.expected"),
        ]
        .into_iter()
        .map(|(key, path)| {
            let value = prost_types::Value {
                kind: Some(prost_types::value::Kind::StringValue(path.into())),
            };
            (key.to_string(), value)
        })
        .collect(),
    };
    pb::EvaluationRequest {
        test_cases: (0..n)
            .map(|i| pb::TestCase {
                id: format!("t{i}"),
                input: with_input.then(|| pb::InputValue {
                    value: Some(pb::input_value::Value::StringValue(
                        "capital of France?".into(),
                    )),
                }),
                expected: text("Paris"),
                metadata: None,
            })
            .collect(),
        outputs: (0..n)
            .map(|i| pb::Output {
                value: text(if i % 2 == 0 { "Paris" } else { "Lyon" }),
                metadata: None,
            })
            .collect(),
        checks: Some(pb::CheckConfiguration {
            configuration: Some(pb::check_configuration::Configuration::SharedChecks(
                pb::SharedChecks {
                    checks: vec![pb::Check {
                        r#type: "exact_match".into(),
                        arguments: Some(arguments),
                        version: None,
                    }],
                },
            )),
        }),
        experiment_metadata: None,
    }
}

/// `message` with the token the tests' servers take (`grpc-token`).
pub fn authorized<T>(message: T) -> tonic::Request<T> {
    let mut request = tonic::Request::new(message);
    request
        .metadata_mut()
        .insert("authorization", "Bearer grpc-token".parse().unwrap());
    request
}

/// `request` with its shared check's type set to `check_type` (arguments unchanged).
pub fn checked_by(mut request: pb::EvaluationRequest, check_type: &str) -> pb::EvaluationRequest {
    if let Some(pb::check_configuration::Configuration::SharedChecks(shared)) = request
        .checks
        .as_mut()
        .and_then(|checks| checks.configuration.as_mut())
    {
        shared.checks[0].r#type = check_type.into();
    }
    request
}
