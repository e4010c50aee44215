//! The HTML report in a real browser: a real run (a `sh` evaluator) is rendered by `run --report`
//! and by `evalctl report`, loaded in headless Chromium driven over the DevTools protocol, and its
//! DOM checked: the summary numbers match the run's JSON summary, the table has one row per call
//! in example order, the filters work, an injected `<script>` did not run (and shows as text), and
//! no request left the page; at three window widths no card cuts or scrolls its table; the scatter
//! numbers pairs at the same scores, marks failed calls, and with two files starts with the same
//! candidate in each; the answers of a `run --generate` report stay text and inside their cells.
//! Screenshots are saved to `target/report-artifacts/`.
//!
//! Chromium comes from the system (`/usr/bin/chromium` on Debian; `.ci/run` installs it). With no
//! Chromium on PATH a test fails when `CI` is set; otherwise it says on stderr that its browser
//! checks were skipped, and passes.

use std::io::{BufRead, BufReader};
use std::net::TcpStream;
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use crate::common::{code, json_stdout, stderr_text, succeeded, Sandbox};
use base64::Engine as _;
use serde_json::{json, Value};

const EVALUATOR: &str = r#"input=$(cat)
case "$input" in
  *boom*) echo "exploded" >&2; exit 3;;
  *'"q":"2"'*) echo '{"score": 0.25, "reasoning": "<b>bold?</b> partly"}';;
  *) echo '{"score": 0.75, "reasoning": "fine <script>window.__injected=1</script>", "dimensions": {"clarity": 0.8}}';;
esac
"#;

/// The candidate id and text carry markup that would run if the page used it as HTML.
const CANDIDATES: &str = concat!(
    r#"{"candidate":"Answer A <script>window.__injected=1</script>","id":"<img src=x onerror=window.__injected=1>"}"#,
    "\n",
    r#"{"candidate":"Answer B","id":"plain"}"#,
    "\n"
);

/// A headless Chromium and one page of it, driven over the DevTools protocol.
struct Browser {
    child: Child,
    socket: tungstenite::WebSocket<TcpStream>,
    session: String,
    next_id: u64,
    /// Every event received, in order.
    events: Vec<Value>,
    profile: tempfile::TempDir,
}

impl Browser {
    /// Chromium from PATH, or `None` (with a notice) when there is none.
    fn launch() -> Option<Browser> {
        let program = ["chromium", "chromium-browser"]
            .into_iter()
            .find(|name| on_path(name))?;
        let profile = tempfile::tempdir().expect("temporary profile");
        let mut child = Command::new(program)
            .args([
                "--headless",
                "--no-sandbox",
                "--disable-gpu",
                "--disable-quic",
                "--no-first-run",
                "--disable-background-networking",
                "--disable-component-update",
                "--disable-sync",
                "--remote-debugging-port=0",
                "--window-size=1280,900",
            ])
            .arg(format!("--user-data-dir={}", profile.path().display()))
            .arg("about:blank")
            // Chromium keeps its single-instance socket in a folder of TMPDIR, which a killed
            // browser leaves behind: inside the profile, it goes with the profile.
            .env("TMPDIR", profile.path())
            // Its own process group, so that the browser's helpers (network service, renderers)
            // are stopped with it: left running, they write into the profile as it is removed.
            .process_group(0)
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .expect("chromium starts");
        let stderr = child.stderr.take().expect("piped stderr");
        let mut lines = BufReader::new(stderr).lines();
        let url = loop {
            let line = lines
                .next()
                .expect("chromium says where DevTools listens")
                .expect("stderr is text");
            if let Some(url) = line.strip_prefix("DevTools listening on ") {
                break url.trim().to_string();
            }
        };
        // Keep draining stderr so Chromium never blocks on a full pipe.
        std::thread::spawn(move || lines.for_each(drop));
        let address = url
            .trim_start_matches("ws://")
            .split('/')
            .next()
            .expect("host:port")
            .to_string();
        let stream = TcpStream::connect(address).expect("DevTools port");
        stream
            .set_read_timeout(Some(Duration::from_secs(30)))
            .expect("read timeout");
        let (socket, _) = tungstenite::client(url.as_str(), stream).expect("DevTools handshake");
        let mut browser = Browser {
            child,
            socket,
            session: String::new(),
            next_id: 0,
            events: Vec::new(),
            profile,
        };
        let target = browser.call(None, "Target.createTarget", json!({"url": "about:blank"}));
        let attached = browser.call(
            None,
            "Target.attachToTarget",
            json!({"targetId": target["targetId"], "flatten": true}),
        );
        browser.session = attached["sessionId"]
            .as_str()
            .expect("session id")
            .to_string();
        for domain in [
            "Network.enable",
            "Page.enable",
            "Runtime.enable",
            "Log.enable",
        ] {
            browser.page(domain, json!({}));
        }
        browser.viewport(1280, 900);
        Some(browser)
    }

    /// Lay the page out in a window of `width` × `height` CSS pixels.
    fn viewport(&mut self, width: u32, height: u32) {
        self.page(
            "Emulation.setDeviceMetricsOverride",
            json!({"width": width, "height": height, "deviceScaleFactor": 1, "mobile": false}),
        );
    }

    /// Send `method` (to the page's session, or to the browser) and wait for its result.
    fn call(&mut self, session: Option<String>, method: &str, params: Value) -> Value {
        self.next_id += 1;
        let id = self.next_id;
        let mut message = json!({"id": id, "method": method, "params": params});
        if let Some(session) = session {
            message["sessionId"] = json!(session);
        }
        self.socket
            .send(tungstenite::Message::text(message.to_string()))
            .expect("send to DevTools");
        loop {
            let reply = self.socket.read().expect("DevTools answers");
            let Ok(text) = reply.to_text() else { continue };
            let Ok(value) = serde_json::from_str::<Value>(text) else {
                continue;
            };
            if value["id"] == json!(id) {
                assert!(value.get("error").is_none(), "{method}: {value}");
                return value["result"].clone();
            }
            if value.get("method").is_some() {
                self.events.push(value);
            }
        }
    }

