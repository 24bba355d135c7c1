//! Medians of several runs, the table, the JSON lines and the targets.

use std::fmt::Write as _;

use serde_json::json;

use crate::Figures;
use crate::clients::ClientKind;

/// The median of `values` (the mean of the middle two for an even count);
/// NaN for none.
pub fn median(values: &[f64]) -> f64 {
    let mut sorted: Vec<f64> = values.iter().copied().filter(|v| !v.is_nan()).collect();
    if sorted.is_empty() {
        return f64::NAN;
    }
    sorted.sort_by(f64::total_cmp);
    let middle = sorted.len() / 2;
    if sorted.len() % 2 == 1 {
        sorted[middle]
    } else {
        (sorted[middle - 1] + sorted[middle]) / 2.0
    }
}

/// One client's medians over its runs.
#[derive(Debug, Clone)]
pub struct Summary {
    /// The client.
    pub client: ClientKind,
    /// Every successful run's figures.
    pub runs: Vec<Figures>,
    /// Why each failed run failed.
    pub failures: Vec<String>,
}

/// A figure of [`Figures`], by name, with how to read it from one run.
struct Figure {
    name: &'static str,
    read: fn(&Figures) -> f64,
}

const FIGURES: [Figure; 23] = [
    Figure {
        name: "sync_seconds",
        read: |f| f.sync_seconds,
    },
    Figure {
        name: "cpu_seconds",
        read: |f| f.cpu_seconds.unwrap_or(f64::NAN),
    },
    Figure {
        name: "server_cpu_seconds",
        read: |f| f.server_cpu_seconds.unwrap_or(f64::NAN),
    },
    Figure {
        name: "events_per_second",
        read: Figures::events_per_second,
    },
    Figure {
        name: "rss_synced_mib",
        read: |f| f.rss_synced_mib,
    },
    Figure {
        name: "kib_per_object",
        read: Figures::kib_per_object,
    },
    Figure {
        name: "relist_peak_mib",
        read: |f| f.relist_peak_mib,
    },
    Figure {
        name: "relist_peak_ratio",
        read: Figures::relist_peak_ratio,
    },
    Figure {
        name: "restart_seconds",
        read: |f| f.restart_seconds.unwrap_or(f64::NAN),
    },
    Figure {
        name: "restart_ratio",
        read: Figures::restart_ratio,
    },
    Figure {
        name: "restart_listings",
        read: |f| f.restart_listings.map_or(f64::NAN, |n| n as f64),
    },
    Figure {
        name: "snapshot_mib",
        read: |f| f.snapshot_mib.unwrap_or(f64::NAN),
    },
    Figure {
        name: "snapshot_write_seconds",
        read: |f| f.snapshot_write_seconds.unwrap_or(f64::NAN),
    },
    Figure {
        name: "lister_get_miss_us",
        read: |f| f.lister_get_miss_us.unwrap_or(f64::NAN),
    },
    Figure {
        name: "lister_get_hit_us",
        read: |f| f.lister_get_hit_us.unwrap_or(f64::NAN),
    },
    Figure {
        name: "lister_list_ms",
        read: |f| f.lister_list_ms.unwrap_or(f64::NAN),
    },
    Figure {
        name: "replicaset_reads_per_s",
        read: |f| f.replicaset_reads_per_s.unwrap_or(f64::NAN),
    },
    Figure {
        name: "replicaset_us_per_pod",
        read: |f| f.replicaset_us_per_pod().unwrap_or(f64::NAN),
    },
    Figure {
        name: "rss_after_reads_mib",
        read: |f| f.rss_after_reads_mib.unwrap_or(f64::NAN),
    },
    Figure {
        name: "cache_mib",
        read: |f| f.cache_mib.unwrap_or(f64::NAN),
    },
    Figure {
        name: "rss_over_cache",
        read: |f| f.rss_over_cache().unwrap_or(f64::NAN),
    },
    Figure {
        name: "rss_file_growth_mib",
        read: |f| f.rss_file_growth_mib.unwrap_or(f64::NAN),
    },
    Figure {
        name: "anon_over_cache",
        read: |f| f.anon_over_cache().unwrap_or(f64::NAN),
    },
];

