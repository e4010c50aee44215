//! The text summary: one header and one table row per candidate, readable at a glance.

use super::summary::{Aggregate, Calls, CandidateSummary, Summary, Usage};
use super::terminal::{Paint, Styled};
use crate::text::{counted, one_line, Fixed4};

/// Render `summary` as a table.
pub fn render(summary: &Summary) -> Styled {
    let mut out = Styled::default();
    let calls = &summary.calls;
    out.push(format!(
        "evaluator: {} {}   score range: {}\ncalls: {} ({})   elapsed: {}{}\n",
        summary.evaluator.kind,
        summary.evaluator.target,
        summary.score_range.as_str(),
        calls.total,
        call_outcomes(calls),
        elapsed(summary),
        if summary.interrupted {
            "   (interrupted: partial results)"
        } else {
            ""
        },
    ));
    if let Some(partial) = &summary.partial {
        out.push(format!("partial: {}\n", partial.description));
    }
    if let Some(tokens) = tokens(summary) {
        out.push(format!("tokens: {tokens}\n"));
    }
    if let Some(tokens) = task_model_tokens(summary) {
        out.push(format!("task model tokens: {tokens}\n"));
    }
    if let Some(cost) = judge_cost(summary) {
        out.push(format!("judge cost: {cost}\n"));
    }
    if let Some(cost) = cost(summary) {
        out.push(format!("cost: {cost}\n"));
    }
    if let Some(budget) = budget(summary) {
        out.push(format!("budget: {budget}\n"));
    }
    out.push("\n");

    // The rows after the header are the candidates, in order; those under --fail-under are red.
    let threshold = summary.gates.fail_under.as_ref().map(|gate| gate.threshold);
    out.append(aligned(&table(summary), |row| {
        let candidate = summary.candidates.get(row.checked_sub(1)?)?;
        threshold
            .filter(|&threshold| summary.fails_under(candidate, threshold))
            .map(|_| Paint::Failing)
    }));
    let quoted = quoted_candidates(summary);
    if !quoted.is_empty() {
        out.push(format!("\n{}\n", quoted.join("\n")));
    }
    if let Some(best) = best(summary) {
        out.push(format!("\n{best}\n"));
    }
    let flaky = flaky(summary);
    if !flaky.is_empty() {
        out.push(format!("\n{}\n", flaky.join("\n")));
    }
    let notes = notes(summary);
    if !notes.is_empty() {
        out.push(format!("\n{}\n", notes.join("\n")));
    }
    out.push(format!("\n{}\n", summary.closing.line()));
    out
}

/// The run's wall time, `12.34s`, or `— (not recorded in results files)` for a summary of
/// results files (shared by the text and Markdown summaries).
pub(super) fn elapsed(summary: &Summary) -> String {
    summary.elapsed_ms.map_or_else(
        || "— (not recorded in results files)".to_string(),
        |ms| format!("{:.2}s", ms / 1000.0),
    )
}

/// How the calls ended: `5 ok, 1 error`, and `, 4 from the cache` when the cache answered any
/// (shared by the text and Markdown summaries).
pub(super) fn call_outcomes(calls: &Calls) -> String {
    let cached = match calls.cached {
        0 => String::new(),
        cached => format!(", {cached} from the cache"),
    };
    format!(
        "{} ok, {}{cached}",
        calls.ok,
        counted(calls.errors, "error", "errors")
    )
}

/// The tokens spent, and those the cache saved, when any call reported them: `120 prompt, 30
/// completion (saved by the cache: 480 prompt, 120 completion)` (shared by the text and Markdown
/// summaries). Tokens of cached calls were spent when they were stored, not by this run.
pub(super) fn tokens(summary: &Summary) -> Option<String> {
    tokens_of(summary.usage.as_ref(), summary.usage_saved.as_ref())
}

/// The task models' tokens of `run --generate`, as [`tokens`] says the evaluator's (shared by
/// the text and Markdown summaries).
pub(super) fn task_model_tokens(summary: &Summary) -> Option<String> {
    let tokens = &summary.generation.as_ref()?.tokens;
    tokens_of(tokens.usage.as_ref(), tokens.usage_saved.as_ref())
}

/// What the run's model calls cost in all, the task models' and the judge's, when every model
/// that spent tokens has a price: `$0.012000 (saved by the cache: $0.004000)` (shared by the
/// text and Markdown summaries).
pub(super) fn cost(summary: &Summary) -> Option<String> {
    Some(with_saved(summary.cost_usd?, summary.cost_saved_usd))
}

/// What the LLM judge's calls cost, when it has a price (shared by the text and Markdown
/// summaries).
pub(super) fn judge_cost(summary: &Summary) -> Option<String> {
    let spend = &summary.judge.as_ref()?.spend;
    Some(with_saved(spend.cost_usd?, spend.cost_saved_usd))
}

