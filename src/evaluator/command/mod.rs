//! The command adapter: one child process per call, run without a shell, payload on stdin, JSON
//! on stdout, stderr kept (bounded) for the error record.
//!
//! Each child leads its own process group: a timeout or an interrupted run kills the evaluator
//! together with everything it started, and whatever it leaves running after it exits is killed
//! too, so no call leaves a process behind. On Linux the child is also killed by the kernel when
//! evalctl dies without a chance to clean up (`kill -9`).
//!
//! [`adapter`] holds the [`CommandEvaluator`] and its exchange with one child, [`spawn`] starts
//! the child with its payload waiting on stdin, [`output`] reads its pipes (bounded) and words
//! its failures, and [`program`] resolves the program and checks it before the run.

mod adapter;
mod output;
mod program;
mod spawn;

pub use adapter::{CommandEvaluator, CommandSpec};
pub use program::{on_path, SCRIPT_INTERPRETERS};
