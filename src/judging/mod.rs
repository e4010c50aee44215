//! What an LLM judge is given and how its answer is read, shared by the run's judge
//! (`crate::evaluator::judge`) and the evaluation spec's live judges
//! (`crate::evaluation_spec::live`): the rubric ([`rubric`]), the fence around untrusted text in
//! a prompt ([`fenced`]) and the reader of the judge's reply ([`reply`]).

pub mod reply;
pub mod rubric;

/// `text` in a code fence longer than any backtick run inside it, so it cannot close early.
pub fn fenced(text: &str, info: &str) -> String {
    let longest_run = text.split(|ch| ch != '`').map(str::len).max().unwrap_or(0);
    let fence = "`".repeat(longest_run.max(2) + 1);
    format!("{fence}{info}\n{text}\n{fence}")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fences_outgrow_the_candidate() {
        assert_eq!(fenced("a", "text"), "```text\na\n```");
        assert_eq!(fenced("x ```` y", "text"), "`````text\nx ```` y\n`````");
    }
}
