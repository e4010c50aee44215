//! Which `evalctl.toml` key sets which flag: one line per key. The command line layer applies a
//! file value only where the flag itself and its `EVALCTL_*` variable are absent, so precedence
//! is flags, then the environment, then the file, then the flag's default.
//!
//! A flag added to `run`, `preflight` or `tasks run` joins the file by one line in [`RUN`] or
//! [`TASKS_RUN`]; its environment variable is `EVALCTL_` and the flag's name in capitals.

/// What a key's TOML value must be, and how it becomes the flag's values.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    /// A string, passed as is.
    Text,
    /// A string naming a file or directory, relative to the config file's directory.
    Path,
    /// An integer.
    Integer,
    /// A number (integer or float).
    Number,
    /// A boolean: `true` sets the switch.
    Switch,
    /// A command: one string (split by shell-word rules) or an array of words. It runs in the
    /// config file's directory unless the file names another: the flag with this clap id
    /// (`evaluator_cwd`) is set to that directory.
    Command(&'static str),
    /// A string or an array of strings, one flag value each (a repeatable flag).
    List,
    /// Like [`Kind::List`], each string naming a file or directory relative to the config
    /// file's directory.
    Paths,
    /// A table of prices `"PROVIDER/MODEL" = [IN, OUT]` (USD per million input and output
    /// tokens), one `MODEL=IN,OUT` flag value each.
    Prices,
    /// A table of HTTP headers `Name = "value"`; `${VAR}` in values is expanded from the
    /// environment (a name is written as it is).
    Headers,
}

/// One key of `evalctl.toml` and the flag it sets.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Binding {
    /// `section.key` as written in the file.
    pub key: &'static str,
    /// The clap id of the flag (its long name with `_` for `-`).
    pub arg: &'static str,
    /// What the value must be.
    pub kind: Kind,
    /// Whether `EVALCTL_<ARG>` sets the flag too (not for repeatable headers, nor for
    /// `judge_base_url`, whose `EVALCTL_JUDGE_BASE_URL` the judge reads for every provider).
    pub env: bool,
}

const fn bind(key: &'static str, arg: &'static str, kind: Kind) -> Binding {
    Binding {
        key,
        arg,
        kind,
        env: true,
    }
}

const fn file_only(key: &'static str, arg: &'static str, kind: Kind) -> Binding {
    Binding {
        key,
        arg,
        kind,
        env: false,
    }
}

use Kind::*;

/// Keys of which the file may set one only, such as the evaluator; when the command line (or the
/// environment) sets the flag of any of them, the file's keys that `replaces` names are left out.
#[derive(Debug)]
pub struct Alternatives {
    /// What they are, in messages (`evaluators`).
    pub noun: &'static str,
    /// The keys that choose one alternative.
    pub choosers: &'static [&'static str],
    /// The keys a choice on the command line replaces: whole keys, or sections (`evaluator.`).
    pub replaces: &'static [&'static str],
}

/// The groups of alternatives: the evaluator of `run`, the model of `tasks run`, and the task
/// model command of `run --generate` (one key: a command given on the command line replaces
/// the file's, and the directory the file's would run in).
pub const ALTERNATIVES: &[Alternatives] = &[
    Alternatives {
        noun: "evaluators",
        choosers: &[
            "evaluator.command",
            "evaluator.url",
            "evaluator.judge_model",
            "evaluator.checks",
            "evaluator.spec",
        ],
        replaces: &["evaluator."],
    },
    Alternatives {
        noun: "models",
        choosers: &["tasks.model", "tasks.model_command"],
        replaces: &["tasks.model", "tasks.model_command", "tasks.model_cwd"],
    },
    Alternatives {
        noun: "task model commands",
        choosers: &["run.task_model_command"],
        replaces: &["run.task_model_command", "run.task_model_cwd"],
    },
];

