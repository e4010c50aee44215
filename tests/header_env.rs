//! `--header` values read `${NAME}` from the environment, so a token stays out of argv (where
//! other users of the machine can read it): the expanded value reaches the server and is a
//! secret nowhere shown (results, summaries, errors, `config show`); `$$` is a literal `$`; a
//! missing variable, an unclosed `${` and a bad name are errors naming the flag and the header.

use serde_json::Value;

use crate::common::{stderr_text, stdout_text, Reply, Request, Sandbox, Server};

/// The token the environment holds.
const TOKEN: &str = "tok-Env5Secret8Value";

/// `run --evaluator-url URL --header HEADER... --candidate c` in `dir`, with `EVAL_TOKEN` set.
fn run(dir: &Sandbox, url: &str, headers: &[&str], format: &str) -> std::process::Output {
    let mut command = dir.evalctl();
    command
        .env("EVAL_TOKEN", TOKEN)
        .args(["run", "--evaluator-url", url, "--candidate", "c"])
        .args(["--output", "out.jsonl", "--format", format]);
    for header in headers {
        command.args(["--header", header]);
    }
    command.output().unwrap()
}

fn assert_never_shown(dir: &Sandbox, outputs: &[&std::process::Output]) {
    for output in outputs {
        let text = stdout_text(output) + &stderr_text(output);
        assert!(!text.contains(TOKEN), "the token was shown: {text}");
    }
    assert!(
        !dir.read("out.jsonl").contains(TOKEN),
        "the token was written"
    );
}

#[test]
fn a_header_takes_its_token_from_the_environment_and_never_shows_it() {
    // Echoes the Authorization header it got into the result's side information.
    let server = Server::start(|request: &Request, _| {
        let echoed = request.header("authorization").unwrap_or_default();
        Reply::json(serde_json::json!({"score": 1, "got": echoed}).to_string())
    });
    let dir = Sandbox::new();
    let output = run(
        &dir,
        &server.url("/score"),
        &["Authorization: Bearer ${EVAL_TOKEN}", "X-Price: $$5 and $3"],
        "json",
    );
    assert_eq!(output.status.code(), Some(0), "{}", stderr_text(&output));
    let requests = server.requests();
    assert_eq!(requests.len(), 2, "the preflight probe and the call");
    for request in &requests {
        assert_eq!(
            request.header("authorization"),
            Some(format!("Bearer {TOKEN}").as_str())
        );
        assert_eq!(request.header("x-price"), Some("$5 and $3"));
    }
    let line: Value = serde_json::from_str(&dir.lines("out.jsonl")[0]).unwrap();
    assert_eq!(line["side_info"]["got"], "[redacted]");
    assert_never_shown(&dir, &[&output]);
}

#[test]
fn an_error_that_repeats_the_token_is_redacted() {
    let server = Server::start(|request: &Request, _| {
        let echoed = request.header("authorization").unwrap_or_default();
        Reply::status(401, format!("bad token {echoed}"))
    });
    let dir = Sandbox::new();
    let output = run(
        &dir,
        &server.url("/score"),
        &["Authorization: Bearer ${EVAL_TOKEN}"],
        "text",
    );
    assert_eq!(output.status.code(), Some(3));
    assert_eq!(
        stderr_text(&output),
        format!(
            "error: evaluator preflight failed for url {}: HTTP 401 Unauthorized: bad token [redacted] — the \
             server refused the credentials sent (the token or key is not shown)\n",
            server.url("/score")
        )
    );
    assert_never_shown(&dir, &[&output]);
}

