//! [`ManagedProcess`]: a control-plane binary started so that it never
//! outlives the test process, its output kept in a log file.
//!
//! Three things make sure no kube-apiserver or etcd is left behind:
//! - dropping the handle stops the process (SIGTERM, then SIGKILL after a
//!   grace period) and waits for it;
//! - each process runs in a process group of its own, so a stop reaches
//!   whatever it started;
//! - on Linux each is started with a parent-death signal (SIGKILL), so a
//!   test binary that is killed, or exits without dropping a handle kept
//!   in a `static` (a control plane shared by a binary's tests), takes its
//!   processes with it. The signal fires when the *thread* that started the
//!   process ends, so every process is started from one thread of this
//!   module's that lives as long as the test process.

use std::fs::File;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, ExitStatus, Stdio};
use std::sync::mpsc;
use std::sync::{Mutex, OnceLock};
use std::time::{Duration, Instant};

use crate::envtest::error::Error;

/// How long a stopped process has after SIGTERM before SIGKILL.
const STOP_GRACE: Duration = Duration::from_secs(5);

/// A running control-plane process. Dropping it stops it.
#[derive(Debug)]
pub(crate) struct ManagedProcess {
    name: &'static str,
    child: Option<Child>,
    log: PathBuf,
}

type SpawnRequest = (Command, mpsc::Sender<std::io::Result<Child>>);

/// The one thread that starts processes: it lives as long as the test
/// process, so a child's parent-death signal fires only when the test
/// process ends.
fn spawner() -> &'static Mutex<mpsc::Sender<SpawnRequest>> {
    static SPAWNER: OnceLock<Mutex<mpsc::Sender<SpawnRequest>>> = OnceLock::new();
    SPAWNER.get_or_init(|| {
        let (sender, receiver) = mpsc::channel::<SpawnRequest>();
        let spawned = std::thread::Builder::new()
            .name("envtest-spawner".into())
            .spawn(move || {
                while let Ok((mut command, reply)) = receiver.recv() {
                    let _ = reply.send(command.spawn());
                }
                // Every sender is gone only when the static is: the process
                // is ending. Park so this thread outlives every child.
                loop {
                    std::thread::park();
                }
            });
        if let Err(error) = spawned {
            tracing::error!(%error, "cannot start the envtest spawner thread");
        }
        Mutex::new(sender)
    })
}

impl ManagedProcess {
    /// Starts `binary` with `args`, its standard output and error appended
    /// to `log`.
    pub(crate) fn start(
        name: &'static str,
        binary: &Path,
        args: &[String],
        log: &Path,
    ) -> Result<ManagedProcess, Error> {
        let io = |source| Error::Io {
            what: format!("opening {}", log.display()),
            source,
        };
        let out = File::options()
            .create(true)
            .append(true)
            .open(log)
            .map_err(io)?;
        let err = out.try_clone().map_err(io)?;
        let mut command = Command::new(binary);
        command
            .args(args)
            .stdin(Stdio::null())
            .stdout(out)
            .stderr(err);
        prepare(&mut command);
        let (reply, answer) = mpsc::channel();
        let sent = spawner()
            .lock()
            .map_err(|_| Error::Spawn {
                binary: binary.to_path_buf(),
                source: std::io::Error::other("the spawner's lock is poisoned"),
            })?
            .send((command, reply));
        let spawned = match sent {
            Ok(()) => answer.recv().unwrap_or_else(|_| {
                Err(std::io::Error::other("the envtest spawner thread is gone"))
            }),
            Err(_) => Err(std::io::Error::other("the envtest spawner thread is gone")),
        };
        let child = spawned.map_err(|source| Error::Spawn {
            binary: binary.to_path_buf(),
            source,
        })?;
        tracing::debug!(process = name, pid = child.id(), "started");
        Ok(ManagedProcess {
            name,
            child: Some(child),
            log: log.to_path_buf(),
        })
    }

    /// The process's id, while it runs.
    pub(crate) fn pid(&self) -> Option<u32> {
        self.child.as_ref().map(Child::id)
    }

    /// The file its output goes to.
    pub(crate) fn log(&self) -> &Path {
        &self.log
    }

    /// Its exit status if it has ended (without waiting).
    pub(crate) fn exited(&mut self) -> Option<ExitStatus> {
        self.child.as_mut()?.try_wait().ok().flatten()
    }

    /// Stops it: SIGTERM to its process group, SIGKILL after the grace
    /// period, then waits for it. Blocks the calling thread (at most the
    /// grace period and a moment).
    pub(crate) fn stop(&mut self) {
        let Some(mut child) = self.child.take() else {
            return;
        };
        if matches!(child.try_wait(), Ok(Some(_))) {
            return;
        }
        signal_group(&child, Signal::Terminate);
        let deadline = Instant::now() + STOP_GRACE;
        while Instant::now() < deadline {
            if matches!(child.try_wait(), Ok(Some(_)) | Err(_)) {
                tracing::debug!(process = self.name, "stopped");
                return;
            }
            std::thread::sleep(Duration::from_millis(20));
        }
        tracing::warn!(
            process = self.name,
            "did not stop within {STOP_GRACE:?}; killed"
        );
        signal_group(&child, Signal::Kill);
        let _ = child.kill();
        let _ = child.wait();
    }
}

impl Drop for ManagedProcess {
    fn drop(&mut self) {
        self.stop();
    }
}

/// The last `lines` lines of a log file (empty if it cannot be read).
pub(crate) fn log_tail(path: &Path, lines: usize) -> String {
    let text = std::fs::read(path).unwrap_or_default();
    let text = String::from_utf8_lossy(&text);
    let all: Vec<&str> = text.lines().collect();
    all[all.len().saturating_sub(lines)..].join("\n")
}

#[derive(Clone, Copy)]
enum Signal {
    Terminate,
    Kill,
}

#[cfg(unix)]
fn signal_group(child: &Child, signal: Signal) {
    use rustix::process::{Pid, Signal as S, kill_process_group};
    let Some(pid) = i32::try_from(child.id()).ok().and_then(Pid::from_raw) else {
        return;
    };
    let signal = match signal {
        Signal::Terminate => S::TERM,
        Signal::Kill => S::KILL,
    };
    // The group may be gone already: nothing to do then.
    let _ = kill_process_group(pid, signal);
}

#[cfg(not(unix))]
fn signal_group(child: &Child, _signal: Signal) {
    let _ = child;
}

/// A process group of its own and, on Linux, SIGKILL when the thread that
/// started it ends (see the module's documentation).
#[cfg(target_os = "linux")]
#[allow(unsafe_code)]
fn prepare(command: &mut Command) {
    use std::os::unix::process::CommandExt as _;
    command.process_group(0);
    // SAFETY: the closure runs in the child between fork and exec, where
    // only async-signal-safe calls are allowed. It makes one raw `prctl`
    // system call through rustix (no allocation, no lock) and returns its
    // error, which `spawn` reports.
    unsafe {
        command.pre_exec(|| {
            rustix::process::set_parent_process_death_signal(Some(rustix::process::Signal::KILL))
                .map_err(std::io::Error::from)
        });
    }
}

/// A process group of its own.
#[cfg(all(unix, not(target_os = "linux")))]
fn prepare(command: &mut Command) {
    use std::os::unix::process::CommandExt as _;
    command.process_group(0);
}

#[cfg(not(unix))]
fn prepare(_command: &mut Command) {}
