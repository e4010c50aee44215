//! The journal under faults, through the binary: runs killed with SIGKILL at random (seeded)
//! moments and resumed end with exactly one successful line per planned call and the summary of
//! an uninterrupted run; Ctrl-C lets calls in flight finish, a second Ctrl-C stops them, and
//! `--resume` completes an interrupted run.

use crate::common;

use std::collections::HashMap;
use std::process::{Child, Stdio};
use std::time::Duration;

use crate::common::{code, json_stdout, stderr_text, succeeded, wait_until, Sandbox};
use serde_json::Value;

/// Scores each call with the example's `s`, after a short pause so runs last long enough to
/// be killed mid-way.
const SCORE_S: &str = "p=$(cat)\nsleep 0.01\ns=$(printf '%s' \"$p\" | sed -n 's/.*\"s\": *\\([0-9.]*\\).*/\\1/p')\nprintf '{\"score\": %s}' \"$s\"\n";

/// Two candidates × 30 examples: 60 calls.
fn sandbox() -> Sandbox {
    let sb = Sandbox::new();
    let dataset: String = (0..30)
        .map(|i| format!("{{\"s\": 0.{}}}\n", i % 10))
        .collect();
    sb.write("d.jsonl", dataset);
    sb.write("eval.sh", SCORE_S);
    sb
}

const RUN: &[&str] = &[
    "run",
    "--format",
    "json",
    "--skip-preflight",
    "-j",
    "4",
    "--evaluator-command",
    "sh eval.sh",
    "--candidate",
    "a",
    "--candidate",
    "bb",
    "--dataset",
    "d.jsonl",
];

fn start(sb: &Sandbox, output: &str, extra: &[&str]) -> Child {
    common::evalctl_process()
        .current_dir(sb.path())
        .args(RUN)
        .args(["--output", output])
        .args(extra)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("start evalctl")
}

/// The summary without its wall time, its numbers to 12 decimals: calls finish in a different
/// order in every run (at -j 4 too), so a mean's last bit may differ.
fn comparable(mut summary: Value) -> Value {
    fn round(value: &mut Value) {
        match value {
            Value::Number(number) => {
                *value = Value::String(format!("{:.12}", number.as_f64().unwrap_or(f64::NAN)))
            }
            Value::Array(items) => items.iter_mut().for_each(round),
            Value::Object(fields) => fields.values_mut().for_each(round),
            _ => {}
        }
    }
    summary
        .as_object_mut()
        .expect("the summary is an object")
        .remove("elapsed_ms");
    round(&mut summary);
    summary
}

/// Key → successful lines of that key in the journal `name`.
fn successes(sb: &Sandbox, name: &str) -> HashMap<String, usize> {
    let mut counts = HashMap::new();
    for line in sb.jsonl(name) {
        if line["error"].is_null() {
            let key = line["key"]
                .as_str()
                .expect("every line has a key")
                .to_string();
            *counts.entry(key).or_default() += 1;
        }
    }
    counts
}

/// A small seeded generator (64-bit LCG), so each run kills at the same moments.
struct Moments(u64);

impl Moments {
    fn next_below(&mut self, bound: u64) -> u64 {
        self.0 = self
            .0
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        (self.0 >> 33) % bound
    }
}

/// SIGKILL `child` once the journal has `lines` lines (at once when it has them already, or
/// when `lines` is 0), or leave it be when it ends first. Moments are counted in journal lines,
/// not in milliseconds, so a slow machine kills at the same points of a run as a fast one.
fn kill_at_line(sb: &Sandbox, journal: &str, child: &mut Child, lines: usize) {
    wait_until(Duration::from_secs(30), || {
        sb.lines(journal).len() >= lines || matches!(child.try_wait(), Ok(Some(_)))
    });
    if child.try_wait().expect("poll evalctl").is_none() {
        child.kill().expect("SIGKILL evalctl");
    }
}

