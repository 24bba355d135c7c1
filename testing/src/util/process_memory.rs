//! The calling process's memory, read from `/proc/self/status` (Linux):
//! for benchmarks that measure a client's RSS against this server (the
//! server best runs in another process, so its memory is not counted).

/// A field of `/proc/self/status` given in kB (`VmRSS:`, `VmHWM:`), in
/// MiB; NaN where it cannot be read (not Linux).
fn status_mib(field: &str) -> f64 {
    let status = std::fs::read_to_string("/proc/self/status").unwrap_or_default();
    status
        .lines()
        .find_map(|line| line.strip_prefix(field))
        .and_then(|rest| {
            rest.trim()
                .trim_end_matches("kB")
                .trim()
                .parse::<f64>()
                .ok()
        })
        .map_or(f64::NAN, |kib| kib / 1024.0)
}

/// The resident set size now, in MiB.
pub fn rss_mib() -> f64 {
    status_mib("VmRSS:")
}

/// The part of the resident set that is file-backed pages (the program's
/// code and read-only data paged in, shared libraries), in MiB: memory
/// the process maps rather than allocates.
pub fn rss_file_mib() -> f64 {
    status_mib("RssFile:")
}

/// The highest resident set size since the process started or since the
/// last [`reset_high_water`], in MiB.
pub fn high_water_mib() -> f64 {
    status_mib("VmHWM:")
}

/// Resets the kernel's RSS high-water mark to the current RSS (writes `5`
/// to `/proc/self/clear_refs`). Returns whether it worked.
pub fn reset_high_water() -> bool {
    std::fs::write("/proc/self/clear_refs", "5").is_ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_the_resident_set_on_linux() {
        if cfg!(target_os = "linux") {
            let rss = rss_mib();
            assert!(rss > 0.0, "{rss}");
            assert!(high_water_mib() >= rss);
            let file = rss_file_mib();
            assert!(file > 0.0 && file <= rss, "{file} of {rss}");
        } else {
            assert!(rss_mib().is_nan());
            assert!(rss_file_mib().is_nan());
        }
    }
}
