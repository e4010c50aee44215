//! Judge replies the scoring must not misread, through the real binary against a scripted
//! chat-completions server: bare `NaN`/`Infinity` scores are `non_finite_score` (as for command
//! and HTTP evaluators), and with `--rubric` a reply lacking dimensions is an `invalid_output`
//! error naming them, never a silent 0.

use crate::common::{code, stderr_text, succeeded, Reply, Sandbox, Server};
use serde_json::{json, Value};

/// A chat-completions response whose message content is `content`.
fn completion(content: &str) -> Reply {
    Reply::json(
        json!({
            "model": "judge-1",
            "choices": [{"index": 0, "message": {"role": "assistant", "content": content}, "finish_reason": "stop"}],
        })
        .to_string(),
    )
}

/// Run one candidate through a judge that always answers `content`; the one `--output` record.
fn judged(sandbox: &Sandbox, content: &str, extra: &[&str]) -> Value {
    let server = Server::fixed(completion(content));
    let _ = std::fs::remove_file(sandbox.join("out.jsonl")); // --output appends
    let out = sandbox
        .evalctl()
        .args([
            "run",
            "--format",
            "json",
            "--judge-model",
            "fake/judge-1",
            "--judge-base-url",
            &server.url("/v1"),
            "--objective",
            "Answer briefly.",
            "--candidate",
            "Hello.",
            "--output",
            "out.jsonl",
        ])
        .args(extra)
        .output()
        .expect("evalctl runs");
    assert_eq!(code(&out), 1, "{content}: {}", stderr_text(&out));
    let mut records = sandbox.jsonl("out.jsonl");
    assert_eq!(records.len(), 1, "{content}");
    records.remove(0)
}

#[test]
fn bare_non_finite_scores_are_non_finite_score() {
    let sandbox = Sandbox::new();
    for (content, token) in [
        (r#"{"score": NaN, "reasoning": "unsure"}"#, "NaN"),
        ("Verdict:\n{\"score\": Infinity}\nDone.", "Infinity"),
        (r#"{"score": -Infinity}"#, "-Infinity"),
    ] {
        let record = judged(&sandbox, content, &[]);
        assert_eq!(record["error"]["kind"], "non_finite_score", "{content}");
        assert_eq!(record["score"], json!(0.0));
        let message = record["error"]["message"].as_str().unwrap();
        assert!(
            message.starts_with(&format!(
                "the judge's score is {token}; scores must be finite numbers; judge reply: "
            )),
            "{message}"
        );
        assert_eq!(record["side_info"]["judge_score"], token, "{content}");
    }
}

#[test]
fn a_rubric_reply_lacking_dimensions_is_invalid_output_naming_them() {
    let sandbox = Sandbox::new();
    let rubric = sandbox.write(
        "rubric.json",
        r#"{"quality_dimensions": [{"name": "clarity", "weight": 3}, {"name": "accuracy"}]}"#,
    );
    let rubric = rubric.to_str().unwrap();
    let overall = judged(
        &sandbox,
        r#"{"score": 0.7, "reasoning": "good overall"}"#,
        &["--rubric", rubric],
    );
    assert_eq!(overall["error"]["kind"], "invalid_output");
    let message = overall["error"]["message"].as_str().unwrap();
    assert!(
        message.starts_with(
            "the judge's reply lacks the rubric dimensions \"clarity\", \"accuracy\"; judge reply: "
        ),
        "{message}"
    );
    assert_eq!(
        overall["side_info"]["missing_dimensions"],
        json!(["clarity", "accuracy"])
    );

    let partial = judged(
        &sandbox,
        r#"{"dimensions": {"clarity": 0.9}}"#,
        &["--rubric", rubric],
    );
    assert_eq!(partial["error"]["kind"], "invalid_output");
    assert!(
        partial["error"]["message"]
            .as_str()
            .unwrap()
            .starts_with("the judge's reply lacks the rubric dimension \"accuracy\";"),
        "{}",
        partial["error"]
    );
    assert_eq!(
        partial["side_info"]["dimension_scores"],
        json!({"clarity": 0.9})
    );

    let nan_dimension = judged(
        &sandbox,
        r#"{"dimensions": {"clarity": NaN, "accuracy": 1}}"#,
        &["--rubric", rubric],
    );
    assert_eq!(nan_dimension["error"]["kind"], "non_finite_score");
}

#[test]
fn a_rubric_reply_with_every_dimension_scores_their_weighted_mean() {
    let sandbox = Sandbox::new();
    let rubric = sandbox.write(
        "rubric.json",
        r#"{"quality_dimensions": [{"name": "clarity", "weight": 3}, {"name": "accuracy"}]}"#,
    );
    let server = Server::fixed(completion(
        r#"{"dimensions": {"clarity": 0.8, "Accuracy": 0.4}}"#,
    ));
    succeeded(sandbox.evalctl().args([
        "run",
        "--format",
        "json",
        "--judge-model",
        "fake/judge-1",
        "--judge-base-url",
        &server.url("/v1"),
        "--objective",
        "Answer briefly.",
        "--rubric",
        rubric.to_str().unwrap(),
        "--candidate",
        "Hello.",
        "--output",
        "out.jsonl",
    ]));
    let score = sandbox.jsonl("out.jsonl")[0]["score"].as_f64().unwrap();
    assert!((score - 0.7).abs() < 1e-9, "{score}");
}