#[test]
fn runs_killed_at_random_moments_and_resumed_match_an_uninterrupted_run() {
    let sb = sandbox();
    let reference = succeeded(sb.evalctl().args(RUN).args(["--output", "whole.jsonl"]));
    let expected = comparable(json_stdout(&reference));
    let planned = successes(&sb, "whole.jsonl");
    assert_eq!(planned.len(), 60);

    let mut moments = Moments(9);
    let mut cut_mid_way = 0;
    for run in 0..20 {
        let journal = format!("killed-{run}.jsonl");
        // Kill once or twice, each at a random moment of the run, resuming in between.
        for kill in 0..=moments.next_below(2) {
            let extra: &[&str] = if kill == 0 { &[] } else { &["--resume"] };
            let mut child = start(&sb, &journal, extra);
            kill_at_line(&sb, &journal, &mut child, moments.next_below(60) as usize);
            child.wait().expect("reap evalctl");
        }
        cut_mid_way += usize::from((1..60).contains(&sb.lines(&journal).len()));
        let resumed = succeeded(
            sb.evalctl()
                .args(RUN)
                .args(["--output", &journal, "--resume"]),
        );
        assert_eq!(
            comparable(json_stdout(&resumed)),
            expected,
            "run {run}: the resumed summary differs"
        );
        let found = successes(&sb, &journal);
        assert_eq!(
            found.keys().collect::<std::collections::BTreeSet<_>>(),
            planned.keys().collect(),
            "run {run}: a gap or a foreign key"
        );
        assert!(
            found.values().all(|&count| count == 1),
            "run {run}: a call has two successful lines"
        );
    }
    assert!(
        cut_mid_way >= 10,
        "only {cut_mid_way} of 20 runs were killed mid-way"
    );
}

/// Send `signal` to `child`.
fn signal(child: &Child, signal: libc::c_int) {
    // SAFETY: kill with a live child's pid has no memory-safety preconditions.
    unsafe {
        libc::kill(child.id() as libc::pid_t, signal);
    }
}

#[test]
fn ctrl_c_lets_calls_in_flight_finish_and_resume_completes_the_run() {
    let sb = sandbox();
    // Each call marks its start, then takes a while.
    sb.write(
        "eval.sh",
        format!("echo started >> started.log\nsleep 0.5\n{SCORE_S}"),
    );
    let child = start(&sb, "out.jsonl", &[]);
    assert!(wait_until(Duration::from_secs(20), || sb
        .lines("started.log")
        .len()
        >= 4));
    signal(&child, libc::SIGINT);
    let output = child.wait_with_output().expect("evalctl ends");
    assert_eq!(code(&output), 130, "{}", common::stderr_text(&output));
    let started = sb.lines("started.log").len();
    let journal = sb.jsonl("out.jsonl");
    assert_eq!(
        journal.len(),
        started,
        "every call in flight finished and was written"
    );
    assert!(journal.iter().all(|line| line["error"].is_null()));
    assert!(common::stderr_text(&output).contains("waiting up to 5s for the 4 in flight"));
    assert_eq!(json_stdout(&output)["interrupted"], true);

    let resumed = succeeded(
        sb.evalctl()
            .args(RUN)
            .args(["--output", "out.jsonl", "--resume"]),
    );
    assert_eq!(json_stdout(&resumed)["calls"]["ok"], 60);
    let found = successes(&sb, "out.jsonl");
    assert_eq!(found.len(), 60);
    assert!(found.values().all(|&count| count == 1));
}

#[test]
fn a_second_ctrl_c_stops_the_calls_in_flight() {
    let sb = sandbox();
    sb.write("eval.sh", "echo started >> started.log\nexec sleep 30\n");
    let mut child = start(&sb, "out.jsonl", &[]);
    let stderr = lines_of(child.stderr.take().expect("stderr is piped"));
    assert!(wait_until(Duration::from_secs(20), || sb
        .lines("started.log")
        .len()
        >= 4));
    signal(&child, libc::SIGINT);
    // The second Ctrl-C once evalctl has said it waits for the calls in flight.
    let mut said = Vec::new();
    while !said
        .last()
        .is_some_and(|line: &String| line.contains("waiting up to"))
    {
        said.push(
            stderr
                .recv_timeout(common::TIMEOUT)
                .expect("evalctl says it waits for the calls in flight"),
        );
    }
    signal(&child, libc::SIGINT);
    said.extend(stderr.iter());
    let output = child.wait_with_output().expect("evalctl ends");
    assert_eq!(code(&output), 130, "{}", said.join("\n"));
    assert_eq!(
        said,
        [
            "interrupted: no new calls; waiting up to 5s for the 4 in flight (Ctrl-C again stops them now)",
            "interrupted again: stopped the 4 calls in flight",
            "interrupted: 0 of 60 calls finished; the summary covers them",
        ]
    );
    assert!(sb.lines("out.jsonl").is_empty());
}

