//! Model-written `code_exec` code tried as an attacker would, through `evalctl tasks score`: it
//! cannot read the user's files or evalctl's environment, write outside its sandbox, reach the
//! network, outlive its script, forge a pass or touch another output's evaluation; every limit it
//! hits is a named error; where the kernel refuses the sandbox, evalctl refuses before any model
//! call unless `--unsafe-code-exec` says otherwise. As root, each attack runs again as an
//! unprivileged user (`nobody`, through `setpriv`).
//!
//! These tests need the sandbox: where this machine cannot build one they say so on stderr and
//! pass, except under `CI`, where they fail.

use std::collections::BTreeMap;
use std::net::TcpListener;
use std::path::Path;
use std::process::Command;

use serde_json::{json, Value};

use crate::common::{clean_environment, code, evalctl, stderr_text, stdout_text, Sandbox};

/// One `code_exec` task: its id, the model's code and the targets asserting that the attack
/// worked (so a passing target is an escape).
struct Attack<'a> {
    id: &'a str,
    code: String,
    targets: Vec<String>,
}

fn attack<'a>(id: &'a str, code: impl Into<String>, targets: &[&str]) -> Attack<'a> {
    Attack {
        id,
        code: code.into(),
        targets: targets.iter().map(|target| target.to_string()).collect(),
    }
}

/// Who runs evalctl: the test's own user, or `nobody` when the test runs as root.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum User {
    Current,
    Nobody,
}

/// The users to try every attack as: the current one, and `nobody` when running as root.
fn users() -> Vec<User> {
    // SAFETY: geteuid has no preconditions.
    if unsafe { libc::geteuid() } == 0 {
        vec![User::Current, User::Nobody]
    } else {
        vec![User::Current]
    }
}

/// `evalctl` as `user`, in `dir`. `nobody` runs it through `setpriv` with the system's own
/// `python3` (root's interpreter may live in a home `nobody` cannot enter).
fn evalctl_as(user: User, dir: &Path) -> Command {
    let mut command = match user {
        User::Current => Command::new(crate::common::bin()),
        User::Nobody => {
            let mut command = Command::new("setpriv");
            command
                .args(["--reuid=65534", "--regid=65534", "--clear-groups"])
                .arg(crate::common::bin())
                .env("PATH", "/usr/bin:/bin")
                .env("HOME", dir);
            command
        }
    };
    clean_environment(&mut command);
    command.current_dir(dir);
    command
}

/// Whether this machine builds the sandbox; when it does not, say so (and fail under `CI`).
fn sandbox_available() -> bool {
    let sandbox = Sandbox::new();
    let (tasks, outputs) = task_files(&sandbox, &[attack("probe", "x = 1", &["x == 1"])]);
    let output = evalctl()
        .args(["tasks", "score", "--format", "json"])
        .arg(&tasks)
        .arg("--outputs")
        .arg(&outputs)
        .output()
        .unwrap();
    if output.status.success() {
        return true;
    }
    crate::common::tool_missing(&format!(
        "this machine cannot build the code_exec sandbox: {}",
        stderr_text(&output)
    ));
    false
}

/// Write the tasks and outputs files of `attacks` into `sandbox`.
fn task_files(sandbox: &Sandbox, attacks: &[Attack]) -> (std::path::PathBuf, std::path::PathBuf) {
    let mut tasks = String::new();
    let mut outputs = String::new();
    for attack in attacks {
        let task = json!({"task_id": attack.id, "category": "code_exec", "prompt": "Attack.",
                          "targets": attack.targets, "metric_name": "code_exec",
                          "post_process": "none"});
        tasks.push_str(&format!("{task}\n"));
        outputs.push_str(&format!(
            "{}\n",
            json!({"task_id": attack.id, "output": attack.code})
        ));
    }
    (
        sandbox.write("tasks.jsonl", tasks),
        sandbox.write("outputs.jsonl", outputs),
    )
}

/// Score `attacks` as `user`, each script under `code_timeout` seconds; the per-task lines by
/// task id, and the finished process.
fn score_as(
    user: User,
    sandbox: &Sandbox,
    attacks: &[Attack],
    code_timeout: &str,
) -> (BTreeMap<String, Value>, std::process::Output) {
    use std::os::unix::fs::PermissionsExt;
    // nobody writes the results into the test's directory.
    std::fs::set_permissions(sandbox.path(), std::fs::Permissions::from_mode(0o777)).unwrap();
    let (tasks, outputs) = task_files(sandbox, attacks);
    let per_task = sandbox.join("per_task.jsonl");
    let _ = std::fs::remove_file(&per_task);
    let output = evalctl_as(user, sandbox.path())
        .args([
            "tasks",
            "score",
            "--code-timeout",
            code_timeout,
            "--format",
            "json",
        ])
        .arg(&tasks)
        .arg("--outputs")
        .arg(&outputs)
        .arg("--output")
        .arg(&per_task)
        .output()
        .unwrap();
    let lines = sandbox
        .jsonl("per_task.jsonl")
        .into_iter()
        .map(|line| (line["task_id"].as_str().unwrap().to_string(), line))
        .collect();
    (lines, output)
}

