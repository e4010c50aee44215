//! A file a command writes (`--output`, `--report`, `--junit`, `report --output`,
//! `--save-outputs`) is never one it reads, nor another it writes, however the two are named:
//! each such clash is a usage error before any work, and the files are left as they were.

use crate::common::{code, stderr_text, Sandbox};

const DATASET: &str = "{\"q\": \"capital of France\"}\n{\"q\": \"capital of Italy\"}\n";

fn sandbox() -> Sandbox {
    let sb = Sandbox::new();
    sb.write(
        "eval.sh",
        "touch called\ncat >/dev/null\nprintf '{\"score\": 1}'\n",
    );
    sb.write("train.jsonl", DATASET);
    sb
}

/// `evalctl ARGS --format text` in `sb`: its exit code and stderr.
fn refused(sb: &Sandbox, args: &[&str]) -> String {
    let out = sb
        .evalctl()
        .args(args)
        .args(["--format", "text"])
        .output()
        .unwrap();
    assert_eq!(code(&out), 2, "{}", stderr_text(&out));
    stderr_text(&out)
}

#[test]
fn run_refuses_a_report_junit_or_output_that_is_an_input_or_another_output() {
    let sb = sandbox();
    sb.write("prompt.txt", "Answer briefly.");
    let run = [
        "run",
        "--skip-preflight",
        "--evaluator-command",
        "sh eval.sh",
        "--dataset",
        "train.jsonl",
        "prompt.txt",
    ];
    fn with<'a>(run: &[&'a str], more: &[&'a str]) -> Vec<&'a str> {
        [run, more].concat()
    }
    assert_eq!(
        refused(&sb, &with(&run, &["--report", "./train.jsonl"])),
        "error: --report: ./train.jsonl is also --dataset, an input: name another file\n"
    );
    assert_eq!(
        refused(
            &sb,
            &with(&run, &["--output", "train.jsonl", "--append-run"])
        ),
        "error: --output: train.jsonl is also --dataset, an input: name another file\n"
    );
    assert_eq!(
        refused(
            &sb,
            &with(
                &run,
                &[
                    "--output",
                    "r.jsonl",
                    "--junit",
                    "r.jsonl",
                    "--report",
                    "prompt.txt"
                ]
            )
        ),
        "error: --report: prompt.txt is also a candidate file, an input: name another file\n\
         error: --junit: r.jsonl is also --output: name a file for each\n"
    );
    assert_eq!(sb.read("train.jsonl"), DATASET);
    assert_eq!(sb.read("prompt.txt"), "Answer briefly.");
    assert!(!sb.exists("r.jsonl"));
    assert!(!sb.exists("called"), "the evaluator ran");
}

#[test]
fn run_refuses_a_report_or_junit_that_is_a_file_its_commands_name() {
    let sb = sandbox();
    sb.write("model.sh", "cat >/dev/null\nprintf 'Paris'\n");
    let script = sb.read("eval.sh");
    let script = format!("#!/bin/sh\n{script}");
    sb.write_executable("eval.sh", &script);
    assert_eq!(
        refused(
            &sb,
            &[
                "run",
                "--evaluator-command",
                "sh eval.sh",
                "--dataset",
                "train.jsonl",
                "--candidate",
                "x",
                "--report",
                "eval.sh",
            ]
        ),
        "error: --report: eval.sh is also a file of --evaluator-command, an input: name another \
         file\n"
    );
    assert_eq!(
        refused(
            &sb,
            &[
                "run",
                "--evaluator-command",
                "./eval.sh",
                "--dataset",
                "train.jsonl",
                "--candidate",
                "x",
                "--generate",
                "--task-model-command",
                "sh model.sh",
                "--junit",
                "model.sh",
                "--report",
                "./eval.sh",
            ]
        ),
        "error: --report: ./eval.sh is also a file of --evaluator-command, an input: name another \
         file\n\
         error: --junit: model.sh is also a file of --task-model-command, an input: name another \
         file\n"
    );
    assert_eq!(sb.read("eval.sh"), script);
    assert_eq!(sb.read("model.sh"), "cat >/dev/null\nprintf 'Paris'\n");
    assert!(!sb.exists("called"), "the evaluator ran");
}

