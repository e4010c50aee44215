//! Examples are named by their `id` field where they have one, by index where they have none:
//! in result lines (`example_id`), the failed calls on stderr, JUnit test cases and the HTML
//! report's rows.

use crate::common::{code, stderr_text, Sandbox};

#[test]
fn examples_are_named_by_id_where_they_have_one() {
    let sb = Sandbox::new();
    sb.write(
        "d.jsonl",
        "{\"id\": \"q1\", \"s\": 1}\n{\"id\": 7, \"s\": 0}\n{\"s\": 0}\n",
    );
    // Fails every example whose `s` is 0.
    sb.write(
        "eval.sh",
        "p=$(cat)\ncase \"$p\" in *'\"s\": 0'*) echo wrong >&2; exit 3;; esac\nprintf '{\"score\": 1}'\n",
    );
    let output = sb
        .evalctl()
        .args([
            "run",
            "--format",
            "text",
            "--skip-preflight",
            "--candidate",
            "c",
        ])
        .args(["--evaluator-command", "sh eval.sh", "--dataset", "d.jsonl"])
        .args([
            "--output",
            "out.jsonl",
            "--junit",
            "junit.xml",
            "--report",
            "r.html",
        ])
        .output()
        .unwrap();
    assert_eq!(code(&output), 1);
    let page_kb = sb.read("r.html").len() as f64 / 1e3;
    assert_eq!(
        stderr_text(&output),
        format!(
            "failed: cand-1 train 7 (line 2): exit_status: command exited with code 3; stderr: \
             wrong\n\
             failed: cand-1 train #2 (line 3): exit_status: command exited with code 3; stderr: \
             wrong\n\
             wrote junit.xml: 3 test cases (0 failures, 2 errors)\n\
             wrote r.html: 3 results (2 failed), {page_kb:.1} kB\n\
             exit 1: 2 of 3 calls failed\n"
        )
    );

    let mut ids: Vec<(u64, Option<serde_json::Value>)> = sb
        .jsonl("out.jsonl")
        .iter()
        .map(|line| {
            let index = line["example_index"].as_u64().unwrap();
            (index, line.get("example_id").cloned())
        })
        .collect();
    ids.sort_by_key(|(index, _)| *index);
    assert_eq!(
        ids,
        [
            (0, Some(serde_json::json!("q1"))),
            (1, Some(serde_json::json!("7"))),
            (2, None)
        ]
    );

    let junit = sb.read("junit.xml");
    let names: Vec<&str> = junit
        .split("<testcase ")
        .skip(1)
        .filter_map(|case| case.split("name=\"").nth(1)?.split('"').next())
        .collect();
    assert_eq!(
        names,
        [
            "cand-1 train q1 (line 1)",
            "cand-1 train 7 (line 2)",
            "cand-1 train #2 (line 3)"
        ]
    );

    let page = sb.read("r.html");
    let data = page
        .split_once("type=\"application/json\"")
        .and_then(|(_, rest)| rest.split_once('>'))
        .and_then(|(_, rest)| rest.split_once("</script>"))
        .map(|(json, _)| serde_json::from_str::<serde_json::Value>(json).expect("report data"))
        .expect("embedded data");
    let column = data["columns"]
        .as_array()
        .unwrap()
        .iter()
        .position(|name| name == "example_id")
        .unwrap();
    let mut row_ids: Vec<String> = data["rows"]
        .as_array()
        .unwrap()
        .iter()
        .map(|row| row[column].to_string())
        .collect();
    row_ids.sort();
    assert_eq!(row_ids, ["\"7\"", "\"q1\"", "null"]);
    // The page names a row by the id, else by the index.
    assert!(page.contains("row[col.example_id] === null ? '#' + row[col.example_index]"));
}

#[test]
fn compare_names_a_regressed_example_by_its_id() {
    let sb = Sandbox::new();
    sb.write("d.jsonl", "{\"id\": \"q1\", \"s\": 1}\n{\"s\": 2}\n");
    sb.write("base.sh", "cat >/dev/null\nprintf '{\"score\": 1}'\n");
    // The new evaluator scores every example 0.
    sb.write("new.sh", "cat >/dev/null\nprintf '{\"score\": 0}'\n");
    for (script, results) in [("base.sh", "base.jsonl"), ("new.sh", "new.jsonl")] {
        let run = sb
            .evalctl()
            .args([
                "run",
                "--format",
                "json",
                "--skip-preflight",
                "--candidate",
                "c",
            ])
            .args(["--evaluator-command", &format!("sh {script}")])
            .args(["--dataset", "d.jsonl", "--output", results])
            .output()
            .unwrap();
        assert!(code(&run) <= 1, "{}", stderr_text(&run));
    }
    let compared = sb
        .evalctl()
        .args(["compare", "base.jsonl", "new.jsonl", "--format", "json"])
        .args(["--allow-different-inputs"])
        .output()
        .unwrap();
    let report: serde_json::Value = serde_json::from_slice(&compared.stdout).unwrap();
    let regressions = &report["candidates"][0]["splits"]["train"]["regressions"];
    assert_eq!(regressions[0]["example_id"], "q1", "{report}");
    assert_eq!(regressions[1].get("example_id"), None, "{report}");
    let text = sb
        .evalctl()
        .args(["compare", "base.jsonl", "new.jsonl", "--format", "markdown"])
        .args(["--allow-different-inputs"])
        .output()
        .unwrap();
    let markdown = String::from_utf8(text.stdout).unwrap();
    let rows: Vec<&str> = markdown
        .lines()
        .filter(|line| line.contains("(line"))
        .collect();
    assert_eq!(
        rows,
        [
            "| train q1 (line 1) | 1.0000 | 0.0000 | -1.0000 |",
            "| train #1 (line 2) | 1.0000 | 0.0000 | -1.0000 |"
        ],
        "{markdown}"
    );
}
