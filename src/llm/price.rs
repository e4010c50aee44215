//! Prices of the models a run calls, task models and the LLM judge (`--price MODEL=IN,OUT`, the
//! `[prices]` table of evalctl.toml): US dollars per million input and output tokens, what a
//! call's tokens cost at them, and the run's budget (`--max-cost`).

use std::collections::BTreeMap;

/// What one model's tokens cost, in USD per million tokens.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Price {
    /// Per million prompt (input) tokens.
    pub input: f64,
    /// Per million completion (output) tokens.
    pub output: f64,
}

/// Prices by model, as `--task-model` and `--judge-model` name it (`PROVIDER/MODEL`).
pub type Prices = BTreeMap<String, Price>;

/// `--price` and `--max-cost`: what the run's model calls cost, and its budget.
#[derive(Debug, Clone, Default)]
pub struct Pricing {
    /// `--price`, or the `[prices]` table.
    pub prices: Prices,
    /// `--max-cost`, in USD: every model the run calls has a price.
    pub max_cost: Option<f64>,
}

impl Price {
    /// What `prompt_tokens` and `completion_tokens` cost, in USD.
    pub fn cost(&self, prompt_tokens: u64, completion_tokens: u64) -> f64 {
        (prompt_tokens as f64 * self.input + completion_tokens as f64 * self.output) / 1e6
    }
}

/// `--price MODEL=IN,OUT`: a model and its price (the `[prices]` table's entries arrive in this
/// form too).
pub fn parse_price(text: &str) -> Result<(String, Price), String> {
    let form = "expected MODEL=IN,OUT (USD per million input and output tokens, e.g. \
                openai/gpt-4o-mini=0.15,0.60)";
    let (model, numbers) = text.rsplit_once('=').ok_or_else(|| form.to_string())?;
    let (input, output) = numbers.split_once(',').ok_or_else(|| form.to_string())?;
    let amount = |number: &str| {
        number
            .trim()
            .parse::<f64>()
            .ok()
            .filter(|amount| amount.is_finite() && *amount >= 0.0)
    };
    match (model.trim(), amount(input), amount(output)) {
        ("", _, _) => Err(form.to_string()),
        (model, Some(input), Some(output)) => Ok((model.to_string(), Price { input, output })),
        _ => Err(format!("{numbers}: prices must be numbers >= 0; {form}")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_price_is_a_model_and_two_amounts() {
        let price = Price {
            input: 0.15,
            output: 0.6,
        };
        assert_eq!(
            parse_price("openai/gpt-4o-mini=0.15,0.60"),
            Ok(("openai/gpt-4o-mini".into(), price))
        );
        assert!((price.cost(1_000_000, 500_000) - 0.45).abs() < 1e-12);
        assert!(parse_price("openai/gpt-4o-mini").is_err());
        assert!(parse_price("=1,2").is_err());
        assert!(parse_price("m=1").is_err());
        assert!(parse_price("m=-1,2").unwrap_err().contains(">= 0"));
    }
}