    fn page(&mut self, method: &str, params: Value) -> Value {
        let session = Some(self.session.clone());
        self.call(session, method, params)
    }

    /// The value of a JavaScript expression in the page.
    fn eval(&mut self, expression: &str) -> Value {
        let result = self.page(
            "Runtime.evaluate",
            json!({"expression": expression, "returnByValue": true}),
        );
        assert!(
            result.get("exceptionDetails").is_none(),
            "{expression}: {result}"
        );
        result["result"]["value"].clone()
    }

    /// Open `path` and wait until the page says it has drawn everything.
    fn open(&mut self, path: &Path) -> String {
        let url = format!("file://{}", path.display());
        self.events.clear();
        self.page("Page.navigate", json!({"url": url}));
        let deadline = Instant::now() + Duration::from_secs(30);
        while self.eval("document.body && document.body.dataset.ready === 'true'") != json!(true) {
            assert!(Instant::now() < deadline, "the report never became ready");
            std::thread::sleep(Duration::from_millis(20));
        }
        url
    }

    /// The events named `method` so far.
    fn events_named(&self, method: &str) -> Vec<&Value> {
        self.events
            .iter()
            .filter(|event| event["method"] == method)
            .collect()
    }

    /// A full-page PNG.
    fn screenshot(&mut self, to: &Path) {
        let shot = self.page(
            "Page.captureScreenshot",
            json!({"format": "png", "captureBeyondViewport": true}),
        );
        let png = base64::engine::general_purpose::STANDARD
            .decode(shot["data"].as_str().expect("image data"))
            .expect("base64 PNG");
        std::fs::write(to, png).expect("screenshot written");
    }
}

impl Drop for Browser {
    fn drop(&mut self) {
        let group = nix::unistd::Pid::from_raw(self.child.id() as i32);
        let _ = nix::sys::signal::killpg(group, nix::sys::signal::Signal::SIGKILL);
        let _ = self.child.wait();
        // A helper that was writing as the group was killed may finish that write: remove the
        // profile until nothing is left (the temporary directory's own removal gives up at the
        // first folder that is not empty, and leaves the profile in TMPDIR).
        for _ in 0..100 {
            match std::fs::remove_dir_all(self.profile.path()) {
                Err(error) if error.kind() != std::io::ErrorKind::NotFound => continue,
                _ => break,
            }
        }
    }
}

/// Headless Chromium for `test`, or `None` when there is no Chromium on PATH. Under `CI` a missing
/// Chromium fails the test; elsewhere the skip is written to stderr directly (past the test
/// harness's capture, so it shows in every run).
fn browser_for(test: &str) -> Option<Browser> {
    let browser = Browser::launch();
    if browser.is_none() {
        crate::common::tool_missing(&format!(
            "{test}: no chromium on PATH, so the HTML report was not checked in a browser"
        ));
    }
    browser
}

fn on_path(program: &str) -> bool {
    std::env::var_os("PATH")
        .is_some_and(|paths| std::env::split_paths(&paths).any(|dir| dir.join(program).is_file()))
}

/// Where test artifacts go: `target/report-artifacts/`.
fn artifacts() -> PathBuf {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("target/report-artifacts");
    std::fs::create_dir_all(&dir).expect("artifact directory");
    dir
}

/// The cards of a `spec score` file count the runs that passed, red when one did not.
#[test]
fn the_report_of_spec_score_records_shows_the_runs_that_did_not_pass() {
    let sandbox = Sandbox::new();
    let fixtures = Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures/spec");
    let scored = sandbox
        .evalctl()
        .arg("spec")
        .arg("score")
        .arg(fixtures.join("pack.yaml"))
        .arg(fixtures.join("runs.jsonl"))
        .args(["--output", "scored.jsonl"])
        .output()
        .expect("evalctl runs");
    assert_eq!(code(&scored), 1, "{}", stderr_text(&scored));
    succeeded(
        sandbox
            .evalctl()
            .args(["report", "scored.jsonl", "-o", "spec.html"]),
    );
    let Some(mut browser) =
        browser_for("the_report_of_spec_score_records_shows_the_runs_that_did_not_pass")
    else {
        return;
    };
    browser.open(&sandbox.join("spec.html"));
    let card = browser.eval(
        "(() => { const c = document.querySelector('[data-field=verdicts]');
           return [c.querySelector('.value').textContent, c.querySelector('.detail').textContent,
                   c.classList.contains('bad')]; })()",
    );
    assert_eq!(
        card,
        json!(["1 of 2", "1 did not pass their scorecard", true])
    );
    assert!(browser.events_named("Runtime.exceptionThrown").is_empty());
}

#[test]
fn ids_with_bidirectional_controls_are_shown_not_obeyed() {
    // `ab` and `U+202E ba U+202C` rendered alike: the override reversed the second.
    let sandbox = Sandbox::new();
    sandbox.write(
        "candidates.jsonl",
        "{\"candidate\": \"x\", \"id\": \"ab\"}\n{\"candidate\": \"y\", \"id\": \"\u{202e}ba\u{202c}\"}\n",
    );
    sandbox.write("eval.sh", "cat >/dev/null; echo '{\"score\": 1}'\n");
    succeeded(sandbox.evalctl().args([
        "run",
        "--candidates",
        "candidates.jsonl",
        "--evaluator-command",
        "sh eval.sh",
        "--skip-preflight",
        "--report",
        "ids.html",
    ]));
    let Some(mut browser) = browser_for("ids_with_bidirectional_controls_are_shown_not_obeyed")
    else {
        return;
    };
    browser.open(&sandbox.join("ids.html"));
    let options = browser.eval("[...document.querySelectorAll('option')].map(o => o.textContent)");
    let shown: Vec<&str> = options
        .as_array()
        .unwrap()
        .iter()
        .filter_map(Value::as_str)
        .filter(|text| text.contains("ba"))
        .collect();
    assert!(!shown.is_empty(), "{options}");
    assert!(
        shown
            .iter()
            .all(|text| text.contains("\\u{202e}ba\\u{202c}") && !text.contains('\u{202e}')),
        "{options}"
    );
    // The table of every result: the candidate's cell and its tooltip.
    let cells = browser.eval(
        "[...document.querySelectorAll('#rows td.cand')].flatMap(td => [td.textContent, td.title])",
    );
    assert_eq!(
        cells,
        json!(["ab", "ab", "\\u{202e}ba\\u{202c}", "\\u{202e}ba\\u{202c}"])
    );
    assert!(browser.events_named("Runtime.exceptionThrown").is_empty());
}

