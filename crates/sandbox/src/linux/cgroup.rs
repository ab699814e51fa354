//! A pids cgroup for one command, where this process may create one (root, or a user with a
//! delegated cgroup): the kernel then refuses the command's forks past the limit. The kernel
//! never applies `RLIMIT_NPROC` to root, and a fork bomb outruns a watchdog on a busy machine,
//! so this is the bound that holds for root. Best effort: without it the watchdog remains.

use std::path::{Path, PathBuf};

/// Stage 2 moves itself into the cgroup named here (set by stage 1, removed before `exec`).
pub(crate) const CGROUP_ENV: &str = "TOOLTRAIL_SANDBOX_CGROUP";

/// One command's cgroup; removed when dropped (it is empty by then).
pub(crate) struct PidsCgroup {
    dir: PathBuf,
}

impl PidsCgroup {
    /// Creates `tooltrail-<pid>` beside this process's own pids cgroup, limited to `max`
    /// processes. `None` when there is no pids controller this process may use.
    pub(crate) fn create(max: u64) -> Option<Self> {
        let base = own_pids_cgroup()?;
        sweep(&base);
        let dir = base.join(format!("tooltrail-{}", std::process::id()));
        std::fs::create_dir(&dir).ok()?;
        let cgroup = Self { dir };
        std::fs::write(cgroup.dir.join("pids.max"), max.to_string()).ok()?;
        Some(cgroup)
    }

    pub(crate) fn dir(&self) -> &Path {
        &self.dir
    }

    /// The processes in the cgroup.
    pub(crate) fn members(&self) -> Vec<i32> {
        std::fs::read_to_string(self.dir.join("cgroup.procs"))
            .map(|text| {
                text.lines()
                    .filter_map(|line| line.trim().parse().ok())
                    .collect()
            })
            .unwrap_or_default()
    }

    /// Whether a fork was refused for reaching the limit (`pids.events`).
    pub(crate) fn limit_hit(&self) -> bool {
        std::fs::read_to_string(self.dir.join("pids.events"))
            .ok()
            .and_then(|text| {
                text.lines()
                    .find_map(|line| line.strip_prefix("max "))
                    .and_then(|count| count.trim().parse::<u64>().ok())
            })
            .is_some_and(|count| count > 0)
    }
}

impl Drop for PidsCgroup {
    fn drop(&mut self) {
        // Empty once every member was killed and reaped; a few tries while the kernel catches up.
        for _ in 0..50 {
            if std::fs::remove_dir(&self.dir).is_ok() {
                return;
            }
            std::thread::sleep(std::time::Duration::from_millis(10));
        }
    }
}

/// Removes the cgroups of helpers that are gone (killed before they could clean up).
fn sweep(base: &Path) {
    let Ok(entries) = std::fs::read_dir(base) else {
        return;
    };
    for entry in entries.flatten() {
        let name = entry.file_name();
        let Some(pid) = name
            .to_str()
            .and_then(|name| name.strip_prefix("tooltrail-"))
            .and_then(|pid| pid.parse::<u32>().ok())
        else {
            continue;
        };
        if !Path::new(&format!("/proc/{pid}")).exists() {
            // Fails harmlessly while processes remain in it.
            let _ = std::fs::remove_dir(entry.path());
        }
    }
}

/// Moves this process into the cgroup stage 1 made, if any.
pub(crate) fn join_from_env() {
    if let Some(dir) = std::env::var_os(CGROUP_ENV) {
        let _ = std::fs::write(
            Path::new(&dir).join("cgroup.procs"),
            std::process::id().to_string(),
        );
    }
}

/// The folder of this process's cgroup in a hierarchy with the pids controller: cgroup v1's
/// `pids` hierarchy, or cgroup v2's when it offers `pids`.
fn own_pids_cgroup() -> Option<PathBuf> {
    let mounts = std::fs::read_to_string("/proc/self/mounts").ok()?;
    let membership = std::fs::read_to_string("/proc/self/cgroup").ok()?;
    for line in mounts.lines() {
        let fields: Vec<&str> = line.split_whitespace().collect();
        let [_, mount_point, kind, options, ..] = fields.as_slice() else {
            continue;
        };
        let own = match *kind {
            "cgroup" if options.split(',').any(|option| option == "pids") => {
                membership.lines().find_map(|line| {
                    let mut parts = line.splitn(3, ':');
                    let _id = parts.next()?;
                    let controllers = parts.next()?;
                    let path = parts.next()?;
                    controllers.split(',').any(|c| c == "pids").then_some(path)
                })
            }
            "cgroup2" => membership.lines().find_map(|line| line.strip_prefix("0::")),
            _ => None,
        };
        let Some(own) = own else { continue };
        let dir = Path::new(mount_point).join(own.trim_start_matches('/'));
        if *kind == "cgroup2" {
            let controllers =
                std::fs::read_to_string(dir.join("cgroup.subtree_control")).unwrap_or_default();
            if !controllers.split_whitespace().any(|c| c == "pids") {
                continue;
            }
        }
        if dir.is_dir() {
            return Some(dir);
        }
    }
    None
}