/// The lines `stream` carries, as they come (read on a thread of their own).
fn lines_of(stream: impl std::io::Read + Send + 'static) -> std::sync::mpsc::Receiver<String> {
    use std::io::BufRead;
    let (send, receive) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        for line in std::io::BufReader::new(stream).lines() {
            let Ok(line) = line else { break };
            if send.send(line).is_err() {
                break;
            }
        }
    });
    receive
}

#[test]
fn resuming_a_finished_run_makes_no_call_not_even_the_probe() {
    let sb = Sandbox::new();
    sb.write("d.jsonl", "{\"s\": 0.5}\n{\"s\": 0.25}\n");
    // Once `broken` exists, the evaluator fails every call, probe included, and leaves a trace.
    // (The script itself stays the same: an edited script would be another configuration.)
    let script = format!("if [ -e broken ]; then echo called >> calls.log; exit 1; fi\n{SCORE_S}");
    let run = |extra: &[&str]| {
        let mut command = sb.run_with(&script);
        command.args([
            "--candidate",
            "a",
            "--dataset",
            "d.jsonl",
            "--output",
            "out.jsonl",
        ]);
        command.args(extra);
        json_stdout(&succeeded(command))
    };
    let first = run(&[]);
    sb.write("broken", "");
    let resumed = run(&["--resume"]);
    assert!(!sb.exists("calls.log"), "the evaluator was called");
    assert_eq!(resumed["candidates"], first["candidates"]);
    assert_eq!(sb.lines("out.jsonl").len(), 2);
}

#[test]
fn a_line_without_a_score_that_does_not_say_why_is_refused_not_read_as_a_zero() {
    let sb = Sandbox::new();
    sb.write("d.jsonl", "{\"s\": 0.5}\n{\"s\": 0.25}\n");
    let mut command = sb.run_with(SCORE_S);
    command.args(["--skip-preflight", "-j", "1", "--candidate", "a"]);
    command.args(["--dataset", "d.jsonl", "--output", "out.jsonl"]);
    succeeded(command);
    let journal = sb.read("out.jsonl");
    let edited = journal.replacen("\"score\":0.5,", "\"score\":null,", 1);
    assert_ne!(edited, journal);
    sb.write("out.jsonl", &edited);
    let refused = "error: out.jsonl:1: score is null and error is null: a line without a score \
                   says why; evalctl never writes such a line; correct or remove it\n";
    readers_refuse(&sb, &[&["compare", "out.jsonl", "out.jsonl"]], refused);
}

/// `summarize`, `merge`, `report` (and the `more` commands) of `out.jsonl` in `sb` each exit 2
/// with exactly `refused` on stderr.
fn readers_refuse(sb: &Sandbox, more: &[&[&str]], refused: &str) {
    let readers: [&[&str]; 3] = [
        &["summarize", "out.jsonl"],
        &["merge", "out.jsonl"],
        &["report", "out.jsonl", "--output", "report.html"],
    ];
    for args in readers.iter().chain(more) {
        let out = sb.evalctl().args(*args).output().expect("evalctl runs");
        assert_eq!(
            (code(&out), stderr_text(&out).as_str()),
            (2, refused),
            "{args:?}"
        );
    }
}

#[test]
fn a_resumed_line_counts_where_its_call_is_whatever_place_an_edit_gave_it() {
    let sb = Sandbox::new();
    sb.write("d.jsonl", "{\"s\": 0.5}\n{\"s\": 0.25}\n");
    sb.write("v.jsonl", "{\"s\": 1}\n");
    let run = |extra: &[&str]| {
        let mut command = sb.run_with(SCORE_S);
        command.args(["--skip-preflight", "-j", "1", "--candidate", "a"]);
        command.args(["--dataset", "d.jsonl", "--valset", "v.jsonl"]);
        command.args(["--output", "out.jsonl"]);
        command.args(extra);
        succeeded(command)
    };
    let first = json_stdout(&run(&[]));
    // The first line (a dataset example's) edited to say it is a valset example.
    let journal = sb.read("out.jsonl");
    let edited = journal.replacen("\"split\":\"train\"", "\"split\":\"val\"", 1);
    assert_ne!(edited, journal);
    sb.write("out.jsonl", &edited);
    let resumed = run(&["--resume"]);
    assert_eq!(
        stderr_text(&resumed),
        "warning: out.jsonl: 1 line of this run names another split, example, candidate or \
         repeat than its call (edited by hand?): counted where its call is\n\
         resuming out.jsonl: 3 of 3 calls already done, 0 to make\n"
    );
    assert_eq!(json_stdout(&resumed)["candidates"], first["candidates"]);
}