/// A shard's results rank candidates over different calls: the ranking says so, as the text
/// summary leaves out its `best:` line; a whole run's ranking says nothing of it.
#[test]
fn the_ranking_of_a_partial_run_says_its_candidates_cover_different_calls() {
    let sandbox = Sandbox::new();
    // Calls fall to shards by their keys: with 80 calls, neither half is empty but once in 2^80.
    let examples: String = (0..40).map(|q| format!("{{\"q\":\"{q}\"}}\n")).collect();
    sandbox.write("d.jsonl", examples);
    sandbox.write("c.jsonl", CANDIDATES);
    for (shard, output) in [("1/2", "shard.jsonl"), ("0/1", "whole.jsonl")] {
        let out = sandbox
            .run_with(EVALUATOR)
            .args(["--candidates", "c.jsonl", "--dataset", "d.jsonl"])
            .args(["--shard", shard, "--output", output])
            .output()
            .expect("evalctl runs");
        assert_eq!(code(&out), 0, "{}", stderr_text(&out));
    }
    succeeded(sandbox.evalctl().args([
        "report",
        "shard.jsonl",
        "--allow-partial",
        "-o",
        "shard.html",
    ]));
    succeeded(
        sandbox
            .evalctl()
            .args(["report", "whole.jsonl", "-o", "whole.html"]),
    );
    let Some(mut browser) =
        browser_for("the_ranking_of_a_partial_run_says_its_candidates_cover_different_calls")
    else {
        return;
    };
    let note = "(() => { const p = document.getElementById('ranking-partial');
                  return p ? p.textContent : null; })()";
    browser.open(&sandbox.join("shard.html"));
    assert_eq!(
        browser.eval(note),
        json!(
            "Partial results: the candidates' scores cover different calls, so this order may \
             not hold once every call is in."
        )
    );
    browser.open(&sandbox.join("whole.html"));
    assert_eq!(browser.eval(note), Value::Null);
}

/// Set a filter control's value and fire the event the page listens for.
fn set_filter(browser: &mut Browser, id: &str, value: &str) {
    browser.eval(&format!(
        "(() => {{ const c = document.getElementById({id:?}); c.value = {value:?};
           c.dispatchEvent(new Event(c.tagName === 'SELECT' ? 'change' : 'input')); }})()"
    ));
}

fn shown_rows(browser: &mut Browser) -> (u64, u64) {
    let matching = browser.eval("Number(document.getElementById('row-count').dataset.matching)");
    let in_dom = browser.eval("document.querySelectorAll('#rows tbody tr.row').length");
    (
        matching.as_u64().expect("a count"),
        in_dom.as_u64().expect("a count"),
    )
}