impl Alternatives {
    /// Whether a choice on the command line replaces the file's `key`.
    pub fn replaces(&self, key: &str) -> bool {
        self.replaces.iter().any(|replaced| {
            key == *replaced || replaced.ends_with('.') && key.starts_with(replaced)
        })
    }
}

/// The section of the evaluator and its companion keys.
pub const EVALUATOR_SECTION: &str = "evaluator";

/// Each evaluator companion key and the evaluator keys it applies to.
pub const EVALUATOR_COMPANIONS: &[(&str, &[&str])] = &[
    ("cwd", &["command"]),
    ("headers", &["url"]),
    ("objective", &["judge_model"]),
    ("rubric", &["judge_model"]),
    ("judge_base_url", &["judge_model", "spec"]),
    ("judge_api_key_env", &["judge_model"]),
    ("judge_temperature", &["judge_model"]),
    ("judge_max_tokens", &["judge_model"]),
    ("probe_judge", &["judge_model"]),
    ("live_judges", &["spec"]),
];

/// `run` and `preflight`.
pub const RUN: &[Binding] = &[
    bind(
        "evaluator.command",
        "evaluator_command",
        Command("evaluator_cwd"),
    ),
    bind("evaluator.cwd", "evaluator_cwd", Path),
    bind("evaluator.url", "evaluator_url", Text),
    file_only("evaluator.headers", "header", Headers),
    bind("evaluator.judge_model", "judge_model", Text),
    bind("evaluator.objective", "objective", Text),
    bind("evaluator.rubric", "rubric", Path),
    file_only("evaluator.judge_base_url", "judge_base_url", Text),
    bind("evaluator.judge_api_key_env", "judge_api_key_env", Text),
    bind("evaluator.judge_temperature", "judge_temperature", Number),
    bind("evaluator.judge_max_tokens", "judge_max_tokens", Integer),
    bind("evaluator.probe_judge", "probe_judge", Switch),
    bind("evaluator.checks", "checks", Path),
    bind("evaluator.spec", "spec", Path),
    bind("evaluator.live_judges", "live_judges", Switch),
    bind("run.dataset", "dataset", Path),
    bind("run.valset", "valset", Path),
    bind("run.task_model", "task_model", List),
    bind("run.generate", "generate", Switch),
    bind(
        "run.task_model_command",
        "task_model_command",
        Command("task_model_cwd"),
    ),
    bind("run.task_model_cwd", "task_model_cwd", Path),
    bind("run.task_api", "task_api", Text),
    bind("run.task_base_url", "task_base_url", Text),
    bind("run.task_api_key_env", "task_api_key_env", Text),
    bind("run.task_temperature", "task_temperature", Number),
    bind("run.task_max_tokens", "task_max_tokens", Integer),
    bind("run.max_cost", "max_cost", Number),
    file_only("prices", "price", Prices),
    bind("run.score_range", "score_range", Text),
    bind("run.concurrency", "concurrency", Integer),
    bind("run.timeout", "timeout", Number),
    bind("run.retries", "retries", Integer),
    bind("run.limit", "limit", Integer),
    bind("run.skip_preflight", "skip_preflight", Switch),
    bind("run.output", "output", Path),
    bind("run.fail_under", "fail_under", Number),
    bind("run.resume", "resume", Switch),
    bind("run.resume_keep_errors", "resume_keep_errors", Switch),
    bind("run.repeat", "repeat", Integer),
    bind("run.max_errors", "max_errors", Integer),
    bind("run.max_error_rate", "max_error_rate", Number),
    bind("run.seed", "seed", Integer),
    bind("run.cache", "cache", Switch),
    bind("run.cache_dir", "cache_dir", Path),
    file_only("run.cache_inputs", "cache_input", Paths),
    bind("run.cache_salt", "cache_salt", Text),
];