#[test]
fn a_line_naming_its_candidate_otherwise_is_counted_with_its_candidate_by_summarize() {
    // A line edited to give its candidate another name is still its candidate's call: counted
    // in its row (the name most lines give), not in the calls alone.
    let sb = Sandbox::new();
    sb.write(
        "d.jsonl",
        "{\"s\": 1}\n{\"s\": 0}\n{\"s\": 1}\n{\"s\": 1}\n",
    );
    let mut command = sb.run_with(SCORE_S);
    command.args(["--skip-preflight", "-j", "1", "--candidate", "a"]);
    command.args(["--dataset", "d.jsonl", "--output", "out.jsonl"]);
    let first = json_stdout(&succeeded(command));
    let journal = sb.read("out.jsonl");
    let edited = journal.replacen(
        "\"candidate_id\":\"cand-1\"",
        "\"candidate_id\":\"renamed\"",
        1,
    );
    assert_ne!(edited, journal);
    sb.write("out.jsonl", &edited);
    let out = sb
        .evalctl()
        .args(["summarize", "out.jsonl", "--format", "json"])
        .output()
        .unwrap();
    let summary = json_stdout(&out);
    assert_eq!(
        (
            code(&out),
            stderr_text(&out),
            &summary["calls"],
            &summary["candidates"]
        ),
        (
            0,
            "note: 1 line of this run names its candidate otherwise than most of its lines do \
             (edited by hand?): counted with its candidate, under the name most lines give it\n"
                .to_string(),
            &first["calls"],
            &first["candidates"]
        )
    );

    // Lines edited to give one candidate another's name: each keeps its own name, and
    // neither's calls are counted as the other's.
    let mut command = sb.run_with(SCORE_S);
    command.args([
        "--skip-preflight",
        "-j",
        "1",
        "--candidate",
        "a",
        "--candidate",
        "b",
    ]);
    command.args(["--dataset", "d.jsonl", "--output", "two.jsonl"]);
    let two = json_stdout(&succeeded(command));
    let journal = sb.read("two.jsonl");
    let edited = journal.replacen(
        "\"candidate_id\":\"cand-2\"",
        "\"candidate_id\":\"cand-1\"",
        3,
    );
    sb.write("two.jsonl", &edited);
    let out = sb
        .evalctl()
        .args(["summarize", "two.jsonl", "--format", "json"])
        .output()
        .unwrap();
    assert_eq!(
        (code(&out), &json_stdout(&out)["candidates"]),
        (0, &two["candidates"])
    );
}

#[test]
fn a_journal_score_the_run_refuses_answers_no_call_and_readers_refuse_its_line() {
    let sb = Sandbox::new();
    sb.write("d.jsonl", "{\"s\": 0.5}\n{\"s\": 0.25}\n");
    let script = format!("echo called >> calls.log\n{SCORE_S}");
    let run = |extra: &[&str]| {
        let mut command = sb.run_with(&script);
        command.args(["--skip-preflight", "-j", "1", "--candidate", "a"]);
        command.args(["--dataset", "d.jsonl", "--output", "out.jsonl"]);
        command.args(extra);
        command.output().expect("evalctl runs")
    };
    let first = run(&[]);
    assert_eq!(code(&first), 0, "{}", stderr_text(&first));
    // A line edited by hand to a score `--score-range unit` refuses.
    let journal = sb.read("out.jsonl");
    let edited = journal.replacen("\"score\":0.5,", "\"score\":7,", 1);
    assert_ne!(edited, journal);
    sb.write("out.jsonl", &edited);

    // summarize, merge and report refuse the line, naming the score and the range.
    let refused = "error: out.jsonl:1: score 7 is outside its run's score range (unit): evalctl \
                   never writes such a line; correct or remove it\n";
    readers_refuse(&sb, &[], refused);
    assert!(!sb.exists("report.html"));

    // --resume makes that call again, with a warning, and leaves the line as it was.
    let resumed = run(&["--resume"]);
    assert_eq!(code(&resumed), 0, "{}", stderr_text(&resumed));
    assert_eq!(
        stderr_text(&resumed),
        "warning: out.jsonl: ignoring 1 line of this run with a score its --score-range refuses \
         (edited by hand?): making its call again; summarize, merge and report refuse the file \
         until that line is corrected or removed\n\
         resuming out.jsonl: 1 of 2 calls already done, 1 to make\n"
    );
    assert_eq!(sb.lines("calls.log").len(), 3);
    assert_eq!(
        json_stdout(&resumed)["candidates"],
        json_stdout(&first)["candidates"]
    );
    assert!(sb.read("out.jsonl").starts_with(&edited));

    // Once the call has a line of its own, a second --resume makes no call, and says so.
    let again = run(&["--resume"]);
    assert_eq!(
        (code(&again), stderr_text(&again)),
        (
            0,
            "warning: out.jsonl: ignoring 1 line of this run with a score its --score-range \
             refuses (edited by hand?): its call has another line; summarize, merge and report \
             refuse the file until that line is corrected or removed\n\
             resuming out.jsonl: 2 of 2 calls already done, 0 to make\n"
                .to_string()
        )
    );
    assert_eq!(sb.lines("calls.log").len(), 3);
}

