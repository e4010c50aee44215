//! The call key: a stable SHA-256 of everything that decides a call's result — the candidate
//! text, the split, the example's index and text (and its line, for the checks and spec
//! evaluators, which see it), the evaluator's identity, the score range, the task model and, with
//! `--repeat`, the repeat index. The journal (`--output`) and `--resume`
//! match calls by it, and the cache stores results under it, so a changed evaluator script,
//! rubric or checks file misses both by construction.
//!
//! The evaluator's identity is hashed once per run ([`KeyContext::new`]):
//! - command: argv, working directory, and the content of every argv word that names a file
//!   (the script), resolved against the working directory;
//! - HTTP: the URL and the header *names* (values may be secrets, and never reach the key);
//! - LLM judge: model, objective, the rubric file's content, temperature, token limit and base
//!   URL, plus evalctl's version (the prompt template is evalctl's code);
//! - checks and spec: the file's content (and `--live-judges`), plus evalctl's version (the
//!   checks are evalctl's code); for checks also the custom checks they may run, each command as
//!   a command evaluator's.
//!
//! Beyond what evalctl can see, the user declares what else decides a score
//! ([`DeclaredInputs`]): files and directories the evaluator reads without naming them on its
//! command line (`--cache-input`; a directory's files are hashed recursively, in byte order of
//! their paths), and a salt (`--cache-salt`). Not in the key: the environment, the network, the
//! evaluator's own state, and HTTP or judge servers' behaviour.
//!
//! A run's fingerprint ([`RunDigests`]) is built the same way over the evaluator's identity, the
//! examples the plan uses and the candidates (ids and texts): every result line carries it, so
//! lines of two runs are never counted as one.
//!
//! Every field is written with a tag and its length, so no two different inputs hash alike by
//! running into each other ([`Fields`]). `tasks run` keys its completions with the same fields (see
//! `generate::model::completion_keys`).

use crate::checks::AnsweredBy;
use std::ops::{Deref, DerefMut};
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};
use std::sync::{Arc, OnceLock};
use std::time::SystemTime;

use sha2::{Digest, Sha256};

use crate::digest::{short_hex, Fields};
use crate::error::bad_input;
use crate::error::Problem;
use crate::evaluator::command::CommandSpec;
use crate::evaluator::EvaluatorSpec;
use crate::input::{ExampleSelection, Record};
use crate::llm::endpoint::base_url_from_env;
use crate::protocol::ScoreRange;
use crate::record::Split;
use crate::store::CallKey;
use crate::text::{counted, io_reason};

/// What the user declares decides a score beyond what evalctl sees (`--cache-input`,
/// `--cache-salt`).
#[derive(Debug, Clone, Default)]
pub struct DeclaredInputs {
    /// Files and directories whose content joins every key.
    pub paths: Vec<std::path::PathBuf>,
    /// Text that joins every key.
    pub salt: Option<String>,
}

/// What every key of one run shares: the digest of the evaluator's identity, the score range and
/// the task model, and the files whose content went into it.
#[derive(Debug, Clone)]
pub struct KeyContext {
    configuration: [u8; 32],
    files: KeyedFiles,
    /// The evaluator sees an example's line in its file (the checks' default `test_case.id`
    /// `line-N`, a spec case's key): a key then covers it, as it covers the text.
    sees_lines: bool,
}

/// The files a run's keys hash the content of, named where the run was set up (the evaluator's
/// script, rubric, checks or spec file, a declared file), each as it was when it was read: a file
/// that changes during the run no longer matches the keys, and what the evaluator answers after
/// the change must not be stored under them. The declared directories are listed too, but
/// checked only at the end of the run: there may be thousands of files under them.
#[derive(Debug, Clone, Default)]
pub struct KeyedFiles {
    files: Vec<(PathBuf, FileStamp)>,
    /// The first of them found changed before an answer was to be stored, shared by clones.
    found_changed: Arc<OnceLock<PathBuf>>,
    /// The declared directories, each as it was listed before its files were read.
    directories: Vec<(PathBuf, Listing)>,
}

/// Every entry under a directory, in order, with its stamp (a symbolic link's own); a folder,
/// or an entry that cannot be read, has none.
type Listing = Vec<(PathBuf, Option<FileStamp>)>;