impl Summary {
    /// The median of a figure by name (see the JSON lines); NaN if unknown.
    pub fn median(&self, figure: &str) -> f64 {
        FIGURES
            .iter()
            .find(|f| f.name == figure)
            .map_or(f64::NAN, |f| {
                median(&self.runs.iter().map(f.read).collect::<Vec<_>>())
            })
    }
}

fn find(summaries: &[Summary], client: ClientKind) -> Option<&Summary> {
    summaries.iter().find(|s| s.client == client)
}

fn ratio(summaries: &[Summary], of: &Summary, against: ClientKind, figure: &str) -> f64 {
    find(summaries, against).map_or(f64::NAN, |other| of.median(figure) / other.median(figure))
}

fn cell(value: f64, decimals: usize) -> String {
    if value.is_nan() {
        "–".to_string()
    } else {
        format!("{value:.decimals$}")
    }
}

/// The markdown table of medians, with ratios against kube-rs (the
/// counterpart configuration) and against `limit`.
pub fn table(summaries: &[Summary]) -> String {
    let mut out = String::new();
    let _ = writeln!(
        out,
        "| client | sync s | sync vs kube-rs | sync vs limit | events/s | events/s vs kube-rs | RSS synced MiB | KiB per pod | per pod vs kube-rs | relist peak MiB | relist peak / steady |"
    );
    let _ = writeln!(out, "|---|---|---|---|---|---|---|---|---|---|---|");
    for summary in summaries {
        let kube = summary.client.kube_rs_counterpart();
        let _ = writeln!(
            out,
            "| {} | {} | {} | {} | {} | {} | {} | {} | {} | {} | {} |",
            summary.client.name(),
            cell(summary.median("sync_seconds"), 2),
            cell(ratio(summaries, summary, kube, "sync_seconds"), 2),
            cell(
                ratio(summaries, summary, ClientKind::Limit, "sync_seconds"),
                2
            ),
            cell(summary.median("events_per_second"), 0),
            cell(ratio(summaries, summary, kube, "events_per_second"), 2),
            cell(summary.median("rss_synced_mib"), 0),
            cell(summary.median("kib_per_object"), 1),
            cell(ratio(summaries, summary, kube, "kib_per_object"), 2),
            cell(summary.median("relist_peak_mib"), 0),
            cell(summary.median("relist_peak_ratio"), 2),
        );
    }
    side_table(
        &mut out,
        summaries,
        "client (CPU) | sync s | client CPU s, start to synced | server CPU s, start to synced and 1.5 s after",
        &[
            ("sync_seconds", 2),
            ("cpu_seconds", 2),
            ("server_cpu_seconds", 2),
        ],
    );
    side_table(
        &mut out,
        summaries,
        "client (warm restart) | cold sync s | warm sync s | warm / cold | lists on restart | snapshot MiB | snapshot write s",
        &[
            ("sync_seconds", 2),
            ("restart_seconds", 3),
            ("restart_ratio", 2),
            ("restart_listings", 0),
            ("snapshot_mib", 1),
            ("snapshot_write_seconds", 3),
        ],
    );
    side_table(
        &mut out,
        summaries,
        "client (lister) | get, first read µs | get, again µs | list() of every pod ms",
        &[
            ("lister_get_miss_us", 2),
            ("lister_get_hit_us", 2),
            ("lister_list_ms", 1),
        ],
    );
    side_table(
        &mut out,
        summaries,
        "client (ReplicaSet reads) | reconciles/s, each listing one group of N/100 pods | µs per pod returned | RSS after the reads MiB",
        &[
            ("replicaset_reads_per_s", 0),
            ("replicaset_us_per_pod", 2),
            ("rss_after_reads_mib", 0),
        ],
    );
    side_table(
        &mut out,
        summaries,
        "client (cache) | cache_bytes MiB | RSS growth over cache_bytes | of the growth, code paged in MiB | the rest over cache_bytes",
        &[
            ("cache_mib", 1),
            ("rss_over_cache", 2),
            ("rss_file_growth_mib", 1),
            ("anon_over_cache", 2),
        ],
    );
    out
}

