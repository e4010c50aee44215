//! The one client for OpenAI-compatible APIs: chat completions, legacy completions and
//! embeddings, for every part of evalctl that calls a model (the run's judge, `tasks run`'s
//! model, the evaluation spec's live judges and the FEP's `llm_judge` and `semantic_similarity`
//! checks).
//!
//! - [`endpoint`] resolves a `PROVIDER/MODEL` to a base URL and a key;
//! - [`request`] writes request bodies;
//! - [`client`] sends them (the key in the `Authorization` header only, `Retry-After` honoured by
//!   the caller's retries, every message scrubbed of the key and the URL's secrets);
//! - [`reply`] reads the replies: the message, the completion text, embeddings and usage.

pub mod client;
pub mod endpoint;
pub mod reply;
pub mod request;

pub use client::{Client, Connection};
pub use endpoint::{Endpoint, EndpointFlags};
pub use reply::{Completion, Usage};
pub use request::{Api, Body};