/// The listing of `root`: what [`KeyedFiles`] compares to tell that a file under it was
/// written, added or removed (but for `__pycache__` folders). A directory that cannot be read
/// lists nothing.
fn listing(root: &Path) -> Listing {
    fn walk(dir: &Path, listing: &mut Listing) {
        let Ok(entries) = std::fs::read_dir(dir) else {
            return;
        };
        let mut entries: Vec<_> = entries.flatten().collect();
        entries.sort_by_key(std::fs::DirEntry::file_name);
        for entry in entries {
            // Python writes its compiled modules there as an evaluator imports them; a change
            // of what it compiles shows in the source beside it.
            if entry.file_name() == "__pycache__" {
                continue;
            }
            let metadata = entry.metadata().ok();
            match metadata.as_ref().filter(|metadata| metadata.is_dir()) {
                // A folder by its name and what it holds: its own times change with an entry
                // added, a `__pycache__` too.
                Some(_) => {
                    listing.push((entry.path(), None));
                    walk(&entry.path(), listing);
                }
                None => listing.push((entry.path(), metadata.as_ref().map(FileStamp::from))),
            }
        }
    }
    let mut listing = Vec::new();
    walk(root, &mut listing);
    listing
}

impl KeyedFiles {
    /// The first of the files that is no longer as it was read (written, replaced or removed).
    fn changed(&self) -> Option<&Path> {
        self.files
            .iter()
            .find(|(path, stamp)| FileStamp::of(path).as_ref() != Some(stamp))
            .map(|(path, _)| path.as_path())
    }

    /// Whether the files are still as they were, checked before an answer is stored under the
    /// keys; once one has changed, they never hold again, and it is kept for the warning.
    pub fn still_hold(&self) -> bool {
        if self.found_changed.get().is_some() {
            return false;
        }
        match self.changed() {
            None => true,
            Some(path) => {
                let _ = self.found_changed.set(path.to_path_buf());
                false
            }
        }
    }

    /// The warning a run ends with when one of the files changed during it (found before an
    /// answer was to be stored, or now), naming the file as from the working directory.
    pub fn changed_during_the_run(&self) -> Option<String> {
        let changed =
            (self.found_changed.get().map(PathBuf::as_path)).or_else(|| self.changed())?;
        Some(format!(
            "{} changed during the run: its results may mix what both versions answered (the \
             cache keys hash the file as it was when the run began, and no answer after the \
             change was cached under them); run again to score one version",
            from_the_working_directory(changed).display()
        ))
    }

    /// The first declared directory under which a file was written, added or removed since the
    /// run began, looked at now (once, at the end of the run).
    pub fn changed_directory(&self) -> Option<&Path> {
        (self.directories.iter())
            .find(|(root, listed)| listing(root) != *listed)
            .map(|(root, _)| root.as_path())
    }

    /// The warning a run ends with when a file under the declared directory `root` changed
    /// during it; `removed`, with the cache on: how many answers the run had cached, which may
    /// come from either version and are removed from it.
    pub fn directory_changed_during_the_run(root: &Path, removed: Option<usize>) -> String {
        let cache = match removed {
            Some(removed) => format!(
                "; the {} this run cached under keys that hash the directory as it was when \
                 the run began {} removed from the cache",
                counted(removed, "answer", "answers"),
                if removed == 1 { "was" } else { "were" }
            ),
            None => String::new(),
        };
        format!(
            "a file under {} (--cache-input) was written, added or removed during the run: its \
             results may mix what both versions answered{cache}; run again to score one version",
            from_the_working_directory(root).display()
        )
    }
}

/// `path` as from the working directory, where it is under it.
fn from_the_working_directory(path: &Path) -> &Path {
    let working_directory = std::env::current_dir().unwrap_or_default();
    path.strip_prefix(&working_directory).unwrap_or(path)
}

/// What tells a file's content changed without reading it: its size, its modification and
/// status-change times (a write sets the latter even when the former is put back) and its inode
/// (an editor that saves by renaming makes a new one).
#[derive(Debug, Clone, PartialEq, Eq)]
struct FileStamp {
    len: u64,
    modified: Option<SystemTime>,
    status_changed: (i64, i64),
    inode: (u64, u64),
}

impl FileStamp {
    fn of(path: &Path) -> Option<FileStamp> {
        std::fs::metadata(path).ok().as_ref().map(FileStamp::from)
    }
}