/// A table of `figures` (name, decimals) under `header`, after a blank
/// line, for the clients that measured its second figure (the first may
/// be a figure every client has); nothing when none did.
fn side_table(out: &mut String, summaries: &[Summary], header: &str, figures: &[(&str, usize)]) {
    let Some(&(marker, _)) = figures.get(1).or(figures.first()) else {
        return;
    };
    let measured: Vec<&Summary> = summaries
        .iter()
        .filter(|summary| !summary.median(marker).is_nan())
        .collect();
    if measured.is_empty() {
        return;
    }
    let _ = writeln!(out);
    let _ = writeln!(out, "| {header} |");
    let _ = writeln!(out, "|---{}|", "|---".repeat(figures.len()));
    for summary in measured {
        let cells: Vec<String> = figures
            .iter()
            .map(|&(figure, decimals)| cell(summary.median(figure), decimals))
            .collect();
        let _ = writeln!(out, "| {} | {} |", summary.client.name(), cells.join(" | "));
    }
}

/// One JSON line per client and figure: the median, every run's value, and
/// the ratios against kube-rs and `limit`.
pub fn json_lines(summaries: &[Summary]) -> Vec<String> {
    let mut lines = Vec::new();
    for summary in summaries {
        let kube = summary.client.kube_rs_counterpart();
        for figure in &FIGURES {
            let runs: Vec<f64> = summary.runs.iter().map(figure.read).collect();
            let number = |value: f64| (!value.is_nan()).then_some(value);
            let line = json!({
                "client": summary.client.name(),
                "figure": figure.name,
                "pods": summary.runs.first().map_or(0, |f| f.pods),
                "events": summary.runs.first().map_or(0, |f| f.events),
                "median": number(summary.median(figure.name)),
                "runs": runs.iter().map(|v| number(*v)).collect::<Vec<_>>(),
                "vs_kube_rs": number(ratio(summaries, summary, kube, figure.name)),
                "vs_limit": number(ratio(summaries, summary, ClientKind::Limit, figure.name)),
            });
            lines.push(line.to_string());
        }
    }
    lines
}

/// One line per failed run (none when every run succeeded).
pub fn failures(summaries: &[Summary]) -> Vec<String> {
    summaries
        .iter()
        .flat_map(|summary| {
            summary
                .failures
                .iter()
                .map(move |failure| format!("{} {failure}", summary.client.name()))
        })
        .collect()
}

/// Where the clients ran, for the targets that hold there.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Setting {
    /// The test server, every phase.
    TestServer,
    /// A real kube-apiserver, the sync alone; `neighbour` when a CPU-bound
    /// neighbour shared the cores.
    RealServer {
        /// Whether a CPU-bound neighbour ran beside each client.
        neighbour: bool,
    },
}

