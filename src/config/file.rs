//! The project file `evalctl.toml`: where it is (`--config FILE`, else the working directory or
//! its nearest parent that has one, up to the root; `--no-config` for none) and its strict
//! decoding into flag values, each with its line. Every problem is `FILE:LINE: key: reason`.
//!
//! A file found by discovery names commands evalctl runs, so it must be the user's, as git
//! requires of a repository (`safe.directory`): one owned by another user, or that group or
//! others may write (a shared `/tmp`, a parent directory someone else controls), is not used,
//! and the command says so ([`Untrusted`]). `--config FILE` is the user's say-so. Whoever owns
//! it, a found file may not give up the code sandbox ([`FROM_THE_COMMAND_LINE`]), and one found
//! in a parent directory may not choose what runs or is called ([`NOT_FROM_A_PARENT`]).

use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};

use toml_edit::Item;

use super::bindings::{self, Binding, Kind, ALTERNATIVES, EVALUATOR_COMPANIONS};
use super::expand::expand;
use crate::error::{invalid, Problem};
use crate::input::strict;
use crate::text::io_reason;

/// The file name looked for.
pub const FILE_NAME: &str = "evalctl.toml";

/// Which config file to use.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Choice {
    /// `evalctl.toml` in the working directory or its nearest parent that has one.
    Discover,
    /// `--config FILE`.
    File(PathBuf),
    /// `--no-config`.
    Ignore,
}

/// A decoded config file.
#[derive(Debug, Clone)]
pub struct ConfigFile {
    /// The path as shown in messages: as given, or relative to the working directory when found
    /// by discovery (`evalctl.toml`, `../evalctl.toml`).
    pub display: String,
    /// Every key the file sets, in file order.
    pub values: Vec<FileValue>,
    /// What the file says and is not done, one warning each (see [`FROM_THE_COMMAND_LINE`]).
    pub ignored: Vec<String>,
    /// For a file found in a parent directory, which the user may not know is in effect: the
    /// note that names what it sets.
    pub from_a_parent: Option<String>,
    /// The keys of a file found in a parent directory that it may not set, left out unread.
    pub left_out: Vec<&'static str>,
}

impl ConfigFile {
    /// Whether it sets an evaluator that was left out because it was found in a parent
    /// directory.
    pub fn left_out_an_evaluator(&self) -> bool {
        (self.left_out.iter()).any(|key| key.starts_with("evaluator."))
    }
}

/// Keys a file found by discovery may not set: they give up the code sandbox, which takes the
/// user's say-so on the command line (the flag, its variable, or `--config FILE`). A repository
/// someone else wrote is the user's own files once cloned, so ownership does not tell.
const FROM_THE_COMMAND_LINE: &[&str] = &["tasks.unsafe_code_exec"];

/// Keys (or, ending in `.`, sections; else key prefixes) a file found in a parent directory
/// may not set: what runs a command or calls an evaluator or a model with the user's keys, which
/// files are read (a dataset's lines are sent to the evaluator), and where results are read from
/// or written (a cache or journal it ships would answer the user's
/// calls). The file in the working directory is the project the user is in; one above it the
/// user may not know of (a repository cloned into a folder of theirs, a checkout above the one
/// they work in).
const NOT_FROM_A_PARENT: &[&str] = &[
    "evaluator.",
    "run.dataset",
    "run.valset",
    "run.cache_inputs",
    "run.generate",
    "run.task_model",
    "run.task_base_url",
    "run.task_api_key_env",
    "run.output",
    "run.resume",
    "run.cache_dir",
    "tasks.model",
    "tasks.base_url",
    "tasks.api_key_env",
    "tasks.save_outputs",
    "tasks.output",
    "tasks.resume",
];

/// One key the file sets.
#[derive(Debug, Clone)]
pub struct FileValue {
    /// Its key.
    pub binding: &'static Binding,
    /// Its 1-based line.
    pub line: usize,
    /// The flag values it stands for, as the command line would give them (paths already
    /// relative to the file's directory; `${VAR}` in headers expanded with the flag's values).
    pub values: Vec<String>,
    /// The directory a command runs in, for a [`Kind::Command`] key (the file's own directory
    /// unless the file names another).
    pub command_dir: Option<String>,
}