#[test]
fn a_missing_variable_or_a_bad_reference_names_the_flag_and_the_header() {
    let dir = Sandbox::new();
    let url = "http://127.0.0.1:9/score";
    for (header, stderr) in [
        (
            "Authorization: Bearer ${EVAL_MISSING_TOKEN}",
            "error: --header: Authorization: `${EVAL_MISSING_TOKEN}`: the environment variable \
             EVAL_MISSING_TOKEN is not set\n",
        ),
        (
            "Authorization: Bearer tok-Pasted1 ${EVAL_TOKEN",
            "error: --header: Authorization: an unclosed `${` (`$${` is a literal `${`)\n",
        ),
        (
            "X-Key: ${EVAL TOKEN}",
            "error: --header: X-Key: `${EVAL TOKEN}`: a variable name is letters, digits and \
             `_`\n",
        ),
    ] {
        let output = run(&dir, url, &[header], "text");
        assert_eq!(output.status.code(), Some(2), "{header}");
        assert_eq!(stderr_text(&output), stderr, "{header}");
        assert!(!stderr_text(&output).contains("tok-Pasted1"));
    }
    // Every header's problem is reported at once.
    let output = run(
        &dir,
        url,
        &["X-A: ${EVAL_MISSING_TOKEN}", "X-B: ${}"],
        "text",
    );
    assert_eq!(output.status.code(), Some(2));
    assert_eq!(
        stderr_text(&output),
        "error: --header: X-A: `${EVAL_MISSING_TOKEN}`: the environment variable \
         EVAL_MISSING_TOKEN is not set\n\
         error: --header: X-B: `${}`: a variable name is letters, digits and `_`\n"
    );
    // An expanded value that is no header value is refused without showing it.
    let output = dir
        .evalctl()
        .env("EVAL_TOKEN", format!("{TOKEN}\nX-Injected: 1"))
        .args([
            "run",
            "--evaluator-url",
            url,
            "--candidate",
            "c",
            "--format",
            "text",
        ])
        .args(["--header", "Authorization: Bearer ${EVAL_TOKEN}"])
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(2));
    assert_eq!(
        stderr_text(&output),
        "error: --header: authorization: the value contains a control character (a newline?)\n"
    );
}

#[test]
fn a_header_without_a_colon_or_with_a_framing_name_is_refused_without_its_value() {
    // A variable holding the token alone, or a tab for the colon: the header as typed is
    // named (its name, never its value), not the token it expands to.
    let dir = Sandbox::new();
    let url = "http://127.0.0.1:9/score";
    for (header, stderr) in [
        (
            "${EVAL_TOKEN}",
            "error: --header: \"${EVAL_TOKEN}\": expected \"Name: value\"\n",
        ),
        (
            "Bearer\t${EVAL_TOKEN}",
            "error: --header: \"Bearer\": expected \"Name: value\"\n",
        ),
        (
            "${EVAL_TOKEN}: x",
            "error: --header: \"${EVAL_TOKEN}\": a header's name is written as it is, not from \
             a variable\n",
        ),
        // The body's length is evalctl's to say: a header giving it would cut or stall every
        // payload.
        (
            "Content-Length: 5",
            "error: --header: content-length: evalctl sets it for each request's body; it \
             cannot be given\n",
        ),
        (
            "Content-Type: text/plain",
            "error: --header: content-type: evalctl sets it for each request's body; it cannot \
             be given\n",
        ),
        (
            "Transfer-Encoding: chunked",
            "error: --header: transfer-encoding: evalctl sets it for each request's body; it \
             cannot be given\n",
        ),
    ] {
        let output = run(&dir, url, &[header], "text");
        assert_eq!(
            (output.status.code(), stderr_text(&output)),
            (Some(2), stderr.to_string()),
            "{header}"
        );
        assert_never_shown(&dir, &[&output]);
    }
}

#[test]
fn config_show_masks_the_header() {
    let dir = Sandbox::new();
    let output = dir
        .evalctl()
        .env("EVAL_TOKEN", TOKEN)
        .args(["config", "show", "--format", "json", "run"])
        .args(["--evaluator-url", "http://127.0.0.1:9/score"])
        .args(["--header", "Authorization: Bearer ${EVAL_TOKEN}"])
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(0), "{}", stderr_text(&output));
    let shown = crate::common::json_stdout(&output);
    let header = shown["settings"]
        .as_array()
        .unwrap()
        .iter()
        .find(|setting| setting["key"] == "evaluator.headers")
        .unwrap();
    assert_eq!(
        header["value"],
        serde_json::json!(["Authorization: [redacted]"])
    );
    assert_never_shown(&dir, &[&output]);
}
