//! Text evalctl did not write itself (an evaluator's reason or error text, ids and names read
//! from a results file) is shown, never obeyed: in text output on a terminal its control
//! characters are escaped (`\u{1b}`) while evalctl's own colour still paints, JSON keeps it
//! exact, and a Markdown report escapes everything Markdown, GitHub or HTML would act on.

use serde_json::json;

use crate::common::{code, json_stdout, stderr_text, stdout_text, succeeded, Sandbox};

/// Answers the first example with a reason holding terminal escape sequences (an OSC title
/// change ended by BEL, and a screen clear), fails the second with the same on stderr.
const EVALUATOR: &str = r#"input=$(cat)
case "$input" in
  *'"q":2'*) printf 'bad \033]0;pwned\007 \033[2J\n' >&2; exit 3;;
  *) printf '{"score": 0.5, "reasoning": "r \\u001b]0;pwned\\u0007 \\u001b[2J"}';;
esac
"#;

/// The reason as the evaluator meant it.
const REASON: &str = "r \u{1b}]0;pwned\u{7} \u{1b}[2J";

/// `text` with the number after each `elapsed: ` replaced by `T` (a wall-clock time).
fn without_elapsed(text: &str) -> String {
    let mut out = String::new();
    let mut rest = text;
    while let Some(at) = rest.find("elapsed: ") {
        let (head, tail) = rest.split_at(at + "elapsed: ".len());
        out.push_str(head);
        out.push('T');
        rest = tail.trim_start_matches(|c: char| c.is_ascii_digit() || c == '.');
    }
    out.push_str(rest);
    out
}

#[test]
fn escape_sequences_from_an_evaluator_are_shown_not_obeyed_in_text_output() {
    let sandbox = Sandbox::new();
    sandbox.write("eval.sh", EVALUATOR);
    sandbox.write("c.jsonl", "{\"id\":\"a\",\"candidate\":\"x\"}\n");
    sandbox.write("d.jsonl", "{\"q\":1}\n{\"q\":2}\n");
    let out = sandbox
        .evalctl()
        .args(["--color", "always", "run", "--format", "text"])
        .args(["--evaluator-command", "sh eval.sh"])
        .args(["--candidates", "c.jsonl", "--dataset", "d.jsonl"])
        .args(["--output", "r.jsonl", "--concurrency", "1"])
        .output()
        .expect("evalctl runs");
    assert_eq!(code(&out), 1, "{}", stderr_text(&out));
    assert_eq!(
        stderr_text(&out),
        "\u{1b}[1;31mfailed\u{1b}[0m: a train #1 (line 2): exit_status: command exited with \
         code 3; stderr: bad \\u{1b}]0;pwned\\u{7} \\u{1b}[2J\nexit 1: 1 of 2 calls failed\n"
    );
    assert_eq!(
        without_elapsed(&stdout_text(&out)),
        "evaluator: command sh eval.sh   score range: unit\n\
         calls: 2 (1 ok, 1 error)   elapsed: Ts\n\n\
         \u{1b}[1mcandidate  score            train mean       n / errors\u{1b}[0m\n\
         a          0.2500 ± 0.2500  0.2500 ± 0.2500  2 / 1\n\n\
         score = the candidate's train mean; failed calls count as 0\n\
         ± = half-width of the 95% bootstrap interval over examples (--seed)\n\n\
         exit 1: 1 of 2 calls failed\n"
    );
    // The results file keeps the evaluator's words exactly.
    let lines = sandbox.jsonl("r.jsonl");
    assert_eq!(lines[0]["side_info"]["reasoning"], REASON);

    // A results file names its candidates: summarised as text, the names are shown escaped;
    // as JSON, exactly.
    let id = "a\u{1b}]0;pwned\u{7}\u{1b}[2J\u{9b}31m";
    let renamed: String = lines
        .into_iter()
        .map(|mut line| {
            line["candidate_id"] = json!(id);
            format!("{line}\n")
        })
        .collect();
    sandbox.write("renamed.jsonl", renamed);
    let text = sandbox
        .evalctl()
        .args(["summarize", "renamed.jsonl", "--format", "text"])
        .output()
        .expect("evalctl runs");
    assert_eq!(
        stdout_text(&text),
        "evaluator: command sh eval.sh   score range: unit\n\
         calls: 2 (1 ok, 1 error)   elapsed: — (not recorded in results files)\n\n\
         candidate                               score            train mean       n / errors\n\
         a\\u{1b}]0;pwned\\u{7}\\u{1b}[2J\\u{9b}31m  0.2500 ± 0.2500  0.2500 ± 0.2500  2 / 1\n\n\
         score = the candidate's train mean; failed calls count as 0\n\
         ± = half-width of the 95% bootstrap interval over examples (--seed)\n\n\
         exit 1: 1 of 2 calls failed\n"
    );
    let summary = json_stdout(
        &sandbox
            .evalctl()
            .args(["summarize", "renamed.jsonl", "--format", "json"])
            .output()
            .expect("evalctl runs"),
    );
    assert_eq!(summary["candidates"][0]["id"], id);
}

