//! The files a command writes are never the files it reads, nor one another: checked before any
//! work, so that `--report data.jsonl`, `--junit results.jsonl` or `--output train.jsonl` cannot
//! replace an input or mix results into it. Nor is a results file read twice (`merge r r`,
//! `report r ./r`), which would count its calls twice. A file is the same as another when both exist and
//! are one file (device and inode, however they are named), or when they are named by the same
//! path.

use std::path::Path;

use crate::error::{Fatal, Problem};
use crate::input::same_file;

/// What a file is to the command: the flag (or argument) that names it and its path.
pub type Named<'a> = (&'a str, &'a Path);

/// Refuse every file of `written` (`--output`, `--report`, `--junit`, ...) that is also a file of
/// `read` (`--dataset`, a results file, ...) or another file of `written`, one problem for each.
/// Standard input and output (`-`) are no file.
pub fn check_distinct(written: &[Named<'_>], read: &[Named<'_>]) -> anyhow::Result<()> {
    let mut problems = Vec::new();
    for (index, &(flag, path)) in written.iter().enumerate() {
        if is_stdio(path) {
            continue;
        }
        let earlier = written[..index].iter().map(|other| (other, "written"));
        let clash = read
            .iter()
            .map(|other| (other, "read"))
            .chain(earlier)
            .find(|((_, other), _)| !is_stdio(other) && same_file(path, other));
        if let Some(((other_flag, _), role)) = clash {
            let path = path.display();
            problems.push(Problem::new(
                flag,
                if role == "read" {
                    format!("{path} is also {other_flag}, an input: name another file")
                } else {
                    format!("{path} is also {other_flag}: name a file for each")
                },
            ));
        }
    }
    if problems.is_empty() {
        Ok(())
    } else {
        Err(Fatal::Invalid(problems).into())
    }
}

/// Refuse a file of `files` (results files, `-` for stdin) that is an earlier one again, however
/// it is named: its calls would count twice.
pub fn check_read_once(files: &[String]) -> anyhow::Result<()> {
    for (index, file) in files.iter().enumerate() {
        let path = Path::new(file);
        let again = files[..index].iter().any(|earlier| {
            earlier == file || (!is_stdio(path) && same_file(path, Path::new(earlier)))
        });
        if again {
            return Err(Fatal::Invalid(vec![Problem::new(
                file.as_str(),
                "given twice: pass each file once",
            )])
            .into());
        }
    }
    Ok(())
}

fn is_stdio(path: &Path) -> bool {
    path.as_os_str() == "-"
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_file_named_two_ways_is_one_file_and_stdin_is_none() {
        let dir = tempfile::tempdir().unwrap();
        let data = dir.path().join("data.jsonl");
        std::fs::write(&data, "{}\n").unwrap();
        let other = dir.path().join("sub/../data.jsonl");
        std::fs::create_dir(dir.path().join("sub")).unwrap();
        assert!(check_distinct(&[("--report", &other)], &[("--dataset", &data)]).is_err());
        let new = dir.path().join("new.xml");
        assert!(check_distinct(&[("--junit", &new), ("--report", &new)], &[]).is_err());
        assert!(check_distinct(&[("--junit", &new)], &[("--dataset", &data)]).is_ok());
        let stdin = Path::new("-");
        assert!(check_distinct(&[("--output", stdin)], &[("candidates", stdin)]).is_ok());
        // Files not written yet, named through `..`: one file.
        let through = dir.path().join("sub/../new.xml");
        assert!(check_distinct(&[("--junit", &new), ("--report", &through)], &[]).is_err());
        // A device takes any number of outputs.
        let null = Path::new("/dev/null");
        assert!(check_distinct(&[("--junit", null), ("--report", null)], &[]).is_ok());
    }
}