/// The first failure of task `id`, after checking that it scored 0 in the sandbox.
fn failure<'a>(lines: &'a BTreeMap<String, Value>, id: &str, user: User) -> &'a str {
    let line = &lines[id];
    assert_eq!(
        line["score"], 0.0,
        "{user:?}: the attack {id} worked: {line}"
    );
    assert_eq!(line["sandbox"], "namespaces", "{line}");
    line["assertions"]["first_failure"].as_str().unwrap()
}

#[test]
fn model_code_cannot_reach_the_users_files_evalctl_or_the_network() {
    if !sandbox_available() {
        return;
    }
    for user in users() {
        let sandbox = Sandbox::new();
        let secret = sandbox.write(".ssh/id_rsa", "PRIVATE KEY");
        let outside = sandbox.join("escaped");
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        listener.set_nonblocking(true).unwrap();
        let port = listener.local_addr().unwrap().port();
        let tasks_file = sandbox.join("tasks.jsonl");
        let cache = sandbox.join("cache");
        std::fs::create_dir(&cache).unwrap();
        let attacks = [
            attack(
                "read_home",
                format!("def f():\n    return open({:?}).read()", secret.display().to_string()),
                &["f() == 'PRIVATE KEY'"],
            ),
            attack(
                "write_outside",
                format!("def f():\n    open({:?}, 'w').write('x')\n    return True", outside.display().to_string()),
                &["f()"],
            ),
            attack(
                "tasks_file",
                format!("def f():\n    open({:?}, 'a').write('planted')\n    return True", tasks_file.display().to_string()),
                &["f()"],
            ),
            attack(
                "cache",
                format!("def f():\n    open({:?}, 'w').write('1.0')\n    return True", cache.join("results.sqlite3").display().to_string()),
                &["f()"],
            ),
            attack(
                "evalctl_environ",
                "import os\ndef f():\n    return open('/proc/%d/environ' % os.getppid()).read()",
                &["'EVALCTL_TEST_API_KEY' in f()"],
            ),
            attack(
                "own_environ",
                "import os",
                &["'EVALCTL_TEST_API_KEY' in os.environ"],
            ),
            attack(
                "tcp",
                format!(
                    "import socket\ndef f():\n    try:\n        socket.create_connection(('127.0.0.1', {port}), timeout=2)\n    except OSError:\n        return False\n    return True"
                ),
                &["f()"],
            ),
            attack(
                "signal_evalctl",
                "import os\ndef f():\n    os.kill(-1, 9)\n    return True",
                &["f()"],
            ),
        ];
        let (lines, output) = score_as(user, &sandbox, &attacks, "5");
        assert_eq!(code(&output), 0, "{user:?}: {}", stderr_text(&output));
        assert_eq!(
            failure(&lines, "read_home", user),
            format!(
                "f() == 'PRIVATE KEY': FileNotFoundError: [Errno 2] No such file or directory: {:?}",
                secret.display().to_string()
            )
            .replace('"', "'")
        );
        assert_eq!(
            failure(&lines, "write_outside", user),
            format!(
                "f(): FileNotFoundError: [Errno 2] No such file or directory: '{}'",
                outside.display()
            )
        );
        assert_eq!(
            failure(&lines, "tasks_file", user),
            format!(
                "f(): FileNotFoundError: [Errno 2] No such file or directory: '{}'",
                tasks_file.display()
            )
        );
        assert_eq!(
            failure(&lines, "cache", user),
            format!(
                "f(): FileNotFoundError: [Errno 2] No such file or directory: '{}'",
                cache.join("results.sqlite3").display()
            )
        );
        assert_eq!(
            failure(&lines, "evalctl_environ", user),
            "'EVALCTL_TEST_API_KEY' in f(): FileNotFoundError: [Errno 2] No such file or \
             directory: '/proc/0/environ'"
        );
        assert_eq!(
            failure(&lines, "own_environ", user),
            "'EVALCTL_TEST_API_KEY' in os.environ: AssertionError"
        );
        assert_eq!(failure(&lines, "tcp", user), "f(): AssertionError");
        // Killing every process it can see kills only its own.
        assert_eq!(lines["signal_evalctl"]["score"], 0.0);
        assert!(!outside.exists(), "{user:?}: wrote outside its sandbox");
        assert!(
            !sandbox.read("tasks.jsonl").contains("planted"),
            "{user:?}: rewrote the tasks file"
        );
        assert!(
            listener.accept().is_err(),
            "{user:?}: connected to a loopback port"
        );
    }
}

