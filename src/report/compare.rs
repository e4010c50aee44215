//! The comparison `evalctl compare BASE.jsonl NEW.jsonl` prints (its command is
//! `crate::commands::compare`): two runs' results paired call by call (by key, and
//! calls whose key changed — a new prompt, a new evaluator script — by candidate, split, example
//! and repeat), then per candidate and split (train and val each) the mean difference with a
//! paired-bootstrap 95% interval, win / tie / loss counts and the largest regressions.
//! `--fail-on-regression X` exits 1 when a candidate's score drops by more than X, the score
//! being the one `run` and `--fail-under` use: the val mean with a valset, else the train mean.
//! Differences within float rounding are ties, not wins or losses (see [`super::summary`]).
//! The comparison ends with the closing line `run` ends with (`exit N: ...`); calls present in
//! one run only are a warning, which says so when most calls are unpaired (the wrong files); two
//! runs whose evaluator or inputs differ are refused unless `--allow-different-inputs`. Printed
//! as text, JSON or Markdown (a pull-request comment, also appended to `$GITHUB_STEP_SUMMARY`).

use std::collections::BTreeMap;

use serde::Serialize;

use super::markdown;
use super::summary::{below, mean_in_order, mean_of_examples};
use super::{Document, Styled};
use crate::exit::Verdict;
use crate::interval::spread;
use crate::record::{CallRecord, Split};
use crate::text::counted;
use crate::text::{fold_lines, Fixed4};

/// Regressions listed per candidate and split.
const REGRESSIONS_SHOWN: usize = 5;

/// The comparison (`--format json` prints it as is).
#[derive(Debug, Serialize)]
pub struct Comparison {
    /// The split whose mean is the runs' score, and which the gate judges: `val` with a
    /// valset, else `train`, else `single`.
    pub score_split: Split,
    /// Per candidate present in both runs, in the new run's order.
    pub candidates: Vec<CandidateComparison>,
    /// The candidates of either run none of whose calls has a partner in the other (an
    /// interrupted run, `--allow-partial`): neither compared nor judged by the gate.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub not_compared: Vec<String>,
    /// Calls of each run with no partner in the other.
    pub unpaired: Unpaired,
    /// `--fail-on-regression`, when given.
    pub fail_on_regression: Option<f64>,
    /// Candidates whose score dropped by more than it.
    pub regressed: Vec<String>,
    /// Runs with calls of their plan absent (interrupted), as `FILE: N of M calls absent`: each
    /// fails the comparison, as it fails `summarize`, unless `--allow-partial`.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub incomplete: Vec<String>,
    /// What completes them: `run --resume completes it`.
    #[serde(skip)]
    pub completed_by: &'static str,
    /// The exit code and why.
    #[serde(flatten)]
    pub closing: Verdict,
    /// The closing line, as `run`'s text summary ends: `exit N: ` and the reason.
    pub verdict: String,
}

/// Calls with no partner.
#[derive(Debug, Serialize)]
pub struct Unpaired {
    /// In the base run.
    pub base: usize,
    /// In the new run.
    pub new: usize,
}

/// One candidate's comparison: its score split's numbers at the top, every split's in `splits`.
#[derive(Debug, Serialize)]
pub struct CandidateComparison {
    /// The candidate's id.
    pub id: String,
    /// The score split (the gate's).
    pub split: Split,
    /// The score split's comparison (absent when it has no pair).
    #[serde(flatten)]
    pub score: Option<SplitComparison>,
    /// Per split with pairs: `train`, `val` or `single`.
    pub splits: BTreeMap<Split, SplitComparison>,
}

/// One candidate's comparison over one split.
#[derive(Debug, Clone, Serialize)]
pub struct SplitComparison {
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
pub struct PairedExample {
    /// The example's scores in the base run.
    pub base: Vec<f64>,
    /// Its scores in the new run.
    pub new: Vec<f64>,
    /// 0-based index of the example (null for a single call).
    pub index: Option<usize>,
    /// 1-based line of the example in its file.
    pub line: Option<usize>,
    /// The example's `id` field, where it has one.
    pub id: Option<String>,
    /// Its calls that failed (scored 0), in the base run and in the new run.
    pub failed: Failed,
}

impl PairedExample {
    /// Add a call of the base run.
    pub fn add_base(&mut self, call: &CallRecord) {
        self.base.push(call.score);
        self.failed.base += usize::from(call.error.is_some());
    }