#[test]
fn a_line_that_gives_its_run_another_score_range_than_the_runs_first_line_is_refused() {
    // Else a score the run's range refuses passes under the range the edited line claims.
    let sb = Sandbox::new();
    sb.write("d.jsonl", "{\"s\": 0.5}\n{\"s\": 0.25}\n");
    let out = sb
        .run_with(SCORE_S)
        .args(["--skip-preflight", "-j", "1", "--candidate", "a"])
        .args(["--dataset", "d.jsonl", "--output", "out.jsonl"])
        .output()
        .expect("evalctl runs");
    assert_eq!(code(&out), 0, "{}", stderr_text(&out));
    let journal = sb.read("out.jsonl");
    let (first, second) = journal.split_once('\n').unwrap();
    let edited = second
        .replacen("\"score\":0.25,", "\"score\":7,", 1)
        .replacen("\"score_range\":\"unit\"", "\"score_range\":\"any\"", 1);
    assert_ne!(edited, second);
    sb.write("out.jsonl", format!("{first}\n{edited}"));
    let fingerprint = sb.jsonl("out.jsonl")[0]["run"]["fingerprint"].clone();
    let refused = format!(
        "error: out.jsonl:2: run.score_range differs from out.jsonl:1, a line of the same run \
         {}: evalctl never writes such lines; correct or remove the one edited\n",
        fingerprint.as_str().unwrap()
    );
    readers_refuse(&sb, &[&["compare", "out.jsonl", "out.jsonl"]], &refused);
}

#[test]
fn resume_cuts_only_a_line_cut_short_and_leaves_a_file_it_refuses_as_it_was() {
    let sb = Sandbox::new();
    sb.write("d.jsonl", "{\"s\": 0.5}\n{\"s\": 0.25}\n");
    sb.write("eval.sh", SCORE_S);
    let run_with = |output: &str, extra: &[&str]| {
        sb.evalctl()
            .args(RUN)
            .args(["--output", output])
            .args(extra)
            .output()
            .unwrap()
    };
    let run = |output: &str| run_with(output, &["--resume"]);
    // Notes named by mistake, their last line without a newline: refused, not a byte changed.
    let notes = "line one of notes\nline two, no newline";
    sb.write("notes.txt", notes);
    let refused = run("notes.txt");
    assert_eq!(code(&refused), 2, "{}", stderr_text(&refused));
    assert_eq!(
        stderr_text(&refused),
        "error: notes.txt:1: invalid JSON: expected value at column 1\n\
         error: notes.txt:2: invalid JSON: expected value at column 1\n"
    );
    assert_eq!(sb.read("notes.txt"), notes);
    // Unfinished JSON that does not start as a result line does (`{"key":"`) is no line a
    // killed run cut short: refused with --resume or without, not a byte changed.
    let draft = "{\"my\":\"draft notes, not finished";
    sb.write("draft.jsonl", draft);
    for extra in [&["--resume"][..], &[]] {
        let refused = run_with("draft.jsonl", extra);
        assert_eq!(
            (code(&refused), stderr_text(&refused)),
            (
                2,
                "error: draft.jsonl:1: the last line is unfinished JSON that does not start as \
                 evalctl's lines do ({\"key\":\"): it is no line an interrupted run cut short, \
                 and the file is left as it was: name another file\n"
                    .to_string()
            ),
            "{extra:?}"
        );
        assert_eq!(sb.read("draft.jsonl"), draft);
    }

    // A whole last line without its newline (an editor's save) is a result like any other:
    // kept, ended with its newline, and only the calls it does not answer are made.
    let first = run("out.jsonl");
    assert_eq!(code(&first), 0, "{}", stderr_text(&first));
    let whole = sb.read("out.jsonl");
    let kept: Vec<&str> = whole.lines().take(3).collect();
    sb.write("out.jsonl", kept.join("\n"));
    let resumed = run("out.jsonl");
    assert_eq!(code(&resumed), 0, "{}", stderr_text(&resumed));
    assert_eq!(
        stderr_text(&resumed),
        "resuming out.jsonl: 3 of 4 calls already done, 1 to make\n"
    );
    let lines = sb.lines("out.jsonl");
    assert_eq!(lines.len(), 4);
    assert_eq!(lines[..3], kept);
}

