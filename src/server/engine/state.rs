//! The state every request of both front ends shares ([`Engine`]): the store, the limits, the
//! token, a [`Place`] among `--max-concurrent` and in `--max-memory`, and request validation
//! (the wording of `fep evaluate`).

use std::sync::{Arc, Mutex};
use std::time::Duration;

use serde_json::Value;
use tokio::sync::Semaphore;

use super::error::{invalid_request, ApiError, ErrorKind};
use super::place::{parsed_cost, MemoryBudget, Place, Share, ECHO_COPIES, RESULT_COST};
use crate::checks::{Call, CaseAnswers, Catalog, Declarations, EndpointPolicy};
use crate::evaluator::check_calls::{
    local_catalog, validator_checks, CheckCaller, DEFAULT_CONCURRENCY,
};
use crate::fep::{parse_request, Request};
use crate::input::{document_json_reason, parse_unique};
use crate::patterns::{DocumentPatterns, PatternMemory};
use crate::server::auth::Token;
use crate::server::store::Store;
use crate::server::ServeChecks;

/// The FEP version `/health` and HealthCheck report.
pub const FEP_VERSION: &str = "0.0.1";

/// The request limits (`--max-body`, `--max-test-cases`, `--max-check-results`,
/// `--max-concurrent`, `--max-memory`, `--body-timeout`, `--request-timeout`).
#[derive(Debug, Clone, Copy)]
pub struct Limits {
    /// The largest request body, in bytes.
    pub max_body: usize,
    /// The most test cases in one request.
    pub max_test_cases: usize,
    /// The most check results one request may ask for: its test cases times the checks that
    /// apply to each.
    pub max_check_results: usize,
    /// The most evaluations running at once; more are turned away (429).
    pub max_concurrent: usize,
    /// The most memory the requests in flight may hold together, in bytes (estimated before
    /// it is taken, see [`Place`]).
    pub max_memory: u64,
    /// The longest a REST body may take to arrive (408).
    pub body_timeout: Duration,
    /// The longest a request may take from its body's arrival to its result (503).
    pub request_timeout: Duration,
}

/// The state every request of both front ends shares.
pub struct Engine {
    /// The results database.
    pub store: Store,
    /// The request limits.
    pub limits: Limits,
    /// The token requests need, with `--token-env`.
    pub token: Option<Token>,
    /// Without a token or `--allow-unauthenticated-remote`: the server is for its own machine,
    /// and answers REST requests to its loopback names only.
    pub loopback_only: bool,
    pub(super) running: Arc<Semaphore>,
    /// `--max-memory`, shared by the requests in flight.
    memory: MemoryBudget,
    /// The custom checks and endpoints requests may use.
    pub(super) checks: ServeChecks,
    /// Sends the calls of checks that call out.
    pub(super) caller: CheckCaller,
    /// Catalogs of earlier requests, kept for the next ones: building one (the validators'
    /// check types) and compiling the JSONPaths a request names cost more than evaluating a
    /// small request, and most requests name the same few paths.
    pub(super) spare_catalogs: Mutex<Vec<Catalog>>,
}

/// The most catalogs kept for reuse.
const SPARE_CATALOGS: usize = 16;

impl Engine {
    /// The engine over `store`.
    pub fn new(
        store: Store,
        limits: Limits,
        token: Option<Token>,
        loopback_only: bool,
        checks: ServeChecks,
    ) -> anyhow::Result<Engine> {
        local_catalog(&checks.custom)?;
        Ok(Engine {
            store,
            running: Arc::new(Semaphore::new(limits.max_concurrent)),
            memory: MemoryBudget::new(limits.max_memory),
            limits,
            token,
            loopback_only,
            checks,
            caller: CheckCaller::new(SERVER_CALLS)?,
            spare_catalogs: Mutex::default(),
        })
    }

    /// Whether a request with these header values may call the evaluation endpoints.
    pub fn authorize(
        &self,
        authorization: Option<&[u8]>,
        api_key: Option<&[u8]>,
    ) -> Result<(), ApiError> {
        match &self.token {
            Some(token) if !token.accepts(authorization, api_key) => Err(ApiError::new(
                ErrorKind::Unauthenticated,
                "a valid bearer token is required (Authorization: Bearer TOKEN)",
            )),
            _ => Ok(()),
        }
    }

