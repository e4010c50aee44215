//! The HTML report of `run --generate`, through the real binary: `run --report` and `report` on
//! the results file show the candidate × task model matrix of the summary (two candidates and two
//! task models of the loopback OpenAI-compatible server of the generate tests make a 2 × 2
//! matrix with each pair's numbers) and each example's answers beside their scores and the
//! evaluator's reasoning, as plain HTML with every answer escaped; a run without task models
//! gets neither, nor their style.

use crate::common::{code, stderr_text, succeeded, Sandbox};
use crate::generate::{fake_openai, fixture, KEY};
use crate::report_kinds::report_data;
use serde_json::{json, Value};

const REPORT_STYLE: &str = include_str!("../src/report/html/report.css");
const GENERATION_STYLE: &str = include_str!("../src/report/html/generation.css");

/// The `<section id="ID">` of `html`, from its line to its closing tag's.
fn section(html: &str, id: &str) -> String {
    let start = html
        .find(&format!("  <section id=\"{id}\""))
        .unwrap_or_else(|| panic!("no section {id}"));
    let length = html[start..]
        .find("\n  </section>\n")
        .expect("the section ends");
    html[start..start + length + "\n  </section>\n".len()].to_string()
}

/// The content of the page's `<style>` element.
fn style(html: &str) -> &str {
    let start = html.find("<style>").expect("a style element") + "<style>".len();
    &html[start..start + html[start..].find("</style>").expect("its end")]
}

/// Candidates, dataset and checks the two task models of `fake_openai` score differently on:
/// `small` answers the capital alone, `large` in a sentence, and two examples expect the
/// sentence; `japan.txt` asks for Japan's capital whatever the example.
fn two_by_two(sb: &Sandbox) {
    sb.write(
        "terse.txt",
        std::fs::read(fixture("prompts/terse.txt")).unwrap(),
    );
    sb.write(
        "japan.txt",
        "What is the capital of Japan? (asked as {{id}})\n",
    );
    sb.write(
        "qa.jsonl",
        concat!(
            r#"{"id": "fr", "input": "capital of France", "expected": "Paris"}"#,
            "\n",
            r#"{"id": "it", "input": "capital of Italy", "expected": "The capital is Rome."}"#,
            "\n",
            r#"{"id": "jp", "input": "capital of Japan", "expected": "The capital is Tokyo."}"#,
            "\n",
        ),
    );
}

/// Each series of the page's data: its name, its rows and their mean score.
fn pair_means(data: &Value) -> Value {
    let columns: Vec<&str> = data["columns"]
        .as_array()
        .unwrap()
        .iter()
        .map(|name| name.as_str().unwrap())
        .collect();
    let at = |name: &str| columns.iter().position(|column| *column == name).unwrap();
    let rows = data["rows"].as_array().unwrap();
    let series = data["series"].as_array().unwrap();
    (0..series.len())
        .map(|index| {
            let scores: Vec<f64> = rows
                .iter()
                .filter(|row| row[at("series")] == json!(index))
                .map(|row| row[at("score")].as_f64().unwrap())
                .collect();
            let mean = scores.iter().sum::<f64>() / scores.len() as f64;
            json!([series[index]["candidate"], scores.len(), mean])
        })
        .collect()
}