/// The targets, each with its figure and whether it is met; only
/// those whose clients were run, and that hold where they ran.
pub fn targets(summaries: &[Summary], setting: Setting) -> Vec<String> {
    if let Setting::RealServer { neighbour } = setting {
        let mut lines = default_targets(summaries);
        lines.extend(watch_list_targets(summaries, neighbour));
        return lines;
    }
    let mut lines = Vec::new();
    let verdict = |met: bool| if met { "met" } else { "MISSED" };
    for (ours, name) in [
        (ClientKind::ClientgoJson, "list"),
        (ClientKind::ClientgoWatchList, "watch-list"),
    ] {
        let (Some(summary), Some(_)) = (
            find(summaries, ours),
            find(summaries, ours.kube_rs_counterpart()),
        ) else {
            continue;
        };
        let vs_kube = ratio(
            summaries,
            summary,
            ours.kube_rs_counterpart(),
            "sync_seconds",
        );
        let vs_limit = ratio(summaries, summary, ClientKind::Limit, "sync_seconds");
        lines.push(format!(
            "initial sync ({name}): {vs_kube:.2}x kube-rs's time (target at most 0.5x: {}), {vs_limit:.2}x limit's (target under 1x: {})",
            verdict(vs_kube <= 0.5),
            if vs_limit.is_nan() { "limit not run" } else { verdict(vs_limit < 1.0) }
        ));
    }
    if let Some(summary) = find(summaries, ClientKind::ClientgoJson)
        && find(summaries, ClientKind::KubeRs).is_some()
    {
        let events = ratio(summaries, summary, ClientKind::KubeRs, "events_per_second");
        lines.push(format!(
            "watch throughput: {events:.2}x kube-rs's events/s (target at least 2x: {})",
            verdict(events >= 2.0)
        ));
        let memory = ratio(summaries, summary, ClientKind::KubeRs, "kib_per_object");
        lines.push(format!(
            "memory, full objects: {memory:.2}x kube-rs's RSS per pod (target at most 0.5x: {})",
            verdict(memory <= 0.5)
        ));
    }
    if let Some(summary) = find(summaries, ClientKind::ClientgoStrip)
        && find(summaries, ClientKind::KubeRs).is_some()
    {
        let memory = ratio(summaries, summary, ClientKind::KubeRs, "kib_per_object");
        lines.push(format!(
            "memory, managedFields dropped: {memory:.2}x kube-rs's RSS per pod with full objects (target at most 0.3x: {})",
            verdict(memory <= 0.3)
        ));
    }
    lines.extend(default_targets(summaries));
    lines.extend(limit_targets(summaries));
    lines.extend(compact_targets(summaries));
    lines.extend(protobuf_targets(summaries));
    for ours in [
        ClientKind::ClientgoJson,
        ClientKind::ClientgoWatchList,
        ClientKind::ClientgoStrip,
        ClientKind::ClientgoCompact,
        ClientKind::ClientgoCompactWatchList,
        ClientKind::ClientgoCompactTyped,
    ] {
        if let Some(summary) = find(summaries, ours) {
            let peak = summary.median("relist_peak_ratio");
            lines.push(format!(
                "relist ({}): peak RSS {peak:.2}x the steady state (target at most 1.3x: {})",
                ours.name(),
                verdict(peak <= 1.3)
            ));
        }
    }
    lines
}

/// The real server's watch-list targets: the default informer's
/// watch-list sync (`clientgo`) against the same informer listing
/// (`clientgo-list`), in time and in client CPU (in time alone, and more
/// loosely, beside a CPU-bound `neighbour`), and against a plain reader of
/// its stream (`stream`).
fn watch_list_targets(summaries: &[Summary], neighbour: bool) -> Vec<String> {
    let verdict = |met: bool| if met { "met" } else { "MISSED" };
    let mut lines = Vec::new();
    let Some(summary) = find(summaries, ClientKind::Clientgo) else {
        return lines;
    };
    if find(summaries, ClientKind::ClientgoList).is_some() {
        let time = ratio(summaries, summary, ClientKind::ClientgoList, "sync_seconds");
        let cpu = ratio(summaries, summary, ClientKind::ClientgoList, "cpu_seconds");
        lines.push(if neighbour {
            format!(
                "watch-list beside a CPU-bound neighbour: sync {time:.2}x the list's time (target at most 1.5x: {})",
                verdict(time <= 1.5)
            )
        } else {
            format!(
                "watch-list: sync {time:.2}x the list's time, {cpu:.2}x its client CPU (target at most 1.2x each: {})",
                verdict(time <= 1.2 && cpu <= 1.2)
            )
        });
    }
    if neighbour {
        return lines;
    }
    if find(summaries, ClientKind::Stream).is_some() {
        let time = ratio(summaries, summary, ClientKind::Stream, "sync_seconds");
        let cpu = ratio(summaries, summary, ClientKind::Stream, "cpu_seconds");
        lines.push(format!(
            "watch-list: sync {time:.2}x a plain reader's time (target at most 1.15x: {}), {cpu:.2}x its CPU",
            verdict(time <= 1.15)
        ));
    }
    lines
}

