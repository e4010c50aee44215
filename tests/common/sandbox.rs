//! [`Sandbox`]: a temporary directory to write `sh` evaluators, datasets and candidates into,
//! and an `evalctl` command that runs inside it. Evaluators are `sh` scripts (fast to start, no
//! Python), run as `--evaluator-command sh eval.sh`.

use std::path::{Path, PathBuf};

use serde_json::Value;

use super::binary::evalctl;

/// An evaluator that ignores its input and prints `$EVAL_OUT` (set by the test) verbatim.
pub const PRINT_EVAL_OUT: &str = "cat >/dev/null\nprintf '%s' \"$EVAL_OUT\"\n";

/// An evaluator that appends its payload (one line per call) to `payloads.log` and scores 1.
pub const LOG_PAYLOAD: &str =
    "p=$(cat)\nprintf '%s\\n' \"$p\" >> payloads.log\nprintf '{\"score\": 1}'\n";

/// A temporary working directory for one test.
pub struct Sandbox {
    dir: tempfile::TempDir,
}

impl Default for Sandbox {
    fn default() -> Self {
        Self::new()
    }
}

impl Sandbox {
    /// A new empty directory.
    pub fn new() -> Self {
        Sandbox {
            dir: tempfile::tempdir().expect("create a temp dir"),
        }
    }

    /// The directory.
    pub fn path(&self) -> &Path {
        self.dir.path()
    }

    /// `name` inside the directory.
    pub fn join(&self, name: &str) -> PathBuf {
        self.dir.path().join(name)
    }

    /// Write `contents` to `name` (parent directories created); returns the full path.
    pub fn write(&self, name: &str, contents: impl AsRef<[u8]>) -> PathBuf {
        let path = self.join(name);
        if let Some(parent) = path.parent() {
            std::fs::create_dir_all(parent).expect("create parent dirs");
        }
        std::fs::write(&path, contents).expect("write file");
        path
    }

    /// Copy the repository's files `names` of `dir` (`fixtures/spec`) into the sandbox, by name.
    pub fn copy_fixtures(&self, dir: &str, names: &[&str]) {
        for name in names {
            let fixture = Path::new(env!("CARGO_MANIFEST_DIR")).join(dir).join(name);
            self.write(name, std::fs::read(fixture).expect("the fixture is there"));
        }
    }

    /// Write an executable file (mode 0755).
    pub fn write_executable(&self, name: &str, contents: impl AsRef<[u8]>) -> PathBuf {
        use std::os::unix::fs::PermissionsExt;
        let path = self.write(name, contents);
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755)).unwrap();
        path
    }

    /// The text of `name` ("" when it does not exist).
    pub fn read(&self, name: &str) -> String {
        std::fs::read_to_string(self.join(name)).unwrap_or_default()
    }

    /// Whether `name` exists.
    pub fn exists(&self, name: &str) -> bool {
        self.join(name).exists()
    }

    /// The non-empty lines of `name`.
    pub fn lines(&self, name: &str) -> Vec<String> {
        self.read(name)
            .lines()
            .filter(|line| !line.is_empty())
            .map(str::to_string)
            .collect()
    }

    /// Every line of a JSONL file (e.g. `--output`), parsed.
    pub fn jsonl(&self, name: &str) -> Vec<Value> {
        self.lines(name)
            .iter()
            .map(|line| {
                serde_json::from_str(line).unwrap_or_else(|err| panic!("{name}: {line}: {err}"))
            })
            .collect()
    }

    /// `evalctl` running in this directory.
    pub fn evalctl(&self) -> assert_cmd::Command {
        let mut command = evalctl();
        command.current_dir(self.path());
        command
    }

    /// `evalctl run --format json` with `sh eval.sh` (written from `script`) as the evaluator.
    pub fn run_with(&self, script: &str) -> assert_cmd::Command {
        self.write("eval.sh", script);
        let mut command = self.evalctl();
        command.args([
            "run",
            "--format",
            "json",
            "--evaluator-command",
            "sh eval.sh",
        ]);
        command
    }
}
