//! What every command does alike, through the real binary: JSON failure documents on
//! stdout, exit codes that tell the truth, preflight without a candidate, a visible probe, setup
//! warnings, usage diagnoses, `--output -`, stdout on a full disk, a judge key checked for free.

use crate::common;

use crate::common::{code, json_stdout, stderr_text, stdout_text, Reply, Sandbox, Server};
use serde_json::json;

/// An `sh` evaluator that scores every candidate 1 except the preflight sentinel, which it
/// cannot parse (it fails like a script that parses the candidate would).
const REJECTS_THE_SENTINEL: &str = "p=$(cat)\ncase \"$p\" in *__evalctl_preflight__*) echo 'Traceback: bad candidate' >&2; exit 1;; esac\nprintf '{\"score\": 1}'\n";

#[test]
fn run_with_json_output_prints_one_failure_document_on_bad_input() {
    let sandbox = Sandbox::new();
    sandbox.write("d.jsonl", "[1]\n");
    sandbox.write("eval.sh", "echo '{\"score\": 1}'\n");
    let out = sandbox
        .evalctl()
        .args(["run", "--dataset", "d.jsonl", "--candidate", "x"])
        .args(["--evaluator-command", "sh", "eval.sh", "--format", "json"])
        .output()
        .unwrap();
    assert_eq!(code(&out), 2);
    assert_eq!(
        json_stdout(&out),
        json!({"ok": false, "exit": 2, "errors": ["d.jsonl:1: expected a JSON object, found array"]})
    );
    assert_eq!(
        stderr_text(&out),
        "error: d.jsonl:1: expected a JSON object, found array\n"
    );
}

#[test]
fn a_failing_probe_says_it_was_the_probe_and_names_skip_preflight() {
    let sandbox = Sandbox::new();
    sandbox.write("eval.sh", REJECTS_THE_SENTINEL);
    let out = sandbox
        .evalctl()
        .args([
            "run",
            "--candidate",
            "x",
            "--evaluator-command",
            "sh",
            "eval.sh",
        ])
        .args(["--format", "json"])
        .output()
        .unwrap();
    assert_eq!(code(&out), 3);
    let cwd = sandbox.path().display();
    let message = format!(
        "evaluator preflight failed for command 'sh eval.sh' (cwd: {cwd}): the probe call \
         (candidate \"__evalctl_preflight__\") failed: command exited with code 1; stderr: \
         Traceback: bad candidate — an evaluator that cannot score this sentinel candidate can \
         be run with --skip-preflight"
    );
    assert_eq!(
        json_stdout(&out),
        json!({"ok": false, "exit": 3, "errors": [message]})
    );
    assert_eq!(stderr_text(&out), format!("error: {message}\n"));

    // With --skip-preflight the same evaluator scores the candidate.
    let out = sandbox
        .evalctl()
        .args([
            "run",
            "--candidate",
            "x",
            "--evaluator-command",
            "sh",
            "eval.sh",
        ])
        .args(["--format", "json", "--skip-preflight"])
        .output()
        .unwrap();
    assert_eq!(code(&out), 0, "{}", stderr_text(&out));
    assert_eq!(json_stdout(&out)["candidates"][0]["score"], json!(1.0));
}

#[test]
fn preflight_needs_no_candidate_and_does_not_read_stdin() {
    let sandbox = Sandbox::new();
    sandbox.write("d.jsonl", "{\"q\": 1}\n");
    sandbox.write("eval.sh", "cat >/dev/null\nprintf '{\"score\": 0.5}'\n");
    // stdin closed, as in CI
    let out = common::evalctl_process()
        .current_dir(sandbox.path())
        .args([
            "preflight",
            "--dataset",
            "d.jsonl",
            "--evaluator-command",
            "sh",
            "eval.sh",
        ])
        .args(["--format", "json"])
        .stdin(std::process::Stdio::null())
        .output()
        .unwrap();
    assert_eq!(code(&out), 0, "{}", stderr_text(&out));
    assert_eq!(
        json_stdout(&out),
        json!({
            "ok": true,
            "evaluator": {"kind": "command", "target": "sh eval.sh"},
            "candidates": 0,
            "dataset_records": 1,
            "valset_records": null,
            "dataset_used": 1,
            "valset_used": null,
            "probe": {"score": 0.5}
        })
    );
    // Given candidates are still validated.
    let out = sandbox
        .evalctl()
        .args([
            "preflight",
            "missing.txt",
            "--evaluator-command",
            "sh",
            "eval.sh",
        ])
        .args(["--format", "text"])
        .output()
        .unwrap();
    assert_eq!(code(&out), 2);
    assert_eq!(
        stderr_text(&out),
        "error: missing.txt: cannot read: No such file or directory\n"
    );
    assert_eq!(stdout_text(&out), "");
}

