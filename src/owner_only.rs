//! The files and directories evalctl creates to keep what evaluators said (results files,
//! reports, the cache) are readable by their owner only: files 0600, directories 0700. A whole
//! file (a report) is replaced atomically: written to a temporary file beside it, then renamed
//! over it, so a failure leaves the previous file as it was and no temporary file behind.

use std::fs::{DirBuilder, OpenOptions, Permissions};
use std::io::Write;
use std::os::unix::fs::{DirBuilderExt, OpenOptionsExt, PermissionsExt};
use std::path::Path;

/// The mode of a file evalctl creates.
const FILE_MODE: u32 = 0o600;
/// The mode of a directory evalctl creates.
const DIR_MODE: u32 = 0o700;

/// Options that create a file readable by its owner only (an existing file keeps its mode).
pub fn file_options() -> OpenOptions {
    let mut options = OpenOptions::new();
    options.mode(FILE_MODE);
    options
}

/// Create `dir` and any missing parents, each readable by its owner only (existing ones are left
/// as they are).
pub fn create_dir_all(dir: &Path) -> std::io::Result<()> {
    DirBuilder::new().recursive(true).mode(DIR_MODE).create(dir)
}

/// Replace `path` with `contents` atomically: a temporary file in the same directory, written
/// and synced, then renamed to `path`. A file that was there keeps its mode (a new one is
/// readable by the owner only), and a link to a file stays a link: the file it leads to is
/// replaced. On failure `path` is as it was and the temporary file is removed. A `path` that is
/// not a regular file (`/dev/stdout`, a named pipe) is written as it is: there is nothing there
/// to keep or replace.
pub fn replace(path: &Path, contents: &[u8]) -> std::io::Result<()> {
    let existing = std::fs::metadata(path).ok();
    if existing
        .as_ref()
        .is_some_and(|meta| !meta.is_file() && !meta.is_dir())
    {
        return OpenOptions::new()
            .write(true)
            .open(path)
            .and_then(|mut file| file.write_all(contents));
    }
    let linked = crate::input::link_target(path);
    let path = linked.as_deref().unwrap_or(path);
    // The file's permissions, never its set-user-ID, set-group-ID or sticky bits.
    let mode = existing.map_or(FILE_MODE, |meta| meta.permissions().mode() & 0o777);
    let dir = match path.parent() {
        Some(parent) if !parent.as_os_str().is_empty() => parent,
        _ => Path::new("."),
    };
    let mut temporary = tempfile::Builder::new()
        .prefix(".evalctl-")
        .suffix(".tmp")
        .permissions(Permissions::from_mode(mode))
        .tempfile_in(dir)?;
    temporary.write_all(contents)?;
    temporary.as_file().sync_all()?;
    temporary.persist(path).map_err(|err| err.error)?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn mode(path: &Path) -> u32 {
        std::fs::metadata(path)
            .expect("exists")
            .permissions()
            .mode()
            & 0o777
    }

    #[test]
    fn created_files_and_directories_are_the_owners_only() {
        let dir = tempfile::tempdir().expect("a directory");
        let nested = dir.path().join("a/b");
        create_dir_all(&nested).expect("created");
        assert_eq!((mode(&dir.path().join("a")), mode(&nested)), (0o700, 0o700));
        let file = nested.join("report.html");
        replace(&file, b"new").expect("written");
        assert_eq!(std::fs::read_to_string(&file).expect("read"), "new");
        assert_eq!(mode(&file), 0o600);
        let names: Vec<_> = std::fs::read_dir(&nested)
            .expect("listed")
            .map(|entry| entry.expect("an entry").file_name())
            .collect();
        assert_eq!(names, ["report.html"]);
    }

    #[test]
    fn a_replaced_file_keeps_its_mode_and_a_link_stays_a_link() {
        let dir = tempfile::tempdir().expect("a directory");
        let shared = dir.path().join("shared.html");
        std::fs::write(&shared, "old").expect("written");
        std::fs::set_permissions(&shared, Permissions::from_mode(0o644)).expect("chmod");
        replace(&shared, b"new").expect("replaced");
        assert_eq!(mode(&shared), 0o644);
        let link = dir.path().join("link.html");
        std::os::unix::fs::symlink("shared.html", &link).expect("linked");
        replace(&link, b"newer").expect("replaced through the link");
        let still_a_link = std::fs::symlink_metadata(&link)
            .expect("exists")
            .file_type()
            .is_symlink();
        assert_eq!(
            (
                still_a_link,
                std::fs::read_to_string(&shared).expect("read"),
                mode(&shared)
            ),
            (true, "newer".to_string(), 0o644)
        );
        // A link to nothing yet creates the file it names; a set-user-ID file gives only its
        // permissions.
        let dangling = dir.path().join("dangling.html");
        std::os::unix::fs::symlink("made.html", &dangling).expect("linked");
        replace(&dangling, b"made").expect("written through the link");
        let made = dir.path().join("made.html");
        assert_eq!(
            (std::fs::read_to_string(&made).expect("read"), mode(&made)),
            ("made".to_string(), 0o600)
        );
        std::fs::set_permissions(&made, Permissions::from_mode(0o6755)).expect("chmod");
        replace(&made, b"again").expect("replaced");
        let full_mode = std::fs::metadata(&made)
            .expect("exists")
            .permissions()
            .mode()
            & 0o7777;
        assert_eq!(full_mode, 0o755);
    }
}
