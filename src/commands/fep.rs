//! `evalctl fep evaluate`: evaluate the request or the streamed test cases with the FEP engine,
//! write the EvaluationRunResult (or its text summary) on stdout, and pick the exit code.

use std::io::BufWriter;

use crate::checks::Status;
use crate::exit::Exit;
use crate::fep::{evaluate_into, Checking, FepConfig, Layout, StreamEnd};
use crate::report::{Format, Reporter};

/// Run `evalctl fep evaluate`: the EvaluationRunResult goes to stdout, laid out as `layout`. Exit 0 when the run's
/// status is `completed` or `skip`, 1 when it is `error` (a check errored), 2 on bad input; the
/// same when stdout's reader has gone before the end.
pub fn evaluate(
    config: &FepConfig,
    checking: &Checking,
    layout: Layout,
    reporter: Reporter,
) -> anyhow::Result<Exit> {
    let endpoints = checking.trust.endpoints.iter();
    let endpoints = endpoints.inspect(|endpoint| endpoint.hold_key());
    for warning in endpoints.filter_map(crate::checks::AllowedEndpoint::unset_key) {
        reporter.warning(warning);
    }
    // NDJSON (`--stream`) is always written as it comes; a text report tallies the document as
    // it is written (a run cut short by a signal is summarised as far as it went).
    if reporter.format == Format::Text && layout == Layout::Document {
        let mut summary = crate::report::fep_text::FepSummary::default();
        let outcome = evaluate_into(config, checking, layout, &mut summary);
        if outcome.is_ok() {
            crate::report::print_stdout(&summary.render(reporter.color_stdout))?;
        }
        return exit(outcome, reporter);
    }
    let out = BufWriter::with_capacity(
        1 << 16,
        crate::report::JsonVisible::new(crate::report::stdout_until_closed()),
    );
    exit(evaluate_into(config, checking, layout, out), reporter)
}

/// The exit of a run that ended with `outcome`.
fn exit(outcome: anyhow::Result<StreamEnd>, reporter: Reporter) -> anyhow::Result<Exit> {
    // Every write of the result goes to stdout (a spool reports its own).
    let outcome = outcome.map_err(|error| match error.downcast::<std::io::Error>() {
        Ok(err) => crate::report::stdout_error(&err),
        Err(other) => other,
    });
    crate::report::print_rate_limits(reporter);
    Ok(match outcome? {
        StreamEnd::Finished(Status::Error) => Exit::EvaluationFailed,
        StreamEnd::Finished(Status::Completed | Status::Skip) => Exit::Success,
        StreamEnd::Interrupted { written } => {
            reporter.note(format!(
                "interrupted: the results so far ({written} test case{}) were written",
                if written == 1 { "" } else { "s" }
            ));
            Exit::Interrupted
        }
    })
}