#[test]
fn every_input_problem_and_an_unwritable_output_come_in_one_report() {
    let sandbox = Sandbox::new();
    std::fs::create_dir(sandbox.join("out")).unwrap();
    sandbox.write("eval.sh", "echo '{\"score\": 1}'\n");
    let out = sandbox
        .evalctl()
        .args([
            "run",
            "missing.txt",
            "--output",
            "out",
            "--evaluator-command",
            "sh",
            "eval.sh",
        ])
        .args(["--format", "text"])
        .output()
        .unwrap();
    assert_eq!(code(&out), 2);
    assert_eq!(
        stderr_text(&out),
        "error: missing.txt: cannot read: No such file or directory\n\
         error: out: cannot open --output for writing: it is a directory\n"
    );
}

#[test]
fn output_dash_is_rejected_with_a_hint() {
    let sandbox = Sandbox::new();
    sandbox.write("eval.sh", "printf '{\"score\": 1}'\n");
    let out = sandbox
        .evalctl()
        .args([
            "run",
            "--candidate",
            "x",
            "--output",
            "-",
            "--evaluator-command",
            "sh",
            "eval.sh",
        ])
        .args(["--format", "text"])
        .output()
        .unwrap();
    assert_eq!(code(&out), 2);
    assert_eq!(
        stderr_text(&out),
        "error: --output: '-' is not a file: results go to a file while the summary goes to \
         stdout; name a file, e.g. --output results.jsonl\n"
    );
    assert!(!sandbox.exists("-"));
}

#[test]
fn a_check_path_that_matches_nothing_in_the_first_record_is_warned_about() {
    let sandbox = Sandbox::new();
    sandbox.write("d.jsonl", "{\"answer\": \"Paris\"}\n");
    sandbox.write(
        "c.json",
        r#"{"checks": [{"type": "contains", "arguments": {"text": "$.output.value", "phrases": "$.test_case.anwser"}}]}"#,
    );
    let out = sandbox
        .evalctl()
        .args([
            "preflight",
            "--dataset",
            "d.jsonl",
            "--checks",
            "c.json",
            "--format",
            "text",
        ])
        .output()
        .unwrap();
    assert_eq!(code(&out), 0);
    assert_eq!(
        stderr_text(&out),
        "warning: d.jsonl:1: check contains (c.json): JSONPath `$.test_case.anwser` matches \
         nothing in the first dataset record; the check will error on such records\n"
    );
}

#[test]
fn a_misspelt_flag_after_the_evaluator_gets_clap_s_suggestion() {
    let out = Sandbox::new()
        .evalctl()
        .args([
            "run",
            "--evaluator-command",
            "python3",
            "eval.py",
            "cand.txt",
        ])
        .args(["--fail-undr", "0.5"])
        .output()
        .unwrap();
    assert_eq!(code(&out), 2);
    let stderr = stderr_text(&out);
    assert_eq!(
        stderr.lines().take(3).collect::<Vec<_>>(),
        [
            "error: unexpected argument '--fail-undr' found",
            "",
            "  tip: a similar argument exists: '--fail-under'"
        ],
        "{stderr}"
    );
    assert!(!stderr.contains("hint:"), "{stderr}");
}

#[test]
fn a_usage_error_with_json_output_is_a_json_document_whatever_the_candidate_says() {
    // `preflight` as a candidate text is not the preflight command.
    let out = Sandbox::new()
        .evalctl()
        .args([
            "run",
            "--candidate",
            "preflight",
            "--format",
            "json",
            "--bogus",
        ])
        .args(["--checks", "x.json"])
        .output()
        .unwrap();
    assert_eq!(code(&out), 2);
    assert_eq!(
        json_stdout(&out),
        json!({"ok": false, "exit": 2, "errors": ["unexpected argument '--bogus' found"]})
    );
}

