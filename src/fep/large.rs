//! A large request evaluated as it is parsed. Most of a large request is its test cases and
//! outputs; rather than building the whole document and then evaluating it, each batch of test
//! cases and outputs is parsed, validated, evaluated and freed by one worker while its values are
//! still in the cache, the results going to a spool until the whole request has proved valid.
//!
//! This path only takes requests it can finish: the usual shape (the arrays found by the scan of
//! [`Split`], as long as each other, shared `checks`), no check that calls out (their calls are
//! answered before evaluation, see [`super::request_calls`]) and no problem anywhere. At the first problem
//! it stops and the general path (parse, [`parse_request`], [`super::evaluate_request`]) runs
//! instead, which reports every problem with the one wording.

use std::collections::HashSet;
use std::hash::{DefaultHasher, Hash, Hasher};
use std::io::{self, Write};
use std::ops::Range;
use std::sync::atomic::{AtomicBool, Ordering};

use serde_json::Value;

use super::case::{catalog_for_batch, catalog_for_own_batch, output_problems, prepare_test_case};
use super::document::Split;
use super::request::{parse_request, CheckSets};
use super::spool::{self, copy_spool, spool_error};
use super::writer::{CaseResults, Layout, RunWriter, Spares};
use crate::checks::{Catalog, Check, Context, Status};
use crate::input::parse_unique;
use crate::pool;

/// Why the evaluation stopped before the end.
enum Stop {
    /// A problem in the request: the general path reports it.
    Problem,
    /// The spool could not be written.
    Spool(io::Error),
}

/// Evaluate the request in `bytes` with the checks of `catalog` (which is left as it is) and
/// write its EvaluationRunResult document to `out`; the run's status, or `None` (nothing
/// written) when the general path is to take the request.
pub fn evaluate_large(
    bytes: &[u8],
    catalog: &Catalog,
    out: &mut impl Write,
) -> anyhow::Result<Option<Status>> {
    let Some(split) = Split::of(bytes) else {
        return Ok(None);
    };
    let (Some((text, test_cases)), Some((_, outputs))) =
        (split.elements("test_cases"), split.elements("outputs"))
    else {
        return Ok(None);
    };
    if test_cases.len() != outputs.len() || test_cases.len() <= pool::BATCH {
        return Ok(None);
    }
    // The rest of the request, validated as the general path does (with no test case yet).
    let Some(frame) = split.document(&["test_cases", "outputs"]) else {
        return Ok(None);
    };
    let mut catalog = catalog_for_batch(catalog);
    let Ok(request) = parse_request(frame, &mut catalog) else {
        return Ok(None);
    };
    let CheckSets::Shared(shared) = &request.checks else {
        return Ok(None);
    };
    if shared.is_empty() || shared.iter().any(Check::calls_out) {
        return Ok(None);
    }
    let mut spool = spool::create()?;
    let mut writer = RunWriter::begin(&mut spool, request.experiment.as_ref(), Layout::Document)
        .map_err(spool_error)?;
    let spares = Spares::default();
    let problem_seen = AtomicBool::new(false);
    // A hash of each test case's id, to find one given twice (FEP 2.1: ids are unique). Two
    // ids of one hash (given twice, or ever so rarely two ids) send the request to the general
    // path, which compares the ids themselves.
    let mut ids: HashSet<u64> = HashSet::with_capacity(test_cases.len());
    let batch = Batch {
        text,
        shared,
        catalog: &catalog,
        spares: &spares,
    };
    let evaluated = pool::ordered(
        pool::workers(),
        test_cases
            .chunks(pool::BATCH)
            .zip(outputs.chunks(pool::BATCH)),
        |(test_cases, outputs)| {
            let results = (!problem_seen.load(Ordering::Relaxed))
                .then(|| batch.evaluate(test_cases, outputs))
                .flatten();
            if results.is_none() {
                problem_seen.store(true, Ordering::Relaxed);
            }
            results
        },
        |results| {
            let (results, batch_ids) = results.ok_or(Stop::Problem)?;
            for id in batch_ids {
                if !ids.insert(id) {
                    return Err(Stop::Problem);
                }
            }
            writer.write(&results).map_err(Stop::Spool)?;
            spares.keep(results);
            Ok(())
        },
    );
    match evaluated {
        Ok(()) => {}
        Err(Stop::Problem) => return Ok(None),
        Err(Stop::Spool(err)) => return Err(spool_error(err)),
    }
    let status = writer.finish().map_err(spool_error)?;
    copy_spool(spool, out)?;
    Ok(Some(status))
}

/// What every batch needs: the request's text, its shared checks, the catalog its test cases'
/// own checks are prepared with, the spare result buffers.
struct Batch<'a> {
    text: &'a [u8],
    shared: &'a [Check],
    catalog: &'a Catalog,
    spares: &'a Spares,
}

impl Batch<'_> {
    /// Parse, validate and evaluate the test cases and outputs at `test_cases` and `outputs`:
    /// their results, and the hashes of the test cases' ids; `None` at the first problem or
    /// check that calls out.
    fn evaluate(
        &self,
        test_cases: &[Range<usize>],
        outputs: &[Range<usize>],
    ) -> Option<(CaseResults, Vec<u64>)> {
        let mut catalog = catalog_for_own_batch(self.catalog);
        let mut context = Context::new(Value::Null, Value::Null);
        let mut results = self.spares.results(Layout::Document);
        let mut ids = Vec::with_capacity(test_cases.len());
        for (test_case, output) in test_cases.iter().zip(outputs) {
            let mut test_case: Value = parse_unique(&self.text[test_case.clone()]).ok()?;
            let own = prepare_test_case(&test_case, &mut catalog).ok()?;
            ids.push(id_hash(test_case.get("id")?.as_str()?));
            if own.iter().any(Check::calls_out) {
                return None;
            }
            let mut output: Value = parse_unique(&self.text[output.clone()]).ok()?;
            if !output_problems(&output).is_empty() {
                return None;
            }
            let checks = self.shared.iter().chain(&own);
            context
                .with(&mut test_case, &mut output, |context| {
                    results.evaluate(context, checks, Vec::new())
                })
                .ok()?;
        }
        Some((results, ids))
    }
}

/// A test case id's hash, the same in every worker.
fn id_hash(id: &str) -> u64 {
    let mut hasher = DefaultHasher::new();
    id.hash(&mut hasher);
    hasher.finish()
}