#[test]
fn a_file_reached_through_a_link_is_the_same_file() {
    let sb = sandbox();
    std::os::unix::fs::symlink("train.jsonl", sb.path().join("link.jsonl")).unwrap();
    assert_eq!(
        refused(
            &sb,
            &[
                "run",
                "--evaluator-command",
                "sh eval.sh",
                "--dataset",
                "train.jsonl",
                "--candidate",
                "x",
                "--junit",
                "link.jsonl",
            ]
        ),
        "error: --junit: link.jsonl is also --dataset, an input: name another file\n"
    );
    assert_eq!(sb.read("train.jsonl"), DATASET);
}

#[test]
fn a_link_to_a_file_not_written_yet_is_that_file() {
    // `r.html -> out.jsonl` before the run: the report would be written through the link
    // over the results the run has just written.
    let sb = sandbox();
    std::os::unix::fs::symlink("out.jsonl", sb.path().join("r.html")).unwrap();
    std::os::unix::fs::symlink("elsewhere/j.xml", sb.path().join("j.xml")).unwrap();
    let run = [
        "run",
        "--evaluator-command",
        "sh eval.sh",
        "--dataset",
        "train.jsonl",
        "--candidate",
        "x",
    ];
    assert_eq!(
        refused(
            &sb,
            &[&run[..], &["--output", "out.jsonl", "--report", "r.html"]].concat()
        ),
        "error: --report: r.html is also --output: name a file for each\n"
    );
    // A link whose target's directory is missing is found before the run, with the other
    // unwritable files.
    assert_eq!(
        refused(
            &sb,
            &[&run[..], &["--output", "/", "--junit", "j.xml"]].concat()
        ),
        "error: /: cannot open --output for writing: it is a directory\n\
         error: --junit: j.xml: no directory elsewhere\n"
    );
    assert!(!sb.path().join("called").exists());
    assert!(!sb.path().join("out.jsonl").exists());
}

#[test]
fn no_output_is_the_cache_database_or_the_config_file() {
    // A report written over the cache, or over the evalctl.toml the run read, loses them.
    let sb = sandbox();
    sb.write("evalctl.toml", "[run]\nconcurrency = 2\n");
    std::fs::create_dir(sb.path().join("cdir")).unwrap();
    let run = |extra: &[&str]| {
        refused(
            &sb,
            &[
                &[
                    "run",
                    "--evaluator-command",
                    "sh eval.sh",
                    "--candidate",
                    "x",
                    "--cache",
                    "--cache-dir",
                    "cdir",
                ][..],
                extra,
            ]
            .concat(),
        )
    };
    assert_eq!(
        run(&["--report", "cdir/results.sqlite3"]),
        "error: --report: cdir/results.sqlite3 is also the --cache database, an input: name \
         another file\n"
    );
    std::os::unix::fs::symlink("evalctl.toml", sb.path().join("j.xml")).unwrap();
    assert_eq!(
        run(&["--junit", "j.xml"]),
        "error: --junit: j.xml is also the config file, an input: name another file\n"
    );
    let tasks = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures/tasks/tasks.jsonl");
    sb.write("tasks.jsonl", std::fs::read_to_string(tasks).unwrap());
    assert_eq!(
        refused(
            &sb,
            &[
                "tasks",
                "run",
                "tasks.jsonl",
                "--model-command",
                "sh eval.sh",
                "--cache",
                "--cache-dir",
                "cdir",
                "--save-outputs",
                "cdir/results.sqlite3",
            ]
        ),
        "error: --save-outputs: cdir/results.sqlite3 is also the --cache database, an input: \
         name another file\n"
    );
    assert_eq!(sb.read("evalctl.toml"), "[run]\nconcurrency = 2\n");
    assert!(!sb.path().join("called").exists());
}

#[test]
fn commands_that_read_results_do_not_write_over_them() {
    let sb = sandbox();
    let out = sb
        .evalctl()
        .args([
            "run",
            "--evaluator-command",
            "sh eval.sh",
            "--candidate",
            "x",
        ])
        .args(["--dataset", "train.jsonl", "--output", "r.jsonl"])
        .output()
        .unwrap();
    assert_eq!(code(&out), 0, "{}", stderr_text(&out));
    let results = sb.read("r.jsonl");
    assert_eq!(
        refused(&sb, &["summarize", "r.jsonl", "--junit", "r.jsonl"]),
        "error: --junit: r.jsonl is also a results file, an input: name another file\n"
    );
    assert_eq!(
        refused(&sb, &["report", "r.jsonl", "--output", "r.jsonl"]),
        "error: --output: r.jsonl is also a results file, an input: name another file\n"
    );
    assert_eq!(sb.read("r.jsonl"), results);
}