impl From<&std::fs::Metadata> for FileStamp {
    fn from(metadata: &std::fs::Metadata) -> FileStamp {
        FileStamp {
            len: metadata.len(),
            modified: metadata.modified().ok(),
            status_changed: (metadata.ctime(), metadata.ctime_nsec()),
            inode: (metadata.dev(), metadata.ino()),
        }
    }
}

/// The fields of a key context being hashed, and the files whose content they took, each
/// stamped before it was read.
pub(crate) struct KeyFields {
    fields: Fields,
    files: KeyedFiles,
}

impl KeyFields {
    pub(crate) fn new(domain: &str) -> KeyFields {
        KeyFields {
            fields: Fields::new(domain),
            files: KeyedFiles::default(),
        }
    }

    /// SHA-256 of the file's content; the file is watched, with its stamp.
    fn file_digest(&mut self, path: &Path) -> anyhow::Result<[u8; 32]> {
        if let Some(stamp) = FileStamp::of(path) {
            self.files.files.push((path.to_path_buf(), stamp));
        }
        file_digest(path)
    }

    /// The fields, and the files whose content they took.
    pub(crate) fn into_parts(self) -> (Fields, KeyedFiles) {
        (self.fields, self.files)
    }
}

impl Deref for KeyFields {
    type Target = Fields;

    fn deref(&self) -> &Fields {
        &self.fields
    }
}

impl DerefMut for KeyFields {
    fn deref_mut(&mut self) -> &mut Fields {
        &mut self.fields
    }
}

impl KeyContext {
    /// The context of a run of `evaluator` under `score_range` and `task_model`, with what the
    /// user `declared`. Reads the files the evaluator's identity covers (the script, rubric,
    /// checks or spec file) and the declared ones; one that cannot be read is bad input naming
    /// the file.
    pub fn new(
        evaluator: &EvaluatorSpec,
        score_range: ScoreRange,
        task_model: Option<&str>,
        declared: &DeclaredInputs,
    ) -> anyhow::Result<KeyContext> {
        let mut fields = KeyFields::new("evalctl call key v1");
        add_evaluator_identity(&mut fields, evaluator)?;
        add_declared_inputs(&mut fields, declared)?;
        let range = match score_range {
            ScoreRange::Unit => "unit",
            ScoreRange::Any => "any",
        };
        fields
            .add(b'R', range.as_bytes())
            .add_optional(b'M', task_model.map(str::as_bytes));
        let (fields, files) = fields.into_parts();
        Ok(KeyContext {
            configuration: fields.finish(),
            files,
            sees_lines: matches!(evaluator, EvaluatorSpec::Checks(_) | EvaluatorSpec::Spec(_)),
        })
    }

    /// The files this context hashed, as they were then.
    pub fn keyed_files(&self) -> &KeyedFiles {
        &self.files
    }

    /// This context with `identity` (tagged `tag`) joined: no key of it is a key of this one.
    /// `run --generate` joins the task models and sampling for the run, then each model for its
    /// calls.
    pub fn joined(&self, tag: u8, identity: &[u8]) -> KeyContext {
        let mut fields = Fields::new("evalctl joined key context");
        fields.add(b'C', &self.configuration).add(tag, identity);
        KeyContext {
            configuration: fields.finish(),
            files: self.files.clone(),
            sees_lines: self.sees_lines,
        }
    }

    /// The key of one call: `example` is the example's index in its split and the record (its
    /// exact text, and its line where the evaluator sees it), `repeat` the repeat index under
    /// `--repeat`.
    pub fn call_key(
        &self,
        candidate: &str,
        split: Split,
        example: Option<(usize, &Record)>,
        repeat: Option<u32>,
    ) -> CallKey {
        let mut fields = Fields::new("evalctl call");
        fields
            .add(b'C', &self.configuration)
            .add(b'T', candidate.as_bytes())
            .add(b'S', split.name().as_bytes());
        match example {
            Some((index, record)) => {
                fields
                    .add(b'I', &(index as u64).to_le_bytes())
                    .add(b'E', record.text.as_bytes());
                if self.sees_lines {
                    fields.add(b'L', &(record.line as u64).to_le_bytes());
                }
            }
            None => {
                fields.add(b'i', &[]);
            }
        };
        fields.add_optional(b'P', repeat.map(u32::to_le_bytes).as_ref().map(|r| &r[..]));
        CallKey(fields.finish())
    }
}

