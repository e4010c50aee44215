//! Candidates: positional files, `--candidate TEXT`, `--candidates FILE.jsonl`, or stdin.

use std::collections::HashMap;

use serde_json::Value;

use super::jsonl::scan_jsonl_checked;
use super::source::Source;
use super::strict;
use crate::error::Problem;

/// Where the candidates come from (exactly one kind per invocation).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum CandidateSource {
    /// Positional files: each file's whole text is one candidate, id = the path as given
    /// (`-` = stdin, id `stdin`).
    Files(Vec<String>),
    /// `--candidate TEXT`, repeatable: ids `cand-1`, `cand-2`, ...
    Texts(Vec<String>),
    /// `--candidates FILE.jsonl` (`-` = stdin): one `{"candidate", "id"?}` object per line.
    Jsonl(Source),
    /// Nothing given and stdin is not a terminal: the whole of stdin, id `stdin`.
    Stdin,
    /// Nothing given to `preflight`, which probes with its own sentinel: no candidate, and stdin
    /// is not read.
    None,
}

/// One candidate to score.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Candidate {
    /// Its id in results and summaries.
    pub id: String,
    /// The text sent as the payload's `candidate`.
    pub text: String,
    /// The id is one evalctl numbered (`cand-N` for `--candidate TEXT`, `line-N` for a JSONL
    /// line without an `id`), which says nothing of the text: summaries quote the text.
    pub numbered: bool,
}

/// Why a run takes each candidate text once: two candidates with one text would make the same
/// calls, and their results would share keys (a reader of the results file could not tell them
/// apart).
const ONE_TEXT_ONCE: &str = "a run scores each text once (--repeat N scores every text N times)";

/// Load the candidates of `source`, appending every problem found to `problems`.
pub fn load(source: &CandidateSource, problems: &mut Vec<Problem>) -> Vec<Candidate> {
    let candidates = load_each(source, problems);
    if !matches!(source, CandidateSource::Jsonl(_)) {
        let mut first_with_text: HashMap<&str, &str> = HashMap::new();
        for candidate in &candidates {
            if let Some(first) = first_with_text.insert(&candidate.text, &candidate.id) {
                let (flag, what) = match source {
                    CandidateSource::Texts(_) => ("--candidate", candidate.id.as_str()),
                    _ => (candidate.id.as_str(), "it"),
                };
                problems.push(Problem::new(
                    flag,
                    format!("{what} has the same text as {first}: {ONE_TEXT_ONCE}"),
                ));
            }
        }
    }
    candidates
}

fn load_each(source: &CandidateSource, problems: &mut Vec<Problem>) -> Vec<Candidate> {
    match source {
        CandidateSource::Texts(texts) => texts
            .iter()
            .enumerate()
            .map(|(index, text)| Candidate {
                id: format!("cand-{}", index + 1),
                text: text.clone(),
                numbered: true,
            })
            .collect(),
        CandidateSource::Stdin => stdin_candidate(problems).into_iter().collect(),
        CandidateSource::None => Vec::new(),
        CandidateSource::Files(paths) => {
            // Ids are the paths; a path given twice would merge two candidates' aggregates.
            // Each is read once (stdin cannot be read twice).
            let mut seen = std::collections::HashSet::new();
            let mut candidates = Vec::with_capacity(paths.len());
            for path in paths {
                let id = if path == "-" { "stdin" } else { path.as_str() };
                if !seen.insert(id) {
                    problems.push(Problem::new(
                        path.as_str(),
                        "candidate given twice (candidate ids must be unique)",
                    ));
                } else if let Some(candidate) = load_file(path, problems) {
                    candidates.push(candidate);
                }
            }
            candidates
        }
        CandidateSource::Jsonl(path) => load_jsonl(path, problems),
    }
}

fn load_file(path: &str, problems: &mut Vec<Problem>) -> Option<Candidate> {
    if path == "-" {
        return stdin_candidate(problems);
    }
    match Source::from_arg(path).read() {
        Ok(bytes) => whole_text(path, bytes, problems).map(|text| Candidate {
            id: path.to_string(),
            text,
            numbered: false,
        }),
        Err(problem) => {
            problems.push(problem);
            None
        }
    }
}

