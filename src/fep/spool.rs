//! The spool: an unnamed temporary file that holds a result document until the whole input has
//! been validated (nothing reaches stdout before that), then is copied to stdout.

use std::fs::File;
use std::io::{self, BufWriter, Seek, Write};

use crate::error::Fatal;
use crate::text::io_reason;

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
    io::copy(&mut spool, out)?;
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
