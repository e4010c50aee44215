//! The judge spending of one run against `scorecard.judge_limits`: tokens and cost, checked
//! before each call and charged after it.

use serde_json::{Map, Value};

use super::setup::{JudgeModel, Limits};

/// The judge spending of one run so far.
pub(super) struct Budget {
    pub(super) limits: Limits,
    pub(super) tokens: u64,
    pub(super) usd: f64,
}

impl Budget {
    /// `Err` with the reason when a cap is reached (`at_cap`: spending equal to the cap counts,
    /// as before a call) or exceeded.
    pub(super) fn check(&self, at_cap: bool) -> Result<(), String> {
        let over = |spent: f64, cap: f64| spent > cap || (at_cap && spent >= cap);
        if let Some(cap) = self
            .limits
            .max_tokens
            .filter(|cap| over(self.tokens as f64, *cap as f64))
        {
            return Err(format!(
                "judge_limits.max_tokens is {cap} and this run's judge calls used {} tokens",
                self.tokens
            ));
        }
        if let Some(cap) = self.limits.max_usd.filter(|cap| over(self.usd, *cap)) {
            return Err(format!(
                "judge_limits.max_calls_usd is {cap} and this run's judge calls cost ${:.6}",
                self.usd
            ));
        }
        Ok(())
    }

    /// Add what a call spent (`side_info` as the judge client returns it: `usage` from the API's
    /// answer, `model` whenever an answer arrived); `Err` when that exceeds a cap or cannot be
    /// known.
    pub(super) fn charge(
        &mut self,
        side_info: &Map<String, Value>,
        model: &JudgeModel,
    ) -> Result<(), String> {
        if !side_info.contains_key("model") {
            // No answer arrived (a transport failure or an HTTP error): nothing was generated.
            return Ok(());
        }
        let count = |name: &str| {
            side_info
                .get("usage")
                .and_then(|usage| usage.get(name))
                .and_then(Value::as_u64)
        };
        let (Some(prompt), Some(completion)) = (count("prompt_tokens"), count("completion_tokens"))
        else {
            return Err(format!(
                "the judge API reported no token usage for model {:?}, so judge_limits cannot be \
                 enforced",
                model.declared
            ));
        };
        self.tokens += count("total_tokens").unwrap_or(prompt + completion);
        if let Some(price) = &model.price {
            self.usd += prompt as f64 / 1e6 * price.input_cost_per_million_tokens
                + completion as f64 / 1e6 * price.output_cost_per_million_tokens;
        }
        self.check(false)
    }
}