/// The fast-and-light-by-default issue's targets, all with no option
/// set: `clientgo` (metadata handler) and `clientgo-typed` (a handler
/// reading whole pods) against kube-rs's default watcher, and the default
/// watch-list against the same informer listing (`clientgo-list`).
fn default_targets(summaries: &[Summary]) -> Vec<String> {
    let verdict = |met: bool| if met { "met" } else { "MISSED" };
    let (Some(summary), Some(_)) = (
        find(summaries, ClientKind::Clientgo),
        find(summaries, ClientKind::KubeRs),
    ) else {
        return Vec::new();
    };
    let sync = ratio(summaries, summary, ClientKind::KubeRs, "sync_seconds");
    let memory = ratio(summaries, summary, ClientKind::KubeRs, "kib_per_object");
    let events = ratio(summaries, summary, ClientKind::KubeRs, "events_per_second");
    let mut lines = vec![
        format!(
            "defaults: sync {sync:.2}x kube-rs's (target at most 0.35x: {})",
            verdict(sync <= 0.35)
        ),
        format!(
            "defaults: RSS per pod {memory:.2}x kube-rs's (target at most 0.2x: {})",
            verdict(memory <= 0.2)
        ),
    ];
    // No burst on a real server.
    if events.is_finite() {
        lines.push(format!(
            "defaults: {events:.2}x kube-rs's events/s with a metadata handler (target at least 3x: {})",
            verdict(events >= 3.0)
        ));
    }
    if let Some(typed) = find(summaries, ClientKind::ClientgoTyped) {
        let events = ratio(summaries, typed, ClientKind::KubeRs, "events_per_second");
        lines.push(format!(
            "defaults: {events:.2}x kube-rs's events/s with a typed handler (target at least 1.5x: {})",
            verdict(events >= 1.5)
        ));
    }
    if find(summaries, ClientKind::ClientgoList).is_some() {
        let watch_list = ratio(summaries, summary, ClientKind::ClientgoList, "sync_seconds");
        lines.push(format!(
            "defaults: watch-list sync {watch_list:.2}x the same informer's list (target at most 1.05x: {})",
            verdict(watch_list <= 1.05)
        ));
    }
    lines
}

/// The at-the-limit issue's targets, against the project's own rows:
/// memory over the bytes the cache keeps (`clientgo`, `clientgo-lz4`), a
/// typed handler against a metadata one, and the default watch-list sync
/// against a plain reader of the same stream (`stream`) and one that
/// keeps each frame (`stream-keep`).
fn limit_targets(summaries: &[Summary]) -> Vec<String> {
    let verdict = |met: bool| if met { "met" } else { "MISSED" };
    let mut lines = Vec::new();
    for kind in [ClientKind::Clientgo, ClientKind::ClientgoLz4] {
        if let Some(summary) = find(summaries, kind) {
            let over = summary.median("rss_over_cache");
            let code = summary.median("rss_file_growth_mib");
            let rest = summary.median("anon_over_cache");
            let without_code = if rest.is_finite() && code.is_finite() {
                format!("; {rest:.2}x without the {code:.1} MiB of code paged in")
            } else {
                String::new()
            };
            lines.push(format!(
                "limits ({}): RSS growth {over:.2}x cache_bytes (target at most 1.25x: {}){without_code}",
                kind.name(),
                verdict(over <= 1.25)
            ));
        }
    }
    let Some(summary) = find(summaries, ClientKind::Clientgo) else {
        return lines;
    };
    if let Some(typed) = find(summaries, ClientKind::ClientgoTyped) {
        let sync = typed.median("sync_seconds") / summary.median("sync_seconds");
        let memory = typed.median("kib_per_object") / summary.median("kib_per_object");
        lines.push(format!(
            "limits: a typed handler's sync {sync:.2}x and RSS per pod {memory:.2}x the metadata handler's (target at most 1.25x each: {})",
            verdict(sync <= 1.25 && memory <= 1.25)
        ));
    }
    if find(summaries, ClientKind::Stream).is_some() {
        let stream = ratio(summaries, summary, ClientKind::Stream, "sync_seconds");
        lines.push(format!(
            "limits: watch-list sync {stream:.2}x a plain reader of the same stream (target at most 1.15x: {})",
            verdict(stream <= 1.15)
        ));
    }
    if find(summaries, ClientKind::StreamKeep).is_some() {
        let keep = ratio(summaries, summary, ClientKind::StreamKeep, "sync_seconds");
        lines.push(format!(
            "limits: watch-list sync {keep:.2}x a reader keeping each frame of the same stream (no target: what decoding and caching add to keeping the bytes)"
        ));
    }
    lines
}

