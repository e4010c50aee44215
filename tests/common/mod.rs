//! Shared support for the integration tests that drive the real `evalctl` binary, in one place:
//!
//! - [`binary`]: the one `evalctl()` builder (clean environment, timeout) and output helpers;
//! - [`sandbox`]: [`Sandbox`], a temporary directory with `sh` evaluators and inputs;
//! - [`server`]: the one loopback HTTP/1.1 server (scripted replies, recorded requests), also
//!   used by the fake judge (`tests/judge_support`) and `benches/throughput.rs`;
//! - [`scores`]: the score-range matrix of the protocol seed.
//!
//! Every test crate uses its own part of this module.

#![allow(dead_code, unused_imports)]

pub mod binary;
pub mod sandbox;
pub mod scores;
pub mod server;

pub use binary::*;
pub use sandbox::*;
pub use scores::*;
pub use server::*;