#[test]
fn every_limit_is_a_named_error_in_the_line_and_the_summary() {
    if !sandbox_available() {
        return;
    }
    for user in users() {
        let sandbox = Sandbox::new();
        let attacks = [
            attack("memory", "def f():\n    return len(bytearray(4 * 1024**3))", &["f()"]),
            attack(
                "processes",
                "import threading, time\ndef f():\n    for _ in range(200):\n        threading.Thread(target=time.sleep, args=(60,), daemon=True).start()\n    return True",
                &["f()"],
            ),
            attack("output", "import sys\nwhile True:\n    sys.stdout.write('x' * 65536)", &["True"]),
            attack(
                "big_file",
                "def f():\n    open('big', 'wb').write(b'x' * (64 * 1024**2))\n    return True",
                &["f()"],
            ),
            attack(
                "full_disk",
                "def f():\n    for i in range(8):\n        open('part%d' % i, 'wb').write(b'x' * (15 * 1024**2))\n    return True",
                &["f()"],
            ),
            attack("time", "while True:\n    pass", &["True"]),
        ];
        let (lines, output) = score_as(user, &sandbox, &attacks, "2");
        assert_eq!(code(&output), 0, "{user:?}: {}", stderr_text(&output));
        let limits = |id: &str| lines[id]["assertions"]["limits"].clone();
        assert_eq!(
            failure(&lines, "memory", user),
            "f(): memory_limit: MemoryError"
        );
        assert_eq!(limits("memory"), json!({"memory_limit": 1}));
        assert_eq!(
            failure(&lines, "processes", user),
            "f(): process_limit: RuntimeError: can't start new thread"
        );
        assert_eq!(limits("processes"), json!({"process_limit": 1}));
        assert_eq!(
            failure(&lines, "output", user),
            "True: output_limit: printed more than 1048576 bytes"
        );
        assert_eq!(limits("output"), json!({"output_limit": 1}));
        assert_eq!(
            failure(&lines, "big_file", user),
            "f(): disk_quota: OSError: [Errno 27] File too large"
        );
        assert_eq!(
            failure(&lines, "full_disk", user),
            "f(): disk_quota: OSError: [Errno 28] No space left on device"
        );
        assert_eq!(limits("full_disk"), json!({"disk_quota": 1}));
        assert_eq!(failure(&lines, "time", user), "True: timed out after 2s");
        assert_eq!(limits("time"), json!({"timeout": 1}));
        let summary: Value = serde_json::from_str(&stdout_text(&output)).unwrap();
        assert_eq!(
            summary["code_exec_limits"],
            json!({"timeout": 1, "memory_limit": 1, "output_limit": 1,
                   "process_limit": 1, "disk_quota": 2})
        );
    }
}

#[test]
fn the_text_summary_names_the_limits_hit() {
    if !sandbox_available() {
        return;
    }
    let sandbox = Sandbox::new();
    let (tasks, outputs) = task_files(
        &sandbox,
        &[
            attack("time", "while True:\n    pass", &["True", "True"]),
            attack("memory", "x = bytearray(4 * 1024**3)", &["True"]),
        ],
    );
    let output = evalctl()
        // Long enough for the memory attack's interpreter to start on a loaded machine and meet
        // its memory limit before the time limit.
        .args(["tasks", "score", "--code-timeout", "4", "--format", "text"])
        .arg(&tasks)
        .arg("--outputs")
        .arg(&outputs)
        .current_dir(sandbox.path())
        .output()
        .unwrap();
    assert_eq!(code(&output), 0, "{}", stderr_text(&output));
    assert_eq!(
        stdout_text(&output),
        format!(
            "tasks {} scored against outputs {}\n\n\
             \x20                   tasks  scored  missing     mean   stderr\n\
             \x20 all                   2       2        0   0.0000   0.0000\n\n\
             by category\n\
             \x20 code_exec             2       2        0   0.0000   0.0000\n\n\
             by metric\n\
             \x20 code_exec             2       2        0   0.0000   0.0000\n\n\
             stderr = standard error of the mean over the tasks (— for a single task)\n\n\
             code_exec assertions stopped by a limit: timeout 2, memory_limit 1\n",
            tasks.display(),
            outputs.display()
        )
    );
}