#[test]
fn two_candidates_and_two_task_models_make_a_two_by_two_matrix() {
    let server = fake_openai();
    let sb = Sandbox::new();
    two_by_two(&sb);
    let run = sb
        .evalctl()
        .env("ACME_API_KEY", KEY)
        .args(["run", "--no-config", "--format", "json", "--generate"])
        .args(["--task-model", "acme/small", "--task-model", "acme/large"])
        .args(["--task-base-url", &server.url("/v1"), "--skip-preflight"])
        .args(["--price", "acme/small=1,2", "--price", "acme/large=10,20"])
        .args(["--dataset", "qa.jsonl", "--checks", &fixture("checks.json")])
        .args([
            "-j",
            "1",
            "--output",
            "results.jsonl",
            "--report",
            "run.html",
        ])
        .args(["terse.txt", "japan.txt"])
        .output()
        .unwrap();
    assert_eq!(code(&run), 0, "{}", stderr_text(&run));
    // terse.txt: small answers fr right (1/3), large it and jp (2/3); japan.txt: small never
    // (Tokyo is expected in a sentence), large jp (1/3). Each pair is 3 calls of 12 prompt and
    // 3 completion tokens: 36 / 9 tokens at $1 / $2 and $10 / $20 a million.
    let cell = |score: &str, interval: &str, cost: &str| {
        format!(
            "<td class=\"num\" data-score=\"{score}\">{interval}<div class=\"muted\">3 calls, \
             0 failed{cost}</div></td>"
        )
    };
    let matrix = |costs: [&str; 2]| {
        let small = format!(" · cost {}", costs[0]);
        let large = format!(" · cost {}", costs[1]);
        let (small, large) = if costs[0].is_empty() {
            (String::new(), String::new())
        } else {
            (small, large)
        };
        format!(
            "  <section id=\"matrix\" aria-labelledby=\"matrix-heading\">\n    \
             <h2 id=\"matrix-heading\">Candidates × task models</h2>\n    \
             <p class=\"muted\">Each cell: the mean score of the candidate's answers from the \
             task model (failed calls count as 0) ± the half-width of its 95% interval, then its \
             calls and failed calls, and its pass rate, pass@k and cost when the run has them.\
             </p>\n    \
             <div class=\"table-wrap\"><table class=\"matrix\" data-source=\"0\">\n    \
             <thead><tr><th>candidate</th><th class=\"num\">acme/small</th>\
             <th class=\"num\">acme/large</th></tr></thead>\n    \
             <tbody>\n    \
             <tr><td class=\"cand\">terse.txt</td>{}{}</tr>\n    \
             <tr><td class=\"cand\">japan.txt</td>{}{}</tr>\n    \
             </tbody></table></div>\n  \
             </section>\n",
            cell("0.3333333333333333", "0.3333 ± 0.5000", &small),
            cell("0.6666666666666666", "0.6667 ± 0.5000", &large),
            cell("0", "0.0000 ± 0.0000", &small),
            cell("0.3333333333333333", "0.3333 ± 0.5000", &large),
        )
    };
    let html = sb.read("run.html");
    assert_eq!(section(&html, "matrix"), matrix(["$0.000054", "$0.000540"]));
    assert_eq!(style(&html), format!("{REPORT_STYLE}{GENERATION_STYLE}"));

    // A results file records no prices: the same matrix, without costs.
    succeeded(
        sb.evalctl()
            .args(["report", "results.jsonl", "-o", "file.html"]),
    );
    let html = sb.read("file.html");
    assert_eq!(section(&html, "matrix"), matrix(["", ""]));
    // The page's charts and table see each pair as a candidate of its own, with its own rows.
    for page in ["run.html", "file.html"] {
        assert_eq!(
            pair_means(&report_data(&sb.join(page))),
            json!([
                ["terse.txt × acme/small", 3, 1.0 / 3.0],
                ["terse.txt × acme/large", 3, 2.0 / 3.0],
                ["japan.txt × acme/small", 3, 0.0],
                ["japan.txt × acme/large", 3, 1.0 / 3.0],
            ]),
            "{page}"
        );
    }
    // A results file lists calls as they completed: the candidates keep the run's order.
    let mut lines = sb.lines("results.jsonl");
    lines.reverse();
    sb.write("reversed.jsonl", lines.join("\n") + "\n");
    succeeded(
        sb.evalctl()
            .args(["report", "reversed.jsonl", "-o", "reversed.html"]),
    );
    let reversed = section(&sb.read("reversed.html"), "matrix");
    let rows: Vec<&str> = reversed
        .split("<td class=\"cand\">")
        .skip(1)
        .map(|row| row.split('<').next().unwrap())
        .collect();
    assert_eq!(rows, ["terse.txt", "japan.txt"]);
    assert_eq!(
        pair_means(&report_data(&sb.join("reversed.html")))[0][0],
        "terse.txt × acme/large",
        "the task models as the file first names them"
    );
    let row = |candidate: &str, model: &str, score: &str, answer: &str| {
        format!(
            "    <tr><td class=\"cand\">{candidate}</td><td>{model}</td>\
             <td class=\"num\">{score}</td><td class=\"answer\"><pre>{answer}</pre></td></tr>\n"
        )
    };
    let example = |index: usize, id: &str, line: usize, city: &str, scores: [&str; 4]| {
        format!(
            "    <details class=\"example\" data-source=\"0\" data-split=\"train\" \
             data-example=\"{index}\"><summary>train {id} (line {line}) \
             <span class=\"muted\">4 answers</span></summary>\n    \
             <div class=\"table-wrap\"><table class=\"answers\"><thead><tr><th>candidate</th>\
             <th>task model</th><th class=\"num\">score</th><th>answer</th></tr></thead>\n    \
             <tbody>\n{}{}{}{}    </tbody></table></div></details>\n",
            row("terse.txt", "acme/small", scores[0], city),
            row(
                "terse.txt",
                "acme/large",
                scores[1],
                &format!("The capital is {city}.")
            ),
            row("japan.txt", "acme/small", scores[2], "Tokyo"),
            row(
                "japan.txt",
                "acme/large",
                scores[3],
                "The capital is Tokyo."
            ),
        )
    };
    assert_eq!(
        section(&html, "answers"),
        format!(
            "  <section id=\"answers\" aria-labelledby=\"answers-heading\">\n    \
             <h2 id=\"answers-heading\">Answers</h2>\n    \
             <p class=\"muted\">Each example's answers, one per candidate × task model (and \
             repeat), beside their scores; open an example to read them.</p>\n{}{}{}  \
             </section>\n",
            example(
                0,
                "fr",
                1,
                "Paris",
                ["1.0000", "0.0000", "0.0000", "0.0000"]
            ),
            example(1, "it", 2, "Rome", ["0.0000", "1.0000", "0.0000", "0.0000"]),
            example(
                2,
                "jp",
                3,
                "Tokyo",
                ["0.0000", "1.0000", "0.0000", "1.0000"]
            ),
        )
    );
}

