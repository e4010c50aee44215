//! Reading a results file (`run --output`, the run's journal; `tasks score`/`tasks run
//! --output` and `spec score` lines, which carry the same members) back: its lines as
//! [`CallRecord`]s through the shared streaming reader, the rule for which of several lines of
//! one key counts, and the repair of a torn last line left by a killed run.
//!
//! A journal may hold more than one line for a key: `--resume` re-runs an errored call and
//! appends its new line after the old one. [`replaces`] says which counts.

use std::collections::HashMap;
use std::fs::File;
use std::io::{Read, Seek, SeekFrom};
use std::path::Path;

use serde_json::Value;

use crate::error::Problem;
use crate::input::{json_error_what, parse_object_line, JsonlStream, Source};
use crate::protocol::{validate_score, ScoreRange};
use crate::record::{CallRecord, RunIdentity};
use crate::text::io_reason;

/// The problem of a JSON object that is no result line at all (a dataset record, say).
const NOT_A_RESULT: &str = "not a result line: expected a `run --output` result line \
     (candidate_id, split, score, ...)";

/// One line of a results file.
#[derive(Debug, Clone)]
pub struct JournalLine {
    /// Its 1-based line number.
    pub line: usize,
    /// The result it records (`errored_checks` filled from `side_info`).
    pub record: CallRecord,
}

/// The lines of a results file (or stdin), in order, streamed: memory does not grow with the file.
pub struct JournalReader {
    stream: JsonlStream,
    /// The last line, cut short by a killed run and left out, once the reader has met it.
    torn: Option<TornTail>,
    /// Whether a line whose score its own run's score range refuses is a problem (it is unless
    /// [`JournalReader::scores_unchecked`]).
    checks_scores: bool,
}

impl JournalReader {
    /// Open `source` for reading; a missing or unreadable file is the problem.
    pub fn open(source: &Source) -> Result<JournalReader, Problem> {
        let file = JsonlStream::open_file(source)?;
        Ok(JournalReader {
            stream: JsonlStream::new(source, file),
            torn: None,
            checks_scores: true,
        })
    }

    /// Read a line whose score its run's score range refuses like any other, for a caller that
    /// judges scores itself ([`score_refused`]).
    pub fn scores_unchecked(mut self) -> JournalReader {
        self.checks_scores = false;
        self
    }

    /// The last line, when a killed run cut it short (the reader ends before it).
    pub fn torn(&self) -> Option<TornTail> {
        self.torn
    }

    /// `a.jsonl:12: the last line was cut short by an interrupted run (340 bytes): left out`,
    /// and what completes the run, when the reader met such a line: it is not read as a line
    /// (the reader ends before it), as `--resume` cuts it off. A note for the user, or the
    /// problem of a file that holds nothing else.
    pub fn torn_line(&self) -> Option<Problem> {
        self.torn
            .map(|torn| torn_line_problem(&self.stream.display, torn.line, torn.bytes))
    }
}

/// `FILE:LINE: the last line was cut short by an interrupted run (N bytes): left out (run
/// --resume completes the run)`: what every results reader says of a killed run's last line.
pub fn torn_line_problem(display: &str, line: usize, bytes: u64) -> Problem {
    Problem::at_line(
        display,
        line,
        format!(
            "the last line was cut short by an interrupted run ({}): left out (run --resume \
             completes the run)",
            crate::text::counted(bytes as usize, "byte", "bytes")
        ),
    )
}

impl Iterator for JournalReader {
    type Item = Result<JournalLine, Problem>;