#[test]
fn the_verdict_cannot_be_forged_from_inside() {
    if !sandbox_available() {
        return;
    }
    // Each code is wrong (g() is 1, the target wants 2) and tries to pass all the same.
    const WRONG: &str = "def g():\n    return 1\n";
    let forgeries = [
        ("exit_early", "import os\nos._exit(0)"),
        ("sys_exit", "import sys\nsys.exit(0)"),
        (
            "patch_builtins",
            "import builtins\nbuiltins.eval = lambda *a, **k: True\nbuiltins.AssertionError = SystemExit",
        ),
        ("write_verdict", "import os\nos.write(3, b'0' * 32)\nos._exit(0)"),
        ("read_own_script", "import sys\nsource = open(sys.argv[0]).read()"),
        (
            "frame_lookup",
            "import sys\nframe = sys._getframe(1)\nimport os\nos.write(3, frame.f_locals['token'])\nos._exit(0)",
        ),
        (
            "traceback_frame",
            "try:\n    raise ValueError\nexcept ValueError as error:\n    frame = error.__traceback__.tb_frame.f_back",
        ),
        ("garbage_collector", "import gc\nobjects = gc.get_objects()"),
        (
            "signal_frames",
            "import signal\nsignal.signal(signal.SIGALRM, lambda number, frame: None)",
        ),
        ("tracing", "import sys\nsys.settrace(lambda *args: None)"),
        ("ctypes", "import ctypes\nmemory = ctypes.string_at(1, 1)"),
        // A third-party module with native code (cffi's) could read any memory.
        ("site_packages", "import _cffi_backend"),
        // So could bytecode built by hand.
        ("new_code", "g.__code__.replace(co_consts=(None, 2))"),
        // A subinterpreter has none of the audit hooks (and may import ctypes).
        ("subinterpreter", "import _xxsubinterpreters"),
        // Nor under another name.
        (
            "alias",
            "import glob, importlib.machinery, importlib.util, sys\n\
             path = glob.glob(sys.prefix + '/lib/python3*/lib-dynload/_ctypes.*.so')[0]\n\
             loader = importlib.machinery.ExtensionFileLoader('x._ctypes', path)\n\
             importlib.util.module_from_spec(importlib.util.spec_from_loader('x._ctypes', loader))",
        ),
        // Nor has a program run anew.
        ("exec", "import os, sys\nos.execv(sys.executable, [sys.executable, '-c', 'pass'])"),
        // The target is no global of the program for the code to read.
        ("read_target", "import sys\ntarget = sys.modules['__main__'].__evalctl_target"),
    ];
    let mut attacks: Vec<Attack> = forgeries
        .iter()
        .map(|(id, code)| attack(id, format!("{WRONG}{code}"), &["g() == 2"]))
        .collect();
    // A target sees the builtins as they were before the code ran.
    attacks.push(attack(
        "patch_isinstance",
        format!("{WRONG}import builtins\nbuiltins.isinstance = lambda *args: True"),
        &["isinstance(g(), str)"],
    ));
    // Nor can the code reach the target's builtins through a name this program looks up once
    // the code has run (its globals are the code's to rebind), or a key of its own type.
    const ALWAYS_EQUAL: &str = "class Yes:\n    def __eq__(self, other):\n        return True\n\
                                def f(x):\n    return Yes()\n";
    const FAKE_TYPE: &str = "import sys\nreal = dict\nclass Scope(real):\n\
                             \x20   def __getitem__(self, key):\n\
                             \x20       value = real.__getitem__(self, key)\n\
                             \x20       if key == '__builtins__':\n\
                             \x20           value = real(value)\n\
                             \x20           value['type'] = lambda o: int\n\
                             \x20       return value\n";
    let safe_target = "__builtins__['type'](f(2)) is int and f(2) == 4";
    attacks.push(attack(
        "rebind_dict",
        format!(
            "{ALWAYS_EQUAL}{FAKE_TYPE}sys.modules['__main__'].dict = lambda *a, **k: Scope(*a, **k)\n"
        ),
        &[safe_target],
    ));
    attacks.push(attack(
        "rebind_assertion_error",
        format!(
            "{ALWAYS_EQUAL}import sys\nsys.modules['__main__'].AssertionError = None.__class__\n"
        ),
        &["__builtins__['type'](f(2)) is int"],
    ));
    attacks.push(attack(
        "key_of_its_own",
        format!(
            "{ALWAYS_EQUAL}class Key(str):\n    def __hash__(self):\n        return hash('type')\n\
             \x20   def __eq__(self, other):\n        return True\n\
             globals()[Key('type')] = lambda o: int\n"
        ),
        &["type(f(2)) is int"],
    ));
    // Nor through a builtin of its own (bare names are the code's), or by changing the builtins
    // while the target runs.
    let guarded = "__builtins__['type'](f(2)) is __builtins__['int'] and f(2) == 4";
    attacks.push(attack(
        "own_int",
        format!("{ALWAYS_EQUAL}int = Yes\n"),
        &[guarded],
    ));
    attacks.push(attack(
        "builtins_changed_by_the_call",
        format!(
            "{ALWAYS_EQUAL}import builtins\n\
             def f(x):\n\
             \x20   builtins.int = Yes\n\
             \x20   globals()['__builtins__'] = {{'int': Yes, 'type': lambda o: Yes}}\n\
             \x20   return Yes()\n"
        ),
        &[guarded],
    ));
    let sandbox = Sandbox::new();
    let (lines, output) = score_as(User::Current, &sandbox, &attacks, "5");
    assert_eq!(code(&output), 0, "{}", stderr_text(&output));
    let early = "g() == 2: the script exited 0 without completing its assertion (did the code \
                 exit early?)";
    let expected = [
        ("exit_early", early.to_string()),
        ("sys_exit", early.to_string()),
        // Its AssertionError is not the one raised.
        ("patch_builtins", "g() == 2: AssertionError".to_string()),
        ("write_verdict", early.to_string()),
        (
            "read_own_script",
            "g() == 2: FileNotFoundError: [Errno 2] No such file or directory: '-'".to_string(),
        ),
        (
            "frame_lookup",
            "g() == 2: ValueError: evalctl code_exec: sys._getframe is not available".to_string(),
        ),
        (
            "traceback_frame",
            "g() == 2: AttributeError: evalctl code_exec: tb_frame is not available".to_string(),
        ),
        (
            "garbage_collector",
            "g() == 2: RuntimeError: evalctl code_exec: gc.get_objects is not available"
                .to_string(),
        ),
        (
            "signal_frames",
            "g() == 2: ImportError: evalctl code_exec: module signal is not available".to_string(),
        ),
        (
            "tracing",
            "g() == 2: RuntimeError: evalctl code_exec: sys.settrace is not available".to_string(),
        ),
        (
            "ctypes",
            "g() == 2: ImportError: evalctl code_exec: module ctypes is not available".to_string(),
        ),
        (
            "site_packages",
            "g() == 2: ModuleNotFoundError: No module named '_cffi_backend'".to_string(),
        ),
        (
            "new_code",
            "g() == 2: RuntimeError: evalctl code_exec: code.__new__ is not available".to_string(),
        ),
        (
            "subinterpreter",
            "g() == 2: ImportError: evalctl code_exec: module _xxsubinterpreters is not available"
                .to_string(),
        ),
        (
            "alias",
            "g() == 2: ImportError: evalctl code_exec: module x._ctypes is not available"
                .to_string(),
        ),
        (
            "exec",
            "g() == 2: RuntimeError: evalctl code_exec: os.exec is not available".to_string(),
        ),
        (
            "read_target",
            "g() == 2: AttributeError: module '__main__' has no attribute '__evalctl_target'"
                .to_string(),
        ),
        (
            "patch_isinstance",
            "isinstance(g(), str): AssertionError".to_string(),
        ),
        ("rebind_dict", format!("{safe_target}: AssertionError")),
        (
            "rebind_assertion_error",
            "__builtins__['type'](f(2)) is int: AssertionError".to_string(),
        ),
        (
            "key_of_its_own",
            "type(f(2)) is int: AssertionError".to_string(),
        ),
        ("own_int", format!("{guarded}: AssertionError")),
        (
            "builtins_changed_by_the_call",
            format!("{guarded}: AssertionError"),
        ),
    ];
    for (id, failure_text) in expected {
        assert_eq!(failure(&lines, id, User::Current), failure_text, "{id}");
    }
    // The standard library still works where it asks for frames it may not have.
    let honest = attack(
        "honest",
        "from collections import namedtuple\nfrom typing import TypeVar\nimport warnings\n\
         from concurrent.futures import ThreadPoolExecutor\nfrom dataclasses import dataclass\n\
         import pprint\n\
         T = TypeVar('T')\nPoint = namedtuple('Point', 'x y z', defaults=[0])\n\
         warnings.warn('fine')\n\
         @dataclass\nclass Pair:\n    x: int = 2\n\
         def g():\n    with ThreadPoolExecutor(2) as pool:\n\
         \x20       return pool.submit(lambda: Point(Pair().x, 3).x + Point(0, 0).z).result()",
        &["g() == 2"],
    );
    let (lines, _) = score_as(User::Current, &sandbox, &[honest], "5");
    assert_eq!(lines["honest"]["score"], 1.0, "{}", lines["honest"]);
}