/// The protobuf issue's target: the informer's sync at least 1.5x faster
/// in protobuf than in JSON on the same server, in list and watch-list
/// modes.
fn protobuf_targets(summaries: &[Summary]) -> Vec<String> {
    let verdict = |met: bool| if met { "met" } else { "MISSED" };
    let mut lines = Vec::new();
    for (ours, json, name) in [
        (
            ClientKind::ClientgoProtobuf,
            ClientKind::ClientgoJson,
            "list",
        ),
        (
            ClientKind::ClientgoProtobufWatchList,
            ClientKind::ClientgoWatchList,
            "watch-list",
        ),
    ] {
        let (Some(summary), Some(_)) = (find(summaries, ours), find(summaries, json)) else {
            continue;
        };
        let sync = ratio(summaries, summary, json, "sync_seconds");
        lines.push(format!(
            "initial sync, protobuf ({name}): {sync:.2}x the JSON sync's time (target at most 0.67x, 1.5x faster: {})",
            verdict(sync <= 1.0 / 1.5)
        ));
    }
    lines
}

/// The compact-objects issue's targets (relist peaks are with the
/// others').
fn compact_targets(summaries: &[Summary]) -> Vec<String> {
    let mut lines = Vec::new();
    let verdict = |met: bool| if met { "met" } else { "MISSED" };
    let against = |ours: ClientKind| {
        let counterpart = ours.kube_rs_counterpart();
        find(summaries, ours).filter(|_| find(summaries, counterpart).is_some())
    };
    if let Some(summary) = against(ClientKind::ClientgoCompact) {
        let memory = ratio(summaries, summary, ClientKind::KubeRs, "kib_per_object");
        lines.push(format!(
            "memory, compact objects: {memory:.2}x kube-rs's RSS per pod, full objects retrievable (target at most 0.25x: {})",
            verdict(memory <= 0.25)
        ));
        let events = ratio(summaries, summary, ClientKind::KubeRs, "events_per_second");
        lines.push(format!(
            "watch throughput, compact objects: {events:.2}x kube-rs's events/s (target at least 3x: {})",
            verdict(events >= 3.0)
        ));
    }
    if let Some(summary) = against(ClientKind::ClientgoCompactLz4) {
        let memory = ratio(summaries, summary, ClientKind::KubeRs, "kib_per_object");
        lines.push(format!(
            "memory, compact objects compressed (LZ4): {memory:.2}x kube-rs's RSS per pod (target at most 0.1x: {})",
            verdict(memory <= 0.1)
        ));
    }
    for summary in summaries {
        let warm = summary.median("restart_ratio");
        if warm.is_nan() {
            continue;
        }
        let listings = summary.median("restart_listings");
        lines.push(format!(
            "warm restart ({}): synced in {warm:.2}x the cold sync's time with {listings} lists (target at most 0.1x with none: {})",
            summary.client.name(),
            verdict(warm <= 0.1 && listings == 0.0)
        ));
    }
    for (ours, name) in [
        (ClientKind::ClientgoCompact, "list"),
        (ClientKind::ClientgoCompactWatchList, "watch-list"),
    ] {
        if let Some(summary) = against(ours) {
            let sync = ratio(
                summaries,
                summary,
                ours.kube_rs_counterpart(),
                "sync_seconds",
            );
            lines.push(format!(
                "initial sync, compact objects ({name}): {sync:.2}x kube-rs's time (target at most 0.4x: {})",
                verdict(sync <= 0.4)
            ));
        }
    }
    lines
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn medians() {
        assert_eq!(median(&[3.0, 1.0, 2.0]), 2.0);
        assert_eq!(median(&[4.0, 1.0, 2.0, 3.0]), 2.5);
        assert!(median(&[]).is_nan());
    }

    fn run(client: ClientKind, sync_seconds: f64) -> Summary {
        Summary {
            client,
            runs: vec![Figures {
                pods: 10,
                sync_seconds,
                ..Figures::default()
            }],
            failures: Vec::new(),
        }
    }

    #[test]
    fn ratios_and_verdicts() {
        let summaries = [
            run(ClientKind::Limit, 2.0),
            run(ClientKind::ClientgoJson, 0.5),
            run(ClientKind::KubeRs, 1.0),
        ];
        let targets = targets(&summaries, Setting::TestServer);
        assert!(
            targets[0].starts_with("initial sync (list): 0.50x kube-rs's time (target at most 0.5x: met), 0.25x limit's"),
            "{targets:?}"
        );
        assert!(table(&summaries).contains("| clientgo-json | 0.50 | 0.50 | 0.25 |"));
        let lines = json_lines(&summaries);
        assert!(lines.iter().any(|l| l.contains("\"vs_kube_rs\":0.5")));
    }

    #[test]
    fn the_real_server_holds_the_watch_list_to_its_list_and_its_reader() {
        let mut watch_list = run(ClientKind::Clientgo, 6.0);
        watch_list.runs[0].cpu_seconds = Some(2.4);
        let mut list = run(ClientKind::ClientgoList, 5.0);
        list.runs[0].cpu_seconds = Some(2.0);
        let summaries = [watch_list, list, run(ClientKind::Stream, 5.5)];
        let quiet = targets(&summaries, Setting::RealServer { neighbour: false });
        assert_eq!(
            quiet,
            [
                "watch-list: sync 1.20x the list's time, 1.20x its client CPU (target at most 1.2x each: met)",
                "watch-list: sync 1.09x a plain reader's time (target at most 1.15x: met), NaNx its CPU",
            ]
        );
        let loaded = targets(&summaries, Setting::RealServer { neighbour: true });
        assert_eq!(
            loaded,
            [
                "watch-list beside a CPU-bound neighbour: sync 1.20x the list's time (target at most 1.5x: met)"
            ]
        );
        // The test server's lines are not the real server's.
        assert!(
            !targets(&summaries, Setting::TestServer)
                .iter()
                .any(|line| line.starts_with("watch-list"))
        );
    }

    #[test]
    fn side_tables_show_only_the_clients_that_measured_them() {
        let mut restarted = run(ClientKind::ClientgoCompact, 1.0);
        restarted.runs[0].restart_seconds = Some(0.05);
        restarted.runs[0].restart_listings = Some(0);
        let summaries = [restarted, run(ClientKind::KubeRs, 1.0)];
        let table = table(&summaries);
        assert!(
            table.contains("|---|---|---|---|---|---|---|\n| clientgo-compact | 1.00 | 0.050 | 0.05 | 0 | – | – |"),
            "{table}"
        );
        assert!(!table.contains("| kube-rs | 1.00 | –"), "{table}");
        assert!(!table.contains("client (lister)"), "{table}");
    }
}
