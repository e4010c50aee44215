//! `--junit FILE.xml` against the JUnit schema Jenkins reads: the binary writes the report for a
//! plain run, a run with errored calls, a run under `--pass-score` with failures, a candidate
//! below `--fail-under` (in `run` and in `summarize`), `--repeat 2`,
//! candidates and examples full of XML markup and control characters (which XML 1.0 forbids),
//! and `merge` / `summarize` of a sharded run; `xmllint` validates every file against the
//! vendored `tests/fixtures/junit/junit-10.xsd` (the Jenkins xunit plugin's schema; see the
//! README beside it), and each report is compared whole with the one in
//! `tests/fixtures/junit/expected/`, measured times masked.
//!
//! `xmllint` comes from the system (Debian's `libxml2-utils`; `.ci/run` installs it); with no
//! `xmllint` on PATH each test fails under `CI` and is reported SKIPPED elsewhere.

use std::path::Path;
use std::process::Command;

use crate::common::*;

/// Scores the example's `s` (0.5 without one). An example holding `boom` fails the call with
/// markup, quotes and control characters on stderr; one holding `echo` answers with the payload
/// (candidate and example text) inside output that is not JSON.
const EVAL: &str = r#"p=$(cat)
case "$p" in
  *boom*) printf 'boom <&> "q" \001\002\033[31m ]]> \177 end\n' >&2; exit 1;;
  *echo*) printf 'not json \001 %s' "$p"; exit 0;;
esac
s=$(printf '%s' "$p" | sed -n 's/.*"s":\([0-9.]*\).*/\1/p')
printf '{"score": %s}' "${s:-0.5}"
"#;

/// Three dataset examples (scores 1 and 0.2, and one that errors) and one valset example.
fn sandbox() -> Sandbox {
    let sb = Sandbox::new();
    sb.write("eval.sh", EVAL);
    sb.write("d.jsonl", "{\"s\":1}\n{\"s\":0.2}\n{\"x\":\"boom\"}\n");
    sb.write("ok.jsonl", "{\"s\":1}\n{\"s\":0.2}\n");
    sb.write("v.jsonl", "{\"s\":0.9}\n");
    sb
}

/// `xmllint` and the schema; `None`, after a notice, when there is no `xmllint` to run.
struct Schema {
    xsd: &'static Path,
}

impl Schema {
    fn find() -> Option<Schema> {
        match Command::new("xmllint").arg("--version").output() {
            Ok(_) => Some(Schema {
                xsd: Path::new(concat!(
                    env!("CARGO_MANIFEST_DIR"),
                    "/tests/fixtures/junit/junit-10.xsd"
                )),
            }),
            Err(err) => {
                tool_missing(&format!(
                    "cannot run xmllint ({err}): the JUnit schema check"
                ));
                None
            }
        }
    }

    /// Assert that `sb`'s `name` is valid against the schema, and return its text.
    fn validate(&self, sb: &Sandbox, name: &str) -> String {
        let out = Command::new("xmllint")
            .arg("--noout")
            .arg("--schema")
            .arg(self.xsd)
            .arg(sb.join(name))
            .output()
            .expect("xmllint runs");
        let text = sb.read(name);
        assert!(
            out.status.success(),
            "{name} is not valid JUnit XML:\n{}\n{text}",
            stderr_text(&out)
        );
        text
    }
}