    /// A place among the running evaluations holding `body` bytes of `--max-memory` for the
    /// body about to arrive; 429 when `--max-concurrent` are taken (by evaluations running, or
    /// REST requests whose body is still arriving) or the memory is, 413 when `body` alone is
    /// over `--max-memory`.
    pub fn admit(&self, body: u64) -> Result<Place, ApiError> {
        let running = Arc::clone(&self.running).try_acquire_owned().map_err(|_| {
            ApiError::new(
                ErrorKind::Busy,
                format!(
                    "all {} places for evaluations are taken (--max-concurrent: requests \
                     being received or evaluated); try again shortly",
                    self.limits.max_concurrent
                ),
            )
        })?;
        let mut place = Place::new(running, &self.memory);
        place.hold(body, "its body")?;
        Ok(place)
    }

    /// How many evaluations hold a place among `--max-concurrent` now.
    pub fn evaluations_running(&self) -> usize {
        self.limits.max_concurrent - self.running.available_permits()
    }

    /// An empty share of `--max-memory`, for what is not an evaluation (a stored result read).
    pub fn memory_share(&self) -> Share {
        Share::of(&self.memory)
    }

    /// Wait until no evaluation runs (each stops within `--request-timeout`).
    pub async fn drained(&self) {
        // --max-concurrent is at most 65,536.
        let every = u32::try_from(self.limits.max_concurrent).unwrap_or(u32::MAX);
        let _ = self.running.acquire_many(every).await;
    }

    /// What a request's checks are prepared with: the operator's custom checks and no command a
    /// client declares, only the endpoints (and their keys) the operator allows.
    fn catalog(&self) -> Catalog {
        Catalog {
            declarations: Declarations::Refused,
            endpoints: EndpointPolicy::Only(self.checks.allowed_endpoints.clone()),
            ..Catalog::with_custom(validator_checks().chain(self.checks.custom.iter().cloned()))
        }
    }

    /// The answers to the calls of a request's checks that call out.
    pub(super) async fn answer(&self, calls: Vec<Vec<Option<Call>>>) -> Vec<CaseAnswers> {
        self.caller
            .with_window(DEFAULT_CONCURRENCY)
            .answer_cases(calls)
            .await
    }

    /// Parse and validate a JSON body as an EvaluationRequest, once `place` holds the memory
    /// the parsed document takes.
    pub fn prepare_body(&self, body: &[u8], place: &mut Place) -> Result<Request, ApiError> {
        let body = body.strip_prefix(b"\xEF\xBB\xBF").unwrap_or(body);
        if body.iter().all(u8::is_ascii_whitespace) {
            return Err(invalid_request(vec![
                "the request body is empty (expected an EvaluationRequest object)".into(),
            ]));
        }
        place.hold(parsed_cost(body), "the document parsed from its body")?;
        let document = parse_unique(body)
            .map_err(|err| invalid_request(vec![document_json_reason(&err, body)]))?;
        self.prepare(document, place, 1)
    }

