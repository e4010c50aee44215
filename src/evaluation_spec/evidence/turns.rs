//! Conversation turns of multi-turn runs, and the transcript references resolved from them
//! (`transcript.full`, `transcript.last_n:N`, `transcript.from_mismatch`, `turn.expectations`).

use serde_json::Value;

use super::members::{number, text};
use super::record::Event;
use super::resolve::{unsupported, Resolved};
use crate::evaluation_spec::gostr::json_string;

/// One conversation turn (multi-turn runs).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Turn {
    /// The turn's index.
    pub turn_index: i64,
    /// Its phase id.
    pub phase_id: String,
    /// Who spoke for the user.
    pub actor: String,
    /// The user message.
    pub user_message: String,
    /// The assistant message.
    pub assistant_message: String,
    /// Whether the turn mismatched its script.
    pub mismatch: bool,
}

/// The conversation turns carried by events with a payload `turn_index`, by index.
pub(super) fn turns(events: &[&Event]) -> Vec<Turn> {
    let mut turns: Vec<Turn> = Vec::new();
    for event in events {
        let payload = &event.payload;
        let Some(index) = number(payload, "turn_index").map(|index| index as i64) else {
            continue;
        };
        let position = match turns.iter().position(|turn| turn.turn_index == index) {
            Some(position) => position,
            None => {
                turns.push(Turn {
                    turn_index: index,
                    ..Turn::default()
                });
                turns.len() - 1
            }
        };
        let turn = &mut turns[position];
        if let Some(phase) = text(payload, "phase_id") {
            turn.phase_id = phase.to_string();
        }
        match event.kind.as_str() {
            "turn.user.message" => {
                if let Some(content) = text(payload, "content") {
                    turn.user_message = content.to_string();
                }
                if let Some(actor) = text(payload, "actor") {
                    turn.actor = actor.to_string();
                }
            }
            "turn.assistant.message" => {
                if let Some(content) = text(payload, "content") {
                    turn.assistant_message = content.to_string();
                }
            }
            "turn.completed" => {
                if let Some(Value::Bool(mismatch)) = payload.get("mismatch") {
                    turn.mismatch = *mismatch;
                }
                if turn.actor.is_empty() {
                    if let Some(actor) = text(payload, "actor") {
                        turn.actor = actor.to_string();
                    }
                }
            }
            _ => {}
        }
    }
    turns.sort_by_key(|turn| turn.turn_index);
    turns
}

fn transcript(turns: &[Turn]) -> Resolved {
    if turns.is_empty() {
        return Resolved::Missing("transcript evidence is unavailable".to_string());
    }
    let mut lines = Vec::with_capacity(turns.len() * 2);
    for turn in turns {
        if !turn.user_message.trim().is_empty() {
            lines.push(format!("user[{}]: {}", turn.turn_index, turn.user_message));
        }
        if !turn.assistant_message.trim().is_empty() {
            lines.push(format!(
                "assistant[{}]: {}",
                turn.turn_index, turn.assistant_message
            ));
        }
    }
    Resolved::Value(lines.join("\n"))
}

pub(super) fn resolve_transcript(reference: &str, turns: &[Turn]) -> Resolved {
    match reference {
        "transcript.full" => transcript(turns),
        "transcript.from_mismatch" => match turns.iter().position(|turn| turn.mismatch) {
            Some(first) => transcript(&turns[first..]),
            None => Resolved::Missing("transcript mismatch evidence is unavailable".to_string()),
        },
        "turn.expectations" => {
            if turns.is_empty() {
                return Resolved::Missing("turn expectations evidence is unavailable".to_string());
            }
            let mut out = String::from("[");
            for (i, turn) in turns.iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                out.push_str(&format!("{{\"turn_index\":{}", turn.turn_index));
                if !turn.phase_id.is_empty() {
                    out.push_str(",\"phase_id\":");
                    json_string(&turn.phase_id, &mut out);
                }
                out.push_str(&format!(",\"mismatch\":{}}}", turn.mismatch));
            }
            out.push(']');
            Resolved::Value(out)
        }
        _ => {
            let count = reference
                .strip_prefix("transcript.last_n:")
                .and_then(|count| count.trim().parse::<i64>().ok())
                .filter(|count| *count > 0);
            match count {
                None => unsupported(reference),
                Some(_) if turns.is_empty() => {
                    Resolved::Missing("transcript evidence is unavailable".to_string())
                }
                Some(count) => {
                    let start = turns.len().saturating_sub(count as usize);
                    transcript(&turns[start..])
                }
            }
        }
    }
}