impl FileValue {
    /// The problem of each `${VAR}` in a header that is not set, at the file's line. The
    /// values stay as written: `--header` expands them, whichever place gave them.
    pub fn check_references(&self, file: &str) -> Vec<Problem> {
        if self.binding.kind != Kind::Headers {
            return Vec::new();
        }
        (self.values.iter())
            .filter_map(|value| expand(value, |name| std::env::var(name).ok()).err())
            .map(|reason| Problem::at_line(file, self.line, reason).at(self.binding.key))
            .collect()
    }
}

/// A file discovery found and did not use: another user's, or writable by others.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Untrusted {
    /// The path, relative to the working directory.
    pub display: String,
    /// Why it is not used.
    pub reason: String,
}

impl std::fmt::Display for Untrusted {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "{display} is not used: {reason}, so someone else could choose the commands evalctl \
             runs; if you trust it, pass --config {display}",
            display = self.display,
            reason = self.reason
        )
    }
}

/// The config file `choice` names, decoded; `None` when there is none to use. A file discovery
/// found but does not trust is not read: it is the [`Untrusted`], for the command to report.
pub fn load(choice: &Choice) -> anyhow::Result<(Option<ConfigFile>, Option<Untrusted>)> {
    let display = match choice {
        Choice::Ignore => return Ok((None, None)),
        Choice::File(path) => {
            // Worded as every file that cannot be read is (`PATH: cannot read: ...`).
            let not_a_file = match std::fs::metadata(path) {
                Ok(metadata) if metadata.is_dir() => Some("is a directory, not a file".into()),
                Ok(metadata) if !metadata.is_file() => Some("is not a regular file".into()),
                Ok(_) => None,
                Err(err) => Some(format!("cannot read: {}", io_reason(&err))),
            };
            if let Some(reason) = not_a_file {
                return Err(invalid(vec![Problem::new(
                    path.display().to_string(),
                    reason,
                )]));
            }
            path.display().to_string()
        }
        Choice::Discover => match discover() {
            Some(path) => match distrust(&path) {
                Some(reason) => {
                    return Ok((
                        None,
                        Some(Untrusted {
                            display: path,
                            reason,
                        }),
                    ))
                }
                None => path,
            },
            None => return Ok((None, None)),
        },
    };
    let text = std::fs::read(&display)
        .map_err(|err| {
            crate::error::bad_input(Problem::new(
                display.as_str(),
                format!(
                    "cannot read: {}",
                    crate::text::strip_os_error(&err.to_string())
                ),
            ))
        })
        .and_then(|bytes| {
            String::from_utf8(bytes).map_err(|_| {
                crate::error::bad_input(Problem::new(display.as_str(), "invalid UTF-8"))
            })
        })?;
    let dir = Path::new(&display)
        .parent()
        .map(Path::to_path_buf)
        .unwrap_or_default();
    let from_a_parent = *choice == Choice::Discover && display != FILE_NAME;
    let Decoded {
        mut values,
        left_out,
    } = decode(&display, &dir, &text, from_a_parent).map_err(invalid)?;
    let mut ignored = Vec::new();
    let left_out_keys = left_out.iter().map(|(key, _)| *key).collect();
    if !left_out.is_empty() {
        let left_out: Vec<String> = left_out
            .iter()
            .map(|(key, line)| format!("{key} (line {line})"))
            .collect();
        ignored.push(format!(
            "{display}: not used from a parent directory: {}: a file found above the \
             working directory may not choose what runs, what is called with your keys, which \
             files are read, or where results are read and written; pass --config {display} if \
             you trust it",
            left_out.join(", ")
        ));
    }
    if *choice == Choice::Discover {
        values.retain(|value| {
            let refused = FROM_THE_COMMAND_LINE.contains(&value.binding.key)
                && value.values.iter().any(|value| value == "true");
            if refused {
                ignored.push(format!(
                    "{display}:{}: {} = true is not used: a file found in this directory or a \
                     parent may not give up the code sandbox (a repository you cloned could); \
                     pass --unsafe-code-exec, or --config {display} if you trust the file",
                    value.line, value.binding.key
                ));
            }
            !refused
        });
    }
    let from_a_parent = (from_a_parent && !values.is_empty()).then(|| {
        let set: Vec<String> = values
            .iter()
            .map(|value| format!("{} (line {})", value.binding.key, value.line))
            .collect();
        format!(
            "{display}, found in a parent directory, sets {}",
            set.join(", ")
        )
    });
    Ok((
        Some(ConfigFile {
            display,
            values,
            ignored,
            from_a_parent,
            left_out: left_out_keys,
        }),
        None,
    ))
}

