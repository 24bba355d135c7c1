//! The examples' command lines, parsed by clap: the value parsers they
//! share.

use std::time::Duration;

/// A duration in seconds (`--duration 20` or `--duration 1.5`).
pub fn seconds(text: &str) -> Result<Duration, String> {
    let seconds: f64 = text
        .parse()
        .map_err(|_| format!("{text:?} is not a number of seconds"))?;
    Duration::try_from_secs_f64(seconds).map_err(|_| format!("{text:?} is not a number of seconds"))
}

/// A positive number of seconds, as a float (`--lease-duration 15`).
pub fn positive_seconds(text: &str) -> Result<f64, String> {
    match text.parse::<f64>() {
        Ok(seconds) if seconds.is_finite() && seconds > 0.0 => Ok(seconds),
        _ => Err(format!("{text:?} is not a positive number of seconds")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn seconds_are_numbers() {
        assert_eq!(seconds("1.5").unwrap(), Duration::from_millis(1500));
        assert_eq!(seconds("20").unwrap(), Duration::from_secs(20));
        assert!(seconds("soon").is_err());
        assert!(seconds("-1").is_err());
        assert_eq!(positive_seconds("15").unwrap(), 15.0);
        assert!(positive_seconds("0").is_err());
        assert!(positive_seconds("inf").is_err());
    }
}
