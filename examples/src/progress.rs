//! [`Progress`]: one status line, redrawn in place on a terminal, or
//! printed as plain lines every few seconds when the output is a file or
//! a pipe.

use std::io::{IsTerminal, Write};
use std::time::{Duration, Instant};

/// How often a plain (not a terminal) progress line is printed.
pub const PLAIN_LINE_PERIOD: Duration = Duration::from_secs(2);

/// Shows progress on stdout.
#[derive(Debug)]
pub struct Progress {
    terminal: bool,
    last_plain: Option<Instant>,
    started: Instant,
    drawn: bool,
}

impl Default for Progress {
    fn default() -> Self {
        Progress::new()
    }
}

impl Progress {
    /// A status line on stdout (redrawn in place if stdout is a terminal).
    pub fn new() -> Self {
        Progress {
            terminal: std::io::stdout().is_terminal(),
            last_plain: None,
            started: Instant::now(),
            drawn: false,
        }
    }

    /// Shows `status`, prefixed with the time since start. On a terminal
    /// the line is redrawn at once; otherwise a line is printed at most
    /// every [`PLAIN_LINE_PERIOD`].
    pub fn show(&mut self, status: &str) {
        let elapsed = self.started.elapsed().as_secs_f64();
        let mut out = std::io::stdout().lock();
        if self.terminal {
            let _ = write!(out, "\r\x1b[2K[{elapsed:5.1}s] {status}");
            let _ = out.flush();
            self.drawn = true;
        } else if self
            .last_plain
            .is_none_or(|last| last.elapsed() >= PLAIN_LINE_PERIOD)
        {
            let _ = writeln!(out, "[{elapsed:5.1}s] {status}");
            self.last_plain = Some(Instant::now());
        }
    }

    /// Ends the status line (a newline on a terminal).
    pub fn finish(&mut self) {
        if self.terminal && self.drawn {
            crate::say!();
            self.drawn = false;
        }
    }

    /// The time since the progress started.
    pub fn elapsed(&self) -> Duration {
        self.started.elapsed()
    }
}

/// Prints `rows` as a two-column table under `title`, labels padded to
/// one width.
pub fn print_table(title: &str, rows: &[(&str, String)]) {
    let width = rows.iter().map(|(label, _)| label.len()).max().unwrap_or(0);
    crate::say!("{title}");
    for (label, value) in rows {
        crate::say!("  {label:<width$}  {value}");
    }
}
