//! `evalctl summarize FILE.jsonl` and `evalctl merge A.jsonl B.jsonl ...`: the summary of one or
//! more results files (a run's `--output`, or the shards of one run), built by the same [`Tally`]
//! as `run`, so the merge of a run's shards prints the unsharded run's summary (but for the
//! quotes of numbered candidates, whose texts results files do not hold). The lines that count,
//! and the run they belong to, are read by [`read_all`].

use std::path::{Path, PathBuf};

use crate::exit::Exit;
use crate::report::merge::{read_all, ReadRun};
use crate::report::{append_step_summary, print, print_gate_verdict, print_written};
use crate::report::{check_distinct, Gates, Junit, Reporter};
use crate::report::{Selection, Tally};

/// What `summarize` and `merge` need.
#[derive(Debug, Clone)]
pub struct MergeConfig {
    /// The results files, in order (`-` = stdin).
    pub files: Vec<String>,
    /// The gates the merged summary is judged by.
    pub gates: Gates,
    /// Seeds the bootstrap intervals.
    pub seed: u64,
    /// `--junit FILE.xml`.
    pub junit: Option<PathBuf>,
    /// `--pass-score X`: a call scored below it is a failed JUnit test case, and fails the
    /// summary.
    pub pass_score: Option<f64>,
    /// `--run ID` and `--allow-partial`.
    pub selection: Selection,
}

/// Print the summary of the union of `config.files` and return the exit code its gates give.
pub fn merge(config: &MergeConfig, reporter: Reporter) -> anyhow::Result<Exit> {
    if let Some(path) = &config.junit {
        Junit::check_writable(path)?;
        let read: Vec<_> = config
            .files
            .iter()
            .map(|file| ("a results file", Path::new(file)))
            .collect();
        check_distinct(&[("--junit", path)], &read)?;
    }
    let ReadRun {
        accounted,
        records,
        superseded,
    } = read_all(&config.files, &config.selection)?;
    for note in &accounted.notes {
        reporter.note(format!("note: {note}"));
    }
    let run = accounted.run;
    let (tally, candidate_ids) = Tally::of_run(
        &run,
        records.values(),
        &superseded,
        config.seed,
        config.pass_score,
    );
    let mut junit = config.junit.as_ref().map(|_| {
        Junit::new(candidate_ids, config.pass_score).gated_by_verdicts(run.gated_by_verdicts())
    });
    if let Some(junit) = junit.as_mut() {
        records.values().for_each(|record| junit.add(record));
    }
    let (mut summary, diagnostics) = tally.finish_read(run, accounted.partial);
    let junit_written = crate::report::write_junit_if_asked(
        junit.as_ref(),
        config.junit.as_deref(),
        &summary,
        config.gates.fail_under,
        reporter,
    );
    let exit = config.gates.judge(&mut summary, junit_written.is_err());
    let kept_in = match config.files.as_slice() {
        [one] if one == "-" => "the results read from stdin".to_string(),
        [one] => one.clone(),
        files => format!("the {} results files", files.len()),
    };
    crate::report::print_diagnostics(&diagnostics, summary.calls.total, Some(&kept_in), reporter);
    print(&summary, reporter)?;
    append_step_summary(&summary, reporter);
    print_written(&[junit_written.ok().flatten()], reporter);
    print_gate_verdict(&summary, reporter);
    Ok(exit)
}