/// The digests that tell one run from another, each as 16 hex digits (64 bits of SHA-256).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RunDigests {
    /// Over all of the below, the candidates (ids and texts) and `--repeat`.
    pub fingerprint: String,
    /// The evaluator's identity, score range and task model (what every call key shares).
    pub evaluator: String,
    /// The dataset and valset examples the plan uses (`--example` and `--limit` applied), in
    /// order.
    pub inputs: String,
}

impl RunDigests {
    /// The digests of a run of `inputs` (the examples of each split `selection` picks) under
    /// `keys`.
    pub fn of(
        keys: &KeyContext,
        inputs: &crate::input::Inputs,
        selection: &ExampleSelection,
        repeat: Option<u32>,
    ) -> RunDigests {
        let mut examples = Fields::new("evalctl run inputs");
        for (tag, records) in [(b'T', &inputs.dataset), (b'V', &inputs.valset)] {
            let used: Option<Vec<(usize, &Record)>> = records
                .as_deref()
                .map(|records| selection.used(records).collect());
            examples.add_optional(
                tag,
                used.as_ref()
                    .map(|used| (used.len() as u64).to_le_bytes())
                    .as_ref()
                    .map(|n| &n[..]),
            );
            for (index, record) in used.into_iter().flatten() {
                // Picked by id, the same texts at other places are other examples.
                if selection.by_id() {
                    examples.add(b'X', &(index as u64).to_le_bytes());
                }
                examples.add(b'E', record.text.as_bytes());
            }
        }
        let examples = examples.finish();
        let mut run = Fields::new("evalctl run");
        run.add(b'C', &keys.configuration).add(b'I', &examples);
        for candidate in &inputs.candidates {
            run.add(b'N', candidate.id.as_bytes())
                .add(b'T', candidate.text.as_bytes());
        }
        run.add_optional(b'P', repeat.map(u32::to_le_bytes).as_ref().map(|r| &r[..]));
        RunDigests {
            fingerprint: short_hex(&run.finish()),
            evaluator: short_hex(&keys.configuration),
            inputs: short_hex(&examples),
        }
    }
}

/// The digest of a candidate's text, as 16 hex digits (each result line's `candidate_digest`).
pub fn text_digest(text: &str) -> String {
    short_hex(&Sha256::digest(text.as_bytes()))
}

fn add_evaluator_identity(fields: &mut KeyFields, evaluator: &EvaluatorSpec) -> anyhow::Result<()> {
    let version = env!("CARGO_PKG_VERSION").as_bytes();
    match evaluator {
        EvaluatorSpec::Command(spec) => add_command_identity(fields, spec)?,
        EvaluatorSpec::Http(spec) => {
            let mut names: Vec<&str> = spec.headers.keys().map(|name| name.as_str()).collect();
            names.sort_unstable();
            names.dedup();
            fields
                .add(b'K', b"http")
                .add(b'U', spec.url.as_str().as_bytes());
            for name in names {
                fields.add(b'H', name.as_bytes());
            }
        }
        EvaluatorSpec::Judge(spec) => {
            fields
                .add(b'K', b"judge")
                .add(b'V', version)
                .add(b'J', spec.endpoint.model.as_bytes())
                .add(b'O', spec.objective.as_bytes())
                .add(b'X', &spec.temperature.to_le_bytes())
                .add_optional(
                    b'N',
                    spec.max_tokens
                        .map(u32::to_le_bytes)
                        .as_ref()
                        .map(|n| &n[..]),
                )
                .add_optional(
                    b'B',
                    spec.endpoint
                        .chosen_base_url()
                        .as_deref()
                        .map(str::as_bytes),
                );
            let rubric = (spec.rubric.as_deref())
                .map(|rubric| fields.file_digest(rubric))
                .transpose()?;
            fields.add_optional(b'Q', rubric.as_ref().map(|digest| &digest[..]));
        }
        EvaluatorSpec::Checks(spec) => {
            let digest = fields.file_digest(&spec.path)?;
            fields
                .add(b'K', b"checks")
                .add(b'V', version)
                .add(b'F', &digest)
                .add(b'l', SEES_LINES);
            // The file's own declarations run their commands too, once allowed.
            for custom in spec.runnable_custom_checks()? {
                if let AnsweredBy::Command { argv, .. } = &custom.by {
                    fields
                        .add(b'C', custom.name.as_bytes())
                        .add(b'A', shell_words::join(argv).as_bytes());
                    // The script it names, as of a command evaluator (it runs here too).
                    let command = CommandSpec {
                        argv: argv.clone(),
                        cwd: None,
                    };
                    for (_, file) in command.named_files() {
                        let digest = fields.file_digest(&file)?;
                        fields.add(b'F', &digest);
                    }
                }
            }
            // What the command line allows the file decides whether its checks run.
            for name in &spec.trust.commands {
                fields.add(b'a', name.as_bytes());
            }
            for endpoint in &spec.trust.endpoints {
                fields
                    .add(b'E', endpoint.base_url.as_bytes())
                    .add_optional(b'k', endpoint.key_env.as_deref().map(str::as_bytes));
            }
        }
        EvaluatorSpec::Spec(spec) => {
            let digest = fields.file_digest(&spec.path)?;
            fields
                .add(b'K', b"spec")
                .add(b'V', version)
                .add(b'F', &digest)
                .add(b'l', SEES_LINES)
                .add(b'L', &[u8::from(spec.live_judges)]);
            let base_url = spec.judge_base_url.clone().or_else(|| {
                // Where live judges without --judge-base-url send their requests.
                default_base_url().filter(|_| spec.live_judges)
            });
            fields.add_optional(b'B', base_url.as_deref().map(str::as_bytes));
        }
    }
    Ok(())
}

