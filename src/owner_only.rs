//! How evalctl writes a whole file (a report): replaced atomically, written to a temporary file
//! beside it (readable by its owner only) then renamed over it, so a failure leaves the previous
//! file as it was and no temporary file behind.

use std::fs::Permissions;
use std::io::Write;
use std::os::unix::fs::PermissionsExt;
use std::path::Path;

/// The mode of a file evalctl creates.
const FILE_MODE: u32 = 0o600;

/// Replace `path` with `contents` atomically: a temporary file in the same directory (readable
/// by the owner only), written and synced, then renamed to `path`. On failure `path` is as it
/// was and the temporary file is removed.
pub fn replace(path: &Path, contents: &[u8]) -> std::io::Result<()> {
    let dir = match path.parent() {
        Some(parent) if !parent.as_os_str().is_empty() => parent,
        _ => Path::new("."),
    };
    let mut temporary = tempfile::Builder::new()
        .prefix(".evalctl-")
        .suffix(".tmp")
        .permissions(Permissions::from_mode(FILE_MODE))
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
    fn a_replaced_file_is_the_owners_only_and_nothing_else_is_left() {
        let dir = tempfile::tempdir().expect("a directory");
        let nested = dir.path();
        let file = nested.join("report.html");
        std::fs::write(&file, "old").expect("written");
        replace(&file, b"new").expect("replaced");
        assert_eq!(std::fs::read_to_string(&file).expect("read"), "new");
        assert_eq!(mode(&file), 0o600);
        let names: Vec<_> = std::fs::read_dir(nested)
            .expect("listed")
            .map(|entry| entry.expect("an entry").file_name())
            .collect();
        assert_eq!(names, ["report.html"]);
    }
}
