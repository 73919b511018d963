//! Notices the config file changing on disk, without polling: inotify on the
//! folder that holds it (an editor that saves by renaming a new file over the
//! old one replaces the file, so the file itself cannot be watched) and, for a
//! symlinked config, on the folder of the file it points to. A save is a burst
//! of events; after the first the watcher waits a moment, then tells the loop
//! once (`Inbound::ConfigTouched`), which compares the text with what it last
//! read. Where inotify is not available the config is re-read on `c`/`r` only.

use std::path::Path;

use tokio::sync::mpsc::UnboundedSender;
use tokio::task::JoinSet;

use super::Inbound;

/// How long a burst of events (write, rename, chmod) gets to settle.
#[cfg(target_os = "linux")]
const SETTLE: std::time::Duration = std::time::Duration::from_millis(100);

/// Starts watching `path` on `jobs` (aborted on shutdown).
pub(super) fn spawn(path: &Path, jobs: &mut JoinSet<()>, inbound: UnboundedSender<Inbound>) {
    #[cfg(target_os = "linux")]
    if let Some(watch) = linux::Watch::new(path) {
        jobs.spawn(watch.run(inbound));
    }
    #[cfg(not(target_os = "linux"))]
    let _ = (path, jobs, inbound);
}

#[cfg(target_os = "linux")]
mod linux {
    use std::ffi::OsString;
    use std::os::fd::{AsFd, AsRawFd, RawFd};
    use std::path::Path;

    use nix::sys::inotify::{AddWatchFlags, InitFlags, Inotify, WatchDescriptor};
    use tokio::io::unix::AsyncFd;
    use tokio::sync::mpsc::UnboundedSender;

    use super::{Inbound, SETTLE};

    /// tokio's `AsyncFd` wants `AsRawFd`; nix's `Inotify` offers `AsFd`.
    struct Fd(Inotify);

    impl AsRawFd for Fd {
        fn as_raw_fd(&self) -> RawFd {
            self.0.as_fd().as_raw_fd()
        }
    }

    #[allow(unsafe_code)]
    fn register(fd: Fd) -> Option<AsyncFd<Fd>> {
        // SAFETY: `Fd` owns the inotify descriptor (an `OwnedFd` inside nix's
        // `Inotify`), which the `AsyncFd` owns in turn: it stays open and is
        // the same descriptor, returned by every `as_raw_fd`, until the
        // `AsyncFd` is dropped.
        unsafe { AsyncFd::register_with_interest(fd, tokio::io::Interest::READABLE) }.ok()
    }

    pub(super) struct Watch {
        fd: AsyncFd<Fd>,
        /// Each watched folder and the name the config has in it.
        names: Vec<(WatchDescriptor, OsString)>,
    }

    impl Watch {
        pub(super) fn new(path: &Path) -> Option<Self> {
            let inotify = Inotify::init(InitFlags::IN_NONBLOCK | InitFlags::IN_CLOEXEC).ok()?;
            let flags = AddWatchFlags::IN_CLOSE_WRITE
                | AddWatchFlags::IN_MOVED_TO
                | AddWatchFlags::IN_MOVED_FROM
                | AddWatchFlags::IN_DELETE;
            let mut names = Vec::new();
            let target = std::fs::canonicalize(path).ok();
            for file in std::iter::once(path).chain(target.as_deref()) {
                let (Some(dir), Some(name)) = (file.parent(), file.file_name()) else {
                    continue;
                };
                let dir = if dir.as_os_str().is_empty() {
                    Path::new(".")
                } else {
                    dir
                };
                if let Ok(wd) = inotify.add_watch(dir, flags)
                    && !names.iter().any(|(w, n)| *w == wd && n == name)
                {
                    names.push((wd, name.to_os_string()));
                }
            }
            if names.is_empty() {
                return None;
            }
            let fd = register(Fd(inotify))?;
            Some(Self { fd, names })
        }

        pub(super) async fn run(self, inbound: UnboundedSender<Inbound>) {
            loop {
                let Ok(mut ready) = self.fd.readable().await else {
                    return;
                };
                let events = match ready
                    .try_io(|fd| fd.get_ref().0.read_events().map_err(std::io::Error::from))
                {
                    Ok(Ok(events)) => events,
                    Ok(Err(_)) => return,
                    // Woken without anything to read: wait again.
                    Err(_) => continue,
                };
                let ours = events.iter().any(|event| {
                    self.names
                        .iter()
                        .any(|(wd, name)| event.wd == *wd && event.name.as_ref() == Some(name))
                });
                if !ours {
                    continue;
                }
                tokio::time::sleep(SETTLE).await;
                if inbound.send(Inbound::ConfigTouched).is_err() {
                    return;
                }
            }
        }
    }
}