/// Why a discovered file at `path` is not to be used: it is not owned by the effective user,
/// or group or others may write it. `None`: it is the user's alone to change.
fn distrust(path: &str) -> Option<String> {
    let metadata = match std::fs::metadata(path) {
        Ok(metadata) => metadata,
        Err(err) => {
            return Some(format!(
                "its owner cannot be read ({})",
                crate::text::strip_os_error(&err.to_string())
            ))
        }
    };
    // SAFETY: geteuid has no preconditions and cannot fail.
    let user = unsafe { libc::geteuid() };
    if metadata.uid() != user {
        return Some(format!(
            "it is owned by another user (uid {}; you are uid {user})",
            metadata.uid()
        ));
    }
    let mode = metadata.mode() & 0o7777;
    (mode & 0o022 != 0).then(|| format!("group or others may write it (mode {mode:04o})"))
}

/// `evalctl.toml` in the working directory or its nearest parent, as a path relative to the
/// working directory.
fn discover() -> Option<String> {
    let cwd = std::env::current_dir().ok()?;
    cwd.ancestors()
        .enumerate()
        .find(|(_, dir)| dir.join(FILE_NAME).is_file())
        .map(|(up, _)| format!("{}{FILE_NAME}", "../".repeat(up)))
}

impl FileValue {
    /// The value `item` (on `line`) sets for `binding`; its command directory is set later.
    fn read(
        binding: &'static Binding,
        line: usize,
        item: &Item,
        dir: &Path,
    ) -> Result<FileValue, String> {
        Ok(FileValue {
            binding,
            line,
            values: flag_values(binding.kind, item, dir)?,
            command_dir: None,
        })
    }
}

