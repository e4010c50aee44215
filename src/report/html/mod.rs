//! The self-contained HTML report (`evalctl report`, `run --report`): one file with its CSS,
//! JavaScript and data inline, that opens from disk and makes no network request.
//!
//! The page itself lives in `template.html`, `report.css` and `report.js` beside this file,
//! embedded at build time. This module only builds the data (one JSON document, embedded in a
//! `<script type="application/json">` with every `<` escaped, so no text in it can close the
//! element) and fills the template. The page renders every string with `textContent`, never
//! uses a name from the data as a property of a plain object (`__proto__` is just a name), and
//! its Content-Security-Policy allows only the embedded script and style (by hash) and no fetch.
//! The answers of `run --generate` are plain HTML beside the data (see `generation`).
//!
//! [`data`] gathers the sources and rows, [`load`] reads them from results files, [`page`] renders
//! the page (its text made safe by [`escape`]), [`generation`] the answers of `run --generate`
//! (the [`matrix`] of each run among them), and [`write`] writes it.

mod data;
mod escape;
mod generation;
mod load;
mod matrix;
mod page;
mod write;

pub use data::Report;
pub use load::load_results;
pub use write::{check_writable, write_report, write_run_report};
