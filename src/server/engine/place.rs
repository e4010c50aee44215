//! A request's place in the server: one of the `--max-concurrent` evaluations, and its share of
//! `--max-memory`, the memory the requests in flight may hold together. A request's share grows
//! as what it will take becomes known, each time before it is taken: its body before it arrives
//! (the declared length, or `--max-body`), the document parsed from it (estimated from a count
//! of its JSON values before parsing), then the check results it asks for. A request whose
//! share alone would be over `--max-memory` is refused (413); one that would take the budget
//! past it while other requests hold the rest is turned away (429).

use std::sync::Arc;

use axum::body::Bytes;
use tokio::sync::{OwnedSemaphorePermit, Semaphore};

use super::error::{ApiError, ErrorKind};
use crate::text::{size, thousands};

/// The memory one JSON value may take once parsed, in bytes, above its text: the value itself
/// (object keys kept in order, numbers kept as their text), its share of the array or object
/// that holds it, and that container's room to grow. (32 MiB of `[],` took 1.4 GB parsed: 127
/// bytes a value.)
pub const VALUE_COST: u64 = 128;

/// The memory an array or object takes once parsed beyond what it takes as a value, in bytes:
/// its vector's first room for elements, an object's table of keys. (16 MB of `[{"a":0},…]` took
/// 944 MB parsed: 470 bytes an object of one member, counted as two values and an object.)
pub const CONTAINER_COST: u64 = 384;

/// How many values, arrays and objects a JSON document has (at most).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct JsonCount {
    /// Every value, the arrays and objects among them.
    pub values: u64,
    /// The arrays and objects.
    pub containers: u64,
}

impl JsonCount {
    /// The memory the document takes once parsed: its text, and the cost of each value and
    /// container.
    pub fn cost(self, text: u64) -> u64 {
        text.saturating_add(self.values.saturating_mul(VALUE_COST))
            .saturating_add(self.containers.saturating_mul(CONTAINER_COST))
    }
}

/// The memory one check result takes while the answer is built and stored, in bytes, besides
/// the values it repeats: its result object, its line of the answer, and its share of the
/// stored copy. (A request of 1,000,000 `exact_match` results took 550 MB.)
pub const RESULT_COST: u64 = 384;

/// How many times a check result may hold the values it repeats (its resolved arguments) while
/// the answer is built: as values, as text in the answer, and in the answer's room to grow. (200
/// checks repeating two 1 MB values took 1.2 GB.) What it repeats of its check as given (its
/// literal arguments, the names of the members evalctl ignores) counts as many times: as text,
/// in the answer's room to grow and in its stored copy. (A check of 20,000 ignored arguments on
/// 1,200 test cases took 1.2 GB for its 443 MB answer.)
pub const ECHO_COPIES: u64 = 3;

/// The budget is counted in KiB, so that a semaphore's `u32` permits cover terabytes.
const UNIT: u64 = 1024;

/// The memory budget of the requests in flight (`--max-memory`).
pub struct MemoryBudget {
    units: Arc<Semaphore>,
    /// Its size, in bytes.
    bytes: u64,
}

impl MemoryBudget {
    /// A budget of `bytes`.
    pub fn new(bytes: u64) -> MemoryBudget {
        let units = usize::try_from(bytes.div_ceil(UNIT))
            .unwrap_or(usize::MAX)
            .min(Semaphore::MAX_PERMITS);
        MemoryBudget {
            units: Arc::new(Semaphore::new(units)),
            bytes,
        }
    }
}

/// A share of `--max-memory`: held until dropped.
pub struct Share {
    /// The budget's units this share holds.
    memory: Option<OwnedSemaphorePermit>,
    /// The bytes this share holds (the units cover them, rounded up).
    bytes: u64,
    units: Arc<Semaphore>,
    budget: u64,
}

impl Share {
    /// An empty share of `budget`.
    pub fn of(budget: &MemoryBudget) -> Share {
        Share {
            memory: None,
            bytes: 0,
            units: Arc::clone(&budget.units),
            budget: budget.bytes,
        }
    }

    /// Hold `bytes` more of the budget, for `what` the request will take (named in the
    /// refusal): 413 when this request alone would be over `--max-memory`, 429 when the
    /// requests in flight hold too much of it now.
    pub fn hold(&mut self, bytes: u64, what: &str) -> Result<(), ApiError> {
        let wanted = self.bytes.saturating_add(bytes);
        let budget = format!("{} bytes", thousands(self.budget));
        if wanted > self.budget {
            return Err(ApiError::new(
                ErrorKind::BodyTooLarge,
                format!(
                    "the request would take about {} of memory ({what}); this server gives \
                     requests {budget} in all (--max-memory)",
                    size(wanted),
                ),
            ));
        }
        let held = self
            .memory
            .as_ref()
            .map_or(0, |memory| memory.num_permits());
        let more = usize::try_from(wanted.div_ceil(UNIT))
            .unwrap_or(usize::MAX)
            .saturating_sub(held);
        if more > 0 {
            let more = u32::try_from(more).unwrap_or(u32::MAX);
            let more = Arc::clone(&self.units)
                .try_acquire_many_owned(more)
                .map_err(|_| {
                    ApiError::new(
                        ErrorKind::Busy,
                        format!(
                            "the request would take about {} of memory ({what}), and the \
                             requests in flight hold too much of the {budget} this server \
                             gives them (--max-memory); try again shortly",
                            size(wanted),
                        ),
                    )
                })?;
            match &mut self.memory {
                Some(memory) => memory.merge(more),
                None => self.memory = Some(more),
            }
        }
        self.bytes = wanted;
        Ok(())
    }