#[test]
fn one_output_cannot_change_how_another_is_scored() {
    if !sandbox_available() {
        return;
    }
    let plant = "import os, sys\n\
                 site = os.path.expanduser('~/.local/lib/python%d.%d/site-packages' % sys.version_info[:2])\n\
                 os.makedirs(site, exist_ok=True)\n\
                 for name in ('usercustomize.py', 'sitecustomize.py'):\n\
                 \x20   open(os.path.join(site, name), 'w').write('import builtins\\nbuiltins.AssertionError = SystemExit\\n')\n\
                 open('/sandbox/left_behind', 'w').write('x')\n\
                 def f():\n    return True";
    let attacks = [
        attack("plant", plant, &["f()"]),
        attack("wrong", "def f():\n    return False", &["f()"]),
        attack("fresh", "import os", &["os.listdir('/sandbox') == []"]),
    ];
    let sandbox = Sandbox::new();
    let (lines, output) = score_as(User::Current, &sandbox, &attacks, "5");
    assert_eq!(code(&output), 0, "{}", stderr_text(&output));
    assert_eq!(lines["plant"]["score"], 1.0, "{}", lines["plant"]);
    assert_eq!(
        failure(&lines, "wrong", User::Current),
        "f(): AssertionError"
    );
    assert_eq!(lines["fresh"]["score"], 1.0, "{}", lines["fresh"]);
}

