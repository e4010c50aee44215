//! The program a command names: resolved against its working directory and PATH, and checked
//! before the run (it exists and can run; a script has a shebang line; an interpreter's script
//! exists).

use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};

/// Interpreters whose first argument is the script they run: preflight checks that the script
/// exists, and the multi-word `--evaluator-command` form ends after the script.
pub const SCRIPT_INTERPRETERS: &[&str] = &[
    "bash", "sh", "zsh", "python", "python3", "node", "ruby", "perl",
];

/// The program to run: a relative path with a slash is taken relative to the evaluator's cwd (as
/// a shell in that directory would); a bare name is looked up on PATH by the OS.
pub(super) fn resolve_program(program: &str, cwd: Option<&Path>) -> PathBuf {
    let path = PathBuf::from(program);
    match cwd {
        Some(dir) if program.contains('/') && path.is_relative() => {
            let joined = dir.join(path);
            std::path::absolute(&joined).unwrap_or(joined)
        }
        _ => path,
    }
}

pub(super) fn check_program(program: &str, resolved: &Path) -> Result<(), String> {
    if !program.contains('/') {
        return match find_on_path(program) {
            Some(_) => Ok(()),
            None => Err(format!("executable '{program}' not found on PATH")),
        };
    }
    let metadata = std::fs::metadata(resolved).map_err(|_| format!("'{program}': no such file"))?;
    if metadata.is_dir() {
        return Err(format!("'{program}' is a directory, not an executable"));
    }
    if metadata.permissions().mode() & 0o111 == 0 {
        return Err(format!(
            "'{program}' is not executable (the run bit is not set): chmod +x {program}, or run it as '{} {program}'",
            script_interpreter(resolved)
        ));
    }
    let mut head = [0u8; 4];
    let read = std::fs::File::open(resolved)
        .and_then(|mut file| std::io::Read::read(&mut file, &mut head))
        .map_err(|err| format!("'{program}': cannot read: {err}"))?;
    let head = &head[..read];
    if shebang_line(resolved).is_some_and(|line| line.ends_with('\r')) {
        return Err(format!(
            "'{program}': the script has Windows line endings (CRLF): its shebang line ends in a \
             carriage return, which the system takes as part of the interpreter's name; convert \
             the file (dos2unix {program}, or sed -i 's/\\r$//' {program})"
        ));
    }
    if !head.starts_with(b"#!") && !head.starts_with(b"\x7fELF") {
        let interpreter = script_interpreter(resolved);
        return Err(format!(
            "'{program}' has no shebang line: start it with a line such as {}, or run it as '{interpreter} {program}'",
            shebang_for(&interpreter)
        ));
    }
    Ok(())
}

/// The interpreter to suggest for running the script at `path` by hand: the one its `#!` line
/// names (through `env`, its first operand), else the usual one for its extension (`python3`
/// for `.py`, `node` `.js`, `ruby` `.rb`, `perl` `.pl`, `bash` `.bash`), else `sh`.
pub(super) fn script_interpreter(path: &Path) -> String {
    if let Some(named) = shebang_command(path) {
        return named;
    }
    let by_extension = match path.extension().and_then(|extension| extension.to_str()) {
        Some("py") => "python3",
        Some("js" | "mjs" | "cjs") => "node",
        Some("rb") => "ruby",
        Some("pl") => "perl",
        Some("bash") => "bash",
        _ => "sh",
    };
    by_extension.to_string()
}

/// The shebang line to suggest for `interpreter`.
pub(super) fn shebang_for(interpreter: &str) -> String {
    match interpreter {
        "sh" => "#!/bin/sh".to_string(),
        other => format!("#!/usr/bin/env {other}"),
    }
}

/// The command a script's `#!` line runs, by name: `python3` for `#!/usr/bin/python3` and for
/// `#!/usr/bin/env -S python3 -u`.
fn shebang_command(path: &Path) -> Option<String> {
    let line = shebang_line(path)?;
    let mut words = line.split_whitespace();
    let interpreter = words.next()?;
    let name = |word: &str| word.rsplit('/').next().unwrap_or(word).to_string();
    if name(interpreter) != "env" {
        return Some(name(interpreter));
    }
    words
        .find(|word| !word.starts_with('-') && !word.contains('='))
        .map(name)
}

/// The interpreter a script's `#!` line names, if it has one.
pub(super) fn shebang_interpreter(path: &Path) -> Option<String> {
    Some(shebang_line(path)?.split_whitespace().next()?.to_string())
}

/// A script's `#!` line, without the `#!`.
fn shebang_line(path: &Path) -> Option<String> {
    let mut head = [0u8; 256];
    let read = std::io::Read::read(&mut std::fs::File::open(path).ok()?, &mut head).ok()?;
    let line = head[..read].strip_prefix(b"#!")?;
    let line = line.split(|&b| b == b'\n').next().unwrap_or_default();
    Some(String::from_utf8_lossy(line).into_owned())
}

pub(super) fn check_script_argument(argv: &[String], cwd: Option<&Path>) -> Result<(), String> {
    let interpreter = Path::new(&argv[0])
        .file_name()
        .and_then(|name| name.to_str())
        .unwrap_or_default();
    let Some(script) = argv.get(1) else {
        return Ok(());
    };
    if !SCRIPT_INTERPRETERS.contains(&interpreter) || script.starts_with('-') {
        return Ok(());
    }
    let path = resolve_program(&format!("./{script}"), cwd);
    let path = if Path::new(script).is_absolute() {
        PathBuf::from(script)
    } else {
        path
    };
    if path.is_file() {
        Ok(())
    } else if path.is_dir() {
        // `python3 pkg` runs `pkg/__main__.py`; the script must be named as a file, whose
        // content keys the cache and `--resume` (a directory's would not be read).
        let main = Path::new(script).join("__main__.py");
        let name_it = match interpreter.starts_with("python") && path.join("__main__.py").is_file()
        {
            true => format!("name the file it runs ({interpreter} {})", main.display()),
            false => "name the script file".to_string(),
        };
        Err(format!(
            "script '{script}' is a directory: {name_it}, whose content keys the cache and \
             --resume"
        ))
    } else {
        Err(format!("script '{script}' not found"))
    }
}

/// Whether `program` names something to run: a path (checked when the command starts), or a bare
/// name found on PATH.
pub fn on_path(program: &str) -> bool {
    program.contains('/') || find_on_path(program).is_some()
}

fn find_on_path(program: &str) -> Option<PathBuf> {
    let path = std::env::var_os("PATH")?;
    std::env::split_paths(&path)
        .map(|dir| dir.join(program))
        .find(|candidate| {
            std::fs::metadata(candidate)
                .is_ok_and(|meta| meta.is_file() && meta.permissions().mode() & 0o111 != 0)
        })
}