    /// The next line's record, or the problem of a line that is not a result line (named by file
    /// and line); `None` at the end. Blank lines are skipped.
    fn next(&mut self) -> Option<Self::Item> {
        let (line, text) = match self.stream.next_text()? {
            Ok(found) => found,
            // Cut in the middle of a character: a killed run's last line too.
            Err(problem) => match (self.stream.unterminated_len(), problem.line) {
                (Some(bytes), Some(line)) => return self.torn_at(line, bytes),
                _ => return Some(Err(problem)),
            },
        };
        // Built whole while the line's text is borrowed; whether an error is a torn last line is
        // asked of the stream afterwards.
        let built = match serde_json::from_str::<CallRecord>(text) {
            Ok(mut record) => {
                record.errored_checks = CallRecord::errored_checks_of(&record.side_info);
                // A failed call scores 0 in every aggregate, whatever a hand-edited line says.
                if record.error.is_some() {
                    record.score = 0.0;
                }
                // Another scoring command's line: its own members are its side information.
                if record.run.as_ref().is_some_and(|run| run.command.is_some()) {
                    if let Ok(Value::Object(object)) = parse_object_line(text) {
                        record.side_info = CallRecord::own_members(object);
                    }
                }
                // A line without a score says why (a missing task's does); one that does not
                // would count as a successful 0.
                let unexplained = record.error.is_none()
                    && record.score == 0.0
                    && parse_object_line(text)
                        .is_ok_and(|object| object.get("score").is_some_and(Value::is_null));
                // A line that says which run it is, but not in a form evalctl writes, is no
                // line of an older evalctl: its run member is at fault.
                let identity_fault = record
                    .run
                    .as_ref()
                    .is_some_and(|run| run.identity.is_none())
                    .then(|| identity_fault(text))
                    .flatten();
                match record.run.as_ref().map(|run| run.range()) {
                    _ if identity_fault.is_some() => Err((
                        false,
                        format!("not a result line: {}", identity_fault.unwrap_or_default()),
                    )),
                    _ if unexplained => Err((
                        false,
                        "score is null and error is null: a line without a score says why; \
                         evalctl never writes such a line; correct or remove it"
                            .to_string(),
                    )),
                    Some(range) if self.checks_scores && score_refused(&record, range) => Err((
                        false,
                        format!(
                            "score {} is outside its run's score range ({}): evalctl never \
                                 writes such a line; correct or remove it",
                            record.score,
                            range.as_str()
                        ),
                    )),
                    _ => Ok(JournalLine { line, record }),
                }
            }
            // A line that is not a JSON object says so in the shared wording; one that is, but
            // not a result line, names the key at fault.
            Err(err) => Err((
                err.is_eof(),
                match parse_object_line(text) {
                    Err(reason) => reason,
                    Ok(object) if object.get("candidate_id").is_none() => NOT_A_RESULT.to_string(),
                    Ok(_) => format!("not a result line: {}", member_at_fault(text, &err)),
                },
            )),
        };
        match (built, self.stream.unterminated_len()) {
            (Ok(line), _) => Some(Ok(line)),
            // A last line whose JSON ends too soon: the end of what a killed run wrote, not a
            // bad line.
            (Err((true, _)), Some(bytes)) => self.torn_at(line, bytes),
            (Err((_, reason)), _) => Some(Err(Problem::at_line(
                self.stream.display.as_str(),
                line,
                reason,
            ))),
        }
    }
}

/// What is wrong with the `run` member of the result line `text` when it names a run (a
/// `fingerprint`) but does not decode as one: `run.shard: expected K/N …`.
fn identity_fault(text: &str) -> Option<String> {
    let line = parse_object_line(text).ok()?;
    let run = line.get("run")?;
    run.get("fingerprint")?;
    let located = serde_path_to_error::deserialize::<_, RunIdentity>(run).err()?;
    let what = json_error_what(located.inner());
    Some(format!("run.{}: {what}", located.path()))
}

/// What is wrong with the JSON object `text` that did not decode as a result line (`err`): the
/// member at fault, named by its path, and why (`score: invalid type: string "0.5", expected a
/// number at column 199`).
fn member_at_fault(text: &str, err: &serde_json::Error) -> String {
    let mut deserializer = serde_json::Deserializer::from_str(text);
    let path = serde_path_to_error::deserialize::<_, CallRecord>(&mut deserializer)
        .err()
        .map(|located| located.path().to_string())
        .filter(|path| !path.is_empty() && path != ".");
    let what = format!("{} at column {}", json_error_what(err), err.column());
    match path {
        Some(path) => format!("{path}: {what}"),
        None => what,
    }
}

impl JournalReader {
    /// End at the torn last line `line` of `bytes` bytes, noting it.
    fn torn_at(&mut self, line: usize, bytes: usize) -> Option<Result<JournalLine, Problem>> {
        self.torn = Some(TornTail {
            line,
            bytes: bytes as u64,
        });
        None
    }
}

/// Whether `record`'s score is one `range` refuses, as the score validator judges an
/// evaluator's (a failed call's line scores 0, which every range takes).
pub fn score_refused(record: &CallRecord, range: ScoreRange) -> bool {
    validate_score(&Value::from(record.score), range).is_err()
}

/// Whether a line replaces an earlier line with the same key, given whether each failed: a later
/// line wins, except that an error never replaces a success.
pub fn replaces(later_failed: bool, earlier_failed: bool) -> bool {
    !later_failed || earlier_failed
}

