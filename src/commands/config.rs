//! `evalctl config show` (print the resolved settings of a command and where each came from) and
//! `evalctl init` (write a starter `evalctl.toml`).

use std::os::unix::fs::OpenOptionsExt;

use crate::config::file::{FILE_NAME, STARTER};
use crate::config::show::{self, Shown};
use crate::error::bad_flag;
use crate::exit::Exit;
use crate::report::{print, print_stdout, Document, Format, Reporter, Styled};

/// `evalctl config show`: print the settings `shown`.
pub fn show(shown: &Shown, reporter: Reporter) -> anyhow::Result<Exit> {
    print(shown, reporter)?;
    Ok(Exit::Success)
}

/// The resolved settings, each with where it came from.
impl Document for Shown {
    fn text(&self) -> Styled {
        Styled::from(show::text(self))
    }
}

/// `evalctl init`: write a commented starter `evalctl.toml` in the working directory; an existing
/// one is never overwritten. Only its owner may write it, as discovery requires.
pub fn init(reporter: Reporter) -> anyhow::Result<Exit> {
    let written = std::fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .mode(0o644)
        .open(FILE_NAME)
        .and_then(|mut created| std::io::Write::write_all(&mut created, STARTER.as_bytes()));
    match written {
        Ok(()) => {
            reporter.note(format!(
                "wrote {FILE_NAME}: uncomment an evaluator, then `evalctl config show`"
            ));
            if reporter.format == Format::Json {
                print_stdout(&format!(
                    "{}\n",
                    serde_json::json!({"ok": true, "written": FILE_NAME})
                ))?;
            }
            Ok(Exit::Success)
        }
        Err(err) if err.kind() == std::io::ErrorKind::AlreadyExists => Err(bad_flag(
            FILE_NAME,
            "already exists; evalctl init never overwrites it (edit it, or remove it first)",
        )),
        Err(err) => Err(bad_flag(
            FILE_NAME,
            format!(
                "cannot write: {}",
                crate::text::strip_os_error(&err.to_string())
            ),
        )),
    }
}