/// `tasks run`.
pub const TASKS_RUN: &[Binding] = &[
    bind("tasks.model", "model", Text),
    bind("tasks.model_command", "model_command", Command("model_cwd")),
    bind("tasks.model_cwd", "model_cwd", Path),
    bind("tasks.api", "api", Text),
    bind("tasks.base_url", "base_url", Text),
    bind("tasks.api_key_env", "api_key_env", Text),
    bind("tasks.temperature", "temperature", Number),
    bind("tasks.max_tokens", "max_tokens", Integer),
    bind("tasks.stop", "stop", List),
    bind("tasks.limit", "limit", Integer),
    bind("tasks.save_outputs", "save_outputs", Path),
    bind("tasks.output", "output", Path),
    bind("tasks.resume", "resume", Switch),
    bind("tasks.allow_bad_tasks", "allow_bad_tasks", Switch),
    bind("tasks.code_timeout", "code_timeout", Number),
    bind("tasks.unsafe_code_exec", "unsafe_code_exec", Switch),
    bind("run.concurrency", "concurrency", Integer),
    bind("run.timeout", "timeout", Number),
    bind("run.retries", "retries", Integer),
    bind("run.cache", "cache", Switch),
    bind("run.cache_dir", "cache_dir", Path),
];

/// `cache stats` and `cache clear`: the cache directory `run` and `tasks run` use.
pub const CACHE: &[Binding] = &[bind("run.cache_dir", "cache_dir", Path)];

/// The sections of the file, in the order `evalctl init` writes them.
pub const SECTIONS: &[&str] = &["evaluator", "run", "tasks", "prices"];

/// Every key of the file, each once, in table order.
pub fn all_keys() -> Vec<&'static str> {
    let mut keys: Vec<&'static str> = Vec::new();
    for binding in RUN.iter().chain(TASKS_RUN) {
        if !keys.contains(&binding.key) {
            keys.push(binding.key);
        }
    }
    keys
}

/// The binding of `key` (any command's: a key shared by two commands binds flags of one kind).
pub fn find(key: &str) -> Option<&'static Binding> {
    RUN.iter()
        .chain(TASKS_RUN)
        .find(|binding| binding.key == key)
}

impl Binding {
    /// The environment variable that sets this flag, when it has one: `EVALCTL_<ARG>`.
    pub fn env_name(&self) -> Option<String> {
        self.env
            .then(|| format!("EVALCTL_{}", self.arg.to_ascii_uppercase()))
    }

    /// The section of the key (`evaluator`, `run`, `tasks`; `prices` is a section and a key).
    pub fn section(&self) -> &'static str {
        self.key
            .split_once('.')
            .map_or(self.key, |(section, _)| section)
    }

    /// The key without its section.
    pub fn name(&self) -> &'static str {
        self.key.split_once('.').map_or(self.key, |(_, name)| name)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_shared_key_binds_flags_of_one_kind() {
        for binding in RUN.iter().chain(TASKS_RUN) {
            let first = find(binding.key).map(|found| (found.arg, found.kind));
            assert_eq!(first, Some((binding.arg, binding.kind)), "{}", binding.key);
            assert!(SECTIONS.contains(&binding.section()), "{}", binding.key);
        }
    }

    #[test]
    fn alternatives_are_keys() {
        for group in ALTERNATIVES {
            for key in group.choosers {
                assert!(find(key).is_some() && group.replaces(key), "{key}");
            }
        }
        assert!(ALTERNATIVES[0].replaces("evaluator.cwd"));
        assert!(!ALTERNATIVES[1].replaces("tasks.max_tokens"));
    }

    #[test]
    fn evaluator_companions_are_evaluator_keys() {
        for (companion, owners) in EVALUATOR_COMPANIONS {
            assert!(
                find(&format!("evaluator.{companion}")).is_some(),
                "{companion}"
            );
            for owner in *owners {
                let key = format!("{EVALUATOR_SECTION}.{owner}");
                assert!(ALTERNATIVES[0].choosers.contains(&key.as_str()));
            }
        }
    }
}