/// The lines of one run, one a call: of several lines with one key, the one [`replaces`] picks,
/// in the order of each call's first line. The others, and the lines that answer no call (an
/// interrupted call's answer, not scored), are the run's superseded lines: what they spent is
/// the run's too.
#[derive(Debug, Default)]
pub struct OneLineACall {
    counted: Vec<CallRecord>,
    by_key: HashMap<String, usize>,
    superseded: Vec<CallRecord>,
}

impl OneLineACall {
    /// Take the run's next line.
    pub fn add(&mut self, record: CallRecord) {
        if record.unscored() {
            self.superseded.push(record);
            return;
        }
        let key = record.call_key();
        match self.by_key.get(&key) {
            Some(&index) => {
                let earlier = &mut self.counted[index];
                if replaces(record.error.is_some(), earlier.error.is_some()) {
                    let earlier = std::mem::replace(earlier, record);
                    self.superseded.push(earlier);
                } else {
                    self.superseded.push(record);
                }
            }
            None => {
                self.by_key.insert(key, self.counted.len());
                self.counted.push(record);
            }
        }
    }

    /// The lines that count, and the superseded ones, each line naming its candidate as the
    /// run's lines name it ([`RunLines::renamed`]).
    pub fn finish(self) -> RunLines {
        let (mut counted, mut superseded) = (self.counted, self.superseded);
        let names = names_most_lines_give(counted.iter().chain(&superseded));
        let mut renamed = 0;
        for record in counted.iter_mut().chain(&mut superseded) {
            let name = (record.candidate_index).and_then(|index| names.get(&index));
            if let Some(name) = name.filter(|name| **name != record.candidate_id) {
                record.candidate_id.clone_from(name);
                renamed += 1;
            }
        }
        RunLines {
            counted,
            superseded,
            renamed,
        }
    }
}

/// The lines of one run that [`OneLineACall`] sorted.
#[derive(Debug)]
pub struct RunLines {
    /// One line a call.
    pub counted: Vec<CallRecord>,
    /// The lines other lines of their call replaced, and those that answer no call.
    pub superseded: Vec<CallRecord>,
    /// Lines that named their candidate (`candidate_index`) otherwise than most lines of the
    /// run do (edited by hand): they are counted with their candidate, under its name, rather
    /// than as a candidate the run does not have.
    pub renamed: usize,
}

/// The name (`candidate_id`) of each candidate (`candidate_index`) of `records`: the one most
/// of its lines give, of names given equally often the first, and never another candidate's.
/// A name several candidates' lines give goes to the one whose lines give it most (the first of
/// them, at equal counts); the others take their next most given name, and one left with no
/// name of its own is `candidate N` (counting from 1), as it stands in the plan.
fn names_most_lines_give<'a>(
    records: impl Iterator<Item = &'a CallRecord>,
) -> HashMap<usize, String> {
    // (index, name, lines giving it, order first seen)
    let mut given: Vec<(usize, &str, usize)> = Vec::new();
    let mut position: HashMap<(usize, &str), usize> = HashMap::new();
    for record in records {
        let Some(index) = record.candidate_index else {
            continue;
        };
        let key = (index, record.candidate_id.as_str());
        match position.get(&key) {
            Some(&at) => given[at].2 += 1,
            None => {
                position.insert(key, given.len());
                given.push((index, &record.candidate_id, 1));
            }
        }
    }
    // Most lines first; of equal counts, the name seen first (a stable sort keeps that order).
    given.sort_by_key(|given| std::cmp::Reverse(given.2));
    let mut names: HashMap<usize, String> = HashMap::new();
    let mut taken: std::collections::HashSet<&str> = std::collections::HashSet::new();
    for &(index, name, _) in &given {
        if !names.contains_key(&index) && taken.insert(name) {
            names.insert(index, name.to_string());
        }
    }
    for &(index, _, _) in &given {
        if names.contains_key(&index) {
            continue;
        }
        // Its position's name, made distinct from every name taken.
        let plain = format!("candidate {}", index + 1);
        let name = std::iter::once(plain.clone())
            .chain((2..).map(|n| format!("{plain} ({n})")))
            .find(|name| !taken.contains(name.as_str()))
            .unwrap_or(plain);
        names.insert(index, name);
    }
    names
}

/// A last line cut short by a killed run (no closing newline), removed by [`mend_tail`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TornTail {
    /// Its 1-based line number.
    pub line: usize,
    /// How many bytes it had.
    pub bytes: u64,
}