/// `xml` with every `time="SECONDS"` attribute written `time="[..]"`.
fn mask_times(xml: &str) -> String {
    let times = regex::Regex::new(r#" time="[0-9]+\.[0-9]+""#).unwrap();
    times.replace_all(xml, r#" time="[..]""#).into_owned()
}

/// The whole report a test expects, from `tests/fixtures/junit/expected/`, times masked.
macro_rules! expected {
    ($name:literal) => {
        include_str!(concat!("fixtures/junit/expected/", $name))
    };
}

/// `evalctl run` with `sh eval.sh` over `dataset`, writing `report.xml`, with `extra` flags;
/// asserts the exit code.
fn run(sb: &Sandbox, dataset: &str, extra: &[&str], exit: i32) {
    let out = sb
        .run_with(EVAL)
        .args(["--skip-preflight", "--candidate", "a", "--dataset", dataset])
        .args(["--valset", "v.jsonl", "--junit", "report.xml"])
        .args(extra)
        .output()
        .unwrap();
    assert_eq!(code(&out), exit, "{}", stderr_text(&out));
}

#[test]
fn a_plain_run_is_valid() {
    let Some(schema) = Schema::find() else { return };
    let sb = sandbox();
    run(&sb, "ok.jsonl", &[], 0);
    let xml = schema.validate(&sb, "report.xml");
    assert_eq!(mask_times(&xml), expected!("plain-run.xml"));
}

#[test]
fn a_run_with_errored_calls_is_valid() {
    let Some(schema) = Schema::find() else { return };
    let sb = sandbox();
    run(&sb, "d.jsonl", &[], 1);
    let xml = schema.validate(&sb, "report.xml");
    assert_eq!(mask_times(&xml), expected!("errored-calls.xml"));
}

#[test]
fn a_run_with_failures_under_pass_score_is_valid() {
    let Some(schema) = Schema::find() else { return };
    let sb = sandbox();
    run(&sb, "d.jsonl", &["--pass-score", "0.5"], 1);
    let xml = schema.validate(&sb, "report.xml");
    assert_eq!(mask_times(&xml), expected!("pass-score-failures.xml"));
}

#[test]
fn a_candidate_below_fail_under_is_a_failed_case_in_run_and_summarize_alike() {
    let Some(schema) = Schema::find() else { return };
    let sb = sandbox();
    run(
        &sb,
        "ok.jsonl",
        &["--fail-under", "0.95", "--output", "r.jsonl"],
        1,
    );
    let xml = schema.validate(&sb, "report.xml");
    assert_eq!(mask_times(&xml), expected!("fail-under.xml"));
    let out = sb
        .evalctl()
        .args([
            "summarize",
            "r.jsonl",
            "--fail-under",
            "0.95",
            "--junit",
            "again.xml",
        ])
        .output()
        .unwrap();
    assert_eq!(code(&out), 1, "{}", stderr_text(&out));
    let again = schema.validate(&sb, "again.xml");
    assert_eq!(mask_times(&again), expected!("fail-under.xml"));
}

#[test]
fn a_repeated_run_is_valid() {
    let Some(schema) = Schema::find() else { return };
    let sb = sandbox();
    run(&sb, "d.jsonl", &["--repeat", "2", "--pass-score", "0.5"], 1);
    let xml = schema.validate(&sb, "report.xml");
    assert_eq!(mask_times(&xml), expected!("repeated-run.xml"));
}

/// Whether `xml` holds a character XML 1.0 forbids.
fn has_forbidden_characters(xml: &str) -> bool {
    xml.chars().any(|c| {
        (c < ' ' && !matches!(c, '\t' | '\n' | '\r')) || c == '\u{FFFE}' || c == '\u{FFFF}'
    })
}

#[test]
fn markup_and_control_characters_in_candidates_and_examples_are_valid() {
    let Some(schema) = Schema::find() else { return };
    let sb = sandbox();
    // A candidate file's id is its path, which may hold control characters.
    let candidate = "c\u{1}<&>\"'.txt";
    sb.write(candidate, "candidate <b>&amp;</b> ]]> \u{1}\u{1b}[0m");
    sb.write(
        "e.jsonl",
        concat!(
            r#"{"s":0.2,"text":"<&> \u0003 \ufffe \uffff"}"#,
            "\n",
            r#"{"text":"boom \u0008 </testcase>"}"#,
            "\n",
            r#"{"text":"echo ]]> \u0002 <![CDATA[ x"}"#,
            "\n"
        ),
    );
    let out = sb
        .run_with(EVAL)
        .args(["--skip-preflight", "--dataset", "e.jsonl"])
        .args([
            "--junit",
            "report.xml",
            "--pass-score",
            "0.5",
            "--",
            candidate,
        ])
        .output()
        .unwrap();
    assert_eq!(code(&out), 1, "{}", stderr_text(&out));
    let xml = schema.validate(&sb, "report.xml");
    assert!(!has_forbidden_characters(&xml), "{xml:?}");
    assert_eq!(
        mask_times(&xml),
        expected!("markup-and-control-characters.xml")
    );
}

#[test]
fn merge_and_summarize_of_shards_are_valid() {
    let Some(schema) = Schema::find() else { return };
    let sb = sandbox();
    for shard in ["0", "1"] {
        let output = format!("shard-{shard}.jsonl");
        let out = sb
            .run_with(EVAL)
            .args([
                "--skip-preflight",
                "--candidate",
                "a",
                "--dataset",
                "d.jsonl",
            ])
            .args(["--valset", "v.jsonl", "--shard", &format!("{shard}/2")])
            .args(["--output", &output])
            .output()
            .unwrap();
        assert!(code(&out) <= 1, "{}", stderr_text(&out));
        // Results files are JSON: their strings may hold any character, escaped; an edited
        // file may hold a negative latency.
        let edited = sb
            .read(&output)
            .replace("\"latency_ms\":", "\"latency_ms\":-")
            .replace("\"cand-1\"", r#""cand-1 \u0000\u001f\ufffe <&>""#)
            .replace("stderr: boom", r"stderr: boom \u0007\uffff");
        sb.write(&output, edited);
    }
    let merged = sb
        .evalctl()
        .args([
            "merge",
            "--format",
            "json",
            "shard-0.jsonl",
            "shard-1.jsonl",
        ])
        .args(["--junit", "merged.xml", "--pass-score", "0.5"])
        .output()
        .unwrap();
    assert_eq!(code(&merged), 1, "{}", stderr_text(&merged));
    let xml = schema.validate(&sb, "merged.xml");
    assert!(!has_forbidden_characters(&xml), "{xml:?}");
    assert_eq!(mask_times(&xml), expected!("merged-shards.xml"));
    // Calls go to shards by key, and the key covers the sandbox's path: one shard of these four
    // calls may hold none (a file `summarize` refuses), never both.
    let shard = ["shard-0.jsonl", "shard-1.jsonl"]
        .into_iter()
        .find(|shard| !sb.read(shard).trim().is_empty())
        .expect("the four calls are in some shard");
    let summarized = sb
        .evalctl()
        .args(["summarize", "--format", "json", "--allow-partial", shard])
        .args(["--junit", "one.xml"])
        .output()
        .unwrap();
    assert!(code(&summarized) <= 1, "{}", stderr_text(&summarized));
    assert!(!has_forbidden_characters(&schema.validate(&sb, "one.xml")));
}