/// Marks the identity of an evaluator whose calls' keys cover the record's line: a run of it is
/// another run than one an evalctl wrote whose keys did not, so that a journal of that one is
/// not taken up under keys that pair none of its lines.
const SEES_LINES: &[u8] = b"keys cover the record's line";

/// The base URL the environment gives model calls that name none (`EVALCTL_JUDGE_BASE_URL`,
/// else `OPENAI_BASE_URL`); only set variables join a key, so keys of runs without them stay as
/// they were.
fn default_base_url() -> Option<String> {
    base_url_from_env("openai", |name| std::env::var(name).ok()).map(|(_, url)| url)
}

/// A command's identity: argv, working directory, and the content of every argv word that names
/// a file (the script), resolved against the working directory.
pub(crate) fn add_command_identity(
    fields: &mut KeyFields,
    spec: &CommandSpec,
) -> anyhow::Result<()> {
    fields.add(b'K', b"command").add(
        b'W',
        spec.working_directory().as_os_str().as_encoded_bytes(),
    );
    let mut files = spec.named_files().peekable();
    for (index, word) in spec.argv.iter().enumerate() {
        fields.add(b'A', word.as_bytes());
        if let Some((_, file)) = files.next_if(|(named, _)| *named == index) {
            let digest = fields.file_digest(&file)?;
            fields.add(b'F', &digest);
        }
    }
    Ok(())
}

/// The declared inputs: each path's content (a directory's files and symbolic links, with their
/// paths inside it), in the order of the declared paths, then the salt. Without any, nothing is
/// added, so keys stay those of a run that declares nothing.
pub(crate) fn add_declared_inputs(
    fields: &mut KeyFields,
    declared: &DeclaredInputs,
) -> anyhow::Result<()> {
    let mut paths: Vec<&Path> = declared.paths.iter().map(|path| path.as_path()).collect();
    paths.sort_unstable();
    paths.dedup();
    for path in paths {
        let metadata = std::fs::metadata(path).map_err(|err| {
            bad_input(Problem::new(
                path.display().to_string(),
                format!(
                    "cannot read this --cache-input (cache_inputs) to key the run's calls: {}",
                    io_reason(&err)
                ),
            ))
        })?;
        if metadata.is_dir() {
            // Listed before it is read, so that a change while it is read shows at the end.
            (fields.files.directories).push((path.to_path_buf(), listing(path)));
            fields.add(b'Y', b"dir");
            add_directory(fields, path, Path::new(""))?;
        } else if metadata.is_file() {
            let digest = fields.file_digest(path)?;
            fields.add(b'Y', b"file").add(b'F', &digest);
        } else {
            // A FIFO or a device has no content to key (reading one could wait forever).
            return Err(bad_input(Problem::new(
                path.display().to_string(),
                "this --cache-input (cache_inputs) is not a regular file or a directory: name \
                 the files the evaluator reads",
            )));
        }
    }
    if let Some(salt) = &declared.salt {
        fields.add(b'Z', salt.as_bytes());
    }
    Ok(())
}