#[test]
fn resume_refuses_a_file_another_evalctl_writes_before_touching_its_last_line() {
    let sb = Sandbox::new();
    sb.write("d.jsonl", "{\"s\": 0.5}\n{\"s\": 0.25}\n");
    sb.write(
        "wait.sh",
        "touch started\nwhile [ ! -e go ]; do sleep 0.01; done\nprintf '{\"score\": 1}'\n",
    );
    let run = [
        "run",
        "--skip-preflight",
        "--evaluator-command",
        "sh wait.sh",
        "--candidate",
        "a",
        "--dataset",
        "d.jsonl",
        "--output",
        "out.jsonl",
    ];
    let mut first = common::evalctl_process()
        .current_dir(sb.path())
        .args(run)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .expect("start evalctl");
    assert!(
        wait_until(Duration::from_secs(60), || sb.exists("started")),
        "the first run never called its evaluator"
    );
    // The first run's writer is half-way through a line.
    let half_written = "{\"key\":\"half";
    sb.write("out.jsonl", half_written);
    let second = sb.evalctl().args(run).arg("--resume").output().unwrap();
    assert_eq!(
        (code(&second), stderr_text(&second)),
        (
            2,
            "error: out.jsonl: another evalctl is writing this file now: wait until it has \
             finished, or name another file\n"
                .to_string()
        )
    );
    assert_eq!(sb.read("out.jsonl"), half_written);
    sb.write("go", "");
    first.wait().unwrap();
}

#[test]
fn a_run_written_beside_while_this_one_is_in_preflight_is_refused_before_any_call() {
    // The first run's preflight probe waits; meanwhile another run writes the same --output
    // (which did not exist when the first run checked it) and finishes.
    let sb = Sandbox::new();
    sb.write("d.jsonl", "{\"s\": 0.5}\n{\"s\": 0.25}\n");
    sb.write(
        "probe-waits.sh",
        "p=$(cat)\ncase \"$p\" in\n*__evalctl_preflight__*) if [ -n \"$WAIT\" ]; then touch probing; \
         while [ ! -e go ]; do sleep 0.01; done; fi ;;\n*) echo call >> calls.log ;;\nesac\n\
         printf '{\"score\": 1}'\n",
    );
    let run = |candidate: &str| {
        [
            "run",
            "--evaluator-command",
            "sh probe-waits.sh",
            "--candidate",
            candidate,
            "--dataset",
            "d.jsonl",
            "--output",
            "out.jsonl",
        ]
        .map(str::to_string)
    };
    let first = common::evalctl_process()
        .current_dir(sb.path())
        .env("WAIT", "1")
        .args(run("a"))
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .expect("start evalctl");
    assert!(
        wait_until(Duration::from_secs(60), || sb.exists("probing")),
        "the first run never probed its evaluator"
    );
    succeeded(sb.evalctl().args(run("b")));
    let written = sb.read("out.jsonl");
    sb.write("go", "");
    let first = first.wait_with_output().unwrap();
    let fingerprint = |line: &str| {
        serde_json::from_str::<Value>(line).unwrap()["run"]["fingerprint"]
            .as_str()
            .unwrap()
            .to_string()
    };
    let second_run = fingerprint(written.lines().next().unwrap());
    assert_eq!(code(&first), 2);
    let stderr = stderr_text(&first);
    let this_run = stderr
        .split("this one is run ")
        .nth(1)
        .and_then(|rest| rest.split(')').next())
        .unwrap_or_default()
        .to_string();
    assert_eq!(
        stderr,
        format!(
            "error: out.jsonl: holds 2 lines not of this run (run {second_run}: its candidates \
             or --repeat differ; this one is run {this_run}): name another --output file, or \
             pass --append-run to add this run beside them (summarize, merge and report then \
             take one run at a time: --run ID)\n"
        )
    );
    assert_eq!(
        sb.read("out.jsonl"),
        written,
        "the other run's lines, alone"
    );
    assert_eq!(
        sb.read("calls.log"),
        "call\ncall\n",
        "the second run's two calls only"
    );
}

