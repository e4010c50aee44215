//! The spool: an unnamed temporary file that holds a result document until the whole input has
//! been validated (nothing reaches stdout before that), then is copied to stdout.

use std::fs::File;
use std::io::{self, BufWriter, Read, Seek, Write};

use crate::error::Fatal;
use crate::text::io_reason;

/// The spool is copied to stdout this many bytes at a time.
const COPY_PIECE: usize = 1 << 20;

/// A new, empty spool.
pub fn create() -> anyhow::Result<BufWriter<File>> {
    Ok(BufWriter::with_capacity(
        1 << 16,
        tempfile::tempfile().map_err(spool_error)?,
    ))
}

/// Copy the finished spool to `out`.
pub fn copy_spool(spool: BufWriter<File>, out: &mut impl Write) -> anyhow::Result<()> {
    let mut spool = spool
        .into_inner()
        .map_err(|err| spool_error(err.into_error()))?;
    spool.rewind().map_err(spool_error)?;
    // In large pieces: a write as large as `out`'s buffer goes straight through it.
    let mut piece = vec![0; COPY_PIECE];
    loop {
        let read = match spool.read(&mut piece) {
            Ok(0) => break,
            Ok(read) => read,
            Err(err) if err.kind() == io::ErrorKind::Interrupted => continue,
            Err(err) => return Err(spool_error(err)),
        };
        out.write_all(&piece[..read])?;
    }
    out.flush()?;
    Ok(())
}

/// A failed write to the spool, as evalctl's own failure.
pub fn spool_error(err: io::Error) -> anyhow::Error {
    Fatal::Internal(format!(
        "cannot write the results to a temporary file (in $TMPDIR or /tmp): {}",
        io_reason(&err)
    ))
    .into()
}
