//! What decoding an EvaluationRequest message would take, read from its protobuf wire bytes
//! before it is decoded: its test cases, how deep its messages nest, and about how much memory
//! the decoded message holds. A field of a few bytes on the wire (an empty test case, an empty
//! `Struct` entry) is a struct of a hundred or more in memory, so a message within `--max-body`
//! could otherwise take gigabytes before any limit is looked at.
//!
//! Only the fields that hold messages are followed; every other field is stepped over by its
//! wire type. A message that is not valid protobuf is said to be so here, in words a client can
//! act on, rather than by the decoder's internal error.

use std::mem::size_of;

use super::pb;

/// How deep messages may nest below the request: the decoder's own limit (prost's recursion
/// limit). A JSON value nested N levels takes about 3 N messages (`Struct`, its entry, the
/// `Value`).
pub const MAX_DEPTH: usize = 100;

/// The message types of an EvaluationRequest that hold other messages.
#[derive(Debug, Clone, Copy, PartialEq)]
enum Kind {
    Request,
    TestCase,
    /// An `InputValue` or `OutputValue`.
    Value,
    Output,
    CheckConfiguration,
    /// `SharedChecks` or a `CheckList`.
    Checks,
    PerTestCaseChecks,
    Check,
    ExperimentMetadata,
    Struct,
    StructEntry,
    JsonValue,
    ListValue,
}

impl Kind {
    /// The message type's name, as the `.proto` names it.
    fn name(self) -> &'static str {
        match self {
            Kind::Request => "EvaluationRequest",
            Kind::TestCase => "TestCase",
            Kind::Value => "InputValue or OutputValue",
            Kind::Output => "Output",
            Kind::CheckConfiguration => "CheckConfiguration",
            Kind::Checks => "SharedChecks or CheckList",
            Kind::PerTestCaseChecks => "PerTestCaseChecks",
            Kind::Check => "Check",
            Kind::ExperimentMetadata => "ExperimentMetadata",
            Kind::Struct => "Struct",
            Kind::StructEntry => "Struct entry",
            Kind::JsonValue => "Value",
            Kind::ListValue => "ListValue",
        }
    }

    /// Whether field `number` holds text (a `string`), which must be UTF-8.
    fn holds_text(self, number: u64) -> bool {
        matches!(
            (self, number),
            (
                Kind::TestCase | Kind::Value | Kind::Check | Kind::ExperimentMetadata,
                1
            ) | (Kind::Output | Kind::Check | Kind::JsonValue, 3)
                | (Kind::StructEntry, 1)
        )
    }

    /// The message field `number` holds, and the memory each occurrence adds beside its bytes
    /// (an element of a repeated field or a map, with the spare room of its collection); `None`
    /// for a field that holds no message.
    fn field(self, number: u64) -> Option<(Kind, usize)> {
        // A vector's capacity may double: each element counts twice.
        let element = |size: usize| 2 * size;
        let json_value = size_of::<prost_types::Value>();
        Some(match (self, number) {
            (Kind::Request, 1) => (Kind::TestCase, element(size_of::<pb::TestCase>())),
            (Kind::Request, 2) => (Kind::Output, element(size_of::<pb::Output>())),
            (Kind::Request, 3) => (Kind::CheckConfiguration, 0),
            (Kind::Request, 4) => (Kind::ExperimentMetadata, 0),
            (Kind::TestCase, 2 | 3) | (Kind::Output, 1) => (Kind::Value, 0),
            (Kind::TestCase, 4) | (Kind::Value | Kind::Output | Kind::Check, 2) => {
                (Kind::Struct, 0)
            }
            (Kind::ExperimentMetadata, 2) => (Kind::Struct, 0),
            (Kind::CheckConfiguration, 1) => (Kind::Checks, 0),
            (Kind::CheckConfiguration, 2) => (Kind::PerTestCaseChecks, 0),
            (Kind::PerTestCaseChecks, 1) => (Kind::Checks, element(size_of::<pb::CheckList>())),
            (Kind::Checks, 1) => (Kind::Check, element(size_of::<pb::Check>())),
            // A map entry is a B-tree slot: its key and value, and its share of the node.
            (Kind::Struct, 1) => (Kind::StructEntry, element(size_of::<String>() + json_value)),
            (Kind::StructEntry, 2) => (Kind::JsonValue, 0),
            (Kind::JsonValue, 5) => (Kind::Struct, 0),
            (Kind::JsonValue, 6) => (Kind::ListValue, 0),
            (Kind::ListValue, 1) => (Kind::JsonValue, element(json_value)),
            _ => return None,
        })
    }
}

