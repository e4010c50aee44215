//! The progress of a run, on stderr. On a terminal: a live bar that ticks on its own (elapsed
//! time, calls in flight) and shows done / planned, the rate, the ETA once it means something,
//! the errors so far and each candidate's running mean. Off a terminal (CI logs), and on a
//! dumb one (`TERM=dumb`, which cannot redraw a line): a one-line heartbeat every `--heartbeat`
//! seconds from a timer thread, so a log never stays silent while slow calls run.

use std::io::IsTerminal;
use std::sync::mpsc::{self, RecvTimeoutError};
use std::sync::{Arc, Mutex, PoisonError};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};

use crate::record::{CallRecord, Split};
use crate::report::terminal::obeys_escapes;

/// How often the terminal display redraws by itself.
const TICK: Duration = Duration::from_millis(250);
/// Candidates whose running mean is shown; more are summarised as `…`.
const MEANS_SHOWN: usize = 3;

/// The progress display of one run.
pub struct Progress {
    bar: ProgressBar,
    state: Arc<Mutex<State>>,
    heartbeat: Option<(mpsc::Sender<()>, JoinHandle<()>)>,
}

struct State {
    started: Instant,
    planned: u64,
    done: u64,
    errors: u64,
    concurrency: usize,
    /// The split whose mean is the score: only its calls count in the means.
    scored: Split,
    /// Per candidate: id, score sum, calls of the scored split.
    means: Vec<(String, f64, u64)>,
}

impl State {
    fn in_flight(&self) -> u64 {
        (self.concurrency as u64).min(self.planned - self.done.min(self.planned))
    }

    /// `12/60 calls, 8 in flight, 2 errors, 1.5 calls/s, eta 32s; mean a 0.81, b 0.70`.
    fn status(&self, with_counts: bool) -> String {
        let elapsed = self.started.elapsed().as_secs_f64();
        let mut line = String::new();
        if with_counts {
            line.push_str(&format!(
                "{}/{} calls, elapsed {}, ",
                self.done,
                self.planned,
                clock(elapsed)
            ));
        }
        line.push_str(&format!(
            "{} in flight, {} error{}",
            self.in_flight(),
            self.errors,
            if self.errors == 1 { "" } else { "s" }
        ));
        if self.done > 0 && elapsed > 0.0 {
            let rate = self.done as f64 / elapsed;
            line.push_str(&format!(", {rate:.1} calls/s"));
            // The first calls finish together, so the rate means little before a full wave
            // of them (or 5% of the plan) has finished.
            let meaningful = self.done >= (self.concurrency as u64).min(self.planned).max(1)
                || self.done * 20 >= self.planned;
            if meaningful && self.done < self.planned {
                line.push_str(&format!(
                    ", eta {}",
                    clock((self.planned - self.done) as f64 / rate)
                ));
            }
        }
        let means: Vec<String> = self
            .means
            .iter()
            .filter(|(_, _, n)| *n > 0)
            .take(MEANS_SHOWN)
            .map(|(id, sum, n)| format!("{id} {:.3}", sum / *n as f64))
            .collect();
        if !means.is_empty() {
            let split = if self.scored == Split::Val {
                "val "
            } else {
                ""
            };
            line.push_str(&format!("; {split}mean {}", means.join(", ")));
            if self.means.len() > MEANS_SHOWN {
                line.push_str(", …");
            }
        }
        // One line: an id's line break cannot make a line that reads as another.
        crate::text::one_line(&line)
    }
}

/// `1m05s`, `42s`.
fn clock(seconds: f64) -> String {
    let seconds = seconds.round() as u64;
    match seconds {
        0..60 => format!("{seconds}s"),
        60..3600 => format!("{}m{:02}s", seconds / 60, seconds % 60),
        _ => format!("{}h{:02}m", seconds / 3600, seconds / 60 % 60),
    }
}