fn whole_text(display: &str, bytes: Vec<u8>, problems: &mut Vec<Problem>) -> Option<String> {
    match String::from_utf8(bytes) {
        Ok(text) => Some(text),
        Err(err) => {
            let offset = err.utf8_error().valid_up_to();
            let line = err.as_bytes()[..offset]
                .iter()
                .filter(|&&b| b == b'\n')
                .count()
                + 1;
            problems.push(Problem::at_line(
                display,
                line,
                "invalid UTF-8 (candidate text must be UTF-8)",
            ));
            None
        }
    }
}

/// The whole of stdin as the candidate `stdin`. Empty stdin is a problem: in a script or CI job
/// it means the candidate was never given (or was taken for an evaluator argument).
fn stdin_candidate(problems: &mut Vec<Problem>) -> Option<Candidate> {
    let text = whole_text("<stdin>", stdin_or_problem(problems)?, problems)?;
    if text.is_empty() {
        problems.push(Problem::new(
            "<stdin>",
            "no candidate: stdin is empty. Pass candidate files, --candidate TEXT or \
             --candidates FILE.jsonl (values right after --evaluator-command belong to the \
             evaluator: put candidate files before it, or quote the command)",
        ));
        return None;
    }
    Some(Candidate {
        id: "stdin".into(),
        text,
        numbered: false,
    })
}

fn stdin_or_problem(problems: &mut Vec<Problem>) -> Option<Vec<u8>> {
    Source::Stdin
        .read()
        .map_err(|problem| problems.push(problem))
        .ok()
}

fn load_jsonl(source: &Source, problems: &mut Vec<Problem>) -> Vec<Candidate> {
    let display = source.display();
    let bytes = match source.read() {
        Ok(bytes) => bytes,
        Err(problem) => {
            problems.push(problem);
            return Vec::new();
        }
    };
    let mut first_line_of_id: HashMap<String, usize> = HashMap::new();
    let mut first_line_of_text: HashMap<String, usize> = HashMap::new();
    let mut candidates = Vec::new();
    let (_, mut file_problems) = scan_jsonl_checked(&display, &bytes, |record| {
        let line = record.line;
        // Other keys are the user's own (metadata), but one that is a typo of ours (`idd` on a
        // line without `id`) would silently give the candidate another id or no text.
        const KEYS: [&str; 2] = ["candidate", "id"];
        let typo = record.value.as_object().and_then(|object| {
            object.keys().find(|key| {
                key.len() > 2
                    && !KEYS.contains(&key.as_str())
                    && strict::nearest(key, KEYS).is_some_and(|near| !object.contains_key(near))
            })
        });
        if let Some(key) = typo {
            return Some(strict::unknown_key_near(key, &KEYS));
        }
        let text = match record.value.get("candidate").map(strict::as_str) {
            Some(Ok(text)) => text.to_string(),
            Some(Err(reason)) => return Some(format!("candidate: {reason}")),
            None => return Some(strict::missing_key("candidate")),
        };
        let (id, numbered) = match record.value.get("id") {
            None | Some(Value::Null) => (format!("line-{line}"), true),
            Some(Value::String(id)) if !id.is_empty() && !id.chars().any(char::is_control) => {
                (id.clone(), false)
            }
            Some(other) => {
                let expected = "a non-empty string without control characters";
                return Some(match other {
                    Value::String(id) => format!("id: expected {expected}, found {id:?}"),
                    other => format!("id: {}", strict::wrong_type(expected, other)),
                });
            }
        };
        if let Some(first) = first_line_of_id.get(&id) {
            return Some(format!(
                "duplicate candidate id {id:?} (first on line {first})"
            ));
        }
        if let Some(first) = first_line_of_text.get(&text) {
            return Some(format!(
                "candidate {id:?} has the same text as line {first}'s: {ONE_TEXT_ONCE}"
            ));
        }
        first_line_of_id.insert(id.clone(), line);
        first_line_of_text.insert(text.clone(), line);
        candidates.push(Candidate { id, text, numbered });
        None
    });
    // Every problem of the file, in line order, in one pass.
    problems.append(&mut file_problems);
    candidates
}