/// `$0.012000`, and `(saved by the cache: $0.004000)` when the cache saved some.
fn with_saved(spent: f64, saved: Option<f64>) -> String {
    match saved {
        Some(saved) => format!(
            "{} (saved by the cache: {})",
            dollars(spent),
            dollars(saved)
        ),
        None => dollars(spent),
    }
}

/// `$0.012000 of --max-cost 0.05 spent` and, when it stopped the run, `: stopped, 4 calls not
/// made (--resume continues)` (shared by the text and Markdown summaries).
pub(super) fn budget(summary: &Summary) -> Option<String> {
    let budget = summary.budget.as_ref()?;
    let spent = format!(
        "{} of --max-cost {} spent",
        dollars(budget.spent_usd),
        budget.max_cost_usd
    );
    Some(if budget.stopped {
        format!(
            "{spent}: stopped, {} not made ({})",
            counted(budget.calls_not_made, "call", "calls"),
            budget.way_on()
        )
    } else {
        spent
    })
}

/// `$0.001234`: costs of single calls are fractions of a cent.
pub(super) fn dollars(amount: f64) -> String {
    format!("${amount:.6}")
}

/// `30 prompt, 6 completion`, and ` (saved by the cache: 12 prompt, 2 completion)` when the
/// cache answered calls that spent tokens: the one wording of tokens in every summary.
pub fn tokens_of(spent: Option<&Usage>, saved: Option<&Usage>) -> Option<String> {
    let pair = |usage: &Usage| {
        format!(
            "{} prompt, {} completion",
            usage.prompt_tokens, usage.completion_tokens
        )
    };
    let spent = spent.map(pair);
    match (spent, saved) {
        (spent, Some(saved)) => Some(format!(
            "{} (saved by the cache: {})",
            spent.unwrap_or_else(|| "0 prompt, 0 completion".to_string()),
            pair(saved)
        )),
        (spent, None) => spent,
    }
}

/// `rows` as a table of left-aligned columns two spaces apart, the first row (the header) painted
/// as a heading and each other row as `paint` says for its index. Each cell is shown on one line
/// ([`one_line`]: a line break in an id cannot start a row of its own), and widths count the
/// characters as shown.
pub(super) fn aligned(rows: &[Vec<String>], paint: impl Fn(usize) -> Option<Paint>) -> Styled {
    let rows: Vec<Vec<String>> = rows
        .iter()
        .map(|row| row.iter().map(|cell| one_line(cell)).collect())
        .collect();
    let columns = rows.iter().map(Vec::len).max().unwrap_or(0);
    let widths: Vec<usize> = (0..columns)
        .map(|col| {
            rows.iter()
                .map(|row| row.get(col).map_or(0, |cell| cell.chars().count()))
                .max()
                .unwrap_or(0)
        })
        .collect();
    let mut out = Styled::default();
    for (index, row) in rows.iter().enumerate() {
        let line = row
            .iter()
            .enumerate()
            .map(|(col, cell)| format!("{cell:<width$}", width = widths[col]))
            .collect::<Vec<_>>()
            .join("  ");
        let line = line.trim_end().to_string();
        let style = if index == 0 {
            Some(Paint::Heading)
        } else {
            paint(index)
        };
        match style {
            Some(style) => out.push_painted(style, line),
            None => out.push(line),
        }
        out.push("\n");
    }
    out
}

/// `0.8123 ± 0.0412` (the half-width of the 95% interval), or the bare mean without one.
pub(super) fn mean(aggregate: &Aggregate) -> String {
    match (aggregate.mean, aggregate.ci95) {
        // Halved before subtracting: `hi - lo` overflows when the bounds are near ±1.8e308.
        (Some(mean), Some([lo, hi])) => {
            format!("{} ± {}", Fixed4(mean), Fixed4(hi / 2.0 - lo / 2.0))
        }
        (mean, _) => number(mean),
    }
}

fn number(value: Option<f64>) -> String {
    value.map_or_else(|| "-".to_string(), |value| Fixed4(value).to_string())
}