impl Progress {
    /// Start the display of a run of `planned` calls, `concurrency` at once, over
    /// `candidate_ids`, whose running means are those of the `scored` split (the one the
    /// summary scores them by); off a terminal, a heartbeat line every `heartbeat` (none with
    /// `None`).
    pub fn start(
        planned: u64,
        concurrency: usize,
        candidate_ids: &[String],
        scored: Split,
        heartbeat: Option<Duration>,
    ) -> Progress {
        let state = Arc::new(Mutex::new(State {
            started: Instant::now(),
            planned,
            done: 0,
            errors: 0,
            concurrency,
            scored,
            means: candidate_ids
                .iter()
                .map(|id| (id.clone(), 0.0, 0))
                .collect(),
        }));
        if !obeys_escapes(std::io::stderr().is_terminal()) {
            let heartbeat = heartbeat.map(|every| {
                let (stop, stopped) = mpsc::channel::<()>();
                let state = Arc::clone(&state);
                let thread = std::thread::spawn(move || {
                    while let Err(RecvTimeoutError::Timeout) = stopped.recv_timeout(every) {
                        let line = lock(&state).status(true);
                        diag!("progress: {line}");
                    }
                });
                (stop, thread)
            });
            return Progress {
                bar: ProgressBar::hidden(),
                state,
                heartbeat,
            };
        }
        let bar = ProgressBar::with_draw_target(Some(planned), ProgressDrawTarget::stderr());
        if let Ok(style) = ProgressStyle::with_template(
            "{spinner} [{elapsed_precise}] {wide_bar} {pos}/{len} calls  {msg}",
        ) {
            bar.set_style(style);
        }
        bar.set_message(lock(&state).status(false));
        bar.enable_steady_tick(TICK);
        Progress {
            bar,
            state,
            heartbeat: None,
        }
    }

    /// Count one finished call.
    pub fn record(&self, record: &CallRecord) {
        let message = {
            let mut state = lock(&self.state);
            state.done += 1;
            state.errors += u64::from(record.error.is_some());
            let scored = state.scored;
            if let Some(entry) = state
                .means
                .iter_mut()
                .find(|(id, _, _)| *id == record.candidate_id)
                .filter(|_| record.split == scored)
            {
                entry.1 += record.score;
                entry.2 += 1;
            }
            // Without the live bar the heartbeat reads the state itself: no line to build here.
            (!self.bar.is_hidden()).then(|| state.status(false))
        };
        // The count first: the last frame drawn then shows every call done.
        self.bar.inc(1);
        if let Some(message) = message {
            self.bar.set_message(message);
        }
    }

    /// Run `f` (which prints to stderr) with the bar out of the way.
    pub fn suspend<R>(&self, f: impl FnOnce() -> R) -> R {
        self.bar.suspend(f)
    }

    /// Remove the display and stop the heartbeat.
    pub fn finish(self) {
        self.bar.finish_and_clear();
        if let Some((stop, thread)) = self.heartbeat {
            drop(stop);
            let _ = thread.join();
        }
    }
}

fn lock(state: &Mutex<State>) -> std::sync::MutexGuard<'_, State> {
    state.lock().unwrap_or_else(PoisonError::into_inner)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_eta_waits_for_a_full_wave_of_calls() {
        let mut state = State {
            started: Instant::now() - Duration::from_secs(4),
            planned: 100,
            done: 2,
            errors: 1,
            concurrency: 8,
            scored: Split::Single,
            means: vec![("a".into(), 1.5, 2)],
        };
        assert_eq!(
            state.status(true),
            "2/100 calls, elapsed 4s, 8 in flight, 1 error, 0.5 calls/s; mean a 0.750"
        );
        // An id's line break stays on the status line.
        state.means[0].0 = "a\nb  0.999".into();
        assert!(
            state.status(true).ends_with("; mean a ⏎ b  0.999 0.750"),
            "{}",
            state.status(true)
        );
        state.done = 8;
        assert!(
            state.status(false).contains(", eta 46s"),
            "{}",
            state.status(false)
        );
        assert_eq!(clock(65.0), "1m05s");
    }

    #[test]
    fn the_running_means_are_those_of_the_split_that_scores() {
        let progress = Progress::start(4, 2, &["a".to_string()], Split::Val, None);
        for (split, score) in [("train", 1.0), ("val", 0.5), ("val", 0.25), ("train", 1.0)] {
            let line = format!(
                r#"{{"candidate_id":"a","split":"{split}","example_index":0,"example_line":1,"score":{score},"error":null}}"#
            );
            progress.record(&serde_json::from_str(&line).expect("a result line"));
        }
        let status = lock(&progress.state).status(false);
        progress.finish();
        // The rate before it depends on the clock; the means do not.
        assert_eq!(
            status.split_once("; ").map(|(_, means)| means),
            Some("val mean a 0.375"),
            "{status}"
        );
    }
}
