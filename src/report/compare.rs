//! `evalctl compare BASE.jsonl NEW.jsonl`: two runs' results paired call by call (by key, and
//! calls whose key changed — a new prompt, a new evaluator script — by candidate, split, example
//! and repeat), then per candidate the mean difference with a paired-bootstrap 95% interval,
//! win / tie / loss counts and the largest regressions; `--fail-on-regression X` exits 1 when a
//! candidate's mean drops by more than X. Printed as text, JSON or Markdown (a pull-request
//! comment, also appended to `$GITHUB_STEP_SUMMARY`).

use std::collections::{BTreeMap, HashMap};

use serde::Serialize;

use super::interval::spread;
use super::markdown;
use super::merge::read_all;
use super::{print_stdout, print_text, Format, Reporter};
use crate::exit::Exit;
use crate::runner::{CallRecord, Split};

/// Regressions listed per candidate.
const REGRESSIONS_SHOWN: usize = 5;

/// What `compare` needs.
#[derive(Debug, Clone)]
pub struct CompareConfig {
    /// The baseline results file.
    pub base: String,
    /// The new results file.
    pub new: String,
    /// Exit 1 when a candidate's mean drops by more than this.
    pub fail_on_regression: Option<f64>,
    /// Seeds the paired bootstrap.
    pub seed: u64,
}

/// The comparison (`--format json` prints it as is).
#[derive(Debug, Serialize)]
pub struct Comparison {
    /// Per candidate present in both runs, in the new run's order.
    pub candidates: Vec<CandidateComparison>,
    /// Calls of each run with no partner in the other.
    pub unpaired: Unpaired,
    /// `--fail-on-regression`, when given.
    pub fail_on_regression: Option<f64>,
    /// Candidates whose mean dropped by more than it.
    pub regressed: Vec<String>,
    /// The exit code.
    pub exit: u8,
}

/// Calls with no partner.
#[derive(Debug, Serialize)]
pub struct Unpaired {
    /// In the base run.
    pub base: usize,
    /// In the new run.
    pub new: usize,
}

/// One candidate's comparison.
#[derive(Debug, Serialize)]
pub struct CandidateComparison {
    /// The candidate's id.
    pub id: String,
    /// Paired examples (each example's repeats averaged first).
    pub pairs: usize,
    /// Mean over the paired examples, base run.
    pub base_mean: f64,
    /// Mean over the paired examples, new run.
    pub new_mean: f64,
    /// `new_mean - base_mean`.
    pub difference: f64,
    /// Paired-bootstrap 95% interval of the difference; null with fewer than two pairs.
    pub ci95: Option<[f64; 2]>,
    /// Examples scored higher in the new run.
    pub wins: usize,
    /// Examples scored the same.
    pub ties: usize,
    /// Examples scored lower.
    pub losses: usize,
    /// The largest drops, largest first.
    pub regressions: Vec<Regression>,
}

/// One example's paired scores (its repeats in each run).
struct PairedExample {
    base: Vec<f64>,
    new: Vec<f64>,
    line: Option<usize>,
    split: Split,
}

/// One paired example's means; in the output, one scored lower in the new run.
#[derive(Debug, Serialize)]
pub struct Regression {
    /// `single`, `train` or `val`.
    pub split: Split,
    /// 0-based example index (null for single calls).
    pub example_index: Option<usize>,
    /// 1-based line of the example in its file.
    pub example_line: Option<usize>,
    /// Score in the base run.
    pub base: f64,
    /// Score in the new run.
    pub new: f64,
}

/// Where a call sits whatever its key: candidate, split, example, repeat.
type Position = (String, Split, Option<usize>, Option<u32>);

fn position(record: &CallRecord) -> Position {
    (
        record.candidate_id.clone(),
        record.split,
        record.example_index,
        record.repeat,
    )
}

