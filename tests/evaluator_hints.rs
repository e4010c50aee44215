//! The hints for an evaluator that cannot run as given, through the real binary: a script without
//! the run bit or a shebang line is suggested the interpreter its shebang or extension calls for
//! (not always `sh`), and an `--evaluator-url` without a scheme is suggested `http://`.

use crate::common::{code, stderr_text, Sandbox};

/// `evalctl run` with `evaluator` as the command; its exit code and stderr.
fn run_command(sandbox: &Sandbox, evaluator: &str) -> (i32, String) {
    let out = sandbox
        .evalctl()
        .args(["run", "--evaluator-command", evaluator, "--candidate", "x"])
        .output()
        .expect("evalctl runs");
    (code(&out), stderr_text(&out))
}

#[test]
fn a_script_without_the_run_bit_is_suggested_its_interpreter() {
    let sandbox = Sandbox::new();
    for (name, contents, interpreter) in [
        ("eval.py", "print('{\"score\": 1}')\n", "python3"),
        ("eval.js", "console.log('{}')\n", "node"),
        ("eval.rb", "puts 1\n", "ruby"),
        ("eval.pl", "print 1;\n", "perl"),
        ("eval.bash", "echo 1\n", "bash"),
        ("eval.sh", "echo 1\n", "sh"),
        (
            "tool",
            "#!/usr/bin/env -S python3 -u\nprint(1)\n",
            "python3",
        ),
        ("tool.sh", "#!/usr/bin/ruby\nputs 1\n", "ruby"),
    ] {
        sandbox.write(name, contents);
        let (code, stderr) = run_command(&sandbox, &format!("./{name}"));
        assert_eq!(code, 3, "{name}: {stderr}");
        assert!(
            stderr.contains(&format!(
                "'./{name}' is not executable (the run bit is not set): chmod +x ./{name}, \
                 or run it as '{interpreter} ./{name}'\n"
            )),
            "{name}: {stderr}"
        );
    }
}

#[test]
fn a_script_without_a_shebang_is_suggested_one_for_its_extension() {
    let sandbox = Sandbox::new();
    for (name, shebang, interpreter) in [
        ("eval.py", "#!/usr/bin/env python3", "python3"),
        ("eval.js", "#!/usr/bin/env node", "node"),
        ("eval", "#!/bin/sh", "sh"),
    ] {
        sandbox.write_executable(name, "print(1)\n");
        let (code, stderr) = run_command(&sandbox, &format!("./{name}"));
        assert_eq!(code, 3, "{name}: {stderr}");
        assert!(
            stderr.contains(&format!(
                "'./{name}' has no shebang line: start it with a line such as {shebang}, \
                 or run it as '{interpreter} ./{name}'\n"
            )),
            "{name}: {stderr}"
        );
    }
}

#[test]
fn an_evaluator_url_without_a_scheme_is_suggested_http() {
    let sandbox = Sandbox::new();
    for (url, expected) in [
        (
            "127.0.0.1:8000/score",
            "error: --evaluator-url: not a valid URL: relative URL without a base; \
             did you mean http://127.0.0.1:8000/score?\n",
        ),
        (
            "localhost:8000/score",
            "error: --evaluator-url: localhost:8000/score: the scheme must be http or https; \
             did you mean http://localhost:8000/score?\n",
        ),
        (
            "ftp://127.0.0.1/score",
            "error: --evaluator-url: ftp://127.0.0.1/score: the scheme must be http or https\n",
        ),
    ] {
        let out = sandbox
            .evalctl()
            .args(["run", "--evaluator-url", url, "--candidate", "x"])
            .output()
            .expect("evalctl runs");
        assert_eq!(code(&out), 2, "{url}");
        assert_eq!(stderr_text(&out), expected, "{url}");
    }
}