/// The values a decoded file sets.
pub struct Decoded {
    /// The values used.
    pub values: Vec<FileValue>,
    /// The keys (with their lines) of a file found in a parent directory that it may not set
    /// ([`NOT_FROM_A_PARENT`]): left out unread, so that they cannot stop the command.
    pub left_out: Vec<(&'static str, usize)>,
}

/// Whether a file found in a parent directory may not set `key`.
fn not_from_a_parent(key: &str) -> bool {
    NOT_FROM_A_PARENT
        .iter()
        .any(|refused| key.starts_with(refused))
}

/// Decode the file's text (found in a parent directory: `from_a_parent`): every problem, in
/// file order, or every value it sets.
pub fn decode(
    display: &str,
    dir: &Path,
    text: &str,
    from_a_parent: bool,
) -> Result<Decoded, Vec<Problem>> {
    let line_of = |span: Option<std::ops::Range<usize>>| {
        span.map_or(1, |span| {
            text[..span.start.min(text.len())].matches('\n').count() + 1
        })
    };
    let document = toml_edit::Document::parse(text).map_err(|err| {
        vec![Problem::at_line(
            display,
            line_of(err.span()),
            format!("invalid TOML: {}", err.message().trim_end()),
        )]
    })?;
    let mut problems = Vec::new();
    let mut values = Vec::new();
    let mut left_out = Vec::new();
    let root = document.as_table();
    for (section, item) in root.iter() {
        let line = line_of(root.key(section).and_then(toml_edit::Key::span));
        let at = |reason: String, key: &str| Problem::at_line(display, line, reason).at(key);
        if !bindings::SECTIONS.contains(&section) {
            problems.push(at(
                strict::unknown_key_near(section, bindings::SECTIONS),
                section,
            ));
            continue;
        }
        if let Some(binding) = bindings::find(section) {
            // A section that is one key's whole value (`[prices]`).
            match FileValue::read(binding, line, item, dir) {
                Ok(value) => values.push(value),
                Err(reason) => problems.push(at(reason, section)),
            }
            continue;
        }
        let Some(table) = item.as_table_like() else {
            problems.push(at(strict::expected("a table", toml_type(item)), section));
            continue;
        };
        let known: Vec<&str> = bindings::all_keys()
            .into_iter()
            .filter_map(|key| key.strip_prefix(section)?.strip_prefix('.'))
            .collect();
        for (name, item) in table.iter() {
            let line = line_of(
                table
                    .get_key_value(name)
                    .and_then(|(key, _)| key.span())
                    .or_else(|| item.span()),
            );
            let key = format!("{section}.{name}");
            let problem = |reason: String| Problem::at_line(display, line, reason).at(&key);
            let Some(binding) = bindings::find(&key) else {
                problems.push(problem(strict::unknown_key_near(name, &known)));
                continue;
            };
            if from_a_parent && not_from_a_parent(binding.key) {
                left_out.push((binding.key, line));
                continue;
            }
            match FileValue::read(binding, line, item, dir) {
                Ok(value) => values.push(value),
                Err(reason) => problems.push(problem(reason)),
            }
        }
    }
    problems.extend(check_alternatives(display, &values));
    set_command_dirs(&mut values, dir);
    if problems.is_empty() {
        Ok(Decoded { values, left_out })
    } else {
        problems.sort_by_key(|problem| problem.line);
        Err(problems)
    }
}

/// The file sets at most one key of each group of alternatives (one evaluator, one model), and
/// each evaluator companion key belongs to the evaluator it sets.
fn check_alternatives(display: &str, values: &[FileValue]) -> Vec<Problem> {
    let mut problems = Vec::new();
    for group in ALTERNATIVES {
        let chosen: Vec<&FileValue> = values
            .iter()
            .filter(|value| group.choosers.contains(&value.binding.key))
            .collect();
        if let [first, second, ..] = chosen.as_slice() {
            problems.push(
                Problem::at_line(
                    display,
                    second.line,
                    format!(
                        "two {}: `{}` (line {}) and `{}`; keep one",
                        group.noun,
                        first.binding.name(),
                        first.line,
                        second.binding.name()
                    ),
                )
                .at(second.binding.key),
            );
        }
    }
    let in_section = |value: &&FileValue| value.binding.section() == bindings::EVALUATOR_SECTION;
    let chosen = values
        .iter()
        .find(|value| ALTERNATIVES[0].choosers.contains(&value.binding.key))
        .map(|value| value.binding.name());
    for value in values.iter().filter(in_section) {
        let Some((_, owners)) = EVALUATOR_COMPANIONS
            .iter()
            .find(|(companion, _)| *companion == value.binding.name())
        else {
            continue;
        };
        if chosen.is_some_and(|chosen| owners.contains(&chosen)) {
            continue;
        }
        let owners = owners
            .iter()
            .map(|owner| format!("`{owner}`"))
            .collect::<Vec<_>>()
            .join(" or ");
        let reason = match chosen {
            Some(chosen) => format!("only applies to {owners}, not to `{chosen}`"),
            None => format!("only applies to {owners}, which this section does not set"),
        };
        problems.push(Problem::at_line(display, value.line, reason).at(value.binding.key));
    }
    problems
}

/// A command key runs in the file's directory unless its section names a directory.
fn set_command_dirs(values: &mut [FileValue], dir: &Path) {
    let named: Vec<&'static str> = values.iter().map(|value| value.binding.arg).collect();
    for value in values.iter_mut() {
        if let Kind::Command(cwd_arg) = value.binding.kind {
            if !named.contains(&cwd_arg) && !dir.as_os_str().is_empty() {
                value.command_dir = Some(dir.display().to_string());
            }
        }
    }
}

/// The flag values of one TOML value of `kind`, or why it does not fit.
fn flag_values(kind: Kind, item: &Item, dir: &Path) -> Result<Vec<String>, String> {
    let value = item.as_value();
    let one = |text: String| Ok(vec![text]);
    match kind {
        Kind::Text | Kind::Path => {
            let text = value
                .and_then(toml_edit::Value::as_str)
                .ok_or_else(|| strict::expected("a string", toml_type(item)))?;
            if kind == Kind::Text {
                return one(text.to_string());
            }
            if text.is_empty() {
                return Err("must not be empty".into());
            }
            one(relative_to(dir, text))
        }
        Kind::Integer => value
            .and_then(toml_edit::Value::as_integer)
            .map(|number| one(number.to_string()))
            .unwrap_or_else(|| Err(strict::expected("an integer", toml_type(item)))),
        Kind::Number => match value {
            Some(toml_edit::Value::Integer(number)) => one(number.value().to_string()),
            Some(toml_edit::Value::Float(number)) => one(number.value().to_string()),
            _ => Err(strict::expected("a number", toml_type(item))),
        },
        Kind::Switch => value
            .and_then(toml_edit::Value::as_bool)
            .map(|switch| one(switch.to_string()))
            .unwrap_or_else(|| Err(strict::expected("a boolean", toml_type(item)))),
        Kind::Command(_) => {
            let words = match string_or_strings(item)? {
                Strings::One(text) => return one(text),
                Strings::Many(words) => words,
            };
            if words.is_empty() {
                return Err("must name a program".into());
            }
            one(shell_words::join(words))
        }
        Kind::List | Kind::Paths => {
            let texts = match string_or_strings(item)? {
                Strings::One(text) => vec![text],
                Strings::Many(texts) => texts,
            };
            if kind == Kind::List {
                return Ok(texts);
            }
            if let Some(index) = texts.iter().position(String::is_empty) {
                return Err(format!("[{index}]: must not be empty"));
            }
            Ok(texts.iter().map(|text| relative_to(dir, text)).collect())
        }
        Kind::Prices => table_entries(item, |model, value| {
            let amounts: Option<Vec<f64>> =
                value
                    .as_array()
                    .filter(|array| array.len() == 2)
                    .map(|array| {
                        array
                            .iter()
                            .filter_map(|amount| {
                                amount
                                    .as_float()
                                    .or_else(|| amount.as_integer().map(|whole| whole as f64))
                            })
                            .filter(|amount| amount.is_finite() && *amount >= 0.0)
                            .collect()
                    });
            match amounts.as_deref() {
                Some([input, output]) => Ok(format!("{model}={input},{output}")),
                _ => Err(format!(
                    "{}: expected [IN, OUT], two numbers >= 0 (USD per million input and \
                     output tokens)",
                    strict::key_name(model)
                )),
            }
        }),
        Kind::Headers => table_entries(item, |name, value| match value.as_str() {
            Some(text) => Ok(format!("{name}: {text}")),
            None => Err(format!(
                "{}: {}",
                strict::key_name(name),
                strict::expected("a string", toml_type(value))
            )),
        }),
    }
}

/// A table key's entries, each through `entry`, or the first entry's problem.
fn table_entries(
    item: &Item,
    entry: impl Fn(&str, &Item) -> Result<String, String>,
) -> Result<Vec<String>, String> {
    let table = item
        .as_table_like()
        .ok_or_else(|| strict::expected("a table", toml_type(item)))?;
    table.iter().map(|(key, value)| entry(key, value)).collect()
}

/// What a key that takes a string or an array of strings holds.
enum Strings {
    /// A lone string (a command key takes it as one shell line).
    One(String),
    /// An array's strings.
    Many(Vec<String>),
}

/// A string-or-array value, or the problem with anything else.
fn string_or_strings(item: &Item) -> Result<Strings, String> {
    match item.as_value() {
        Some(toml_edit::Value::String(text)) => Ok(Strings::One(text.value().clone())),
        Some(toml_edit::Value::Array(array)) => strings(array).map(Strings::Many),
        _ => Err(strict::expected(
            "a string or an array of strings",
            toml_type(item),
        )),
    }
}

/// The strings of an array, or the first element's problem.
fn strings(array: &toml_edit::Array) -> Result<Vec<String>, String> {
    array
        .iter()
        .enumerate()
        .map(|(index, value)| {
            value.as_str().map(str::to_string).ok_or_else(|| {
                format!(
                    "[{index}]: {}",
                    strict::expected("a string", value.type_name())
                )
            })
        })
        .collect()
}

/// `path` as seen from the working directory: relative paths are relative to the file's `dir`.
fn relative_to(dir: &Path, path: &str) -> String {
    if Path::new(path).is_absolute() || dir.as_os_str().is_empty() {
        path.to_string()
    } else {
        dir.join(path).display().to_string()
    }
}

/// A TOML item's type, as messages name it.
fn toml_type(item: &Item) -> &'static str {
    match item {
        Item::None => "nothing",
        Item::Value(toml_edit::Value::InlineTable(_)) | Item::Table(_) => "table",
        Item::Value(value) => value.type_name(),
        Item::ArrayOfTables(_) => "array of tables",
    }
}

