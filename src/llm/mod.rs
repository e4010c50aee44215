//! The one client for OpenAI-compatible APIs: chat completions, legacy completions and
//! embeddings, for every part of evalctl that calls a model (the run's judge, `tasks run`'s
//! model, the evaluation spec's live judges and the FEP's `llm_judge` and `semantic_similarity`
//! checks).
//!
//! - [`endpoint`] resolves a `PROVIDER/MODEL` to a base URL and a key;
//! - [`request`] writes request bodies;
//! - [`client`] sends them (the key in the `Authorization` header only, every message scrubbed
//!   of the key and the URL's secrets), paced by [`pacer`] per endpoint and model: a 429 whose
//!   limit the server announced is waited out and sent again without using the caller's
//!   retries; other failures go to the caller's retries;
//! - [`pacer`] adapts the rate and the requests in flight to the limits the server announces;
//! - [`reply`] reads the replies: the message, the completion text, embeddings and usage;
//! - [`price`] holds what the models cost (`--price`, `[prices]`) and what a call's tokens cost.

pub mod client;
pub mod endpoint;
pub mod pacer;
pub mod price;
pub mod reply;
pub mod request;

pub use client::{Client, Connection};
pub use endpoint::{Endpoint, EndpointFlags, EndpointSpec};
pub use reply::{Completion, Usage};
pub use request::{Api, Body};