/// Compare the two runs, print the comparison and return the exit code.
pub fn compare(config: &CompareConfig, reporter: Reporter) -> anyhow::Result<Exit> {
    let (_, base) = read_all(std::slice::from_ref(&config.base))?;
    let (_, new) = read_all(std::slice::from_ref(&config.new))?;
    let mut base_by_position: HashMap<Position, &CallRecord> = base
        .values()
        .map(|record| (position(record), record))
        .collect();
    let mut unpaired_new = 0;
    // Per candidate, per (split, example): the (base, new) scores of each paired repeat.
    let mut paired: BTreeMap<(usize, String), BTreeMap<(u8, usize), PairedExample>> =
        BTreeMap::new();
    for (key, record) in &new {
        let partner = base
            .get(key)
            .map(|partner| (position(partner), partner))
            .or_else(|| {
                base_by_position
                    .get(&position(record))
                    .map(|p| (position(record), *p))
            });
        let Some((at, partner)) = partner else {
            unpaired_new += 1;
            continue;
        };
        base_by_position.remove(&at);
        let slot = (record.split as u8, record.example_index.unwrap_or(0));
        let entry = paired
            .entry((
                record.candidate_index.unwrap_or(usize::MAX),
                record.candidate_id.clone(),
            ))
            .or_default()
            .entry(slot)
            .or_insert_with(|| PairedExample {
                base: Vec::new(),
                new: Vec::new(),
                line: record.example_line,
                split: record.split,
            });
        entry.base.push(partner.score);
        entry.new.push(record.score);
    }
    let mut candidates = Vec::new();
    for ((_, id), examples) in paired {
        let mean = |scores: &[f64]| scores.iter().sum::<f64>() / scores.len() as f64;
        let pairs: Vec<Regression> = examples
            .iter()
            .map(|(&(_, index), example)| Regression {
                split: example.split,
                example_index: (example.split != Split::Single).then_some(index),
                example_line: example.line,
                base: mean(&example.base),
                new: mean(&example.new),
            })
            .collect();
        let differences: Vec<f64> = pairs.iter().map(|pair| pair.new - pair.base).collect();
        let n = pairs.len() as f64;
        let base_mean = pairs.iter().map(|pair| pair.base).sum::<f64>() / n;
        let new_mean = pairs.iter().map(|pair| pair.new).sum::<f64>() / n;
        let count = pairs.len();
        let mut regressions: Vec<Regression> = pairs
            .into_iter()
            .filter(|pair| pair.new < pair.base)
            .collect();
        regressions.sort_by(|a, b| (a.new - a.base).total_cmp(&(b.new - b.base)));
        regressions.truncate(REGRESSIONS_SHOWN);
        candidates.push(CandidateComparison {
            id,
            pairs: count,
            base_mean,
            new_mean,
            difference: new_mean - base_mean,
            ci95: spread(&differences, config.seed).1,
            wins: differences.iter().filter(|d| **d > 0.0).count(),
            ties: differences.iter().filter(|d| **d == 0.0).count(),
            losses: differences.iter().filter(|d| **d < 0.0).count(),
            regressions,
        });
    }
    let regressed: Vec<String> = config
        .fail_on_regression
        .map(|limit| {
            candidates
                .iter()
                .filter(|c| c.difference < -limit)
                .map(|c| c.id.clone())
                .collect()
        })
        .unwrap_or_default();
    let exit = if regressed.is_empty() {
        Exit::Success
    } else {
        Exit::EvaluationFailed
    };
    let comparison = Comparison {
        candidates,
        unpaired: Unpaired {
            base: base_by_position.len(),
            new: unpaired_new,
        },
        fail_on_regression: config.fail_on_regression,
        regressed,
        exit: exit as u8,
    };
    let as_markdown = render_markdown(&comparison, &config.base, &config.new);
    match reporter.format {
        _ if reporter.markdown => print_stdout(&as_markdown)?,
        Format::Json => print_stdout(&format!("{}\n", serde_json::to_string_pretty(&comparison)?))?,
        Format::Text => print_text(&render(&comparison))?,
    }
    markdown::append_to_step_summary(&as_markdown, reporter);
    if let Some(limit) = config.fail_on_regression {
        for id in &comparison.regressed {
            reporter.note(format!(
                "exit 1: candidate {id} dropped by more than --fail-on-regression {limit}"
            ));
        }
    }
    Ok(exit)
}

/// The comparison as text: one line per candidate, then its largest regressions.
fn render(comparison: &Comparison) -> String {
    let mut out = String::new();
    for c in &comparison.candidates {
        let interval = c.ci95.map_or_else(String::new, |[lo, hi]| {
            format!(" (95% CI {lo:+.4} to {hi:+.4})")
        });
        out.push_str(&format!(
            "{}: {:.4} -> {:.4}, {:+.4}{interval}; {} pairs: {} wins, {} ties, {} losses\n",
            c.id, c.base_mean, c.new_mean, c.difference, c.pairs, c.wins, c.ties, c.losses
        ));
        for r in &c.regressions {
            out.push_str(&format!(
                "  regression: {}: {:.4} -> {:.4}\n",
                r.example_label(),
                r.base,
                r.new
            ));
        }
    }
    if comparison.unpaired.base + comparison.unpaired.new > 0 {
        out.push_str(&format!(
            "unpaired calls: {} in base, {} in new\n",
            comparison.unpaired.base, comparison.unpaired.new
        ));
    }
    out
}