/// The starter file `evalctl init` writes.
pub const STARTER: &str = include_str!("starter.toml");

#[cfg(test)]
mod tests {
    use super::*;

    fn problems(text: &str) -> Vec<String> {
        decode("e.toml", Path::new(""), text, false)
            .err()
            .expect("problems")
            .iter()
            .map(Problem::to_string)
            .collect()
    }

    #[test]
    fn values_become_flag_values_with_paths_from_the_file_dir() {
        let text = "[evaluator]\ncommand = [\"sh\", \"eval me.sh\"]\n\n[run]\ndataset = \"d.jsonl\"\nconcurrency = 4\ntimeout = 2.5\nskip_preflight = true\n";
        let values = decode("x/e.toml", Path::new("x"), text, false)
            .unwrap()
            .values;
        let shown: Vec<(&str, usize, Vec<String>)> = values
            .iter()
            .map(|value| (value.binding.key, value.line, value.values.clone()))
            .collect();
        assert_eq!(
            shown,
            [
                ("evaluator.command", 2, vec!["sh 'eval me.sh'".to_string()]),
                ("run.dataset", 5, vec!["x/d.jsonl".into()]),
                ("run.concurrency", 6, vec!["4".into()]),
                ("run.timeout", 7, vec!["2.5".into()]),
                ("run.skip_preflight", 8, vec!["true".into()]),
            ]
        );
        assert_eq!(values[0].command_dir.as_deref(), Some("x"));
    }

    #[test]
    fn every_problem_with_its_line_and_key() {
        assert_eq!(
            problems("[run]\nconcurency = 4\ntimeout = \"soon\"\n[runn]\n"),
            [
                "e.toml:2: run.concurency: unknown key `concurency` (did you mean `concurrency`?)",
                "e.toml:3: run.timeout: expected a number, found string",
                "e.toml:4: runn: unknown key `runn` (did you mean `run`?)",
            ]
        );
        assert_eq!(
            problems("[evaluator]\ncommand = \"sh e.sh\"\nurl = \"http://x\"\nobjective = \"o\"\n"),
            [
                "e.toml:3: evaluator.url: two evaluators: `command` (line 2) and `url`; keep one",
                "e.toml:4: evaluator.objective: only applies to `judge_model`, not to `command`",
            ]
        );
        assert_eq!(
            problems("[run]\nconcurrency = \n"),
            ["e.toml:2: invalid TOML: string values must be quoted, expected literal string"]
        );
    }
}
