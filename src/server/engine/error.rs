//! The API's errors: what kind of failure each is (its HTTP status, gRPC code and `error` name)
//! and the ErrorResponse document.

use std::io;

use serde_json::{Map, Value};

/// What kind of failure an [`ApiError`] is: its HTTP status, gRPC code and `error` name.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ErrorKind {
    /// The request is not a valid EvaluationRequest (400).
    Validation,
    /// More test cases than `--max-test-cases` (400).
    TooManyTestCases,
    /// More check results than `--max-check-results` (400).
    TooManyCheckResults,
    /// A body over `--max-body` (413).
    BodyTooLarge,
    /// `--max-concurrent` evaluations are running (429).
    Busy,
    /// The body did not arrive within `--body-timeout` (408).
    BodyTimeout,
    /// The request was not evaluated within `--request-timeout` (503).
    DeadlineExceeded,
    /// No valid token (401).
    Unauthenticated,
    /// A request a web browser sent for a page of another site (403).
    Forbidden,
    /// No such evaluation or path (404).
    NotFound,
    /// The path exists, the method does not (405).
    MethodNotAllowed,
    /// The server failed (500).
    Internal,
}

impl ErrorKind {
    /// The ErrorResponse's `error`.
    pub fn name(self) -> &'static str {
        match self {
            ErrorKind::Validation => "validation_error",
            ErrorKind::TooManyTestCases => "too_many_test_cases",
            ErrorKind::TooManyCheckResults => "too_many_check_results",
            ErrorKind::BodyTooLarge => "payload_too_large",
            ErrorKind::Busy => "too_many_requests",
            ErrorKind::BodyTimeout => "request_timeout",
            ErrorKind::DeadlineExceeded => "deadline_exceeded",
            ErrorKind::Unauthenticated => "unauthenticated",
            ErrorKind::Forbidden => "forbidden",
            ErrorKind::NotFound => "not_found",
            ErrorKind::MethodNotAllowed => "method_not_allowed",
            ErrorKind::Internal => "internal_error",
        }
    }

    /// The HTTP status code.
    pub fn http_status(self) -> u16 {
        match self {
            ErrorKind::Validation
            | ErrorKind::TooManyTestCases
            | ErrorKind::TooManyCheckResults => 400,
            ErrorKind::BodyTooLarge => 413,
            ErrorKind::Busy => 429,
            ErrorKind::BodyTimeout => 408,
            ErrorKind::DeadlineExceeded => 503,
            ErrorKind::Unauthenticated => 401,
            ErrorKind::Forbidden => 403,
            ErrorKind::NotFound => 404,
            ErrorKind::MethodNotAllowed => 405,
            ErrorKind::Internal => 500,
        }
    }

    /// The gRPC status code.
    pub fn grpc_code(self) -> tonic::Code {
        match self {
            ErrorKind::Validation
            | ErrorKind::TooManyTestCases
            | ErrorKind::TooManyCheckResults => tonic::Code::InvalidArgument,
            ErrorKind::BodyTooLarge | ErrorKind::Busy => tonic::Code::ResourceExhausted,
            ErrorKind::BodyTimeout | ErrorKind::DeadlineExceeded => tonic::Code::DeadlineExceeded,
            ErrorKind::Unauthenticated => tonic::Code::Unauthenticated,
            ErrorKind::Forbidden => tonic::Code::PermissionDenied,
            ErrorKind::NotFound => tonic::Code::NotFound,
            ErrorKind::MethodNotAllowed => tonic::Code::Unimplemented,
            ErrorKind::Internal => tonic::Code::Internal,
        }
    }
}

/// A failed API call, answered as the spec's ErrorResponse (REST) or a status (gRPC).
#[derive(Debug, Clone)]
pub struct ApiError {
    /// What failed.
    pub kind: ErrorKind,
    /// For people.
    pub message: String,
    /// `details.problems`: every problem of an invalid request.
    pub problems: Vec<String>,
}

impl ApiError {
    /// An error without details.
    pub fn new(kind: ErrorKind, message: impl Into<String>) -> ApiError {
        ApiError {
            kind,
            message: message.into(),
            problems: Vec::new(),
        }
    }

    /// The ErrorResponse document.
    pub fn to_json(&self) -> Vec<u8> {
        let mut response = Map::new();
        response.insert("error".into(), self.kind.name().into());
        response.insert("message".into(), self.message.clone().into());
        if !self.problems.is_empty() {
            let problems = Value::from(self.problems.clone());
            response.insert(
                "details".into(),
                Value::Object(Map::from_iter([("problems".to_string(), problems)])),
            );
        }
        let mut body = Value::Object(response).to_string().into_bytes();
        body.push(b'\n');
        body
    }
}

/// The most problems a 400 answer lists in `details.problems`, and in its message: a request
/// of a million bad checks is not answered with a million problems, twice.
const LISTED_PROBLEMS: usize = 100;
const PROBLEMS_IN_MESSAGE: usize = 10;

pub(super) fn invalid_request(mut problems: Vec<String>) -> ApiError {
    let count = problems.len();
    let mut listed = problems[..count.min(PROBLEMS_IN_MESSAGE)].join("; ");
    if count > PROBLEMS_IN_MESSAGE {
        listed.push_str(&format!(
            "; … and {} more (details.problems lists the first {})",
            count - PROBLEMS_IN_MESSAGE,
            count.min(LISTED_PROBLEMS)
        ));
    }
    problems.truncate(LISTED_PROBLEMS);
    ApiError {
        kind: ErrorKind::Validation,
        message: format!(
            "invalid EvaluationRequest ({count} problem{}): {listed}",
            if count == 1 { "" } else { "s" },
        ),
        problems,
    }
}

pub(super) fn internal(err: io::Error) -> ApiError {
    ApiError::new(ErrorKind::Internal, format!("evaluation failed: {err}"))
}