#[test]
fn the_code_starts_no_process_and_nothing_outlives_its_script() {
    if !sandbox_available() {
        return;
    }
    // A copy of the script could try the target's verdict (a copy that guessed right ends
    // well), and escape the memory and CPU limits, which are each process's: there is none.
    let seconds = format!("{}", 86_000 + fastrand::u32(..1000));
    let forks = "import os\ndef f():\n    return os.fork() >= 0";
    let spawns = format!(
        "import os\ndef f():\n    return os.posix_spawn('/bin/sleep', ['sleep', '{seconds}'], {{}}) > 0"
    );
    // A script that leaves its process group (which evalctl kills at the timeout) for a session
    // of its own dies with the sandbox's launcher all the same.
    let detached = "import os, time\nos.setsid()\ntime.sleep(86400)\ndef f():\n    return True";
    let sandbox = Sandbox::new();
    let (lines, output) = score_as(
        User::Current,
        &sandbox,
        &[
            attack("fork", forks, &["f()"]),
            attack("spawn", spawns, &["f()"]),
            attack("detached", detached, &["f()"]),
        ],
        "2",
    );
    assert_eq!(code(&output), 0, "{}", stderr_text(&output));
    let refused = "f(): PermissionError: [Errno 1] Operation not permitted";
    assert_eq!(failure(&lines, "fork", User::Current), refused);
    // (The audit hook refuses a spawn before the kernel would.)
    assert_eq!(
        failure(&lines, "spawn", User::Current),
        "f(): RuntimeError: evalctl code_exec: os.posix_spawn is not available"
    );
    assert_eq!(
        failure(&lines, "detached", User::Current),
        "f(): timed out after 2s"
    );
    // Killed as its launcher died, which evalctl waited for: gone at once, or about to be.
    assert!(
        crate::common::wait_until(std::time::Duration::from_secs(60), || {
            detached_scripts().is_empty()
        }),
        "the detached script outlived evalctl: {:?}",
        detached_scripts()
    );
}

/// The sandboxed scripts (`python3 -I -S -`) that lead a session of their own, as only one that
/// called `setsid` does.
fn detached_scripts() -> Vec<u32> {
    std::fs::read_dir("/proc")
        .unwrap()
        .flatten()
        .filter_map(|entry| entry.file_name().to_str()?.parse::<u32>().ok())
        .filter(|pid| {
            let script = std::fs::read(format!("/proc/{pid}/cmdline")).is_ok_and(|cmdline| {
                cmdline.ends_with(b"\0-I\0-S\0-\0")
                    && String::from_utf8_lossy(&cmdline).contains("python")
            });
            // The session is the sixth field of `stat`, the fourth after the command's `)`.
            let leads_its_session = std::fs::read_to_string(format!("/proc/{pid}/stat"))
                .ok()
                .and_then(|stat| {
                    let after = stat.rsplit_once(')')?.1.to_string();
                    after.split_whitespace().nth(3).map(str::to_string)
                })
                .is_some_and(|session| session == pid.to_string());
            script && leads_its_session
        })
        .collect()
}

/// A tasks suite with one `code_exec` task, generated by a `--model-command` that leaves
/// `model-called` behind when it runs.
fn code_suite(sandbox: &Sandbox) -> std::path::PathBuf {
    sandbox.write_executable(
        "model.sh",
        "#!/bin/sh\ncat >/dev/null\ntouch model-called\nprintf 'def f():\\n    return 1\\n'\n",
    );
    sandbox.write(
        "tasks.jsonl",
        format!(
            "{}\n",
            json!({"task_id": "t", "category": "code_exec", "prompt": "Write f.",
                   "targets": ["f() == 1"], "metric_name": "code_exec", "post_process": "none"})
        ),
    )
}

/// `evalctl` (with `args` and the variables `env`) where this process's user may create no user
/// namespace: inside a user namespace of its own whose `user.max_user_namespaces` is 0.
fn without_user_namespaces(
    sandbox: &Sandbox,
    args: &[&str],
    env: &[(&str, &str)],
) -> std::process::Output {
    let mut command = Command::new("unshare");
    command
        .args(["--user", "--map-root-user", "sh", "-c"])
        .arg("echo 0 > /proc/sys/user/max_user_namespaces && exec \"$@\"")
        .arg("sh")
        .arg(crate::common::bin())
        .args(args)
        .current_dir(sandbox.path());
    clean_environment(&mut command);
    command.envs(env.iter().copied()).output().unwrap()
}

const REFUSAL: &str = "error: code_exec: model-written code runs in a sandbox, which cannot be \
    built here: the kernel refused new namespaces (unshare: ENOSPC: No space left on device); \
    unprivileged user namespaces may be disabled (sysctl kernel.unprivileged_userns_clone, \
    user.max_user_namespaces) or forbidden by a container runtime or AppArmor. To run it without \
    isolation, with your rights (only code you trust): --unsafe-code-exec, or unsafe_code_exec = \
    true under [tasks] in a file given with --config, or EVALCTL_UNSAFE_CODE_EXEC=true\n";