/// The files under `root.join(relative)`, in byte order of their names at each level: each
/// file's path inside `root` and content digest, each symbolic link's path and target (links
/// are not followed, so a loop cannot hold a run up), each special file's path (never read).
fn add_directory(fields: &mut KeyFields, root: &Path, relative: &Path) -> anyhow::Result<()> {
    let dir = root.join(relative);
    let mut entries = std::fs::read_dir(&dir)
        .and_then(|entries| entries.collect::<std::io::Result<Vec<_>>>())
        .map_err(|err| unreadable(&dir, &err))?;
    entries.sort_by_key(|entry| entry.file_name());
    for entry in entries {
        let inside = relative.join(entry.file_name());
        let path = entry.path();
        let kind = entry.file_type().map_err(|err| unreadable(&path, &err))?;
        let name = inside.as_os_str().as_encoded_bytes();
        if kind.is_dir() {
            add_directory(fields, root, &inside)?;
        } else if kind.is_symlink() {
            let target = std::fs::read_link(&path).map_err(|err| unreadable(&path, &err))?;
            fields
                .add(b'L', name)
                .add(b'G', target.as_os_str().as_encoded_bytes());
        } else if kind.is_file() {
            fields.add(b'P', name).add(b'F', &file_digest(&path)?);
        } else {
            // A FIFO, socket or device counts by its path: it has no content to key.
            fields.add(b'S', name);
        }
    }
    Ok(())
}

/// A file or directory that cannot be read to key the calls: bad input naming it.
fn unreadable(path: &Path, err: &std::io::Error) -> anyhow::Error {
    bad_input(Problem::new(
        path.display().to_string(),
        format!("cannot read to key the run's calls: {}", io_reason(err)),
    ))
}