    /// Add a call of the new run.
    pub fn add_new(&mut self, call: &CallRecord) {
        self.new.push(call.score);
        self.failed.new += usize::from(call.error.is_some());
    }
}

/// Calls of an example that failed, in each run: they score 0, so a comparison says which of
/// its drops a failed call makes.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize)]
pub struct Failed {
    /// In the base run.
    pub base: usize,
    /// In the new run.
    pub new: usize,
}

impl Failed {
    /// `1 call failed in new`, `2 calls failed in base, 1 in new`; `None` when none did.
    fn said(&self) -> Option<String> {
        let calls = |n| counted(n, "call", "calls");
        match (self.base, self.new) {
            (0, 0) => None,
            (0, new) => Some(format!("{} failed in new", calls(new))),
            (base, 0) => Some(format!("{} failed in base", calls(base))),
            (base, new) => Some(format!("{} failed in base, {new} in new", calls(base))),
        }
    }
}

/// One paired example's means; in the output, one scored lower in the new run.
#[derive(Debug, Clone, Serialize)]
pub struct Regression {
    /// `single`, `train` or `val`.
    pub split: Split,
    /// 0-based example index (null for a single call of `run`).
    pub example_index: Option<usize>,
    /// 1-based line of the example in its file.
    pub example_line: Option<usize>,
    /// The example's `id` field, where it has one.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub example_id: Option<String>,
    /// Score in the base run.
    pub base: f64,
    /// Score in the new run.
    pub new: f64,
    /// The example's calls that failed (scored 0), when any did.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub failed: Option<Failed>,
}

/// The comparison of one split's paired examples, in index order.
pub fn compare_split(split: Split, examples: &[&PairedExample], seed: u64) -> SplitComparison {
    let pairs: Vec<Regression> = examples
        .iter()
        .map(|example| Regression {
            split,
            example_index: example.index,
            example_line: example.line,
            example_id: example.id.clone(),
            base: mean_in_order(&example.base),
            new: mean_in_order(&example.new),
            failed: (example.failed != Failed::default()).then_some(example.failed),
        })
        .collect();
    let differences: Vec<f64> = pairs.iter().map(|pair| pair.new - pair.base).collect();
    // The runs' own means of these examples, to the last bit.
    let side = |scores: fn(&PairedExample) -> &[f64]| {
        mean_of_examples(
            &examples
                .iter()
                .map(|example| scores(example))
                .collect::<Vec<_>>(),
        )
    };
    let base_mean = side(|example| &example.base);
    let new_mean = side(|example| &example.new);
    let count = pairs.len();
    let mut regressions: Vec<Regression> = pairs
        .into_iter()
        .filter(|pair| below(pair.new, pair.base))
        .collect();
    regressions.sort_by(|a, b| (a.new - a.base).total_cmp(&(b.new - b.base)));
    regressions.truncate(REGRESSIONS_SHOWN);
    SplitComparison {
        pairs: count,
        base_mean,
        new_mean,
        difference: new_mean - base_mean,
        ci95: spread(&differences, seed).1,
        wins: differences.iter().filter(|d| below(0.0, **d)).count(),
        ties: differences
            .iter()
            .filter(|d| !below(**d, 0.0) && !below(0.0, **d))
            .count(),
        losses: differences.iter().filter(|d| below(**d, 0.0)).count(),
        regressions,
    }
}

impl Comparison {
    /// Set `exit_reason` and the closing line `verdict` from what the gate found.
    pub fn conclude(&mut self) {
        self.closing.set_reason(&reason(self));
        self.verdict = self.closing.line();
    }
}

/// The reason for the exit code: what the gate found on the score split, or that there is no
/// gate.
fn reason(comparison: &Comparison) -> String {
    let split = match comparison.score_split {
        Split::Single => "score".to_string(),
        split => format!("{} score", Split::name(split)),
    };
    let scored: Vec<&SplitComparison> = comparison
        .candidates
        .iter()
        .filter_map(|c| c.score.as_ref())
        .collect();
    if !comparison.incomplete.is_empty() {
        return format!(
            "{}: the run did not finish ({}; --allow-partial compares what is there)",
            comparison.incomplete.join("; "),
            comparison.completed_by
        );
    }
    match comparison.fail_on_regression {
        Some(_) if scored.is_empty() => format!(
            "no candidate was compared on the {split}: the --fail-on-regression gate does not \
             pass on nothing"
        ),
        Some(limit) if !comparison.regressed.is_empty() => {
            let dropped: Vec<String> = comparison
                .candidates
                .iter()
                .filter(|c| comparison.regressed.contains(&c.id))
                .filter_map(|c| {
                    Some(format!(
                        "{} {:+}",
                        c.id,
                        Fixed4(c.score.as_ref()?.difference)
                    ))
                })
                .collect();
            format!(
                "the {split} dropped by more than --fail-on-regression {limit}: {}",
                dropped.join(", ")
            )
        }
        Some(limit) => format!(
            "no candidate's {split} dropped by more than --fail-on-regression {limit} ({} of {} \
             candidates compared{})",
            scored.len(),
            comparison.candidates.len() + comparison.not_compared.len(),
            not_compared(comparison)
        ),
        None => {
            let count =
                |keep: fn(f64) -> bool| scored.iter().filter(|s| keep(s.difference)).count();
            format!(
                "no --fail-on-regression gate: the {split} rose for {}, fell for {} and held for \
                 {} of {} candidates{}",
                count(|d| below(0.0, d)),
                count(|d| below(d, 0.0)),
                count(|d| !below(d, 0.0) && !below(0.0, d)),
                comparison.candidates.len() + comparison.not_compared.len(),
                not_compared(comparison)
            )
        }
    }
}

/// `; not compared, with no call in both runs: cand-2`, naming the candidates of one run only,
/// or nothing.
fn not_compared(comparison: &Comparison) -> String {
    match comparison.not_compared.as_slice() {
        [] => String::new(),
        ids => format!(
            "; not compared, with no call in both runs: {}",
            ids.join(", ")
        ),
    }
}

/// The comparison as `compare` prints it, with the files it compared (Markdown names them).
#[derive(Serialize)]
#[serde(transparent)]
pub struct ComparisonReport<'a> {
    pub comparison: &'a Comparison,
    #[serde(skip)]
    pub base: &'a str,
    #[serde(skip)]
    pub new: &'a str,
}