#[test]
fn without_a_sandbox_evalctl_refuses_before_any_model_call() {
    let sandbox = Sandbox::new();
    code_suite(&sandbox);
    let run = [
        "tasks",
        "run",
        "tasks.jsonl",
        "--model-command",
        "sh model.sh",
        "--format",
        "text",
    ];
    let output = without_user_namespaces(&sandbox, &run, &[]);
    assert_eq!(stderr_text(&output), REFUSAL);
    assert_eq!(code(&output), 3);
    assert_eq!(stdout_text(&output), "");
    assert!(!sandbox.exists("model-called"), "the model was called");

    sandbox.write(
        "outputs.jsonl",
        format!(
            "{}\n",
            json!({"task_id": "t", "output": "def f():\n    return 1"})
        ),
    );
    let score = [
        "tasks",
        "score",
        "tasks.jsonl",
        "--outputs",
        "outputs.jsonl",
        "--format",
        "text",
    ];
    let output = without_user_namespaces(&sandbox, &score, &[]);
    assert_eq!(stderr_text(&output), REFUSAL);
    assert_eq!(code(&output), 3);
}

#[test]
fn unsafe_code_exec_runs_without_namespaces_with_a_scrubbed_environment() {
    let sandbox = Sandbox::new();
    code_suite(&sandbox);
    sandbox.write(
        "outputs.jsonl",
        format!(
            "{}\n",
            json!({"task_id": "t", "output":
                   "import os\ndef f():\n    return 0 if 'EVALCTL_TEST_API_KEY' in os.environ else 1"})
        ),
    );
    let score = |extra: &[&str], env: &[(&str, &str)]| {
        let _ = std::fs::remove_file(sandbox.join("per_task.jsonl"));
        let mut args = vec![
            "tasks",
            "score",
            "tasks.jsonl",
            "--outputs",
            "outputs.jsonl",
            "--output",
            "per_task.jsonl",
            "--format",
            "json",
        ];
        args.extend(extra);
        let mut env = env.to_vec();
        env.push(("EVALCTL_TEST_API_KEY", "sk-secret"));
        let output = without_user_namespaces(&sandbox, &args, &env);
        assert_eq!(code(&output), 0, "{}", stderr_text(&output));
        sandbox.jsonl("per_task.jsonl").remove(0)
    };
    for (flags, env) in [
        (&["--unsafe-code-exec"][..], &[][..]),
        (&[][..], &[("EVALCTL_UNSAFE_CODE_EXEC", "true")][..]),
    ] {
        let line = score(flags, env);
        assert_eq!(line["score"], 1.0, "{line}");
        assert_eq!(line["sandbox"], "none", "{line}");
    }
}

#[test]
fn only_a_config_file_the_command_line_names_can_give_up_the_sandbox() {
    let sandbox = Sandbox::new();
    code_suite(&sandbox);
    sandbox.write("evalctl.toml", "[tasks]\nunsafe_code_exec = true\n");
    let run = [
        "tasks",
        "run",
        "tasks.jsonl",
        "--model-command",
        "sh model.sh",
        "--output",
        "per_task.jsonl",
        "--format",
        "json",
    ];
    // Found by discovery (a repository just cloned, say): not a say-so.
    let output = without_user_namespaces(&sandbox, &run, &[]);
    assert_eq!(code(&output), 3);
    assert_eq!(
        stderr_text(&output),
        format!(
            "warning: evalctl.toml:2: tasks.unsafe_code_exec = true is not used: a file found in \
             this directory or a parent may not give up the code sandbox (a repository you \
             cloned could); pass --unsafe-code-exec, or --config evalctl.toml if you trust the \
             file\n{REFUSAL}"
        )
    );
    assert!(!sandbox.join("per_task.jsonl").exists());
    let named = [&run[..], &["--config", "evalctl.toml"]].concat();
    let output = without_user_namespaces(&sandbox, &named, &[]);
    assert_eq!(code(&output), 0, "{}", stderr_text(&output));
    let line = sandbox.jsonl("per_task.jsonl").remove(0);
    assert_eq!(line["score"], 1.0, "{line}");
    assert_eq!(line["sandbox"], "none", "{line}");
}

#[test]
fn a_full_tmpdir_without_the_sandbox_is_evalctls_error() {
    let sandbox = Sandbox::new();
    code_suite(&sandbox);
    sandbox.write(
        "outputs.jsonl",
        format!(
            "{}\n",
            json!({"task_id": "t", "output": "def f():\n    return 1"})
        ),
    );
    let output = evalctl()
        .args([
            "tasks",
            "score",
            "tasks.jsonl",
            "--outputs",
            "outputs.jsonl",
        ])
        .args(["--unsafe-code-exec", "--format", "text"])
        .env("TMPDIR", sandbox.join("no-such-dir"))
        .current_dir(sandbox.path())
        .output()
        .unwrap();
    assert_eq!(
        stderr_text(&output),
        format!(
            "error: cannot create a temporary directory in {} for code_exec: No such file or \
             directory\n",
            sandbox.join("no-such-dir").display()
        )
    );
    assert_eq!(code(&output), 4);
}