/// A task model command whose answers hold markup, span lines, or never come (exit 3).
const MODEL: &str = r#"r=$(cat)
case "$r" in
  *France*) printf '<script>window.__injected=1</script> & "Paris"' ;;
  *Italy*) printf 'Rome\n  is <b>the</b> \033]0;T\007\342\200\256capital\000' ;;
  *) echo "no idea" >&2; exit 3 ;;
esac
"#;

/// An evaluator whose reasoning for France holds markup, and that gives none for Italy.
const EVALUATOR: &str = r#"case "$(cat)" in
  *France*) echo '{"score": 1, "reasoning": "</td></tr><img src=x onerror=alert(1)> fine"}' ;;
  *) echo '{"score": 0.25}' ;;
esac
"#;

#[test]
fn answers_and_reasoning_are_text_beside_their_scores() {
    let sb = Sandbox::new();
    sb.write(
        "terse.txt",
        std::fs::read(fixture("prompts/terse.txt")).unwrap(),
    );
    sb.write("model.sh", MODEL);
    sb.write("eval.sh", EVALUATOR);
    let run = sb
        .evalctl()
        .args(["run", "--no-config", "--format", "json", "--generate"])
        .args(["--task-model-command", "sh model.sh", "--skip-preflight"])
        .args([
            "--dataset",
            &fixture("qa.jsonl"),
            "--evaluator-command",
            "sh eval.sh",
        ])
        .args(["-j", "1", "--repeat", "2", "--pass-score", "1"])
        .args(["--report", "run.html", "terse.txt"])
        .output()
        .unwrap();
    assert_eq!(code(&run), 1, "{}", stderr_text(&run));
    let html = sb.read("run.html");
    // Two repeats of three examples: the cell counts both, with pass@1 and pass@2 (fr passes
    // both times, it never, jp fails).
    assert_eq!(
        section(&html, "matrix"),
        r#"  <section id="matrix" aria-labelledby="matrix-heading">
    <h2 id="matrix-heading">Candidates × task models</h2>
    <p class="muted">Each cell: the mean score of the candidate's answers from the task model (failed calls count as 0) ± the half-width of its 95% interval, then its calls and failed calls, and its pass rate, pass@k and cost when the run has them.</p>
    <div class="table-wrap"><table class="matrix" data-source="0">
    <thead><tr><th>candidate</th><th class="num">command &#39;sh model.sh&#39;</th></tr></thead>
    <tbody>
    <tr><td class="cand">terse.txt</td><td class="num" data-score="0.4166666666666667">0.4167 ± 0.5000<div class="muted">6 calls, 2 failed · pass@1 0.3333, pass@2 0.3333</div></td></tr>
    </tbody></table></div>
  </section>
"#
    );
    // Every answer, reasoning and message is escaped text inside a <pre> that keeps its lines,
    // its control characters and bidirectional overrides shown as escapes;
    // the example records of the run are shown above its answers, one row per repeat; the
    // failed calls show their error instead of an answer.
    assert_eq!(
        section(&html, "answers"),
        r#"  <section id="answers" aria-labelledby="answers-heading">
    <h2 id="answers-heading">Answers</h2>
    <p class="muted">Each example's answers, one per candidate × task model (and repeat), beside their scores; open an example to read them.</p>
    <details class="example" data-source="0" data-split="train" data-example="0"><summary>train fr (line 1) <span class="muted">2 answers</span></summary>
    <h4>example</h4><pre>{
  &quot;id&quot;: &quot;fr&quot;,
  &quot;input&quot;: &quot;capital of France&quot;,
  &quot;expected&quot;: &quot;Paris&quot;
}</pre>
    <div class="table-wrap"><table class="answers"><thead><tr><th>candidate</th><th>task model</th><th class="num">repeat</th><th class="num">score</th><th>answer</th><th>reasoning</th></tr></thead>
    <tbody>
    <tr><td class="cand">terse.txt</td><td>command &#39;sh model.sh&#39;</td><td class="num">0</td><td class="num">1.0000</td><td class="answer"><pre>&lt;script&gt;window.__injected=1&lt;/script&gt; &amp; &quot;Paris&quot;</pre></td><td><pre>&lt;/td&gt;&lt;/tr&gt;&lt;img src=x onerror=alert(1)&gt; fine</pre></td></tr>
    <tr><td class="cand">terse.txt</td><td>command &#39;sh model.sh&#39;</td><td class="num">1</td><td class="num">1.0000</td><td class="answer"><pre>&lt;script&gt;window.__injected=1&lt;/script&gt; &amp; &quot;Paris&quot;</pre></td><td><pre>&lt;/td&gt;&lt;/tr&gt;&lt;img src=x onerror=alert(1)&gt; fine</pre></td></tr>
    </tbody></table></div></details>
    <details class="example" data-source="0" data-split="train" data-example="1"><summary>train it (line 2) <span class="muted">2 answers</span></summary>
    <h4>example</h4><pre>{
  &quot;id&quot;: &quot;it&quot;,
  &quot;input&quot;: &quot;capital of Italy&quot;,
  &quot;expected&quot;: &quot;Rome&quot;
}</pre>
    <div class="table-wrap"><table class="answers"><thead><tr><th>candidate</th><th>task model</th><th class="num">repeat</th><th class="num">score</th><th>answer</th><th>reasoning</th></tr></thead>
    <tbody>
    <tr><td class="cand">terse.txt</td><td>command &#39;sh model.sh&#39;</td><td class="num">0</td><td class="num">0.2500</td><td class="answer"><pre>Rome
  is &lt;b&gt;the&lt;/b&gt; \u{1b}]0;T\u{7}\u{202e}capital\u{0}</pre></td><td class="muted">—</td></tr>
    <tr><td class="cand">terse.txt</td><td>command &#39;sh model.sh&#39;</td><td class="num">1</td><td class="num">0.2500</td><td class="answer"><pre>Rome
  is &lt;b&gt;the&lt;/b&gt; \u{1b}]0;T\u{7}\u{202e}capital\u{0}</pre></td><td class="muted">—</td></tr>
    </tbody></table></div></details>
    <details class="example" data-source="0" data-split="train" data-example="2"><summary>train jp (line 3) <span class="muted">2 answers (2 failed)</span></summary>
    <h4>example</h4><pre>{
  &quot;id&quot;: &quot;jp&quot;,
  &quot;input&quot;: &quot;capital of Japan&quot;,
  &quot;expected&quot;: &quot;Tokyo&quot;
}</pre>
    <div class="table-wrap"><table class="answers"><thead><tr><th>candidate</th><th>task model</th><th class="num">repeat</th><th class="num">score</th><th>answer</th><th>reasoning</th></tr></thead>
    <tbody>
    <tr class="failed"><td class="cand">terse.txt</td><td>command &#39;sh model.sh&#39;</td><td class="num">0</td><td class="num"><span class="pill">exit_status</span></td><td class="answer"><span class="muted">no answer</span><pre class="error">exit_status: task model command &#39;sh model.sh&#39;: command exited with code 3; stderr: no idea</pre></td><td class="muted">—</td></tr>
    <tr class="failed"><td class="cand">terse.txt</td><td>command &#39;sh model.sh&#39;</td><td class="num">1</td><td class="num"><span class="pill">exit_status</span></td><td class="answer"><span class="muted">no answer</span><pre class="error">exit_status: task model command &#39;sh model.sh&#39;: command exited with code 3; stderr: no idea</pre></td><td class="muted">—</td></tr>
    </tbody></table></div></details>
  </section>