/// How a results file ends, as [`tail_of`] finds it without changing it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Tail {
    /// Absent, empty, or ending with a newline.
    Whole,
    /// A last line a killed run cut short (its JSON ends too soon, or its last character is cut
    /// in the middle): the first `keep` bytes are the whole lines before it.
    Torn {
        /// The line and its length.
        torn: TornTail,
        /// The length of the file without it.
        keep: u64,
    },
    /// A last line without its newline that is not cut short: written by hand or by another
    /// tool. It is read like any line (a bad one is a problem naming it).
    Unended,
}

/// How every line `run` writes starts: `key` is the first member a [`CallRecord`] serializes,
/// and `run` gives every call its key.
pub const RESULT_LINE_START: &[u8] = b"{\"key\":\"";

/// How the file at `path` ends ([`Tail`]), read from its end without changing it. Only a last
/// line whose JSON ends too soon is torn: a whole object without its newline, or text that is
/// not JSON, is left for the reader to take or refuse, so a file named by mistake loses nothing.
/// A torn line must also be one evalctl may have written, whose lines start with `own_start`
/// (it agrees with it as far as it goes): any other unfinished JSON (notes, a draft) is the
/// problem, and the file is left as it was.
pub fn tail_of(path: &Path, own_start: &[u8]) -> Result<Tail, Problem> {
    let fail = |err: std::io::Error| {
        Problem::new(
            path.display().to_string(),
            format!("cannot read the journal: {}", io_reason(&err)),
        )
    };
    let mut file = match File::open(path) {
        Ok(file) => file,
        Err(err) if err.kind() == std::io::ErrorKind::NotFound => return Ok(Tail::Whole),
        Err(err) => return Err(fail(err)),
    };
    let length = file.metadata().map_err(fail)?.len();
    let Some(keep) = whole_lines_length(&mut file, length).map_err(fail)? else {
        return Ok(Tail::Whole);
    };
    let mut last = Vec::new();
    file.seek(SeekFrom::Start(keep)).map_err(fail)?;
    file.read_to_end(&mut last).map_err(fail)?;
    let cut_character = std::str::from_utf8(&last).is_err_and(|err| err.error_len().is_none());
    let cut_json =
        serde_json::from_slice::<serde::de::IgnoredAny>(&last).is_err_and(|err| err.is_eof());
    if !(cut_character || cut_json) {
        return Ok(Tail::Unended);
    }
    let line = count_newlines(&mut file, keep).map_err(fail)? + 1;
    let agreed = last.len().min(own_start.len());
    if last[..agreed] != own_start[..agreed] {
        return Err(Problem::at_line(
            path.display().to_string(),
            line,
            format!(
                "the last line is unfinished JSON that does not start as evalctl's lines do \
                 ({}): it is no line an interrupted run cut short, and the file is left as it \
                 was: name another file",
                String::from_utf8_lossy(own_start)
            ),
        ));
    }
    Ok(Tail::Torn {
        torn: TornTail {
            line,
            bytes: length - keep,
        },
        keep,
    })
}

/// Make the results file at `path` end with a whole line before lines are appended, as `tail`
/// (from [`tail_of`], once the file was read and found to be the command's own) says: cut a torn
/// last line off (and say what was removed), or end an unended one with its newline.
pub fn mend_tail(path: &Path, tail: Tail) -> Result<Option<TornTail>, Problem> {
    let fail = |err: std::io::Error| {
        Problem::new(
            path.display().to_string(),
            format!("cannot repair the journal: {}", io_reason(&err)),
        )
    };
    let open = || std::fs::OpenOptions::new().append(true).open(path);
    match tail {
        Tail::Whole => Ok(None),
        Tail::Torn { torn, keep } => {
            let file = open().map_err(fail)?;
            file.set_len(keep).map_err(fail)?;
            file.sync_all().map_err(fail)?;
            Ok(Some(torn))
        }
        Tail::Unended => {
            let mut file = open().map_err(fail)?;
            std::io::Write::write_all(&mut file, b"\n").map_err(fail)?;
            file.sync_all().map_err(fail)?;
            Ok(None)
        }
    }
}

/// Whether the file at `path` ends with a newline (its last line is whole); false when it
/// cannot be read.
pub fn ends_with_newline(path: &Path) -> bool {
    let mut last = [0u8];
    File::open(path)
        .and_then(|mut file| {
            file.seek(SeekFrom::End(-1))?;
            file.read_exact(&mut last)
        })
        .is_ok_and(|()| last[0] == b'\n')
}