#[test]
fn spec_and_tasks_commands_do_not_write_over_what_they_score() {
    let sb = sandbox();
    let root = env!("CARGO_MANIFEST_DIR");
    for name in [
        "spec/pack.yaml",
        "spec/runs.jsonl",
        "tasks/tasks.jsonl",
        "tasks/outputs.jsonl",
    ] {
        let text = std::fs::read(format!("{root}/fixtures/{name}")).unwrap();
        sb.write(name.rsplit('/').next().unwrap(), text);
    }
    let runs = sb.read("runs.jsonl");
    assert_eq!(
        refused(
            &sb,
            &[
                "spec",
                "score",
                "pack.yaml",
                "runs.jsonl",
                "--output",
                "runs.jsonl"
            ]
        ),
        "error: --output: runs.jsonl is also the runs file, an input: name another file\n"
    );
    assert_eq!(sb.read("runs.jsonl"), runs);
    let outputs = sb.read("outputs.jsonl");
    assert_eq!(
        refused(
            &sb,
            &[
                "tasks",
                "score",
                "tasks.jsonl",
                "--outputs",
                "outputs.jsonl",
                "--output",
                "outputs.jsonl",
            ]
        ),
        "error: --output: outputs.jsonl is also --outputs, an input: name another file\n"
    );
    assert_eq!(sb.read("outputs.jsonl"), outputs);
    assert_eq!(
        refused(
            &sb,
            &[
                "tasks",
                "run",
                "tasks.jsonl",
                "--model-command",
                "sh model.sh",
                "--save-outputs",
                "saved.jsonl",
                "--output",
                "saved.jsonl",
            ]
        ),
        "error: --output: saved.jsonl is also --save-outputs: name a file for each\n"
    );
    assert!(!sb.exists("saved.jsonl"));
}

#[test]
fn new_files_named_two_ways_clash_and_a_device_takes_every_output() {
    let sb = sandbox();
    std::fs::create_dir(sb.path().join("sub")).unwrap();
    let run = |more: &[&str]| {
        let mut command = sb.evalctl();
        command
            .args(["run", "--format", "text", "--skip-preflight"])
            .args(["--evaluator-command", "sh eval.sh", "--candidate", "x"])
            .args(["--dataset", "train.jsonl"])
            .args(more);
        command.output().unwrap()
    };
    let out = run(&["--junit", "sub/../x.xml", "--report", "x.xml"]);
    assert_eq!(code(&out), 2, "{}", stderr_text(&out));
    assert_eq!(
        stderr_text(&out),
        "error: --junit: sub/../x.xml is also --report: name a file for each\n"
    );
    assert!(!sb.exists("x.xml"));
    let out = run(&[
        "--output",
        "/dev/null",
        "--junit",
        "/dev/null",
        "--report",
        "/dev/null",
    ]);
    assert_eq!(code(&out), 0, "{}", stderr_text(&out));
}

#[test]
fn score_lines_are_appended_only_to_a_results_file_whose_last_line_is_whole() {
    let sb = Sandbox::new();
    sb.copy_fixtures("fixtures/spec", &["pack.yaml", "runs.jsonl"]);
    sb.write("mydata.jsonl", "{\"input\": \"a\"}\n");
    let spec_score = |output: &str| {
        let out = sb
            .evalctl()
            .args([
                "spec",
                "score",
                "pack.yaml",
                "runs.jsonl",
                "--format",
                "json",
            ])
            .args(["--output", output])
            .output()
            .unwrap();
        (code(&out), stderr_text(&out))
    };
    // A dataset named by mistake is no results file: nothing is appended to it.
    assert_eq!(
        spec_score("mydata.jsonl"),
        (
            2,
            "error: mydata.jsonl: is not a results file (line 1 is no result line): name another \
             --output file\n"
                .to_string()
        )
    );
    assert_eq!(sb.read("mydata.jsonl"), "{\"input\": \"a\"}\n");
    // Records of another scoring are appended to; a file a killed run cut short is not.
    assert_eq!(spec_score("records.jsonl").0, 1);
    assert_eq!(spec_score("records.jsonl").0, 1);
    let records = sb.read("records.jsonl");
    sb.write("torn.jsonl", &records[..records.len() - 10]);
    assert_eq!(
        spec_score("torn.jsonl"),
        (
            2,
            "error: torn.jsonl: ends with a line cut short (no closing newline), which lines \
             appended would join: remove that line, or name another --output file\n"
                .to_string()
        )
    );
}
