//! A request's place in the server: one of the `--max-concurrent` evaluations, and its share of
//! `--max-memory`, the memory the requests in flight may hold together. A request's share grows
//! as what it will take becomes known, each time before it is taken: its body before it arrives
//! (the declared length, or `--max-body`), the document parsed from it (estimated from a count
//! of its JSON values before parsing), then the check results it asks for. A request whose
//! share alone would be over `--max-memory` is refused (413); one that would take the budget
//! past it while other requests hold the rest is turned away (429).

use std::sync::Arc;

use tokio::sync::{OwnedSemaphorePermit, Semaphore};

use super::error::{ApiError, ErrorKind};
use crate::text::size;

/// The memory one JSON value may take once parsed, in bytes, above its text: the value itself
/// (object keys kept in order, numbers kept as their text), its share of the array or object
/// that holds it, and that container's room to grow. (32 MiB of `[],` took 1.4 GB parsed: 127
/// bytes a value.)
pub const VALUE_COST: u64 = 128;

/// The memory one check result takes while the answer is built and stored, in bytes: its
/// result object, its line of the answer, and its share of the stored copy. (A request of
/// 1,000,000 `exact_match` results took 550 MB.)
pub const RESULT_COST: u64 = 512;

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

/// A request's place: it holds one of `--max-concurrent` and its share of `--max-memory` until
/// dropped, once its evaluation has stopped.
pub struct Place {
    _running: OwnedSemaphorePermit,
    memory: Option<OwnedSemaphorePermit>,
    units: Arc<Semaphore>,
    budget: u64,
}

impl Place {
    /// A place holding `running` (one of `--max-concurrent`) and no memory yet.
    pub fn new(running: OwnedSemaphorePermit, budget: &MemoryBudget) -> Place {
        Place {
            _running: running,
            memory: None,
            units: Arc::clone(&budget.units),
            budget: budget.bytes,
        }
    }

    /// The memory this place holds, in bytes.
    pub fn held(&self) -> u64 {
        self.memory
            .as_ref()
            .map_or(0, |memory| memory.num_permits() as u64 * UNIT)
    }

    /// Hold `bytes` more of the budget, for `what` the request will take (named in the
    /// refusal): 413 when this request alone would be over `--max-memory`, 429 when the
    /// requests in flight hold too much of it now.
    pub fn hold(&mut self, bytes: u64, what: &str) -> Result<(), ApiError> {
        let wanted = self.held().saturating_add(bytes);
        if wanted > self.budget {
            return Err(ApiError::new(
                ErrorKind::BodyTooLarge,
                format!(
                    "the request would take about {} of memory ({what}); this server gives \
                     requests {} in all (--max-memory)",
                    size(wanted),
                    size(self.budget)
                ),
            ));
        }
        let units = u32::try_from(bytes.div_ceil(UNIT)).unwrap_or(u32::MAX);
        if units == 0 {
            return Ok(());
        }
        let more = Arc::clone(&self.units)
            .try_acquire_many_owned(units)
            .map_err(|_| {
                ApiError::new(
                    ErrorKind::Busy,
                    format!(
                        "the request would take about {} of memory ({what}), and the requests \
                         in flight hold too much of the {} this server gives them \
                         (--max-memory); try again shortly",
                        size(wanted),
                        size(self.budget)
                    ),
                )
            })?;
        match &mut self.memory {
            Some(memory) => memory.merge(more),
            None => self.memory = Some(more),
        }
        Ok(())
    }

    /// Give back `bytes` of what this place holds (at most all of it): what was held for a body
    /// before its length was known, beyond that length.
    pub fn release(&mut self, bytes: u64) {
        let units = usize::try_from(bytes / UNIT).unwrap_or(usize::MAX);
        if let Some(memory) = &mut self.memory {
            let units = units.min(memory.num_permits());
            drop(memory.split(units));
        }
    }
}

/// The memory the JSON document `text` takes once parsed, estimated from its length and a count
/// of its values (an upper bound of it: every comma outside a string, every opening bracket, and
/// the document itself) without parsing it.
pub fn parsed_cost(text: &[u8]) -> u64 {
    let mut values: u64 = 1;
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
                b',' | b'[' | b'{' => values += 1,
                _ => {}
            }
        }
    }
    (text.len() as u64).saturating_add(values.saturating_mul(VALUE_COST))
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
        let cost = |text: &str| (parsed_cost(text.as_bytes()) - text.len() as u64) / VALUE_COST;
        assert_eq!(cost("0"), 1);
        assert_eq!(cost("[0,0,0]"), 4);
        assert_eq!(cost(r#"{"a":[1,2],"b":{}}"#), 6);
        assert_eq!(cost(r#"["a,b[{", "\"]", "\\", 1]"#), 5);
    }

    #[tokio::test]
    async fn a_place_holds_its_share_until_dropped_and_is_refused_past_the_budget() {
        let budget = MemoryBudget::new(10 * UNIT);
        let running = Arc::new(Semaphore::new(2));
        let mut first = Place::new(Arc::clone(&running).try_acquire_owned().unwrap(), &budget);
        first.hold(6 * UNIT, "its body").unwrap();
        first.hold(UNIT / 2, "its document").unwrap();
        assert_eq!((first.held(), held(&budget)), (7 * UNIT, 7 * UNIT));

        let mut second = Place::new(Arc::clone(&running).try_acquire_owned().unwrap(), &budget);
        let busy = second.hold(4 * UNIT, "its body").unwrap_err();
        assert_eq!(busy.kind, ErrorKind::Busy);
        let too_large = second.hold(11 * UNIT, "its body").unwrap_err();
        assert_eq!(too_large.kind, ErrorKind::BodyTooLarge);
        assert_eq!(
            too_large.message,
            "the request would take about 11.3 kB of memory (its body); this server gives \
             requests 10.2 kB in all (--max-memory)"
        );

        first.release(3 * UNIT);
        assert_eq!((first.held(), held(&budget)), (4 * UNIT, 4 * UNIT));
        first.release(100 * UNIT);
        assert_eq!((first.held(), held(&budget)), (0, 0));
        first.hold(7 * UNIT, "its body").unwrap();
        drop(first);
        assert_eq!(held(&budget), 0);
        second.hold(4 * UNIT, "its body").unwrap();
        assert_eq!(held(&budget), 4 * UNIT);
    }
}