/// What the message would take decoded.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct MessageCost {
    /// Its test cases.
    pub test_cases: usize,
    /// About the memory the decoded message holds, in bytes: its strings, at most its own
    /// length, and a struct for each element of its repeated fields and maps.
    pub bytes: u64,
}

/// Read `message` (an EvaluationRequest's wire bytes): what decoding it would take, or why it
/// cannot be decoded.
pub fn message_cost(message: &[u8]) -> Result<MessageCost, String> {
    let mut cost = MessageCost {
        test_cases: 0,
        bytes: message.len() as u64 + size_of::<pb::EvaluationRequest>() as u64,
    };
    let mut open: Vec<(Kind, usize)> = vec![(Kind::Request, message.len())];
    let mut at = 0;
    loop {
        while open.last().is_some_and(|&(_, end)| at == end) {
            open.pop();
        }
        let Some(&(kind, end)) = open.last() else {
            return Ok(cost);
        };
        let key = varint(message, &mut at, end)?;
        let (number, wire_type) = (key >> 3, key & 7);
        match (wire_type, kind.field(number)) {
            (2, Some((inner, element))) => {
                let len = length(message, &mut at, end)?;
                if open.len() > MAX_DEPTH {
                    return Err(format!(
                        "its messages nest more than {MAX_DEPTH} deep (a value nests about 3 \
                         a level: over gRPC a test case or argument nests at most about 32 \
                         levels)"
                    ));
                }
                cost.bytes += element as u64;
                cost.test_cases += usize::from(kind == Kind::Request && number == 1);
                open.push((inner, at + len));
            }
            (_, Some(_)) => {
                return Err(format!(
                    "field {number} of a message holds a message, not wire type {wire_type}"
                ))
            }
            (0, None) => {
                varint(message, &mut at, end)?;
            }
            (1, None) => at = skip(at, 8, end)?,
            (5, None) => at = skip(at, 4, end)?,
            (2, None) => {
                let len = length(message, &mut at, end)?;
                if kind.holds_text(number) && std::str::from_utf8(&message[at..at + len]).is_err() {
                    return Err(format!(
                        "field {number} of a {} is text that is not UTF-8",
                        kind.name()
                    ));
                }
                at = skip(at, len, end)?;
            }
            _ => {
                return Err(format!(
                    "wire type {wire_type} is not one protobuf 3 writes"
                ))
            }
        }
    }
}

/// The varint at `at`, which must end by `end`.
fn varint(message: &[u8], at: &mut usize, end: usize) -> Result<u64, String> {
    let mut value = 0u64;
    for shift in (0..64).step_by(7) {
        let Some(&byte) = message.get(*at).filter(|_| *at < end) else {
            return Err("it ends inside a field".to_string());
        };
        *at += 1;
        value |= u64::from(byte & 0x7f) << shift;
        if byte & 0x80 == 0 {
            return Ok(value);
        }
    }
    Err("a varint runs past 10 bytes".to_string())
}

/// A length-delimited field's length, which must fit before `end`.
fn length(message: &[u8], at: &mut usize, end: usize) -> Result<usize, String> {
    let len = varint(message, at, end)?;
    usize::try_from(len)
        .ok()
        .filter(|len| *at + len <= end)
        .ok_or_else(|| "a field is longer than what holds it".to_string())
}

/// `at` moved `len` bytes on, which must not pass `end`.
fn skip(at: usize, len: usize, end: usize) -> Result<usize, String> {
    (at + len <= end)
        .then_some(at + len)
        .ok_or_else(|| "it ends inside a field".to_string())
}

#[cfg(test)]
mod tests {
    use super::*;
    use prost::Message;

    fn test_case(id: &str) -> pb::TestCase {
        pb::TestCase {
            id: id.to_string(),
            ..pb::TestCase::default()
        }
    }