#[test]
fn the_report_of_a_real_run_renders_in_chromium() {
    let sandbox = Sandbox::new();
    sandbox.write(
        "d.jsonl",
        "{\"q\":\"1\"}\n{\"q\":\"2\"}\n{\"q\":\"boom\"}\n",
    );
    sandbox.write("v.jsonl", "{\"q\":\"3\"}\n");
    sandbox.write("c.jsonl", CANDIDATES);
    let out = sandbox
        .run_with(EVALUATOR)
        .args([
            "--candidates",
            "c.jsonl",
            "--dataset",
            "d.jsonl",
            "--valset",
            "v.jsonl",
        ])
        .args(["--output", "r.jsonl", "--report", "run.html"])
        .output()
        .expect("evalctl runs");
    assert_eq!(code(&out), 1, "two calls fail: {}", stderr_text(&out));
    let summary = json_stdout(&out);
    let report = succeeded(sandbox.evalctl().args([
        "report",
        "r.jsonl",
        "-o",
        "report.html",
        "--format",
        "json",
    ]));
    let written = json_stdout(&report);
    assert_eq!(written["results"], summary["calls"]["total"]);
    // The page's data holds the summary `summarize` prints, gates and exit code included.
    let summarized = sandbox
        .evalctl()
        .args(["summarize", "r.jsonl", "--format", "json"])
        .output()
        .expect("evalctl runs");
    assert_eq!(code(&summarized), 1);
    assert_eq!(
        crate::report_kinds::report_data(&sandbox.join("report.html"))["sources"][0]["summary"],
        json_stdout(&summarized)
    );

    let Some(mut browser) = browser_for("the_report_of_a_real_run_renders_in_chromium") else {
        return;
    };
    for name in ["report.html", "run.html"] {
        let url = browser.open(&sandbox.join(name));

        // The summary cards and the ranking say what the JSON summary says.
        let calls = browser.eval("document.querySelector('[data-field=calls]').dataset.value");
        assert_eq!(
            calls,
            json!(summary["calls"]["total"].to_string()),
            "{name}"
        );
        let errors = browser.eval("document.querySelector('[data-field=errors]').dataset.value");
        assert_eq!(
            errors,
            json!(summary["calls"]["errors"].to_string()),
            "{name}"
        );
        for (index, candidate) in summary["candidates"]
            .as_array()
            .expect("candidates")
            .iter()
            .enumerate()
        {
            let shown = browser.eval(&format!(
                "[...document.querySelectorAll('#ranking tr[data-series]')]
                   .filter(tr => tr.querySelector('.cand').textContent === {:?})
                   .map(tr => Number(tr.dataset.score))",
                candidate["id"].as_str().expect("id")
            ));
            let expected = candidate["score"].as_f64().expect("score");
            let shown = shown[0]
                .as_f64()
                .unwrap_or_else(|| panic!("{name}: candidate {index}"));
            assert!(
                (shown - expected).abs() < 1e-12,
                "{name}: {shown} vs {expected}"
            );
        }

        // One table row per call; the filters narrow it.
        let total = summary["calls"]["total"].as_u64().expect("total");
        assert_eq!(shown_rows(&mut browser), (total, total), "{name}");
        let plain = browser.eval(
            "[...document.getElementById('filter-candidate').options].find(o => o.text === 'plain').value",
        );
        set_filter(
            &mut browser,
            "filter-candidate",
            plain.as_str().expect("an option"),
        );
        assert_eq!(shown_rows(&mut browser), (4, 4), "{name}: one candidate");
        let candidates = browser.eval(
            "[...new Set([...document.querySelectorAll('#rows tbody tr.row .cand')].map(td => td.textContent))]",
        );
        assert_eq!(candidates, json!(["plain"]), "{name}");
        set_filter(&mut browser, "filter-candidate", "");
        set_filter(&mut browser, "filter-error", "any");
        let failed = summary["calls"]["errors"].as_u64().expect("errors");
        assert_eq!(shown_rows(&mut browser), (failed, failed), "{name}: errors");
        set_filter(&mut browser, "filter-error", "");
        set_filter(&mut browser, "filter-min", "0.5");
        assert_eq!(shown_rows(&mut browser), (4, 4), "{name}: score >= 0.5");
        set_filter(&mut browser, "filter-min", "");
        set_filter(&mut browser, "filter-split", "val");
        assert_eq!(shown_rows(&mut browser), (2, 2), "{name}: val");
        set_filter(&mut browser, "filter-split", "");

        // Opening a row shows its side info as text (and, for run --report, its example).
        browser.eval("document.querySelector('#rows tbody tr.row').click()");
        let detail = browser.eval("document.querySelector('#rows tr.detail').textContent");
        let detail = detail.as_str().expect("detail text");
        assert!(
            detail.contains("reasoning") || detail.contains("exit_status"),
            "{detail}"
        );
        if name == "run.html" {
            assert!(detail.contains("\"q\""), "the example record: {detail}");
        }

        // Markup in the data stayed text: nothing ran, no element was made from it.
        assert_eq!(browser.eval("typeof window.__injected"), json!("undefined"));
        assert_eq!(
            browser.eval("document.querySelectorAll('img').length"),
            json!(0)
        );
        assert_eq!(browser.eval("document.scripts.length"), json!(2));
        let text = browser.eval("document.body.textContent");
        let text = text.as_str().expect("text");
        assert!(
            text.contains("<img src=x onerror=window.__injected=1>"),
            "{name}"
        );
        assert!(
            text.contains("<script>window.__injected=1</script>"),
            "{name}"
        );

        // Nothing left the page, and nothing went wrong in it.
        let requests: Vec<String> = browser
            .events_named("Network.requestWillBeSent")
            .iter()
            .map(|event| {
                event["params"]["request"]["url"]
                    .as_str()
                    .unwrap_or("")
                    .to_string()
            })
            .collect();
        assert_eq!(
            requests,
            [url.as_str()],
            "{name}: only the file itself is loaded"
        );
        assert!(
            browser.events_named("Runtime.exceptionThrown").is_empty(),
            "{name}: {:?}",
            browser.events
        );
        let logged: Vec<&Value> = browser
            .events_named("Log.entryAdded")
            .into_iter()
            .filter(|event| event["params"]["entry"]["level"] == "error")
            .collect();
        assert!(logged.is_empty(), "{name}: {logged:?}");
    }
    browser.open(&sandbox.join("run.html"));
    browser.screenshot(&artifacts().join("report.png"));
}