#[test]
fn a_copy_of_the_script_never_learns_the_targets_verdict() {
    // Without the sandbox a script may fork: each copy returns one guess to the target, its
    // verdict written where evalctl does not read, and the guess whose copy ended well would be
    // the answer the script returns for real. A copy ends the same way whatever the verdict.
    let oracle = "import os\n\
                  def f(x):\n\
                  \x20   for guess in range(10):\n\
                  \x20       pid = os.fork()\n\
                  \x20       if pid == 0:\n\
                  \x20           os.dup2(os.open(os.devnull, os.O_WRONLY), 3)\n\
                  \x20           return guess\n\
                  \x20       _, status = os.waitpid(pid, 0)\n\
                  \x20       if os.waitstatus_to_exitcode(status) == 0:\n\
                  \x20           return guess\n\
                  \x20   return -1\n";
    let sandbox = Sandbox::new();
    let (tasks, outputs) = task_files(&sandbox, &[attack("oracle", oracle, &["f(2) == 4"])]);
    let output = evalctl()
        .args(["tasks", "score", "--unsafe-code-exec", "--format", "json"])
        .arg(&tasks)
        .arg("--outputs")
        .arg(&outputs)
        .args(["--output", "per_task.jsonl"])
        .current_dir(sandbox.path())
        .output()
        .unwrap();
    assert_eq!(code(&output), 0, "{}", stderr_text(&output));
    let line = &sandbox.jsonl("per_task.jsonl")[0];
    assert_eq!(
        (
            &line["score"],
            &line["sandbox"],
            &line["assertions"]["first_failure"]
        ),
        (
            &json!(0.0),
            &json!("none"),
            &json!("f(2) == 4: AssertionError")
        ),
    );
}

#[test]
fn a_python3_linked_from_a_folder_of_secrets_shows_the_code_only_its_installation() {
    if !sandbox_available() {
        return;
    }
    use std::os::unix::fs::PermissionsExt;
    // `~/bin/python3` linked to the system's interpreter, beside `~/.aws/credentials`: the
    // sandbox mounts the interpreter's installation, never the folder that holds the link.
    let sandbox = Sandbox::new();
    let home = sandbox.join("home");
    std::fs::create_dir_all(home.join("bin")).unwrap();
    let system_python = std::fs::canonicalize("/usr/bin/python3").unwrap();
    std::os::unix::fs::symlink(&system_python, home.join("bin/python3")).unwrap();
    sandbox.write("home/.aws/credentials", "aws_secret_access_key=SECRET");
    for dir in [sandbox.path(), &home, &home.join(".aws")] {
        std::fs::set_permissions(dir, std::fs::Permissions::from_mode(0o755)).unwrap();
    }
    let (tasks, outputs) = task_files(
        &sandbox,
        &[attack(
            "walk",
            "import os\nfound = [f for r, ds, fs in os.walk('/') for f in fs if f == 'credentials']",
            &["found == []"],
        )],
    );
    // Named through /proc/self/root: evalctl refuses an interpreter under /tmp, where the test's
    // folder is (the sandbox builds its root there); the way it is found is the same as ~/bin's.
    let bin = format!("/proc/self/root{}", home.join("bin").display());
    let output = evalctl_as(User::Current, sandbox.path())
        .env("PATH", format!("{bin}:/usr/bin:/bin"))
        .args(["tasks", "score", "--format", "json"])
        .arg(&tasks)
        .arg("--outputs")
        .arg(&outputs)
        .args(["--output", "lines.jsonl"])
        .output()
        .unwrap();
    let line = &sandbox.jsonl("lines.jsonl")[0];
    assert_eq!(
        (&line["sandbox"], &line["score"]),
        (&json!("namespaces"), &json!(1.0)),
        "{line} {}",
        stderr_text(&output)
    );
    // A python3 installed in the home directory itself (a copy, not a link): its installation
    // would be the whole home directory, which is refused.
    std::fs::remove_file(home.join("bin/python3")).unwrap();
    std::fs::copy(&system_python, home.join("bin/python3")).unwrap();
    let output = evalctl_as(User::Current, sandbox.path())
        .env("PATH", format!("{bin}:/usr/bin:/bin"))
        .env("HOME", format!("/proc/self/root{}", home.display()))
        .args(["tasks", "score"])
        .arg(&tasks)
        .arg("--outputs")
        .arg(&outputs)
        .output()
        .unwrap();
    assert_eq!(code(&output), 2);
    assert_eq!(
        stderr_text(&output),
        format!(
            "error: python3: code_exec tasks run their assertions with it, but it is installed in \
             {}, which the sandbox would show whole to model-written code (/, or \
             your home directory or a folder above it): put a python3 installed elsewhere first \
             on PATH (such as /usr/bin/python3)\n",
            home.display()
        )
    );
}