/// The summary table, header first: one row per candidate, or per candidate × task model under
/// `run --generate` (shared by the text and Markdown summaries).
pub(super) fn table(summary: &Summary) -> Vec<Vec<String>> {
    let any = |has: fn(&CandidateSummary) -> bool| summary.candidates.iter().any(has);
    let has_train = any(|c| c.train.is_some());
    let has_val = any(|c| c.val.is_some());
    let has_models = any(|c| c.task_model.is_some());
    let mut header = vec!["candidate".to_string()];
    if has_models {
        header.push("task model".into());
    }
    header.push("score".into());
    if has_train {
        header.push("train mean".into());
        header.push("n / errors".into());
    }
    if has_val {
        header.push("val mean".into());
        header.push("n / errors".into());
    }
    if !has_train {
        header.push("n / errors".into());
    }
    let has_verdicts = any(|c| c.pass_rate.is_some());
    if has_verdicts {
        header.push("pass rate".into());
    }
    let repeats = summary
        .candidates
        .iter()
        .find_map(|c| c.pass_at_k.as_ref().map(|pass| pass.k));
    if let Some(k) = repeats {
        header.push("pass@1".into());
        header.push(format!("pass@{k}"));
    }
    let has_tokens = any(|c| c.generation.is_some());
    if has_tokens {
        header.push("tokens in / out".into());
    }
    let has_cost = any(|c| c.generation.is_some_and(|spend| spend.cost_usd.is_some()));
    if has_cost {
        header.push("cost".into());
    }
    let mut rows = vec![header];
    for candidate in &summary.candidates {
        let scored = [&candidate.val, &candidate.train, &candidate.single]
            .into_iter()
            .find_map(Option::as_ref);
        let mut row = vec![candidate.id.clone()];
        if has_models {
            row.push(candidate.task_model.clone().unwrap_or_default());
        }
        row.push(scored.map_or_else(|| number(None), mean));
        let mut push = |aggregate: &Option<Aggregate>, with_mean: bool| {
            if let Some(aggregate) = aggregate {
                if with_mean {
                    row.push(mean(aggregate));
                }
                row.push(format!("{} / {}", aggregate.n, aggregate.errors));
            }
        };
        push(&candidate.train, true);
        push(&candidate.val, true);
        push(&candidate.single, false);
        if has_verdicts {
            row.push(
                candidate
                    .pass_rate
                    .map_or_else(|| "-".to_string(), |rate| format!("{:.1}%", rate * 100.0)),
            );
        }
        if repeats.is_some() {
            let pass = candidate.pass_at_k.as_ref();
            row.push(number(pass.and_then(|pass| pass.pass_at_1)));
            row.push(number(pass.and_then(|pass| pass.pass_at_k)));
        }
        let spend = candidate.generation.unwrap_or_default();
        let with_saved = |spent: String, saved: Option<String>| match saved {
            Some(saved) => format!("{spent} (saved {saved})"),
            None => spent,
        };
        if has_tokens {
            let pair =
                |usage: Usage| format!("{} / {}", usage.prompt_tokens, usage.completion_tokens);
            row.push(match candidate.generation {
                None => "-".to_string(),
                Some(_) => with_saved(
                    pair(spend.tokens.usage.unwrap_or_default()),
                    spend.tokens.usage_saved.map(pair),
                ),
            });
        }
        if has_cost {
            row.push(match spend.cost_usd {
                None => "-".to_string(),
                Some(cost) => with_saved(dollars(cost), spend.cost_saved_usd.map(dollars)),
            });
        }
        rows.push(row);
    }
    rows
}

/// Above this many numbered candidates, [`quoted_candidates`] quotes none: the quotes would
/// outgrow the table (a `--candidates` file of hundreds of prompts names them by line).
const QUOTED_CANDIDATES: usize = 20;

/// How many characters of a numbered candidate's text [`quoted_candidates`] quotes.
const QUOTED_CHARS: usize = 60;

/// How many characters before its first difference from another candidate a quote starts (at
/// the next word), when that difference lies past [`QUOTED_CHARS`] (prompts that share a
/// preamble).
const CONTEXT_CHARS: usize = 20;

/// `cand-1 = "Answer briefly."`, one line per candidate evalctl numbered (`cand-N`, `line-N`) when
/// there are two to [`QUOTED_CANDIDATES`] (one needs no telling apart), its text quoted by
/// [`quote`]. Texts that share their first [`QUOTED_CHARS`] characters are quoted from shortly
/// before they differ, so that no two quotes of different texts are the same (shared by the text
/// and Markdown summaries).
pub(super) fn quoted_candidates(summary: &Summary) -> Vec<String> {
    let texts = &summary.numbered_texts;
    if texts.len() < 2 || texts.len() > QUOTED_CANDIDATES {
        return Vec::new();
    }
    texts
        .iter()
        .map(|(id, text)| {
            let shared = texts
                .iter()
                .filter(|(_, other)| other != text)
                .map(|(_, other)| shared_chars(text, other))
                .max()
                .unwrap_or(0);
            let start = if shared >= QUOTED_CHARS {
                word_start(text, shared - CONTEXT_CHARS, shared)
            } else {
                0
            };
            format!("{} = {}", one_line(id), quote(text, start))
        })
        .collect()
}