impl Document for ComparisonReport<'_> {
    fn text(&self) -> Styled {
        Styled::from(render(self.comparison))
    }

    fn markdown(&self) -> Option<String> {
        Some(render_markdown(self.comparison, self.base, self.new))
    }
}

/// The comparison as text: per candidate, one line per split (the split named unless the run
/// has single calls only), then its largest regressions; the unpaired calls; the verdict.
pub fn render(comparison: &Comparison) -> String {
    let mut out = String::new();
    for c in &comparison.candidates {
        for (split, s) in &c.splits {
            let interval = s.ci95.map_or_else(String::new, |[lo, hi]| {
                format!(" (95% CI {:+} to {:+})", Fixed4(lo), Fixed4(hi))
            });
            let label = match split {
                Split::Single => c.id.clone(),
                split => format!("{} {}", c.id, Split::name(*split)),
            };
            out.push_str(&format!(
                "{label}: {} -> {}, {:+}{interval}; {}: {}, {}, {}\n",
                Fixed4(s.base_mean),
                Fixed4(s.new_mean),
                Fixed4(s.difference),
                counted(s.pairs, "pair", "pairs"),
                counted(s.wins, "win", "wins"),
                counted(s.ties, "tie", "ties"),
                counted(s.losses, "loss", "losses"),
            ));
            for r in &s.regressions {
                out.push_str(&format!(
                    "  regression: {}: {} -> {}{}\n",
                    r.example_label(),
                    Fixed4(r.base),
                    Fixed4(r.new),
                    r.failures_said()
                ));
            }
        }
    }
    if comparison.unpaired.base + comparison.unpaired.new > 0 {
        out.push_str(&format!(
            "unpaired calls: {} in base, {} in new\n",
            comparison.unpaired.base, comparison.unpaired.new
        ));
    }
    out.push_str(&comparison.verdict);
    out.push('\n');
    out
}