/// The comparison of the runs in `base` and `new` as Markdown: a heading with the verdict,
/// the files and what `--fail-on-regression` found, then per candidate a table of its numbers
/// and one of its largest regressions, and a note of unpaired calls.
fn render_markdown(comparison: &Comparison, base: &str, new: &str) -> String {
    let gate = match comparison.fail_on_regression {
        None => "no --fail-on-regression gate".to_string(),
        Some(limit) if comparison.regressed.is_empty() => {
            format!("no candidate dropped by more than --fail-on-regression {limit}")
        }
        Some(limit) => format!(
            "dropped by more than --fail-on-regression {limit}: {}",
            comparison.regressed.join(", ")
        ),
    };
    let mut out = format!(
        "### evalctl compare: {} (exit {})\n\n{} → {} · {}\n",
        markdown::verdict(comparison.exit),
        comparison.exit,
        markdown::literal(base),
        markdown::literal(new),
        markdown::literal(&gate)
    );
    if comparison.candidates.is_empty() {
        out.push_str("\n_No call of the new run has a partner in the base run._\n");
    }
    for c in &comparison.candidates {
        let interval = c.ci95.map_or_else(
            || "—".to_string(),
            |[lo, hi]| format!("{lo:+.4} to {hi:+.4}"),
        );
        out.push_str(&format!("\n#### {}\n\n", markdown::literal(&c.id)));
        out.push_str(&markdown::rows_table(&[
            vec![
                "pairs".to_string(),
                "base mean".to_string(),
                "new mean".to_string(),
                "difference".to_string(),
                "95% CI".to_string(),
                "wins / ties / losses".to_string(),
            ],
            vec![
                c.pairs.to_string(),
                format!("{:.4}", c.base_mean),
                format!("{:.4}", c.new_mean),
                format!("{:+.4}", c.difference),
                interval,
                format!("{} / {} / {}", c.wins, c.ties, c.losses),
            ],
        ]));
        if c.regressions.is_empty() {
            out.push_str("\nNo example scored lower.\n");
            continue;
        }
        out.push_str("\nLargest regressions:\n\n");
        let header = ["example", "base", "new", "difference"].map(String::from);
        let rows = c.regressions.iter().map(|r| {
            vec![
                r.example_label(),
                format!("{:.4}", r.base),
                format!("{:.4}", r.new),
                format!("{:+.4}", r.new - r.base),
            ]
        });
        out.push_str(&markdown::rows_table(
            &std::iter::once(header.to_vec())
                .chain(rows)
                .collect::<Vec<_>>(),
        ));
    }
    let unpaired = &comparison.unpaired;
    if unpaired.base + unpaired.new > 0 {
        out.push_str(&format!(
            "\n_Unpaired calls: {} in base, {} in new._\n",
            unpaired.base, unpaired.new
        ));
    }
    out
}

impl Regression {
    /// Where the example is: `train #1 (line 2)`, or the split alone for a single call.
    fn example_label(&self) -> String {
        let split = match self.split {
            Split::Single => "single",
            Split::Train => "train",
            Split::Val => "val",
        };
        match (self.example_index, self.example_line) {
            (Some(index), Some(line)) => format!("{split} #{index} (line {line})"),
            _ => split.to_string(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn comparison(candidates: Vec<CandidateComparison>) -> Comparison {
        Comparison {
            candidates,
            unpaired: Unpaired { base: 1, new: 0 },
            fail_on_regression: None,
            regressed: Vec::new(),
            exit: 0,
        }
    }

    #[test]
    fn markdown_of_a_single_call_has_no_interval_and_names_the_split() {
        let single = CandidateComparison {
            id: "a|b".to_string(),
            pairs: 1,
            base_mean: 1.0,
            new_mean: 0.5,
            difference: -0.5,
            ci95: None,
            wins: 0,
            ties: 0,
            losses: 1,
            regressions: vec![Regression {
                split: Split::Single,
                example_index: None,
                example_line: None,
                base: 1.0,
                new: 0.5,
            }],
        };
        assert_eq!(
            render_markdown(&comparison(vec![single]), "b`1`.jsonl", "-"),
            "### evalctl compare: ✅ passed (exit 0)\n\nb\\`1\\`.jsonl → - · no \
             --fail-on-regression gate\n\n#### a\\|b\n\n\
             | pairs | base mean | new mean | difference | 95% CI | wins / ties / losses |\n\
             |---|---|---|---|---|---|\n\
             | 1 | 1.0000 | 0.5000 | -0.5000 | — | 0 / 0 / 1 |\n\n\
             Largest regressions:\n\n\
             | example | base | new | difference |\n|---|---|---|---|\n\
             | single | 1.0000 | 0.5000 | -0.5000 |\n\n\
             _Unpaired calls: 1 in base, 0 in new._\n"
        );
    }

    #[test]
    fn markdown_without_pairs_says_so() {
        assert_eq!(
            render_markdown(&comparison(Vec::new()), "a.jsonl", "b.jsonl"),
            "### evalctl compare: ✅ passed (exit 0)\n\na.jsonl → b.jsonl · no \
             --fail-on-regression gate\n\n\
             _No call of the new run has a partner in the base run._\n\n\
             _Unpaired calls: 1 in base, 0 in new._\n"
        );
    }
}
