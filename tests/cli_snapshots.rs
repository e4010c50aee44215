//! Exact CLI snapshots: stdout, stderr and exit code of `evalctl` pinned by the `trycmd` cases in
//! `tests/cmd/`: `help-*`, the `--help` of every command; `run-*`, `preflight-*`, `tasks-*`,
//! `fep-*`, each command's text and JSON summary on the shipped fixtures and one bad-input report
//! per command and input kind (`*-dir`, `*-missing`, `*-bad-line`, `*-unknown-key`,
//! `*-wrong-type`, `*-bom`); `usage-*`, usage mistakes; `color-*`, `--color always` on reports of
//! several problems. Inputs the fixtures lack live in `tests/cmd/inputs/`. Every case runs from
//! the repository root.
//!
//! Regenerate every snapshot after a wording change (one line), then read the diff:
//!
//! ```text
//! TRYCMD=overwrite cargo test --test cli_snapshots
//! ```
//!
//! Exit codes (`status` in each `.toml`) are rewritten too. Timings and ids are masked with `[..]`
//! (any text within a line); overwrite keeps a masked line as long as the rest of it still
//! matches, so check `git diff tests/cmd` for an unmasked `elapsed`, `evaluation_id`, `*_at` or
//! `execution_time_ms`. One case alone:
//! `cargo test --test cli_snapshots -- cli_snapshots trycmd=help-run`. A new case is a
//! `NAME.toml` (args, `status`, `fs.cwd = "../.."`, `NO_COLOR = "1"`, an explicit `--format`)
//! beside empty `NAME.stdout` and `NAME.stderr`, then the overwrite above.

mod common;

#[test]
fn cli_snapshots() {
    // The cases inherit this process's environment: drop what evalctl reads, as common::evalctl
    // does (this test binary runs no other test, so nothing reads the environment meanwhile).
    for name in common::inherited_variables_evalctl_reads() {
        std::env::remove_var(name);
    }
    trycmd::TestCases::new()
        .default_bin_path(common::bin())
        .timeout(common::TIMEOUT)
        .case("tests/cmd/*.toml");
}