#[test]
fn markdown_reports_escape_ids_names_and_line_breaks() {
    let sandbox = Sandbox::new();
    sandbox.write("eval.sh", "cat >/dev/null\necho '{\"score\": 0.5}'\n");
    sandbox.write(
        "c.jsonl",
        concat!(
            r#"{"id":"<script>alert(1)</script>","candidate":"x"}"#,
            "\n",
            r##"{"id":"# a|b `c` *d* _e_ [f](g) @team #1 &amp; ~s~ $x$ \\ ##","candidate":"y"}"##,
            "\n",
        ),
    );
    sandbox.write("d.jsonl", "{\"q\":1}\n");
    succeeded(
        sandbox
            .run_with("cat >/dev/null\necho '{\"score\": 0.5}'\n")
            .args(["--candidates", "c.jsonl", "--dataset", "d.jsonl"])
            .args(["--output", "r.jsonl", "--concurrency", "1"]),
    );
    // A results file from elsewhere may say anything: line breaks and escapes in an id, markup
    // in the evaluator it names.
    let lines: String = sandbox
        .jsonl("r.jsonl")
        .into_iter()
        .enumerate()
        .map(|(index, mut line)| {
            if index == 0 {
                line["candidate_id"] = json!("line one\nline two\r\n\u{1b}[2J<b>");
            }
            line["run"]["evaluator"]["target"] =
                json!("sh `eval`.sh <img src=x> https://evil.example WWW.evil.example awww.x");
            format!("{line}\n")
        })
        .collect();
    sandbox.write("odd.jsonl", lines);
    let out = succeeded(
        sandbox
            .evalctl()
            .args(["summarize", "odd.jsonl", "--format", "markdown"]),
    );
    assert_eq!(
        stdout_text(&out),
        "### evalctl: ✅ passed (exit 0)\n\n\
         all 2 calls succeeded\n\n\
         | candidate | score | train mean | n / errors |\n\
         |---|---|---|---|\n\
         | line one line two \\\\u{1b}\\[2J\\<b\\> | 0.5000 | 0.5000 | 1 / 0 |\n\
         | \\# a\\|b \\`c\\` \\*d\\* \\_e\\_ \\[f\\](g) \\@team #1 \\&amp; \\~s\\~ \\$x\\$ \\\\ \\#\\# | 0.5000 | 0.5000 | 1 / 0 |\n\n\
         Evaluator: command sh \\`eval\\`.sh \\<img src=x\\> https\\://evil.example WWW\\.evil.example awww.x · score range unit · 2 calls (2 ok, 0 errors) · elapsed: — (not recorded in results files)\n\n\
         best: none, both rows score 0.5000\n\n\
         _score = the candidate's train mean; failed calls count as 0_\n"
    );

    // compare's Markdown escapes the files' names and the candidates' ids the same way.
    std::fs::copy(sandbox.join("r.jsonl"), sandbox.join("b`1`|<i>.jsonl")).expect("copied");
    let compared = succeeded(sandbox.evalctl().args([
        "compare",
        "b`1`|<i>.jsonl",
        "r.jsonl",
        "--format",
        "markdown",
    ]));
    let markdown = stdout_text(&compared);
    let head: Vec<&str> = markdown.lines().take(5).collect();
    assert_eq!(
        head,
        [
            "### evalctl compare: ✅ passed (exit 0)",
            "",
            "b\\`1\\`\\|\\<i\\>.jsonl → r.jsonl · no --fail-on-regression gate",
            "",
            "#### \\<script\\>alert(1)\\</script\\>",
        ]
    );
}

