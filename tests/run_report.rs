//! What a run reports besides its summary: the stderr diagnostics (failed calls, errored
//! built-in checks), an `--output` file that stops accepting writes, and the `-j` bound.

use crate::common::{code, json_stdout, stderr_text, succeeded, Sandbox};

#[test]
fn an_output_file_that_fails_mid_run_stops_the_run_with_a_summary_and_exit_4() {
    let sb = Sandbox::new();
    sb.write(
        "d.jsonl",
        "{\"n\": 1}\n{\"n\": 2}\n{\"n\": 3}\n{\"n\": 4}\n",
    );
    // One call at a time; the second waits until evalctl has closed /dev/full, which its
    // results writer does once a write there has failed.
    let out = sb
        .run_with(
            "cat >/dev/null\n\
             if [ -e first ]; then\n\
               while ls -l /proc/$PPID/fd | grep -q /dev/full; do sleep 0.01; done\n\
             fi\n\
             touch first\n\
             printf '{\"score\": 1}'\n",
        )
        .args([
            "--skip-preflight",
            "-j",
            "1",
            "--candidate",
            "c",
            "--dataset",
            "d.jsonl",
            "--output",
            "/dev/full",
        ])
        .output()
        .unwrap();
    // A write failure after evaluation began is evalctl's own failure: exit 4, reported once.
    // No call starts once it is known: the second call starts only if the first one's line had
    // not failed yet when it was queued, and never a third (the second ends after the failure).
    assert_eq!(code(&out), 4, "{}", stderr_text(&out));
    let summary = json_stdout(&out);
    let made = summary["calls"]["total"].as_u64().unwrap();
    assert!(made == 1 || made == 2, "{made} calls made");
    let calls = |n: u64| format!("{n} call{}", if n == 1 { "" } else { "s" });
    assert_eq!(
        stderr_text(&out),
        format!(
            "error: /dev/full: writing results failed: No space left on device; the results \
             after this one are not written\n\
             stopped: no call is started once results cannot be written: {} not made (run \
             --resume makes them once /dev/full can be written)\n",
            calls(4 - made),
        )
    );
    assert_eq!(
        summary["exit_reason"],
        format!(
            "a results or report file could not be written (see stderr); {}",
            match made {
                1 => "the call succeeded",
                _ => "all 2 calls succeeded",
            }
        )
    );
    assert_eq!(
        summary["partial"]["description"],
        format!("{} of 4 calls absent", 4 - made)
    );
    assert_eq!(summary["candidates"][0]["score"], 1.0);
}

#[test]
fn failed_calls_are_listed_on_stderr_up_to_five() {
    let sb = Sandbox::new();
    let rows: String = (0..8).map(|i| format!("{{\"n\": {i}}}\n")).collect();
    sb.write("d.jsonl", rows);
    let run = |extra: &[&str]| {
        sb.run_with("cat >/dev/null\necho oops >&2\nexit 4\n")
            .args([
                "--skip-preflight",
                "-j",
                "1",
                "--candidate",
                "c",
                "--dataset",
                "d.jsonl",
            ])
            .args(extra)
            .output()
            .unwrap()
    };
    let listed: String = (0..5)
        .map(|i| {
            format!(
                "failed: cand-1 train #{i} (line {}): exit_status: command exited with code 4; \
                 stderr: oops\n",
                i + 1
            )
        })
        .collect();
    let out = run(&[]);
    assert_eq!(code(&out), 1);
    assert_eq!(
        stderr_text(&out),
        format!(
            "{listed}failed: … and 3 more failed calls (pass --output FILE.jsonl to keep every \
             call)\nexit 1: 8 of 8 calls failed\n"
        )
    );
    assert_eq!(
        stderr_text(&run(&["--output", "out.jsonl"])),
        format!(
            "{listed}failed: … and 3 more failed calls (every call is in out.jsonl)\n\
             exit 1: 8 of 8 calls failed\n"
        )
    );
}

#[test]
fn built_in_checks_that_error_are_named_on_stderr() {
    let sb = Sandbox::new();
    sb.write("d.jsonl", "{\"expected\": \"Paris\"}\n{\"other\": 1}\n");
    sb.write(
        "checks.json",
        r#"{"checks": [{"type": "contains", "arguments": {"text": "$.test_case.expected", "phrases": ["Paris"]}}]}"#,
    );
    let out = sb
        .evalctl()
        .args([
            "run",
            "--format",
            "json",
            "--checks",
            "checks.json",
            "--dataset",
            "d.jsonl",
        ])
        .args(["--candidate", "Paris is nice"])
        .output()
        .unwrap();
    assert_eq!(
        code(&out),
        0,
        "a check error is a failed check, not a failed call"
    );
    assert_eq!(
        stderr_text(&out),
        "warning: check contains errored in 1 of 2 calls and counted as failed \
         (see side_info.check_results)\n"
    );
    assert_eq!(json_stdout(&out)["candidates"][0]["score"], 0.5);
}

#[test]
fn concurrency_never_exceeds_j() {
    let sb = Sandbox::new();
    let rows: String = (0..8).map(|i| format!("{{\"n\": {i}}}\n")).collect();
    sb.write("d.jsonl", rows);
    // Each call logs its start and end (nanoseconds) around a short sleep.
    let script = "cat >/dev/null\nstart=$(date +%s%N)\nsleep 0.1\nend=$(date +%s%N)\necho \"$start $end\" >> spans.log\nprintf '{\"score\": 1}'\n";
    for jobs in [1usize, 3] {
        let _ = std::fs::remove_file(sb.join("spans.log"));
        succeeded(sb.run_with(script).args([
            "--skip-preflight",
            "-j",
            &jobs.to_string(),
            "--candidate",
            "c",
            "--dataset",
            "d.jsonl",
        ]));
        let mut events: Vec<(u128, i32)> = Vec::new();
        for line in sb.lines("spans.log") {
            let (start, end) = line.split_once(' ').unwrap();
            events.push((start.parse().unwrap(), 1));
            events.push((end.parse().unwrap(), -1));
        }
        events.sort();
        let mut running = 0;
        let most = events
            .iter()
            .map(|(_, step)| {
                running += step;
                running
            })
            .max()
            .unwrap();
        assert_eq!(events.len(), 16);
        assert!(most as usize <= jobs, "-j {jobs}: {most} calls overlapped");
        assert!(most >= 1);
    }
}