#[test]
fn stdout_on_a_full_disk_is_exit_4_and_says_so() {
    let full = std::fs::OpenOptions::new()
        .write(true)
        .open("/dev/full")
        .expect("/dev/full exists on Linux");
    let out = common::evalctl_process()
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .args(["tasks", "render", "fixtures/tasks/tasks.jsonl"])
        .stdout(full)
        .output()
        .unwrap();
    assert_eq!(code(&out), 4);
    assert_eq!(
        stderr_text(&out),
        "error: cannot write to stdout: No space left on device\n"
    );
}

#[test]
fn a_judge_key_the_api_rejects_fails_preflight_without_spending_tokens() {
    let server = Server::start(|request, _| {
        if request.method == "GET" && request.path == "/v1/models" {
            Reply::status(401, r#"{"error": {"message": "Incorrect API key"}}"#)
        } else {
            Reply::json(r#"{"choices": []}"#)
        }
    });
    let out = Sandbox::new()
        .evalctl()
        .env("OPENAI_API_KEY", "sk-not-a-real-key-7f3k")
        .args([
            "preflight",
            "--judge-model",
            "openai/gpt-4o-mini",
            "--objective",
            "o",
        ])
        .args(["--judge-base-url", &server.url("/v1"), "--candidate", "x"])
        .args(["--format", "text"])
        .output()
        .unwrap();
    assert_eq!(code(&out), 3);
    assert_eq!(
        stderr_text(&out),
        format!(
            "error: evaluator preflight failed for judge openai/gpt-4o-mini at {}: the API \
             rejected the key in OPENAI_API_KEY (HTTP 401 from the models endpoint)\n",
            server.url("/v1")
        )
    );
    let requests = server.requests();
    assert_eq!(requests.len(), 1, "only the models endpoint is asked");
    assert_eq!(requests[0].path, "/v1/models");
    assert!(!stderr_text(&out).contains("7f3k"));
}

#[test]
fn a_command_that_swallowed_the_candidate_says_where_it_went() {
    // On a terminal there is no stdin candidate; `script` gives evalctl one.
    let sandbox = Sandbox::new();
    let command = format!(
        "{} run --evaluator-command pyhton3 eval.py cand.txt --format text",
        common::bin()
    );
    let out = common::on_a_terminal(sandbox.path(), &command)
        .output()
        .expect("script (util-linux) runs");
    let text = String::from_utf8_lossy(&out.stdout).replace('\r', "");
    assert_eq!(
        text,
        "error: run: no candidate given: pass candidate files, --candidate TEXT, --candidates \
         FILE.jsonl, or pipe the candidate on stdin. Every word after --evaluator-command was \
         taken for the evaluator (pyhton3 eval.py cand.txt): put candidate files before \
         --evaluator-command, or quote the command. Note: \"pyhton3\" is not an executable on \
         PATH\n"
    );
}

#[test]
fn an_unknown_evaluator_program_is_named_beside_the_input_problems() {
    let sandbox = Sandbox::new();
    let out = sandbox
        .evalctl()
        .args([
            "run",
            "--evaluator-command",
            "pyhton3",
            "eval.py",
            "cand.txt",
        ])
        .args(["--format", "text"])
        .write_stdin("")
        .output()
        .unwrap();
    assert_eq!(code(&out), 2);
    assert_eq!(
        stderr_text(&out),
        format!(
        "error: <stdin>: no candidate: stdin is empty. Pass candidate files, --candidate TEXT or \
         --candidates FILE.jsonl (values right after --evaluator-command belong to the evaluator: \
         put candidate files before it, or quote the command)\n\
         error: command 'pyhton3 eval.py cand.txt' (cwd: {}): executable 'pyhton3' not found on \
         PATH\n",
            sandbox.path().display()
        )
    );
}

#[test]
fn an_evaluator_from_the_config_file_is_not_said_to_have_swallowed_the_candidate() {
    // On a terminal there is no stdin candidate; `script` gives evalctl one.
    let sandbox = Sandbox::new();
    sandbox.write("evalctl.toml", "[evaluator]\ncommand = \"sh eval.sh\"\n");
    sandbox.write("eval.sh", "echo '{\"score\": 1}'\n");
    let command = format!("{} run --limit 2 --format text", common::bin());
    let out = common::on_a_terminal(sandbox.path(), &command)
        .output()
        .expect("script (util-linux) runs");
    let text = String::from_utf8_lossy(&out.stdout).replace('\r', "");
    assert_eq!(
        text,
        "error: run: no candidate given: pass candidate files, --candidate TEXT, --candidates \
         FILE.jsonl, or pipe the candidate on stdin\n"
    );
}