/// The character of `text` after the first space from character `from` on, where one comes
/// before character `before`; else `from`.
fn word_start(text: &str, from: usize, before: usize) -> usize {
    text.chars()
        .enumerate()
        .take(before)
        .skip(from)
        .find(|(_, ch)| ch.is_whitespace())
        .map_or(from, |(at, _)| at + 1)
}

/// How many characters `a` and `b` share from their start.
fn shared_chars(a: &str, b: &str) -> usize {
    a.chars().zip(b.chars()).take_while(|(x, y)| x == y).count()
}

/// `text` in double quotes from its character `start`, at most [`QUOTED_CHARS`] characters of it,
/// with an ellipsis outside the quotes where text is left out; escaped as Rust's debug format
/// escapes (`\n`, `\"`, `\u{1b}`, `\u{202e}`), so line breaks, control and bidirectional
/// characters are shown, not obeyed.
fn quote(text: &str, start: usize) -> String {
    let from = text
        .char_indices()
        .nth(start)
        .map_or(text.len(), |(at, _)| at);
    let rest = &text[from..];
    let (shown, cut) = match rest.char_indices().nth(QUOTED_CHARS) {
        Some((end, _)) => (&rest[..end], true),
        None => (rest, false),
    };
    let before = if from > 0 { "…" } else { "" };
    let after = if cut { "…" } else { "" };
    format!("{before}\"{}\"{after}", shown.escape_debug())
}

/// `best: b.txt (score 0.8123)`: the row with the highest score as the table shows it (four
/// decimals: means that differ past them tie), when two rows or more have one and every row
/// covers the same calls (not a shard, an interrupted run or one the budget stopped). A tie
/// reads `best: a.txt and c.txt tie (score 0.8123)`, or `best: none, all 3 rows score 0.8123`
/// when every row shares it (shared by the text and Markdown summaries).
pub(super) fn best(summary: &Summary) -> Option<String> {
    let stopped = summary.budget.as_ref().is_some_and(|budget| budget.stopped);
    if summary.partial.is_some() || summary.interrupted || stopped {
        return None;
    }
    let scored: Vec<(String, f64)> = summary
        .candidates
        .iter()
        .filter_map(|candidate| Some((one_line(&candidate.row_name()), candidate.score?)))
        .collect();
    if scored.len() < 2 {
        return None;
    }
    let top = number(scored.iter().map(|(_, score)| *score).reduce(f64::max));
    let rows: Vec<&str> = scored
        .iter()
        .filter(|(_, score)| number(Some(*score)) == top)
        .map(|(row, _)| row.as_str())
        .collect();
    Some(match rows.as_slice() {
        [row] => format!("best: {row} (score {top})"),
        [_, _] if scored.len() == 2 => format!("best: none, both rows score {top}"),
        tied if tied.len() == scored.len() => {
            format!("best: none, all {} rows score {top}", tied.len())
        }
        [first @ .., last] => format!("best: {} and {last} tie (score {top})", first.join(", ")),
        [] => return None,
    })
}

/// `flaky in a.txt × acme/small (passed in some repeats, failed in others): fr, it`, one line
/// per row with flaky examples (shared by the text and Markdown summaries).
pub(super) fn flaky(summary: &Summary) -> Vec<String> {
    summary
        .candidates
        .iter()
        .filter_map(|candidate| {
            let flaky = &candidate.pass_at_k.as_ref()?.flaky;
            (!flaky.is_empty()).then(|| {
                format!(
                    "flaky in {} (passed in some repeats, failed in others): {}",
                    one_line(&candidate.row_name()),
                    flaky.join(", ")
                )
            })
        })
        .collect()
}

/// What the table's numbers mean, one note a line (shared by the text and Markdown summaries).
pub(super) fn notes(summary: &Summary) -> Vec<&'static str> {
    let has_train = summary.candidates.iter().any(|c| c.train.is_some());
    let has_val = summary.candidates.iter().any(|c| c.val.is_some());
    let mut notes = Vec::new();
    if has_val {
        notes.push("score = the candidate's val mean; failed calls count as 0");
    } else if has_train {
        notes.push("score = the candidate's train mean; failed calls count as 0");
    }
    let has_interval = summary.candidates.iter().any(|c| {
        [&c.train, &c.val, &c.single]
            .into_iter()
            .flatten()
            .any(|aggregate| aggregate.ci95.is_some())
    });
    if has_interval {
        notes.push("± = half-width of the 95% bootstrap interval over examples (--seed)");
    }
    if summary.candidates.iter().any(|c| c.pass_at_k.is_some()) {
        notes.push(
            "pass@k = chance that at least one of k repeats scores --pass-score or more \
             (unbiased estimator, averaged over examples)",
        );
    }
    notes
}
