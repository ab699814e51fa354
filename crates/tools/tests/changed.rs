//! `changed_since`: the files of a folder changed since a moment, as a replay names them.

#![cfg(unix)]
#![allow(clippy::unwrap_used, clippy::disallowed_methods)]

use std::time::{Duration, UNIX_EPOCH};

use tooltrail_sandbox::Workspace;
use tooltrail_tools::changed_since;

#[test]
fn attack_links_only_the_folders_own_files_changed_since_are_named() {
    let dir = tempfile::tempdir().unwrap();
    let outside = tempfile::tempdir().unwrap();
    let root = dir.path().canonicalize().unwrap();
    std::fs::write(outside.path().join("secret-new.txt"), "x").unwrap();
    std::fs::write(root.join("old.txt"), "x").unwrap();
    std::fs::File::options()
        .write(true)
        .open(root.join("old.txt"))
        .unwrap()
        .set_modified(UNIX_EPOCH + Duration::from_secs(1_000))
        .unwrap();
    std::fs::write(root.join("new.txt"), "x").unwrap();
    std::fs::write(root.join(".gitignore"), "build/\n").unwrap();
    std::fs::create_dir(root.join("build")).unwrap();
    std::fs::write(root.join("build/out.o"), "x").unwrap();
    std::os::unix::fs::symlink(outside.path(), root.join("elsewhere")).unwrap();
    let workspace = Workspace::open(&root).unwrap();
    let since = UNIX_EPOCH + Duration::from_secs(2_000);
    let changed = changed_since(&workspace, since, 5, 1_000);
    assert_eq!(changed.first, vec![".gitignore", "new.txt"]);
    assert_eq!(changed.count, 2);
    // Named at most as asked, counted all the same.
    let one = changed_since(&workspace, since, 1, 1_000);
    assert_eq!((one.count, one.first.len()), (2, 1));
}