    /// Validate an EvaluationRequest document: every problem, worded as `fep evaluate` does;
    /// `place` holds the memory its answer takes before it is parsed, `answer_copies` times
    /// (the front end's copies of it: the document, and gRPC's parsed values and message).
    pub fn prepare(
        &self,
        document: Value,
        place: &mut Place,
        answer_copies: u64,
    ) -> Result<Request, ApiError> {
        let test_cases = document
            .get("test_cases")
            .and_then(Value::as_array)
            .map_or(0, Vec::len);
        if test_cases > self.limits.max_test_cases {
            return Err(too_many_test_cases(test_cases, self.limits.max_test_cases));
        }
        let answer = answer_size(&document);
        let check_results = answer.check_results;
        if check_results > self.limits.max_check_results as u64 {
            return Err(ApiError::new(
                ErrorKind::TooManyCheckResults,
                format!(
                    "{check_results} check results in one request (test cases times the checks \
                     that apply to each); this server takes at most {} (--max-check-results)",
                    self.limits.max_check_results
                ),
            ));
        }
        place.hold(
            answer.bytes.saturating_mul(answer_copies),
            &format!("the answer of its {check_results} check results"),
        )?;
        // A request cannot declare custom checks here, so parsing one changes nothing in the
        // catalog but its compiled paths: the next request may use it.
        let mut catalog = self
            .spare_catalogs
            .lock()
            .ok()
            .and_then(|mut spare| spare.pop())
            .unwrap_or_else(|| self.catalog());
        // The patterns of its checks hold their memory as they are compiled.
        let patterns = Arc::new(PatternShare(Mutex::new((place.lend_share(), None))));
        catalog.patterns = DocumentPatterns::held_by(patterns.clone());
        let parsed = parse_request(document, &mut catalog);
        catalog.patterns = DocumentPatterns::default();
        if let Ok(mut spare) = self.spare_catalogs.lock() {
            if spare.len() < SPARE_CATALOGS {
                spare.push(catalog);
            }
        }
        let (share, refused) = Arc::into_inner(patterns)
            .map(|patterns| patterns.0.into_inner().unwrap_or_else(|p| p.into_inner()))
            .ok_or_else(|| ApiError::new(ErrorKind::Internal, "the patterns' share was kept"))?;
        place.give_back(share);
        if let Some(refused) = refused {
            return Err(refused);
        }
        let request = parsed.map_err(|problems| {
            invalid_request(
                problems
                    .iter()
                    .map(|problem| problem.describe(""))
                    .collect(),
            )
        })?;
        // What each result repeats of its check as given is known once the checks are
        // prepared: their literal arguments, and the names of the members they ignore.
        place.hold(
            (request.repeated_size(json_size))
                .saturating_mul(ECHO_COPIES)
                .saturating_mul(answer_copies),
            &format!("the answer of its {check_results} check results"),
        )?;
        Ok(request)
    }
}

/// The share of `--max-memory` a request's regular expressions hold as they are compiled, and
/// the refusal of the first one that could not be held.
struct PatternShare(Mutex<(Share, Option<ApiError>)>);

impl PatternMemory for PatternShare {
    fn hold(&self, bytes: u64) -> bool {
        let mut held = self.0.lock().unwrap_or_else(|p| p.into_inner());
        if held.1.is_some() {
            return false;
        }
        match held.0.hold(bytes, "the regular expressions of its checks") {
            Ok(()) => true,
            Err(refused) => {
                held.1 = Some(refused);
                false
            }
        }
    }

    fn release(&self, bytes: u64) {
        let mut held = self.0.lock().unwrap_or_else(|p| p.into_inner());
        held.0.release(bytes);
    }
}

/// The refusal of a request of `test_cases` test cases, more than `--max-test-cases` (`max`).
pub fn too_many_test_cases(test_cases: usize, max: usize) -> ApiError {
    ApiError::new(
        ErrorKind::TooManyTestCases,
        format!(
            "{test_cases} test cases in one request; this server takes at most {max} \
             (--max-test-cases)"
        ),
    )
}

/// What an EvaluationRequest document's answer holds, counted before it is parsed.
#[derive(Debug, PartialEq)]
struct AnswerSize {
    /// For each test case, the checks of `checks` that apply to it (the whole list when it is
    /// shared, its own list when `checks` holds one list per test case) plus its own `checks`.
    /// Whatever is not an array counts nothing (parsing refuses it).
    check_results: u64,
    /// The memory the answer takes, estimated: each check result's [`RESULT_COST`] and the
    /// values it may repeat (its test case and output, whose paths its arguments resolve,
    /// [`ECHO_COPIES`] times), and each test case result's copy of its test case and output.
    bytes: u64,
}

/// The elements of `value` when it is an array; none otherwise.
fn array(value: Option<&Value>) -> &[Value] {
    value
        .and_then(Value::as_array)
        .map_or(&[][..], Vec::as_slice)
}