/// The comparison of the runs in `base` and `new` as Markdown: a heading with the verdict,
/// the files and what `--fail-on-regression` found, then per candidate a table of its numbers
/// (a row per split) and one of its largest regressions, a note of unpaired calls and the
/// verdict line.
pub fn render_markdown(comparison: &Comparison, base: &str, new: &str) -> String {
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
        markdown::verdict(comparison.closing.exit),
        comparison.closing.exit,
        markdown::literal(base),
        markdown::literal(new),
        markdown::literal(&gate)
    );
    if comparison.candidates.is_empty() {
        out.push_str("\n_No call of the new run has a partner in the base run._\n");
    }
    for c in &comparison.candidates {
        out.push_str(&format!("\n#### {}\n\n", markdown::literal(&c.id)));
        let header = [
            "split",
            "pairs",
            "base mean",
            "new mean",
            "difference",
            "95% CI",
            "wins / ties / losses",
        ]
        .map(String::from)
        .to_vec();
        let rows = c.splits.iter().map(|(split, s)| {
            let interval = s.ci95.map_or_else(
                || "—".to_string(),
                |[lo, hi]| format!("{:+} to {:+}", Fixed4(lo), Fixed4(hi)),
            );
            let gated = if c.split == *split { " (score)" } else { "" };
            vec![
                format!("{}{gated}", Split::name(*split)),
                s.pairs.to_string(),
                Fixed4(s.base_mean).to_string(),
                Fixed4(s.new_mean).to_string(),
                format!("{:+}", Fixed4(s.difference)),
                interval,
                format!("{} / {} / {}", s.wins, s.ties, s.losses),
            ]
        });
        out.push_str(&markdown::rows_table(
            &std::iter::once(header).chain(rows).collect::<Vec<_>>(),
        ));
        let regressions: Vec<&Regression> =
            c.splits.values().flat_map(|s| &s.regressions).collect();
        if regressions.is_empty() {
            out.push_str("\nNo example scored lower.\n");
            continue;
        }
        out.push_str("\nLargest regressions:\n\n");
        let header = ["example", "base", "new", "difference"].map(String::from);
        let rows = regressions.iter().map(|r| {
            vec![
                r.example_label(),
                Fixed4(r.base).to_string(),
                format!("{}{}", Fixed4(r.new), r.failures_said()),
                format!("{:+}", Fixed4(r.new - r.base)),
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
    out.push_str(&format!("\n{}\n", markdown::literal(&comparison.verdict)));
    out
}

impl Regression {
    /// Where the example is: `train q7 (line 2)` by its `id`, else `train #1 (line 2)`, or the
    /// split alone for a single call.
    fn example_label(&self) -> String {
        let split = Split::name(self.split);
        let example = match (&self.example_id, self.example_index) {
            (Some(id), _) => format!("{split} {}", fold_lines(id)),
            (None, Some(index)) => format!("{split} #{index}"),
            (None, None) => return split.to_string(),
        };
        match self.example_line {
            Some(line) => format!("{example} (line {line})"),
            None => example,
        }
    }

    /// ` (1 call failed in new)` after its scores, when a call of it failed; else nothing.
    fn failures_said(&self) -> String {
        (self.failed.as_ref().and_then(Failed::said))
            .map(|said| format!(" ({said})"))
            .unwrap_or_default()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn comparison(candidates: Vec<CandidateComparison>) -> Comparison {
        let mut comparison = Comparison {
            score_split: Split::Single,
            candidates,
            not_compared: Vec::new(),
            unpaired: Unpaired { base: 1, new: 0 },
            fail_on_regression: None,
            regressed: Vec::new(),
            incomplete: Vec::new(),
            completed_by: "",
            closing: Verdict::default(),
            verdict: String::new(),
        };
        comparison.conclude();
        comparison
    }

    #[test]
    fn markdown_of_a_single_call_has_no_interval_and_names_the_split() {
        let single = SplitComparison {
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
                example_id: None,
                base: 1.0,
                new: 0.5,
                failed: None,
            }],
        };
        let candidate = CandidateComparison {
            id: "a|b".to_string(),
            split: Split::Single,
            score: Some(single.clone()),
            splits: BTreeMap::from([(Split::Single, single)]),
        };
        assert_eq!(
            render_markdown(&comparison(vec![candidate]), "b`1`.jsonl", "-"),
            "### evalctl compare: ✅ passed (exit 0)\n\nb\\`1\\`.jsonl → - · no \
             --fail-on-regression gate\n\n#### a\\|b\n\n\
             | split | pairs | base mean | new mean | difference | 95% CI | wins / ties / losses |\n\
             |---|---|---|---|---|---|---|\n\
             | single (score) | 1 | 1.0000 | 0.5000 | -0.5000 | — | 0 / 0 / 1 |\n\n\
             Largest regressions:\n\n\
             | example | base | new | difference |\n|---|---|---|---|\n\
             | single | 1.0000 | 0.5000 | -0.5000 |\n\n\
             _Unpaired calls: 1 in base, 0 in new._\n\n\
             exit 0: no --fail-on-regression gate: the score rose for 0, fell for 1 and held \
             for 0 of 1 candidates\n"
        );
    }

    #[test]
    fn markdown_without_pairs_says_so() {
        assert_eq!(
            render_markdown(&comparison(Vec::new()), "a.jsonl", "b.jsonl"),
            "### evalctl compare: ✅ passed (exit 0)\n\na.jsonl → b.jsonl · no \
             --fail-on-regression gate\n\n\
             _No call of the new run has a partner in the base run._\n\n\
             _Unpaired calls: 1 in base, 0 in new._\n\n\
             exit 0: no --fail-on-regression gate: the score rose for 0, fell for 0 and held \
             for 0 of 0 candidates\n"
        );
    }
}
