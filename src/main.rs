//! The `evalctl` binary: parse the command line, hand it to the library, map the outcome to an exit code.

fn main() -> std::process::ExitCode {
    evalctl::main_entry()
}