/// Names that every JavaScript object inherits (`__proto__`, `constructor`, `hasOwnProperty`,
/// `toString`) are plain names in a report: as task ids, as the categories a results file gives
/// them, as a candidate id and as keys of an evaluator's output, every row renders, the page
/// groups and filters by them, and nothing goes wrong in it.
#[test]
fn names_of_inherited_object_members_render_their_rows() {
    let sandbox = Sandbox::new();
    let task = |id: &str| {
        json!({"task_id": id, "category": "classification", "prompt": "Say a.",
               "targets": ["a"], "metric_name": "exact_match", "post_process": "none"})
        .to_string()
    };
    let ids = ["__proto__", "constructor", "toString"];
    sandbox.write("tasks.jsonl", ids.map(task).join("\n"));
    sandbox.write(
        "outputs.jsonl",
        concat!(
            r#"{"task_id":"__proto__","output":"a"}"#,
            "\n",
            r#"{"task_id":"constructor","output":"b"}"#,
            "\n",
        ),
    );
    let scored = sandbox
        .evalctl()
        .args([
            "tasks",
            "score",
            "tasks.jsonl",
            "--outputs",
            "outputs.jsonl",
        ])
        .args(["--output", "scored.jsonl", "--format", "json"])
        .output()
        .expect("evalctl runs");
    assert_eq!(
        stderr_text(&scored),
        "warning: 1 of 3 tasks have no output and score 0: toString\n"
    );
    // A results file says what it likes: its lines name the categories.
    let relabelled: Vec<String> = sandbox
        .jsonl("scored.jsonl")
        .into_iter()
        .zip(["__proto__", "hasOwnProperty", "constructor"])
        .map(|(mut line, category)| {
            line["category"] = json!(category);
            line.to_string()
        })
        .collect();
    sandbox.write("tasks-results.jsonl", relabelled.join("\n") + "\n");
    sandbox.write("c.jsonl", "{\"id\":\"__proto__\",\"candidate\":\"x\"}\n");
    sandbox.write("d.jsonl", "{\"q\":1}\n");
    let run = sandbox
        .run_with(
            "cat >/dev/null\necho '{\"score\": 0.5, \"__proto__\": {\"polluted\": 1}, \
             \"dimensions\": {\"__proto__\": 0.5, \"constructor\": 1}}'\n",
        )
        .args(["--candidates", "c.jsonl", "--dataset", "d.jsonl"])
        .args(["--output", "run-results.jsonl"])
        .output()
        .expect("evalctl runs");
    assert_eq!(code(&run), 0, "{}", stderr_text(&run));
    succeeded(sandbox.evalctl().args([
        "report",
        "tasks-results.jsonl",
        "run-results.jsonl",
        "-o",
        "report.html",
    ]));

    let Some(mut browser) = browser_for("names_of_inherited_object_members_render_their_rows")
    else {
        return;
    };
    browser.open(&sandbox.join("report.html"));
    let cells = "[...document.querySelectorAll('#rows tbody tr.row')]
        .map(tr => [...tr.querySelectorAll('td')].slice(1, 6).map(td => td.textContent))";
    assert_eq!(
        browser.eval(cells),
        json!([
            [
                "tasks-results.jsonl · outputs.jsonl",
                "__proto__",
                "__proto__",
                "1.0000",
                ""
            ],
            [
                "tasks-results.jsonl · outputs.jsonl",
                "hasOwnProperty",
                "constructor",
                "0.0000",
                ""
            ],
            [
                "tasks-results.jsonl · outputs.jsonl",
                "constructor",
                "toString",
                "0.0000",
                "missing_output"
            ],
            [
                "run-results.jsonl · __proto__",
                "train",
                "#0 (line 1)",
                "0.5000",
                ""
            ],
        ])
    );
    let splits = browser.eval(
        "[...document.querySelectorAll('#candidate-panels tr[data-split]')]
           .map(tr => [tr.dataset.split, tr.querySelector('td.num').textContent])",
    );
    assert_eq!(
        splits,
        json!([
            ["__proto__", "1"],
            ["hasOwnProperty", "1"],
            ["constructor", "1"],
            ["train", "1"]
        ])
    );
    set_filter(&mut browser, "filter-split", "__proto__");
    assert_eq!(shown_rows(&mut browser), (1, 1));
    set_filter(&mut browser, "filter-split", "");
    browser.eval("document.querySelectorAll('#rows tbody tr.row')[3].click()");
    let detail = browser
        .eval("[...document.querySelectorAll('#rows tr.detail h4')].map(h => h.textContent)");
    assert_eq!(detail, json!(["__proto__", "dimensions", "call"]));
    assert_eq!(
        browser.eval("typeof ({}).n + ' ' + typeof ({}).polluted"),
        json!("undefined undefined"),
        "nothing reached Object.prototype"
    );
    assert!(
        browser.events_named("Runtime.exceptionThrown").is_empty(),
        "{:?}",
        browser.events
    );
}

/// Scores each call from its example record: the score is the record's member named by the
/// candidate text (0 for a text it does not name, such as the preflight's), and the call fails
/// when the record's `fail` names the candidate.
const PAIRED_EVALUATOR: &str = r#"input=$(cat)
c=$(printf '%s' "$input" | sed -n 's/.*"candidate":"\([a-z]*\)".*/\1/p')
case "$input" in *"\"fail\":\"$c\""*) echo "exploded" >&2; exit 3;; esac
score=$(printf '%s' "$input" | sed -n "s/.*\"$c\":\([0-9.]*\).*/\1/p")
echo "{\"score\": ${score:-0}}"
"#;

const LEVELS: [f64; 3] = [0.0, 0.5, 1.0];
const TRAIN: usize = 50;
const VAL: usize = 10;

/// The score of the candidate whose text is `text` on example `i` (train `0..50`, then val), and
/// whether its call fails: few distinct pairs, so many pairs share a point of the scatter.
fn outcome(text: &str, i: usize) -> (f64, bool) {
    let level = match text {
        "a" => i % 3,
        "b" if i.is_multiple_of(5) => (i + 1) % 3,
        "b" => i % 3,
        "na" => (i + 1) % 3,
        _ => (i / 2) % 3,
    };
    let fails = match text {
        "b" => i % 10 == 7,
        "nb" => i % 10 == 3,
        _ => false,
    };
    (LEVELS[level], fails)
}

fn example_record(i: usize) -> String {
    let mut record = json!({"q": i});
    for text in ["a", "b", "na", "nb"] {
        let (score, fails) = outcome(text, i);
        record[text] = json!(score);
        if fails {
            record["fail"] = json!(text);
        }
    }
    record.to_string() + "\n"
}