fn answer_size(document: &Value) -> AnswerSize {
    let test_cases = array(document.get("test_cases"));
    let outputs = array(document.get("outputs"));
    let checks = array(document.get("checks"));
    // As the request reader decides: one list per test case once any item is a list.
    let per_case = checks.iter().any(Value::is_array);
    let mut size = AnswerSize {
        check_results: 0,
        bytes: 0,
    };
    for (index, test_case) in test_cases.iter().enumerate() {
        let from_checks = match per_case {
            true => checks.get(index).map_or(0, |list| array(Some(list)).len()),
            false => checks.len(),
        };
        let results = (from_checks + array(test_case.get("checks")).len()) as u64;
        let echoed = json_size(test_case) + outputs.get(index).map_or(0, json_size);
        size.check_results = size.check_results.saturating_add(results);
        size.bytes = (size.bytes)
            .saturating_add(
                results
                    .saturating_mul(RESULT_COST.saturating_add(echoed.saturating_mul(ECHO_COPIES))),
            )
            .saturating_add(echoed);
    }
    size
}

/// About how many bytes `value` takes written as JSON (at most).
pub(super) fn json_size(value: &Value) -> u64 {
    match value {
        Value::Null | Value::Bool(_) => 5,
        Value::Number(number) => number.as_str().len() as u64,
        Value::String(text) => escaped_size(text),
        Value::Array(values) => 2 + values.iter().map(|value| json_size(value) + 1).sum::<u64>(),
        Value::Object(members) => {
            let each = members
                .iter()
                .map(|(key, value)| escaped_size(key) + 2 + json_size(value));
            2 + each.sum::<u64>()
        }
    }
}

/// How many bytes `text` takes written as a JSON string, quotes included: a control character
/// is written as `\u0001` (6 bytes), a quote or a backslash escaped (2).
fn escaped_size(text: &str) -> u64 {
    let escaped = text.bytes().map(|byte| match byte {
        0..0x20 => 5,
        b'"' | b'\\' => 1,
        _ => 0,
    });
    text.len() as u64 + 2 + escaped.sum::<u64>()
}

/// The most calls of checks that call out the server makes at once, over all evaluations (each
/// makes at most [`DEFAULT_CONCURRENCY`]).
const SERVER_CALLS: usize = 64;

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn a_string_counts_as_written_escaped() {
        for text in ["plain", "quote \" and \\", "\u{1}\n\t\u{1f}", "é, 日本", ""] {
            let written = serde_json::to_string(text).unwrap().len() as u64;
            assert!(escaped_size(text) >= written, "{text:?}");
        }
        assert_eq!(escaped_size("\u{1}"), 8);
        assert_eq!(escaped_size("a\"b"), 6);
        let document = json!({"k\u{1}": ["\u{1}", {"\"": null}]});
        assert!(json_size(&document) >= document.to_string().len() as u64);
    }

    #[test]
    fn check_results_count_the_checks_that_apply_to_each_test_case() {
        let check_results = |document: &Value| answer_size(document).check_results;
        let case = |checks: Value| json!({"id": "t", "input": "q", "checks": checks});
        let check = json!({"type": "exact_match"});
        // Shared checks apply to every test case, and each test case adds its own.
        let shared = json!({
            "test_cases": [case(json!([check, check])), {"id": "u", "input": "q"}, case(json!([]))],
            "checks": [check, check, check],
        });
        assert_eq!(check_results(&shared), 3 * 3 + 2);
        // One list per test case: each list applies to its test case only; lists beyond the
        // test cases apply to none.
        let per_case = json!({
            "test_cases": [case(json!([check])), {"id": "u", "input": "q"}],
            "checks": [[check, check], [check], [check, check, check]],
        });
        assert_eq!(check_results(&per_case), 2 + 1 + 1);
        // What is not an array counts nothing.
        assert_eq!(
            check_results(&json!({"test_cases": 3, "checks": [check]})),
            0
        );
        assert_eq!(check_results(&json!({"test_cases": [{}], "checks": {}})), 0);
        assert_eq!(check_results(&json!([1, 2])), 0);
    }

    #[test]
    fn the_answer_counts_what_each_check_result_may_repeat() {
        let long = "x".repeat(1000);
        let document = json!({
            "test_cases": [{"id": "t", "expected": long}],
            "outputs": [{"value": long}],
            "checks": [{"type": "exact_match"}, {"type": "exact_match"}],
        });
        let echoed = json_size(&document["test_cases"][0]) + json_size(&document["outputs"][0]);
        assert_eq!(echoed, 2038);
        assert_eq!(
            answer_size(&document),
            AnswerSize {
                check_results: 2,
                bytes: 2 * (RESULT_COST + 3 * echoed) + echoed,
            }
        );
    }
}
