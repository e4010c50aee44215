//! Token usage from a run's model calls: the sums over every call that reported usage, the rows
//! per (provider, model), and the models the run called.

use super::members::{text, usage};
use super::record::Event;

/// Token usage of one (provider, model).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct ModelUsage {
    /// Provider key.
    pub provider_key: String,
    /// Model id.
    pub provider_model_id: String,
    /// Input tokens.
    pub input_tokens: f64,
    /// Output tokens.
    pub output_tokens: f64,
    /// Total tokens.
    pub total_tokens: f64,
}

/// What the `model.call.*` events of a run add up to, read in scoring order.
#[derive(Debug, Default)]
pub(super) struct UsageTally {
    /// Input, output and total tokens over every completed call.
    from_calls: (f64, f64, f64),
    /// Whether any completed call reported usage.
    usage_from_calls: bool,
    /// Usage per (provider, model), in the order first seen.
    usage_by_model: Vec<ModelUsage>,
    /// Models seen on model-call events, in the order first seen.
    seen_models: Vec<(String, String)>,
}

/// What a run's model calls add up to, once every event is read.
pub(super) struct CallUsage {
    /// Input, output and total tokens over every call, when any call reported usage.
    pub(super) from_calls: Option<(f64, f64, f64)>,
    /// Usage per (provider, model), totals filled in, sorted.
    pub(super) model_usage: Vec<ModelUsage>,
    /// Models seen on model-call events, sorted.
    pub(super) observed_models: Vec<(String, String)>,
}

impl UsageTally {
    /// Count a `model.call.started` or `model.call.completed` event.
    pub(super) fn model_call(&mut self, event: &Event) {
        let payload = &event.payload;
        let provider = text(payload, "provider_key").unwrap_or("");
        let (first, second) = if event.kind == "model.call.completed" {
            ("provider_model_id", "model")
        } else {
            ("model", "provider_model_id")
        };
        let model = text(payload, first)
            .filter(|model| !model.is_empty())
            .or_else(|| text(payload, second))
            .unwrap_or("");
        let seen = self
            .seen_models
            .iter()
            .any(|(known_provider, known_model)| {
                known_provider == provider && known_model == model
            });
        if !seen && (!provider.is_empty() || !model.is_empty()) {
            self.seen_models
                .push((provider.to_string(), model.to_string()));
        }
        if event.kind == "model.call.completed" {
            let counts = [
                usage(payload, "input_tokens"),
                usage(payload, "output_tokens"),
                usage(payload, "total_tokens"),
            ];
            if counts.iter().any(Option::is_some) {
                self.usage_from_calls = true;
                let index =
                    match self.usage_by_model.iter().position(|row| {
                        row.provider_key == provider && row.provider_model_id == model
                    }) {
                        Some(index) => index,
                        None => {
                            self.usage_by_model.push(ModelUsage {
                                provider_key: provider.to_string(),
                                provider_model_id: model.to_string(),
                                ..ModelUsage::default()
                            });
                            self.usage_by_model.len() - 1
                        }
                    };
                let row = &mut self.usage_by_model[index];
                let [input, output, total] = counts.map(|count| count.unwrap_or(0.0));
                row.input_tokens += input;
                row.output_tokens += output;
                row.total_tokens += total;
                self.from_calls.0 += input;
                self.from_calls.1 += output;
                self.from_calls.2 += total;
            }
        }
    }

    /// The sums, the rows (each total filled in from its input and output when no call gave one)
    /// and the models, sorted.
    pub(super) fn finish(self) -> CallUsage {
        let UsageTally {
            from_calls,
            usage_from_calls,
            mut usage_by_model,
            mut seen_models,
        } = self;
        for row in &mut usage_by_model {
            if row.total_tokens == 0.0 && (row.input_tokens > 0.0 || row.output_tokens > 0.0) {
                row.total_tokens = row.input_tokens + row.output_tokens;
            }
        }
        usage_by_model.sort_by(|a, b| {
            (&a.provider_key, &a.provider_model_id).cmp(&(&b.provider_key, &b.provider_model_id))
        });
        seen_models.sort();
        CallUsage {
            from_calls: usage_from_calls.then_some(from_calls),
            model_usage: usage_by_model,
            observed_models: seen_models,
        }
    }
}