    #[test]
    fn a_message_is_read_for_its_test_cases_and_the_elements_it_decodes_into() {
        let nested = prost_types::Struct {
            fields: [(
                "a".to_string(),
                prost_types::Value {
                    kind: Some(prost_types::value::Kind::ListValue(
                        prost_types::ListValue {
                            values: vec![prost_types::Value::default(); 3],
                        },
                    )),
                },
            )]
            .into(),
        };
        let request = pb::EvaluationRequest {
            test_cases: vec![
                pb::TestCase {
                    metadata: Some(nested),
                    ..test_case("t1")
                },
                test_case("t2"),
            ],
            ..pb::EvaluationRequest::default()
        };
        let bytes = request.encode_to_vec();
        let cost = message_cost(&bytes).unwrap();
        let json_value = size_of::<prost_types::Value>();
        let expected = bytes.len()
            + size_of::<pb::EvaluationRequest>()
            + 2 * 2 * size_of::<pb::TestCase>()
            + 2 * (size_of::<String>() + json_value)
            + 3 * 2 * json_value;
        assert_eq!(
            cost,
            MessageCost {
                test_cases: 2,
                bytes: expected as u64
            }
        );
    }

    #[test]
    fn many_empty_test_cases_cost_far_more_than_their_bytes() {
        let request = pb::EvaluationRequest {
            test_cases: vec![pb::TestCase::default(); 10_000],
            ..pb::EvaluationRequest::default()
        };
        let bytes = request.encode_to_vec();
        let cost = message_cost(&bytes).unwrap();
        assert_eq!(cost.test_cases, 10_000);
        assert!(cost.bytes > 50 * bytes.len() as u64, "{cost:?}");
    }

    #[test]
    fn what_cannot_be_decoded_is_said() {
        let bytes = pb::EvaluationRequest {
            test_cases: vec![test_case("t1")],
            ..pb::EvaluationRequest::default()
        }
        .encode_to_vec();
        assert_eq!(
            message_cost(&bytes[..bytes.len() - 1]),
            Err("a field is longer than what holds it".to_string())
        );
        // Field 1 (test_cases) as a varint.
        assert_eq!(
            message_cost(&[0x08, 0x01]),
            Err("field 1 of a message holds a message, not wire type 0".to_string())
        );
        assert_eq!(
            message_cost(&[0x4b]),
            Err("wire type 3 is not one protobuf 3 writes".to_string())
        );
        // A test case id that is not UTF-8 (0xff).
        assert_eq!(
            message_cost(&[0x0a, 0x03, 0x0a, 0x01, 0xff]),
            Err("field 1 of a TestCase is text that is not UTF-8".to_string())
        );
        // Unknown fields are stepped over.
        assert_eq!(
            message_cost(&[0x48, 0x96, 0x01, 0x51, 0, 0, 0, 0, 0, 0, 0, 0])
                .map(|cost| cost.test_cases),
            Ok(0)
        );
    }

    #[test]
    fn what_nests_deeper_than_the_decoder_reads_is_refused_and_nothing_else() {
        // Lists in lists (2 messages a level) and objects in objects (3), each in a test
        // case's metadata: refused here exactly where the decoder would refuse them.
        let list = |value| {
            prost_types::value::Kind::ListValue(prost_types::ListValue {
                values: vec![value],
            })
        };
        let object = |value| {
            prost_types::value::Kind::StructValue(prost_types::Struct {
                fields: [("a".to_string(), value)].into(),
            })
        };
        for wrap in [list, object] {
            let mut value = prost_types::Value::default();
            for levels in 0..60 {
                value = prost_types::Value {
                    kind: Some(wrap(value)),
                };
                let metadata = prost_types::Struct {
                    fields: [("v".to_string(), value.clone())].into(),
                };
                let request = pb::EvaluationRequest {
                    test_cases: vec![pb::TestCase {
                        metadata: Some(metadata),
                        ..test_case("t1")
                    }],
                    ..pb::EvaluationRequest::default()
                };
                let bytes = request.encode_to_vec();
                let decoded = pb::EvaluationRequest::decode(&bytes[..]);
                assert_eq!(
                    message_cost(&bytes).is_ok(),
                    decoded.is_ok(),
                    "{levels} levels: {decoded:?}"
                );
            }
        }
    }
}