/// Run two calls one at a time with `--output output` in `sb`, `remove` what a cleanup removes
/// while the second call is in flight, and return what evalctl said.
fn removed_mid_run(sb: &Sandbox, output: &str, remove: impl FnOnce()) -> std::process::Output {
    sb.write("d.jsonl", "{\"s\": 0.5}\n{\"s\": 0.25}\n");
    sb.write(
        "wait.sh",
        "p=$(cat)\ncase \"$p\" in *0.25*) touch second; while [ ! -e go ]; do sleep 0.01; done ;; \
         esac\nprintf '{\"score\": 1}'\n",
    );
    let child = common::evalctl_process()
        .current_dir(sb.path())
        .args(["run", "--skip-preflight", "-j", "1"])
        .args(["--evaluator-command", "sh wait.sh", "--candidate", "a"])
        .args(["--dataset", "d.jsonl", "--output", output])
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .expect("start evalctl");
    assert!(
        wait_until(Duration::from_secs(60), || sb.exists("second")),
        "the second call never started"
    );
    remove();
    sb.write("go", "");
    child.wait_with_output().unwrap()
}

#[test]
fn an_output_removed_while_the_run_writes_it_is_written_again() {
    // A cleanup removes the output's folder while the second call is in flight.
    let sb = Sandbox::new();
    std::fs::create_dir(sb.path().join("out")).unwrap();
    let out = removed_mid_run(&sb, "out/results.jsonl", || {
        std::fs::remove_dir_all(sb.path().join("out")).unwrap()
    });
    assert_eq!(
        (code(&out), stderr_text(&out)),
        (
            0,
            "warning: out/results.jsonl was removed while the results were written to it: they \
             are written to it again\n"
                .to_string()
        )
    );
    assert_eq!(
        sb.read("out/results.jsonl").lines().count(),
        2,
        "both calls' lines"
    );
    let summarized =
        succeeded(
            sb.evalctl()
                .args(["summarize", "--format", "json", "out/results.jsonl"]),
        );
    assert_eq!(json_stdout(&summarized)["calls"]["total"], 2);
}

#[test]
fn an_output_link_whose_file_is_removed_while_the_run_writes_it_gets_its_file_again() {
    let sb = Sandbox::new();
    std::os::unix::fs::symlink("target.jsonl", sb.path().join("latest.jsonl")).unwrap();
    let out = removed_mid_run(&sb, "latest.jsonl", || {
        std::fs::remove_file(sb.path().join("target.jsonl")).unwrap()
    });
    assert_eq!(
        (code(&out), stderr_text(&out)),
        (
            0,
            "warning: latest.jsonl was removed while the results were written to it: they are \
             written to it again\n"
                .to_string()
        )
    );
    assert_eq!(
        sb.read("target.jsonl").lines().count(),
        2,
        "both calls' lines"
    );
}

#[test]
fn an_output_replaced_while_the_run_writes_it_is_left_alone_and_the_lines_kept_beside_it() {
    let sb = Sandbox::new();
    let out = removed_mid_run(&sb, "out.jsonl", || {
        std::fs::rename(sb.path().join("out.jsonl"), sb.path().join("moved.jsonl")).unwrap();
        sb.write("out.jsonl", "someone else's file\n");
    });
    let kept: Vec<String> = std::fs::read_dir(sb.path())
        .unwrap()
        .map(|entry| entry.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|name| name.starts_with("out.jsonl."))
        .collect();
    assert_eq!(kept.len(), 1, "{kept:?}");
    assert_eq!(
        (code(&out), stderr_text(&out)),
        (
            4,
            format!(
                "error: out.jsonl was replaced by another file while the results were written to \
                 it: that file is left as it is, and the results are in {}\n",
                kept[0]
            )
        )
    );
    assert_eq!(sb.read("out.jsonl"), "someone else's file\n");
    assert_eq!(sb.read(&kept[0]).lines().count(), 2, "both calls' lines");
}