"#
    );
}

#[test]
fn a_run_without_task_models_has_neither_the_matrix_nor_the_answers() {
    let sb = Sandbox::new();
    sb.write("d.jsonl", "{\"n\": 1}\n{\"n\": 2}\n");
    succeeded(
        sb.run_with("cat >/dev/null\necho '{\"score\": 1, \"reasoning\": \"ok\"}'\n")
            .args([
                "--skip-preflight",
                "--candidate",
                "c",
                "--dataset",
                "d.jsonl",
            ])
            .args(["--output", "results.jsonl", "--report", "run.html"]),
    );
    succeeded(
        sb.evalctl()
            .args(["report", "results.jsonl", "-o", "file.html"]),
    );
    for page in ["run.html", "file.html"] {
        let html = sb.read(page);
        assert_eq!(style(&html), REPORT_STYLE, "{page}");
        let start = html
            .find("<div id=\"ranking\"></div>")
            .expect("the ranking");
        let end = html
            .find("<h2 id=\"candidates-heading\">")
            .expect("the candidates");
        assert_eq!(
            &html[start..end],
            "<div id=\"ranking\"></div>\n  </section>\n  \
             <section id=\"candidates\" aria-labelledby=\"candidates-heading\">\n    ",
            "{page}: the summary is followed by the candidates"
        );
    }
}