/// Two runs of candidates `A` and `B` over the same 50 + 10 examples, with failed calls, each
/// with `--report`: the first (`base-run.html`) into `base.jsonl`, whose lines are then put in
/// reverse (a results file lists calls as they complete), the second into `new.jsonl`; then the
/// reports of `base.jsonl` (`one.html`) and of both files (`two.html`).
fn two_runs() -> Sandbox {
    let sandbox = Sandbox::new();
    sandbox.write(
        "d.jsonl",
        (0..TRAIN).map(example_record).collect::<String>(),
    );
    sandbox.write(
        "v.jsonl",
        (TRAIN..TRAIN + VAL).map(example_record).collect::<String>(),
    );
    for (candidates, texts, output, report) in [
        (
            "base-c.jsonl",
            ["a", "b"],
            "completed.jsonl",
            "base-run.html",
        ),
        ("new-c.jsonl", ["na", "nb"], "new.jsonl", "new-run.html"),
    ] {
        let lines = ["A", "B"]
            .iter()
            .zip(texts)
            .map(|(id, text)| json!({"id": id, "candidate": text}).to_string() + "\n");
        sandbox.write(candidates, lines.collect::<String>());
        let run = sandbox
            .run_with(PAIRED_EVALUATOR)
            .args(["--candidates", candidates])
            .args(["--dataset", "d.jsonl", "--valset", "v.jsonl"])
            .args(["--output", output, "--report", report])
            .output()
            .expect("evalctl runs");
        assert_eq!(code(&run), 1, "some calls fail: {}", stderr_text(&run));
    }
    let mut lines = sandbox.lines("completed.jsonl");
    lines.reverse();
    sandbox.write("base.jsonl", lines.join("\n") + "\n");
    succeeded(
        sandbox
            .evalctl()
            .args(["report", "base.jsonl", "-o", "one.html"]),
    );
    succeeded(
        sandbox
            .evalctl()
            .args(["report", "base.jsonl", "new.jsonl", "-o", "two.html"]),
    );
    sandbox
}

/// Every card and panel whose content does not fit it: one that scrolls, or a cell or chart
/// that reaches past its edge.
const CUT_CARDS: &str = r#"[...document.querySelectorAll('.card, .panel')].flatMap(box => {
  const name = box.querySelector('h3, .label').textContent;
  const edge = box.getBoundingClientRect();
  const problems = [];
  for (const node of [box, ...box.querySelectorAll('.table-wrap')]) {
    if (node.scrollWidth > node.clientWidth) {
      problems.push(`${name}: scrolls (${node.scrollWidth} > ${node.clientWidth})`);
    }
  }
  for (const node of box.querySelectorAll('th, td, svg')) {
    const r = node.getBoundingClientRect();
    if (r.right > edge.right + 0.5 || r.left < edge.left - 0.5) {
      problems.push(`${name}: "${node.textContent}" reaches past the card`);
    }
  }
  return problems;
})"#;