    /// Give back `bytes` of what this share holds (the units that no longer cover anything).
    pub fn release(&mut self, bytes: u64) {
        self.bytes = self.bytes.saturating_sub(bytes);
        let keep = usize::try_from(self.bytes.div_ceil(UNIT)).unwrap_or(usize::MAX);
        if let Some(memory) = &mut self.memory {
            let extra = memory.num_permits().saturating_sub(keep);
            if extra > 0 {
                drop(memory.split(extra));
            }
        }
    }

    /// `answer`, holding this share until the last copy of it is dropped (once written).
    pub fn with(self, answer: Bytes) -> Bytes {
        Bytes::from_owner(Answer {
            bytes: answer,
            _share: self,
        })
    }
}

/// An answer and the share of the memory it holds.
struct Answer {
    bytes: Bytes,
    _share: Share,
}

impl AsRef<[u8]> for Answer {
    fn as_ref(&self) -> &[u8] {
        &self.bytes
    }
}

/// A request's place: one of `--max-concurrent` until its evaluation has stopped, and its share
/// of `--max-memory` until then, or until its answer is written ([`Place::answered`]).
pub struct Place {
    _running: OwnedSemaphorePermit,
    share: Share,
}

impl Place {
    /// A place holding `running` (one of `--max-concurrent`) and no memory yet.
    pub fn new(running: OwnedSemaphorePermit, budget: &MemoryBudget) -> Place {
        Place {
            _running: running,
            share: Share::of(budget),
        }
    }

    /// See [`Share::hold`].
    pub fn hold(&mut self, bytes: u64, what: &str) -> Result<(), ApiError> {
        self.share.hold(bytes, what)
    }

    /// Lend the share to what holds memory while other threads take it (the patterns of a
    /// request's checks, compiled on the worker pool), until [`Place::give_back`]: it holds
    /// the whole request's share, so that a request over `--max-memory` alone is told so.
    pub fn lend_share(&mut self) -> Share {
        let empty = Share {
            memory: None,
            bytes: 0,
            units: Arc::clone(&self.share.units),
            budget: self.share.budget,
        };
        std::mem::replace(&mut self.share, empty)
    }

    /// Take back the share [`Place::lend_share`] lent, with what it holds now.
    pub fn give_back(&mut self, share: Share) {
        self.share = share;
    }

    /// The evaluation has stopped: its place among `--max-concurrent` is free, and the memory
    /// share stays with the answer.
    pub fn answered(self) -> Share {
        self.share
    }
}

/// The memory the JSON document `text` takes once parsed, estimated from its length and a count
/// of its values (an upper bound of it: every comma outside a string, every opening bracket, and
/// the document itself) and containers (every opening bracket) without parsing it.
pub fn parsed_cost(text: &[u8]) -> u64 {
    let mut count = JsonCount {
        values: 1,
        containers: 0,
    };
    let mut in_string = false;
    let mut escaped = false;
    for &byte in text {
        if in_string {
            if escaped {
                escaped = false;
            } else if byte == b'\\' {
                escaped = true;
            } else if byte == b'"' {
                in_string = false;
            }
        } else {
            match byte {
                b'"' => in_string = true,
                b',' => count.values += 1,
                b'[' | b'{' => {
                    count.values += 1;
                    count.containers += 1;
                }
                _ => {}
            }
        }
    }
    count.cost(text.len() as u64)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// How much of `budget` the places hold, in bytes.
    fn held(budget: &MemoryBudget) -> u64 {
        (budget.bytes / UNIT - budget.units.available_permits() as u64) * UNIT
    }

    #[test]
    fn parsed_cost_counts_values_outside_strings_only() {
        let count = |values, containers| JsonCount { values, containers };
        let cost = |text: &str| parsed_cost(text.as_bytes());
        assert_eq!(cost("0"), count(1, 0).cost(1));
        assert_eq!(cost("[0,0,0]"), count(4, 1).cost(7));
        assert_eq!(cost(r#"{"a":[1,2],"b":{}}"#), count(6, 3).cost(18));
        assert_eq!(cost(r#"["a,b[{", "\"]", "\\", 1]"#), count(5, 1).cost(25));
    }

    #[tokio::test]
    async fn a_place_holds_its_share_until_dropped_and_is_refused_past_the_budget() {
        let budget = MemoryBudget::new(10 * UNIT);
        let running = Arc::new(Semaphore::new(2));
        let mut first = Place::new(Arc::clone(&running).try_acquire_owned().unwrap(), &budget);
        // Bytes held a few at a time take whole units only as they fill them.
        for _ in 0..12 {
            first.hold(UNIT / 2, "its body").unwrap();
        }
        first.hold(UNIT / 2, "its document").unwrap();
        assert_eq!(
            (first.share.bytes, held(&budget)),
            (13 * UNIT / 2, 7 * UNIT)
        );

        let mut second = Place::new(Arc::clone(&running).try_acquire_owned().unwrap(), &budget);
        let busy = second.hold(4 * UNIT, "its body").unwrap_err();
        assert_eq!(busy.kind, ErrorKind::Busy);
        let too_large = second.hold(11 * UNIT, "its body").unwrap_err();
        assert_eq!(too_large.kind, ErrorKind::BodyTooLarge);
        assert_eq!(
            too_large.message,
            "the request would take about 11.3 kB of memory (its body); this server gives \
             requests 10,240 bytes in all (--max-memory)"
        );

        drop(first);
        assert_eq!(held(&budget), 0);
        second.hold(4 * UNIT, "its body").unwrap();
        assert_eq!(held(&budget), 4 * UNIT);
    }
}
