//! The `evalctl` binary: parse the command line, hand it to the library, map the outcome to an exit code.

/// mimalloc rather than glibc's malloc: scoring and serving allocate many small, short-lived
/// strings and maps per record, and with glibc's allocator malloc/free take a quarter of
/// `spec score`'s time.
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

fn main() -> std::process::ExitCode {
    evalctl::main_entry()
}