/// The length of `file` up to and including its last newline, or `None` when it ends with one
/// (or is empty). Reads backwards from the end, a block at a time.
fn whole_lines_length(file: &mut File, length: u64) -> std::io::Result<Option<u64>> {
    const BLOCK: u64 = 64 * 1024;
    let mut end = length;
    let mut block = vec![0u8; BLOCK as usize];
    while end > 0 {
        let start = end.saturating_sub(BLOCK);
        let piece = &mut block[..(end - start) as usize];
        file.seek(SeekFrom::Start(start))?;
        file.read_exact(piece)?;
        if end == length && piece.last() == Some(&b'\n') {
            return Ok(None);
        }
        if let Some(newline) = piece.iter().rposition(|&byte| byte == b'\n') {
            return Ok(Some(start + newline as u64 + 1));
        }
        end = start;
    }
    Ok((length > 0).then_some(0))
}

/// How many newlines the first `length` bytes of `file` hold.
fn count_newlines(file: &mut File, length: u64) -> std::io::Result<usize> {
    file.seek(SeekFrom::Start(0))?;
    let mut count = 0;
    let mut block = vec![0u8; 64 * 1024];
    let mut reader = file.take(length);
    loop {
        let read = reader.read(&mut block)?;
        if read == 0 {
            return Ok(count);
        }
        count += block[..read].iter().filter(|&&byte| byte == b'\n').count();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const LINE: &str = r#"{"key":"ab","candidate_id":"c","split":"train","example_index":0,"example_line":1,"score":0.5,"side_info":{"errored_checks":["x"]},"error":null,"attempts":1,"latency_ms":2.0}"#;

    #[test]
    fn lines_read_back_as_records() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("r.jsonl");
        let failed = r#"{"candidate_id":"c","split":"single","example_index":null,"example_line":null,"score":0.0,"side_info":{},"error":{"kind":"timeout","message":"slow"},"attempts":3,"latency_ms":9.0,"cached":true,"repeat":2}"#;
        std::fs::write(&path, format!("{LINE}\n\n{failed}\n[1]\n{{\"score\":1}}\n")).unwrap();
        let lines: Vec<_> = JournalReader::open(&Source::File(path.clone()))
            .unwrap()
            .collect();
        let first = lines[0].as_ref().unwrap();
        assert_eq!(first.line, 1);
        assert_eq!(first.record.key.as_deref(), Some("ab"));
        assert_eq!(first.record.errored_checks, ["x"]);
        let second = &lines[1].as_ref().unwrap().record;
        assert_eq!(lines[1].as_ref().unwrap().line, 3);
        assert_eq!(second.error.as_ref().unwrap().kind.as_str(), "timeout");
        assert!(second.cached);
        assert_eq!(second.repeat, Some(2));
        let problem = |index: usize| lines[index].as_ref().unwrap_err().to_string();
        assert!(problem(2).ends_with(":4: expected a JSON object, found array"));
        assert!(
            problem(3).ends_with(
                ":5: not a result line: expected a `run --output` result line \
                 (candidate_id, split, score, ...)"
            ),
            "{}",
            problem(3)
        );
        // A failed call counts 0, whatever its line says.
        let edited = failed.replace("\"score\":0.0", "\"score\":0.9");
        std::fs::write(&path, format!("{edited}\n")).unwrap();
        let read: Vec<_> = JournalReader::open(&Source::File(path.clone()))
            .unwrap()
            .collect();
        assert_eq!(read[0].as_ref().unwrap().record.score, 0.0);
        assert!(replaces(false, true) && replaces(true, true) && replaces(false, false));
        assert!(!replaces(true, false));
    }

    #[test]
    fn each_candidate_keeps_a_name_of_its_own() {
        // Candidates 0 and 1 both named X by their lines; candidate 2's lines give the name
        // candidate 1 would fall back to.
        let line = |index: usize, id: &str| {
            let mut value: Value = serde_json::from_str(LINE).unwrap();
            value["candidate_index"] = index.into();
            value["candidate_id"] = id.into();
            serde_json::from_value::<CallRecord>(value).unwrap()
        };
        let records = [
            line(0, "X"),
            line(0, "X"),
            line(1, "X"),
            line(2, "candidate 2"),
            line(2, "candidate 2"),
        ];
        let names = names_most_lines_give(records.iter());
        let mut names: Vec<(usize, String)> = names.into_iter().collect();
        names.sort();
        assert_eq!(
            names,
            [
                (0, "X".to_string()),
                (1, "candidate 2 (2)".to_string()),
                (2, "candidate 2".to_string())
            ]
        );
    }

    #[test]
    fn one_line_a_call_keeps_the_line_that_counts_and_the_superseded_ones() {
        let line = |example: u64, score: f64, failed: bool| {
            let mut value: Value = serde_json::from_str(LINE).unwrap();
            value["example_index"] = example.into();
            value["key"] = format!("k{example}").into();
            value["score"] = score.into();
            if failed {
                value["error"] = serde_json::json!({"kind": "timeout", "message": "slow"});
            }
            serde_json::from_value::<CallRecord>(value).unwrap()
        };
        let mut lines = OneLineACall::default();
        for record in [
            line(0, 0.0, true),
            line(1, 0.5, false),
            line(0, 0.7, false),
            line(0, 0.0, true),
        ] {
            lines.add(record);
        }
        let RunLines {
            counted,
            superseded,
            renamed,
        } = lines.finish();
        assert_eq!(renamed, 0);
        let scores = |records: &[CallRecord]| records.iter().map(|r| r.score).collect::<Vec<_>>();
        // The first example's success counts, in the place of its first line.
        assert_eq!(scores(&counted), [0.7, 0.5]);
        assert_eq!(superseded.len(), 2);
        assert!(superseded.iter().all(|record| record.error.is_some()));
    }

    #[test]
    fn only_a_line_whose_json_ends_too_soon_is_torn() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("r.jsonl");
        let tail = || tail_of(&path, RESULT_LINE_START);
        let look = |text: &str| {
            std::fs::write(&path, text).unwrap();
            tail().unwrap()
        };
        assert_eq!(tail().unwrap(), Tail::Whole);
        assert_eq!(look(&format!("{LINE}\n{LINE}\n")), Tail::Whole);
        let two = (2 * (LINE.len() + 1)) as u64;
        let torn = look(&format!("{LINE}\n{LINE}\n{{\"key\":\"a"));
        assert_eq!(
            torn,
            Tail::Torn {
                torn: TornTail { line: 3, bytes: 9 },
                keep: two
            }
        );
        // Looking changes nothing; mending cuts the torn line.
        assert!(std::fs::read_to_string(&path).unwrap().ends_with("\"a"));
        assert_eq!(
            mend_tail(&path, torn).unwrap(),
            Some(TornTail { line: 3, bytes: 9 })
        );
        assert_eq!(
            std::fs::read_to_string(&path).unwrap(),
            format!("{LINE}\n{LINE}\n")
        );
        // A character cut in the middle.
        assert!(matches!(
            look("{\"key\":\"\u{e9}"),
            Tail::Torn { keep: 0, .. }
        ));
        std::fs::write(&path, [b"{\"key\":\"".as_slice(), &[0xc3]].concat()).unwrap();
        assert!(matches!(tail().unwrap(), Tail::Torn { keep: 0, .. }));
        // Cut before its key ends: it may still be evalctl's.
        assert!(matches!(look("{\"ke"), Tail::Torn { keep: 0, .. }));
        // Unfinished JSON that no line of evalctl's starts as is refused, and left as it was.
        for foreign in [
            "{\"my\":\"draft",
            "{ \"key\":\"a",
            &format!("{LINE}\n{{\"a"),
        ] {
            std::fs::write(&path, foreign).unwrap();
            let line = foreign.lines().count();
            assert_eq!(
                tail().unwrap_err().to_string(),
                format!(
                    "{}:{line}: the last line is unfinished JSON that does not start as \
                     evalctl's lines do ({{\"key\":\"): it is no line an interrupted run cut \
                     short, and the file is left as it was: name another file",
                    path.display()
                ),
                "{foreign}"
            );
            assert_eq!(std::fs::read_to_string(&path).unwrap(), foreign);
        }
        // A whole line without its newline, or text that is no JSON, is not torn.
        let unended = look(&format!("{LINE}\n{LINE}"));
        assert_eq!(unended, Tail::Unended);
        assert_eq!(mend_tail(&path, unended).unwrap(), None);
        assert_eq!(
            std::fs::read_to_string(&path).unwrap(),
            format!("{LINE}\n{LINE}\n")
        );
        assert_eq!(look("notes\nline two, no newline"), Tail::Unended);
        assert_eq!(look("only line"), Tail::Unended);
    }
}