/// SHA-256 of a file's content, read in pieces.
fn file_digest(path: &Path) -> anyhow::Result<[u8; 32]> {
    let unreadable = |err: std::io::Error| unreadable(path, &err);
    let mut file = std::fs::File::open(path).map_err(unreadable)?;
    let mut digest = Sha256::new();
    std::io::copy(&mut file, &mut digest).map_err(unreadable)?;
    Ok(digest.finalize().into())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn command(dir: &Path, script: &str) -> EvaluatorSpec {
        std::fs::write(dir.join("eval.sh"), script).unwrap();
        EvaluatorSpec::Command(CommandSpec {
            argv: vec!["sh".into(), "eval.sh".into()],
            cwd: Some(dir.to_path_buf()),
        })
    }

    fn none() -> DeclaredInputs {
        DeclaredInputs::default()
    }

    /// The record `{"q":Q}` at `line`.
    fn record(q: u32, line: usize) -> Record {
        Record::from_value(line, serde_json::json!({ "q": q }))
    }

    fn key(context: &KeyContext) -> CallKey {
        context.call_key("cand", Split::Train, Some((0, &record(1, 1))), None)
    }

    #[test]
    fn keys_are_hex_and_round_trip() {
        let dir = tempfile::tempdir().unwrap();
        let context =
            KeyContext::new(&command(dir.path(), "a"), ScoreRange::Unit, None, &none()).unwrap();
        let text = key(&context).to_string();
        assert_eq!(text.len(), 64);
        assert_eq!(CallKey::parse(&text), Some(key(&context)));
        assert_eq!(CallKey::parse("zz"), None);
    }

    #[test]
    fn every_input_changes_the_key() {
        let dir = tempfile::tempdir().unwrap();
        let base =
            KeyContext::new(&command(dir.path(), "a"), ScoreRange::Unit, None, &none()).unwrap();
        let reference = key(&base);
        assert_eq!(reference, key(&base.clone()));
        let variants = [
            base.call_key("cand2", Split::Train, Some((0, &record(1, 1))), None),
            base.call_key("cand", Split::Val, Some((0, &record(1, 1))), None),
            base.call_key("cand", Split::Train, Some((1, &record(1, 1))), None),
            base.call_key("cand", Split::Train, Some((0, &record(2, 1))), None),
            base.call_key("cand", Split::Train, Some((0, &record(1, 1))), Some(0)),
            key(
                &KeyContext::new(&command(dir.path(), "a"), ScoreRange::Any, None, &none())
                    .unwrap(),
            ),
            key(&KeyContext::new(
                &command(dir.path(), "a"),
                ScoreRange::Unit,
                Some("m"),
                &none(),
            )
            .unwrap()),
            key(
                &KeyContext::new(&command(dir.path(), "b"), ScoreRange::Unit, None, &none())
                    .unwrap(),
            ),
        ];
        for (index, variant) in variants.iter().enumerate() {
            assert_ne!(*variant, reference, "variant {index}");
        }
        // A command sees no line: a record moved down a line keeps its key.
        assert_eq!(
            base.call_key("cand", Split::Train, Some((0, &record(1, 2))), None),
            reference
        );
    }

    #[test]
    fn a_checks_file_keys_the_custom_commands_it_may_run_and_only_those() {
        let dir = tempfile::tempdir().unwrap();
        let checks = dir.path().join("checks.json");
        let script = dir.path().join("mine.sh");
        std::fs::write(&script, "echo 1").unwrap();
        let declared = serde_json::json!({
            "custom_checks": {"mine": {"command": ["sh", script]}}, "checks": []
        });
        std::fs::write(&checks, declared.to_string()).unwrap();
        let key_of = |allowed: &[&str]| {
            let trust = crate::checks::Trust {
                commands: allowed.iter().map(|name| name.to_string()).collect(),
                ..Default::default()
            };
            let evaluator = EvaluatorSpec::Checks(crate::evaluator::checks::ChecksSpec {
                path: checks.clone(),
                trust,
            });
            key(&KeyContext::new(&evaluator, ScoreRange::Unit, None, &none()).unwrap())
        };
        let refused = key_of(&[]);
        let allowed = key_of(&["mine"]);
        assert_ne!(refused, allowed);
        // The command's script is part of the key once it may run, and only then.
        std::fs::write(&script, "echo 0").unwrap();
        assert_eq!(key_of(&[]), refused);
        assert_ne!(key_of(&["mine"]), allowed);
    }

    #[test]
    fn a_record_moved_to_another_line_misses_where_the_evaluator_sees_its_line() {
        let dir = tempfile::tempdir().unwrap();
        let checks = dir.path().join("checks.json");
        std::fs::write(&checks, r#"{"checks": []}"#).unwrap();
        let evaluator = EvaluatorSpec::Checks(crate::evaluator::checks::ChecksSpec {
            path: checks,
            trust: Default::default(),
        });
        let keys = KeyContext::new(&evaluator, ScoreRange::Unit, None, &none()).unwrap();
        let at = |line| keys.call_key("cand", Split::Train, Some((0, &record(1, line))), None);
        assert_eq!(at(1), at(1));
        assert_ne!(at(1), at(2));
    }

    #[test]
    fn the_fingerprint_covers_candidates_inputs_and_repeats_but_not_shards() {
        use crate::input::{Candidate, Inputs};
        let dir = tempfile::tempdir().unwrap();
        let keys =
            KeyContext::new(&command(dir.path(), "a"), ScoreRange::Unit, None, &none()).unwrap();
        let inputs = |id: &str, text: &str, example: &str| Inputs {
            candidates: vec![Candidate {
                id: id.into(),
                text: text.into(),
                numbered: false,
            }],
            dataset: Some(vec![
                Record::from_value(1, serde_json::json!({"id": "a", "q": example})),
                Record::from_value(2, serde_json::json!({"id": "b", "q": 2})),
            ]),
            valset: None,
        };
        let pick = |ids: &[&str], limit| ExampleSelection {
            ids: ids.iter().map(|id| id.to_string()).collect(),
            limit,
        };
        let all = pick(&[], None);
        let base = RunDigests::of(&keys, &inputs("c", "t", "1"), &all, None);
        assert_eq!(
            base,
            RunDigests::of(&keys, &inputs("c", "t", "1"), &all, None)
        );
        assert_eq!(base.fingerprint.len(), 16);
        // Pinned: a journal written by an earlier evalctl is resumed only while its run's
        // digests are computed as they were then.
        assert_eq!(base.inputs, "ab5028eac7454e52");
        let renamed = RunDigests::of(&keys, &inputs("d", "t", "1"), &all, None);
        let retexted = RunDigests::of(&keys, &inputs("c", "u", "1"), &all, None);
        let other_example = RunDigests::of(&keys, &inputs("c", "t", "2"), &all, None);
        let limited = RunDigests::of(&keys, &inputs("c", "t", "1"), &pick(&[], Some(1)), None);
        let picked = RunDigests::of(&keys, &inputs("c", "t", "1"), &pick(&["a"], None), None);
        let repeated = RunDigests::of(&keys, &inputs("c", "t", "1"), &all, Some(2));
        for variant in [
            &renamed,
            &retexted,
            &other_example,
            &limited,
            &picked,
            &repeated,
        ] {
            assert_ne!(variant.fingerprint, base.fingerprint);
            assert_eq!(variant.evaluator, base.evaluator);
        }
        assert_eq!(renamed.inputs, base.inputs);
        assert_ne!(other_example.inputs, base.inputs);
        assert_ne!(limited.inputs, base.inputs);
        // Picked by id, an example is also told by its place: the first one picked by its id
        // is another run than the first one kept by --limit.
        assert_ne!(picked.inputs, limited.inputs);
        assert_eq!(text_digest("t"), text_digest("t"));
        assert_ne!(text_digest("t"), text_digest("u"));
    }

    #[test]
    fn header_values_do_not_reach_the_key() {
        let http = |headers: &[String]| {
            let spec = crate::evaluator::http::HttpSpec::new("http://127.0.0.1:1/".into(), headers)
                .unwrap();
            let context =
                KeyContext::new(&EvaluatorSpec::Http(spec), ScoreRange::Unit, None, &none())
                    .unwrap();
            context.call_key("c", Split::Single, None, None)
        };
        let secret = http(&["Authorization: Bearer one".into()]);
        assert_eq!(secret, http(&["Authorization: Bearer two".into()]));
        assert_ne!(secret, http(&[]));
    }

    #[test]
    fn declared_files_directories_and_salt_change_the_key() {
        let dir = tempfile::tempdir().unwrap();
        let evaluator = command(dir.path(), "a");
        let with = |declared: DeclaredInputs| {
            key(&KeyContext::new(&evaluator, ScoreRange::Unit, None, &declared).unwrap())
        };
        let lib = dir.path().join("lib");
        std::fs::create_dir_all(lib.join("sub")).unwrap();
        std::fs::write(lib.join("a.py"), "x = 1").unwrap();
        std::fs::write(lib.join("sub/b.py"), "y = 2").unwrap();
        let declare = |paths: &[&Path], salt: Option<&str>| DeclaredInputs {
            paths: paths.iter().map(|path| path.to_path_buf()).collect(),
            salt: salt.map(str::to_string),
        };
        let nothing = with(none());
        let declared = with(declare(&[&lib], None));
        assert_ne!(declared, nothing);
        assert_eq!(declared, with(declare(&[&lib, &lib], None)));
        assert_ne!(with(declare(&[&lib], Some("v2"))), declared);
        std::fs::write(lib.join("sub/b.py"), "y = 3").unwrap();
        let edited = with(declare(&[&lib], None));
        assert_ne!(edited, declared);
        // A rename inside the directory is a change too.
        std::fs::rename(lib.join("sub/b.py"), lib.join("sub/c.py")).unwrap();
        assert_ne!(with(declare(&[&lib], None)), edited);
        let missing = dir.path().join("missing");
        let error = KeyContext::new(
            &evaluator,
            ScoreRange::Unit,
            None,
            &declare(&[&missing], None),
        )
        .unwrap_err();
        assert!(error.to_string().contains("missing"), "{error}");
        // A FIFO is never opened (its reader would wait for a writer): inside a directory it
        // counts by its path, and named itself it is bad input.
        let renamed = with(declare(&[&lib], None));
        let fifo = lib.join("pipe");
        let name = std::ffi::CString::new(fifo.as_os_str().as_encoded_bytes()).unwrap();
        // SAFETY: `name` is a valid NUL-terminated path.
        assert_eq!(unsafe { libc::mkfifo(name.as_ptr(), 0o600) }, 0);
        assert_ne!(with(declare(&[&lib], None)), renamed);
        let error = KeyContext::new(&evaluator, ScoreRange::Unit, None, &declare(&[&fifo], None))
            .unwrap_err();
        assert!(error.to_string().contains("not a regular file"), "{error}");
    }
}