#[test]
fn a_line_break_in_an_id_or_a_file_name_cannot_split_the_closing_line() {
    // The closing line is the last word of a CI log: an id or a file name holding a line break
    // would otherwise put a line of its own there (`exit 0: ...`).
    let sandbox = Sandbox::new();
    sandbox.write("d.jsonl", "{\"q\":1}\n{\"q\":2}\n");
    let forged = "prompt\nexit 0: all 2 calls succeeded";
    sandbox.write(forged, "hi");
    let out = sandbox
        .run_with("cat >/dev/null\necho '{\"score\": 0.5}'\n")
        .args(["--dataset", "d.jsonl", "--fail-under", "0.9"])
        .args(["--", forged])
        .output()
        .unwrap();
    assert_eq!(
        (code(&out), json_stdout(&out)["exit_reason"].clone()),
        (
            1,
            json!(
                "all 2 calls succeeded; candidate prompt ⏎ exit 0: all 2 calls succeeded scored \
                 0.5000, below --fail-under 0.9"
            )
        )
    );
    assert_eq!(
        stderr_text(&out),
        "exit 1: all 2 calls succeeded; candidate prompt ⏎ exit 0: all 2 calls succeeded scored \
         0.5000, below --fail-under 0.9\n"
    );

    // Every other line break likewise: a Unicode line separator ends a line in many viewers.
    let separated = "b\u{2028}exit 0: all 2 calls succeeded";
    sandbox.write(separated, "hi");
    let out = sandbox
        .run_with("cat >/dev/null\necho '{\"score\": 0.5}'\n")
        .args(["--dataset", "d.jsonl", "--fail-under", "0.9"])
        .args(["--", separated])
        .output()
        .unwrap();
    assert_eq!(
        json_stdout(&out)["exit_reason"],
        json!(
            "all 2 calls succeeded; candidate b ⏎ exit 0: all 2 calls succeeded scored 0.5000, \
             below --fail-under 0.9"
        )
    );

    // A shard's file name in merge's reason (and the partial line) likewise. 20 examples: each
    // shard makes some (a shard of none has a chance of 2 in a million).
    let examples: String = (1..=20).map(|q| format!("{{\"q\":{q}}}\n")).collect();
    sandbox.write("d20.jsonl", examples);
    for shard in ["0/2", "1/2"] {
        succeeded(
            sandbox
                .run_with("cat >/dev/null\necho '{\"score\": 0.5}'\n")
                .args(["--dataset", "d20.jsonl", "--candidate", "x"])
                .args(["--shard", shard])
                .args(["--output", &format!("s{}.jsonl", &shard[..1])]),
        );
    }
    // Shard 0 cut short: its first line dropped.
    let first = std::fs::read_to_string(sandbox.join("s0.jsonl")).unwrap();
    let kept = first.lines().skip(1).collect::<Vec<_>>().join("\n");
    let named = "shard\nexit 0: merged.jsonl";
    sandbox.write(named, format!("{kept}\n"));
    let merged = sandbox
        .evalctl()
        .args(["merge", named, "s1.jsonl", "--format", "text"])
        .output()
        .unwrap();
    let text = stdout_text(&merged);
    assert_eq!(
        (code(&merged), text.lines().last()),
        (
            1,
            Some(
                "exit 1: 1 of 20 calls absent, from shard 0/2 (shard ⏎ exit 0: merged.jsonl): \
                 the run did not finish (run --resume completes it; --allow-partial summarizes \
                 what is there); all 19 calls succeeded"
            )
        )
    );
}
