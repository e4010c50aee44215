//! What a run's model calls spent: tokens reported in the records, saved by the cache, and their
//! cost where the model has a price.

use serde::Serialize;

use crate::llm::price::Price;
use crate::record::CallRecord;

/// Tokens summed from records' `side_info.usage` (the LLM judge reports it; any evaluator may):
/// spent by the calls made, or saved by the calls the cache answered.
#[derive(Debug, Clone, Copy, Default, Serialize, PartialEq, Eq)]
pub struct Usage {
    /// Sum of `usage.prompt_tokens`.
    pub prompt_tokens: u64,
    /// Sum of `usage.completion_tokens`.
    pub completion_tokens: u64,
}

impl From<crate::llm::reply::Usage> for Usage {
    /// The prompt and completion tokens a model's reply reports.
    fn from(usage: crate::llm::reply::Usage) -> Usage {
        Usage {
            prompt_tokens: usage.prompt_tokens,
            completion_tokens: usage.completion_tokens,
        }
    }
}

impl Usage {
    /// The tokens a record's `side_info.usage` reports, if any.
    pub(super) fn of(record: &CallRecord) -> Option<Usage> {
        let (prompt_tokens, completion_tokens) = record.evaluator_tokens()?;
        Some(Usage {
            prompt_tokens,
            completion_tokens,
        })
    }

    /// The tokens a task model's call reported, if any (a command reports none), and whether
    /// the cache answered it; none for an answer an earlier line recorded (its tokens count on
    /// that line).
    pub(super) fn of_generation(record: &CallRecord) -> Option<(Usage, bool)> {
        let generation = record.generation.as_ref().filter(|g| !g.recalled)?;
        (!generation.usage.is_zero()).then_some((
            Usage {
                prompt_tokens: generation.usage.prompt_tokens,
                completion_tokens: generation.usage.completion_tokens,
            },
            generation.cached,
        ))
    }

    fn add(self, other: Usage) -> Usage {
        Usage {
            prompt_tokens: self.prompt_tokens.saturating_add(other.prompt_tokens),
            completion_tokens: self
                .completion_tokens
                .saturating_add(other.completion_tokens),
        }
    }
}

/// Tokens spent by the calls made, and saved by the calls the cache answered; each absent until
/// a call reports some.
#[derive(Debug, Clone, Copy, Default, Serialize, PartialEq, Eq)]
pub struct Tokens {
    /// Tokens spent.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub usage: Option<Usage>,
    /// Tokens the cache saved: what the calls it answered reported when they were made.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub usage_saved: Option<Usage>,
}

impl Tokens {
    /// Count `usage` as spent, or as saved when the cache answered (`cached`): then what was
    /// spent is there too, if only as zeros (a run answered wholly from the cache spent none).
    pub(super) fn add(&mut self, usage: Usage, cached: bool) {
        let total = if cached {
            self.usage.get_or_insert_with(Usage::default);
            &mut self.usage_saved
        } else {
            &mut self.usage
        };
        *total = Some(total.map_or(usage, |total| total.add(usage)));
    }

    pub(super) fn is_empty(&self) -> bool {
        self.usage.is_none() && self.usage_saved.is_none()
    }

    fn sum(&self, other: &Tokens) -> Tokens {
        let mut sum = *self;
        for (usage, cached) in [(other.usage, false), (other.usage_saved, true)] {
            if let Some(usage) = usage {
                sum.add(usage, cached);
            }
        }
        sum
    }
}

/// What the task models' calls of `run --generate`, or the LLM judge's, spent: tokens, and
/// their cost where the model has a price (`--price`, `[prices]`).
#[derive(Debug, Clone, Copy, Default, Serialize, PartialEq)]
pub struct Spend {
    /// Tokens spent, and saved by the cache.
    #[serde(flatten)]
    pub tokens: Tokens,
    /// What the tokens spent cost, in USD; absent without a price.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub cost_usd: Option<f64>,
    /// What the tokens the cache saved would have cost, in USD; absent without a price or
    /// without saved tokens.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub cost_saved_usd: Option<f64>,
}

impl Spend {
    /// `tokens` at `price`.
    pub(super) fn of(tokens: Tokens, price: Option<&Price>) -> Spend {
        let cost = |usage: Option<Usage>| {
            Some(price?.cost(usage?.prompt_tokens, usage?.completion_tokens))
        };
        Spend {
            tokens,
            cost_usd: price.map(|_| cost(tokens.usage).unwrap_or(0.0)),
            cost_saved_usd: cost(tokens.usage_saved),
        }
    }

    /// The sum of `rows`' spending: costs only when every row has one.
    pub(super) fn total<'a>(rows: impl Iterator<Item = &'a Spend>) -> Option<Spend> {
        rows.fold(None, |total: Option<Spend>, row| {
            let Some(total) = total else {
                return Some(*row);
            };
            let add = |a: Option<f64>, b: Option<f64>, priced: bool| match (a, b) {
                _ if !priced => None,
                (a, b) => Some(a.unwrap_or(0.0) + b.unwrap_or(0.0)),
            };
            let priced = total.cost_usd.is_some() && row.cost_usd.is_some();
            Some(Spend {
                tokens: total.tokens.sum(&row.tokens),
                cost_usd: add(total.cost_usd, row.cost_usd, priced),
                cost_saved_usd: add(total.cost_saved_usd, row.cost_saved_usd, priced)
                    .filter(|_| total.cost_saved_usd.is_some() || row.cost_saved_usd.is_some()),
            })
        })
    }
}

/// The LLM judge's spending (the summary's `judge`).
#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct JudgeSpend {
    /// `--judge-model`, as its price names it.
    pub model: String,
    /// Its tokens and their cost.
    #[serde(flatten)]
    pub spend: Spend,
}
