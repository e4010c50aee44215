//! Part of a file mapped into memory, for the two places where reading or patching a large file
//! through `read`/`pwrite` costs more in the kernel than the work itself: counting the records
//! of a runs file before `spec score` scores it, and writing the `run` member into the room each
//! spooled record holds for it. A mapping reads the page cache in place, where `read` copies
//! every byte, and patches many small places of a file without a system call each. A file is
//! mapped a window at a time ([`WINDOW`]), so that the pages it touches count against evalctl's
//! memory a window at a time too.
//!
//! A file another process truncates while it is mapped ends evalctl with SIGBUS when the lost
//! part is touched (as with ripgrep's `--mmap`); evalctl maps a runs file only for the count
//! before scoring, and writes only into its own unnamed spool, which nothing else can reach.

use std::fs::File;
use std::os::fd::AsRawFd;

/// How many bytes of a file are mapped at once: few system calls, and a small part of the memory
/// evalctl holds.
pub const WINDOW: u64 = 4 << 20;

/// Part of a file mapped into memory; unmapped when dropped.
pub struct Mapped {
    start: *mut u8,
    len: usize,
}

impl Mapped {
    /// `len` bytes of `file` from `offset` (a multiple of [`page_size`]) mapped for reading,
    /// read front to back (`None` when `len` is 0 or they cannot be mapped: read them instead).
    pub fn for_reading(file: &File, offset: u64, len: usize) -> Option<Mapped> {
        let mapped = Mapped::new(file, offset, len, libc::PROT_READ)?;
        // SAFETY: the range is the mapping just made; advice does not change its contents.
        unsafe { libc::madvise(mapped.start.cast(), mapped.len, libc::MADV_SEQUENTIAL) };
        Some(mapped)
    }

    /// `len` bytes of `file` (open for reading and writing) from `offset` (a multiple of
    /// [`page_size`]) mapped for writing in place: what is written to the mapping is written to
    /// the file (`None` when `len` is 0 or they cannot be mapped).
    pub fn for_writing(file: &File, offset: u64, len: usize) -> Option<MappedForWriting> {
        Mapped::new(file, offset, len, libc::PROT_READ | libc::PROT_WRITE).map(MappedForWriting)
    }

    fn new(file: &File, offset: u64, len: usize, protection: libc::c_int) -> Option<Mapped> {
        let offset = libc::off_t::try_from(offset).ok()?;
        if len == 0 {
            return None;
        }
        // SAFETY: a fresh shared mapping of `len` bytes of an open file, at an address the
        // kernel chooses; it is checked for failure and unmapped once, on drop.
        let start = unsafe {
            libc::mmap(
                std::ptr::null_mut(),
                len,
                protection,
                libc::MAP_SHARED,
                file.as_raw_fd(),
                offset,
            )
        };
        (start != libc::MAP_FAILED).then(|| Mapped {
            start: start.cast(),
            len,
        })
    }

    /// The file's bytes.
    pub fn bytes(&self) -> &[u8] {
        // SAFETY: `start` maps `len` readable bytes for as long as `self` lives.
        unsafe { std::slice::from_raw_parts(self.start, self.len) }
    }
}

/// A file mapped for writing in place.
pub struct MappedForWriting(Mapped);

impl MappedForWriting {
    /// The file's bytes, to write in place.
    pub fn bytes_mut(&mut self) -> &mut [u8] {
        // SAFETY: `start` maps `len` readable and writable bytes for as long as `self` lives;
        // `&mut self` makes this the only view of them meanwhile.
        unsafe { std::slice::from_raw_parts_mut(self.0.start, self.0.len) }
    }
}

/// The size of a memory page: a mapping starts at a multiple of it in the file.
pub fn page_size() -> u64 {
    // SAFETY: sysconf reads a system setting.
    let size = unsafe { libc::sysconf(libc::_SC_PAGESIZE) };
    u64::try_from(size).unwrap_or(4096)
}

impl Drop for Mapped {
    fn drop(&mut self) {
        // SAFETY: the mapping made in `new`, unmapped once; no slice of it outlives `self`.
        unsafe { libc::munmap(self.start.cast(), self.len) };
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::{Read, Seek, Write};

    #[test]
    fn a_mapping_reads_part_of_the_file_and_writes_into_it_in_place() {
        let mut file = tempfile::tempfile().expect("a file");
        assert!(Mapped::for_reading(&file, 0, 0).is_none(), "nothing to map");
        let page = usize::try_from(page_size()).expect("a page size");
        let mut content = vec![b'.'; page];
        content.extend_from_slice(b"{\"a\":1,   }\n");
        file.write_all(&content).expect("written");
        let second_page = |file: &File| Mapped::for_reading(file, page_size(), 12);
        assert_eq!(
            second_page(&file).expect("mapped").bytes(),
            b"{\"a\":1,   }\n"
        );
        Mapped::for_writing(&file, page_size(), 12)
            .expect("mapped")
            .bytes_mut()[7..10]
            .copy_from_slice(b"\"b\"");
        let mut written = Vec::new();
        file.rewind().expect("rewound");
        file.read_to_end(&mut written).expect("read");
        assert_eq!(&written[..page], &content[..page]);
        assert_eq!(&written[page..], b"{\"a\":1,\"b\"}\n");
        assert!(Mapped::for_reading(&file, 1, 4).is_none(), "not at a page");
    }
}