#[test]
fn cards_never_cut_their_tables_at_any_window_width() {
    let sandbox = two_runs();
    succeeded(
        sandbox
            .evalctl()
            .args(["tasks", "score"])
            .arg(Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures/tasks/tasks.jsonl"))
            .arg("--outputs")
            .arg(Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures/tasks/outputs.jsonl"))
            .args(["--output", "tasks-results.jsonl", "--format", "json"]),
    );
    succeeded(
        sandbox
            .evalctl()
            .args(["report", "tasks-results.jsonl", "-o", "tasks.html"]),
    );

    let Some(mut browser) = browser_for("cards_never_cut_their_tables_at_any_window_width") else {
        return;
    };
    for (page, panels) in [("one.html", 2), ("two.html", 4), ("tasks.html", 1)] {
        browser.open(&sandbox.join(page));
        let intervals =
            browser.eval("[...document.querySelectorAll('.panel th')].filter(th => th.textContent === '95% interval').length");
        assert_eq!(
            intervals,
            json!(panels),
            "{page}: a 95% interval column per panel"
        );
        for (width, height) in [(1400, 1800), (1200, 1500), (900, 1200)] {
            browser.viewport(width, height);
            assert_eq!(
                browser.eval(CUT_CARDS),
                json!([]),
                "{page} at {width}×{height}"
            );
            let shot = format!("{}-{width}.png", page.trim_end_matches(".html"));
            browser.screenshot(&artifacts().join(shot));
        }
        browser.viewport(1280, 900);
    }
}

/// The markers of the scatter, sorted: `[x, y, failed axis, count]`, where `x` and `y` are a score
/// or `failed`.
const SCATTER_MARKERS: &str = "[...document.querySelectorAll('#scatter [data-count]')]
    .map(m => [m.dataset.x, m.dataset.y, m.dataset.failed, Number(m.dataset.count)]).sort()";

#[test]
fn the_scatter_pairs_examples_by_id_and_counts_ties_within_rounding_as_compare_does() {
    // The new dataset has a record inserted in front, and scores one example 0.30000000000000004
    // where the old scored it 0.3: compare pairs q1..q3 with themselves, all tied.
    let sb = Sandbox::new();
    sb.write(
        "eval.sh",
        "p=$(cat)\ns=$(printf '%s' \"$p\" | sed -n 's/.*\"s\": *\\([0-9.]*\\).*/\\1/p')\n\
         printf '{\"score\": %s}' \"$s\"\n",
    );
    sb.write(
        "old.jsonl",
        "{\"id\": \"q1\", \"s\": 0.1}\n{\"id\": \"q2\", \"s\": 0.2}\n{\"id\": \"q3\", \"s\": 0.3}\n",
    );
    sb.write(
        "new.jsonl",
        "{\"id\": \"q0\", \"s\": 0.9}\n{\"id\": \"q1\", \"s\": 0.1}\n{\"id\": \"q2\", \"s\": 0.2}\n\
         {\"id\": \"q3\", \"s\": 0.30000000000000004}\n",
    );
    for (dataset, output) in [("old.jsonl", "before.jsonl"), ("new.jsonl", "after.jsonl")] {
        succeeded(
            sb.evalctl()
                .args(["run", "--skip-preflight", "--candidate", "c"])
                .args(["--evaluator-command", "sh eval.sh", "--dataset", dataset])
                .args(["--output", output]),
        );
    }
    let compare = sb
        .evalctl()
        .args([
            "compare",
            "before.jsonl",
            "after.jsonl",
            "--allow-different-inputs",
        ])
        .args(["--format", "json"])
        .output()
        .expect("evalctl runs");
    let train = &json_stdout(&compare)["candidates"][0];
    assert_eq!(
        (
            &train["pairs"],
            &train["wins"],
            &train["ties"],
            &train["losses"]
        ),
        (&json!(3), &json!(0), &json!(3), &json!(0)),
        "{train}"
    );
    succeeded(
        sb.evalctl()
            .args(["report", "before.jsonl", "after.jsonl", "-o", "r.html"]),
    );
    let Some(mut browser) = browser_for(
        "the_scatter_pairs_examples_by_id_and_counts_ties_within_rounding_as_compare_does",
    ) else {
        return;
    };
    browser.open(&sb.join("r.html"));
    assert_eq!(
        browser.eval("document.getElementById('scatter-counts').textContent"),
        json!("3 paired examples: y higher in 0, x higher in 0, tied in 3")
    );
    // Under --repeat an example's repeats are one pair, their scores averaged: 1 and 0 against
    // 0 and 1 is a tie, as compare says, not one win each way.
    sb.write(
        "turn.sh",
        "cat >/dev/null\nn=$(cat count 2>/dev/null || echo 0)\necho $((n + 1)) > count\n\
         set -- $SCORES\nshift \"$n\"\nprintf '{\"score\": %s}' \"$1\"\n",
    );
    sb.write("one.jsonl", "{\"id\": \"q1\"}\n");
    for (scores, output) in [("1 0", "x.jsonl"), ("0 1", "y.jsonl")] {
        let _ = std::fs::remove_file(sb.join("count"));
        succeeded(
            sb.evalctl()
                .args(["run", "--skip-preflight", "-j", "1", "--candidate", "c"])
                .args([
                    "--evaluator-command",
                    "sh turn.sh",
                    "--dataset",
                    "one.jsonl",
                ])
                .args(["--repeat", "2", "--output", output])
                .env("SCORES", scores),
        );
    }
    succeeded(
        sb.evalctl()
            .args(["report", "x.jsonl", "y.jsonl", "-o", "repeats.html"]),
    );
    browser.open(&sb.join("repeats.html"));
    assert_eq!(
        browser.eval("document.getElementById('scatter-counts').textContent"),
        json!("1 paired example: y higher in 0, x higher in 0, tied in 1")
    );
}

#[test]
fn the_scatter_numbers_pairs_at_the_same_scores_and_marks_failed_calls() {
    let sandbox = two_runs();
    // Candidate A (x) against B (y) of the base run: one marker per distinct pair of scores, a
    // pair with B's call failed in the `failed` lane of y.
    let mut expected: Vec<(String, String, &str, u64)> = Vec::new();
    // Pairs, y higher, x higher, pairs with a failed call: in train, in val.
    let mut counts = [[0usize; 4]; 2];
    for i in 0..TRAIN + VAL {
        let (x, _) = outcome("a", i);
        let (y, y_fails) = outcome("b", i);
        let y_shown = if y_fails { 0.0 } else { y };
        let split = &mut counts[usize::from(i >= TRAIN)];
        split[0] += 1;
        split[1] += usize::from(y_shown > x);
        split[2] += usize::from(y_shown < x);
        split[3] += usize::from(y_fails);
        let marker = if y_fails {
            (x.to_string(), "failed".to_string(), "y")
        } else {
            (x.to_string(), y.to_string(), "")
        };
        match expected
            .iter_mut()
            .find(|seen| (&seen.0, &seen.1, seen.2) == (&marker.0, &marker.1, marker.2))
        {
            Some(seen) => seen.3 += 1,
            None => expected.push((marker.0, marker.1, marker.2, 1)),
        }
    }
    expected.sort();
    assert!(expected.iter().all(|marker| marker.3 > 1), "{expected:?}");

    let Some(mut browser) =
        browser_for("the_scatter_numbers_pairs_at_the_same_scores_and_marks_failed_calls")
    else {
        return;
    };
    browser.open(&sandbox.join("one.html"));
    let pick =
        |axis: &str| format!("document.getElementById('scatter-{axis}').selectedOptions[0].text");
    assert_eq!(browser.eval(&pick("x")), json!("A"));
    assert_eq!(browser.eval(&pick("y")), json!("B"));
    assert_eq!(browser.eval(SCATTER_MARKERS), json!(expected));
    // Each marker of several pairs carries its count, as text drawn over it.
    let labels = browser.eval(
        "[...document.querySelectorAll('#scatter [data-count]')].map(m => {
           const label = [...document.querySelectorAll('#scatter text.count')].find(t => {
             const a = t.getBBox(), b = m.getBBox();
             return Math.abs(a.x + a.width / 2 - (b.x + b.width / 2)) < 1
               && Math.abs(a.y + a.height / 2 - (b.y + b.height / 2)) < 4;
           });
           return [m.dataset.x, m.dataset.y, label ? label.textContent : null];
         }).sort()",
    );
    let counted: Vec<Value> = expected
        .iter()
        .map(|(x, y, _, count)| json!([x, y, count.to_string()]))
        .collect();
    assert_eq!(labels, json!(counted));
    // Failed calls are red crosses, scored pairs are dots of the accent colour, and the legend
    // says which is which.
    let looks = browser.eval(
        "[...document.querySelectorAll('#scatter [data-count]')].map(m => [m.dataset.failed,
           m.tagName, getComputedStyle(m).stroke, getComputedStyle(m).fill])
           .filter((v, i, all) => all.findIndex(w => w.join() === v.join()) === i).sort()",
    );
    assert_eq!(
        looks,
        json!([
            ["", "circle", "none", "rgb(47, 111, 219)"],
            ["y", "path", "rgb(200, 55, 45)", "none"]
        ])
    );
    let legend = browser
        .eval("[...document.querySelectorAll('#scatter-legend li')].map(li => li.textContent)");
    assert_eq!(
        legend,
        json!([
            "a scored pair; pairs with the same two scores are one dot, bigger and numbered with how many they are",
            "a pair with a failed call (it scores 0 in every aggregate): drawn in the red “failed” lane of the axis whose call failed, in the corner when both did"
        ])
    );
    // Counted in each split apart, as `compare` counts them.
    let said = |split: &str, [pairs, above, below, failed]: [usize; 4]| {
        let failed = match failed {
            0 => String::new(),
            1 => ", 1 pair with a failed call (scored 0)".to_string(),
            n => format!(", {n} pairs with a failed call (scored 0)"),
        };
        format!(
            "{split}: {pairs} paired examples: y higher in {above}, x higher in {below}, tied in \
             {}{failed}",
            pairs - above - below
        )
    };
    assert_eq!(
        browser.eval("document.getElementById('scatter-counts').textContent"),
        json!(format!(
            "{}; {}",
            said("train", counts[0]),
            said("val", counts[1])
        ))
    );
    browser.screenshot(&artifacts().join("scatter.png"));

    // With two files the scatter starts with the same candidate in each.
    browser.open(&sandbox.join("two.html"));
    assert_eq!(browser.eval(&pick("x")), json!("base.jsonl · A"));
    assert_eq!(browser.eval(&pick("y")), json!("new.jsonl · A"));
    let markers = browser.eval(SCATTER_MARKERS);
    let pairs: u64 = markers
        .as_array()
        .expect("markers")
        .iter()
        .map(|marker| marker[3].as_u64().expect("a count"))
        .sum();
    assert_eq!(pairs, (TRAIN + VAL) as u64);
}

