//! Few-shot rendering: the one code path that turns a task into the prompt every model sees.

use super::spec::Task;

/// Each few-shot example as `prompt + " " + completion`, then the task prompt, joined by a blank
/// line.
pub fn render_prompt(task: &Task) -> String {
    let mut parts: Vec<String> = task
        .few_shot_examples
        .iter()
        .map(|example| format!("{} {}", example.prompt, example.completion))
        .collect();
    parts.push(task.prompt.clone());
    parts.join("\n\n")
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tasks::spec::{Category, FewShotExample, MetricName, PostProcess};

    #[test]
    fn examples_come_first_separated_by_blank_lines() {
        let mut task = Task {
            task_id: "t".into(),
            category: Category::Arithmetic,
            prompt: "Question: 17 + 24\nAnswer:".into(),
            targets: vec!["41".into()],
            metric: MetricName::ExactMatch,
            post_process: PostProcess::StripWhitespace,
            few_shot_examples: vec![],
        };
        assert_eq!(render_prompt(&task), "Question: 17 + 24\nAnswer:");
        task.few_shot_examples = vec![
            FewShotExample {
                prompt: "Question: 2 + 2\nAnswer:".into(),
                completion: "4".into(),
            },
            FewShotExample {
                prompt: "Question: 1 + 5\nAnswer:".into(),
                completion: "6".into(),
            },
        ];
        assert_eq!(
            render_prompt(&task),
            "Question: 2 + 2\nAnswer: 4\n\nQuestion: 1 + 5\nAnswer: 6\n\nQuestion: 17 + 24\nAnswer:"
        );
    }
}
