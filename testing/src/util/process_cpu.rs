//! A process's CPU time, read from `/proc/<pid>/stat` (Linux): for
//! benchmarks that compare what two clients spend on the same work while
//! sharing the machine with the server, and what the server spends.

/// Clock ticks per second of `/proc`'s times (`USER_HZ`, 100 on Linux).
const TICKS_PER_SECOND: f64 = 100.0;

/// User plus system CPU time the process has used so far, in seconds;
/// NaN where it cannot be read (not Linux).
pub fn cpu_seconds() -> f64 {
    cpu_seconds_in("/proc/self/stat")
}

/// [`cpu_seconds`] of process `pid` (a child's, say); NaN where it cannot
/// be read.
pub fn cpu_seconds_of_process(pid: u32) -> f64 {
    cpu_seconds_in(&format!("/proc/{pid}/stat"))
}

/// The CPU time in the `stat` file at `path`; NaN when it cannot be read.
fn cpu_seconds_in(path: &str) -> f64 {
    cpu_seconds_of(&std::fs::read_to_string(path).unwrap_or_default())
}

/// The user and system times of a `/proc/<pid>/stat` line, in seconds.
fn cpu_seconds_of(stat: &str) -> f64 {
    // The command name (field 2) is in parentheses and may hold spaces;
    // the fields after its closing parenthesis start at field 3 (state),
    // so utime and stime (fields 14 and 15) are the 12th and 13th.
    let Some((_, rest)) = stat.rsplit_once(')') else {
        return f64::NAN;
    };
    let mut fields = rest.split_whitespace().skip(11);
    let mut tick = || fields.next().and_then(|field| field.parse::<f64>().ok());
    match (tick(), tick()) {
        (Some(user), Some(system)) => (user + system) / TICKS_PER_SECOND,
        _ => f64::NAN,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_process_read_by_its_id_reads_as_itself() {
        assert!(cpu_seconds_of_process(u32::MAX).is_nan());
        if cfg!(target_os = "linux") {
            let spent = cpu_seconds_of_process(std::process::id());
            assert!(spent.is_finite() && spent >= 0.0, "{spent}");
        }
    }

    #[test]
    fn reads_user_and_system_ticks() {
        let line = "4242 (a (b) c) S 1 2 3 4 5 6 7 8 9 10 250 50 0 0 20 0";
        assert!((cpu_seconds_of(line) - 3.0).abs() < 1e-9);
        assert!(cpu_seconds_of("garbage").is_nan());
        assert!(cpu_seconds_of("1 (x) S 1").is_nan());
        if cfg!(target_os = "linux") {
            let spent = cpu_seconds();
            assert!(spent >= 0.0, "{spent}");
        } else {
            assert!(cpu_seconds().is_nan());
        }
    }
}