#[test]
fn every_result_is_listed_in_example_order() {
    let sandbox = two_runs();
    let expected = |files: &[&str]| -> Vec<String> {
        let mut rows = Vec::new();
        for file in files {
            for (split, indexes) in [("train", 0..TRAIN), ("val", 0..VAL)] {
                for index in indexes {
                    for candidate in ["A", "B"] {
                        let name = if files.len() > 1 {
                            format!("{file} · {candidate}")
                        } else {
                            candidate.to_string()
                        };
                        rows.push(format!("{name} {split} #{index} (line {})", index + 1));
                    }
                }
            }
        }
        rows
    };
    let Some(mut browser) = browser_for("every_result_is_listed_in_example_order") else {
        return;
    };
    for (page, files) in [
        ("base-run.html", vec!["this run"]),
        ("one.html", vec!["base.jsonl"]),
        ("two.html", vec!["base.jsonl", "new.jsonl"]),
    ] {
        browser.open(&sandbox.join(page));
        set_filter(&mut browser, "page-size", "500");
        let shown = browser.eval(
            "[...document.querySelectorAll('#rows tbody tr.row')]
               .map(tr => [...tr.querySelectorAll('td')].slice(1, 4).map(td => td.textContent).join(' '))",
        );
        assert_eq!(shown, json!(expected(&files)), "{page}");
    }
}

/// Whether the page scrolls sideways, and each answer of `run --generate` that is wider than the
/// table holding it (its page, its width beyond the table's), with every example open.
const ANSWERS_OVERFLOW: &str = "(() => {
  document.querySelectorAll('#answers details').forEach(d => { d.open = true; });
  const page = document.documentElement.scrollWidth > document.documentElement.clientWidth;
  const wide = [...document.querySelectorAll('#answers td.answer pre')]
    .map(pre => [pre.textContent.slice(0, 12), pre.getBoundingClientRect().right
      - pre.closest('.table-wrap').getBoundingClientRect().right])
    .filter(([, beyond]) => beyond > 0.5);
  return [page, wide];
})()";

#[test]
fn answers_of_a_generating_run_stay_inside_their_cells_and_stay_text() {
    let sandbox = Sandbox::new();
    // One answer of 4,000 characters with no space, one line of markup, one of many lines.
    sandbox.write(
        "model.sh",
        r#"r=$(cat)
case "$r" in
  *France*) printf '<script>window.__injected=1</script>' ;;
  *Italy*) i=0; while [ $i -lt 400 ]; do printf 'xxxxxxxxxx'; i=$((i+1)); done ;;
  *) i=0; while [ $i -lt 60 ]; do printf 'Tokyo\n'; i=$((i+1)); done ;;
esac
"#,
    );
    sandbox.write(
        "terse.txt",
        std::fs::read(crate::generate::fixture("prompts/terse.txt")).unwrap(),
    );
    succeeded(
        sandbox
            .evalctl()
            .args(["run", "--no-config", "--format", "json", "--generate"])
            .args(["--task-model-command", "sh model.sh", "--skip-preflight"])
            .args(["--dataset", &crate::generate::fixture("qa.jsonl")])
            .args(["--checks", &crate::generate::fixture("checks.json")])
            .args(["--report", "gen.html", "terse.txt"]),
    );
    let Some(mut browser) =
        browser_for("answers_of_a_generating_run_stay_inside_their_cells_and_stay_text")
    else {
        return;
    };
    browser.open(&sandbox.join("gen.html"));
    for (width, height) in [(1400, 1800), (1200, 1500), (900, 1200)] {
        browser.viewport(width, height);
        assert_eq!(
            browser.eval(ANSWERS_OVERFLOW),
            json!([false, []]),
            "at {width}×{height}"
        );
        browser.screenshot(&artifacts().join(format!("generate-{width}.png")));
    }
    browser.viewport(1280, 900);
    assert_eq!(
        browser.eval(
            "[window.__injected === undefined, \
              document.querySelector('#answers td.answer pre').textContent, \
              [...document.querySelectorAll('#answers td.answer pre')] \
                .map(pre => pre.scrollHeight > pre.clientHeight), \
              document.querySelectorAll('#ranking tbody tr').length]"
        ),
        json!([
            true,
            "<script>window.__injected=1</script>",
            [false, true, true],
            1
        ]),
        "the markup is text, the long answers scroll inside their cells, the page's script ran"
    );
}
