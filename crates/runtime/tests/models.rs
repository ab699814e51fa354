//! The models folder against a hub on loopback laid out like Hugging Face's: pulls that are
//! verified and listed, resumed after a broken connection, refused for a wrong SHA-256, a full
//! disk or a missing file; imports; removal.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::path::Path;
use std::time::Duration;

use pretty_assertions::assert_eq;
use tokio_util::sync::CancellationToken;
use tooltrail_runtime::models::{
    Catalogue, Hub, ImportMode, ModelError, ModelRef, ModelSource, ModelStore, PullOptions,
    PullProgress, Pulled,
};
use tooltrail_test_support::gguf::GgufBuilder;
use tooltrail_test_support::hub::{HubFile, HubOptions, HubServer, sha256_hex};

const REPO: &str = "acme/Tiny-GGUF";
const FILE: &str = "Tiny-Q4_K_M.gguf";

/// A small model of about `data` bytes.
fn model_bytes(data: usize) -> Vec<u8> {
    GgufBuilder::new()
        .string("general.architecture", "llama")
        .string("general.name", "Tiny")
        .string("general.size_label", "1M")
        .u32("general.file_type", 15)
        .u32("llama.context_length", 8192)
        .string(
            "tokenizer.chat_template",
            "{% if tools %}{{ tools }}{% endif %}{{ messages }}",
        )
        .tensor("token_embd.weight", &[256, 1024], 12)
        .data_bytes(data)
        .build()
}

async fn hub(bytes: &[u8], options: HubOptions) -> HubServer {
    HubServer::start(vec![HubFile::bytes(REPO, FILE, bytes.to_vec())], options)
        .await
        .unwrap()
}

fn options(hub: &HubServer) -> PullOptions {
    PullOptions {
        retries: 0,
        retry_delay: Duration::from_millis(10),
        ..PullOptions::new(Hub::new(&hub.endpoint(), None).unwrap())
    }
}

fn reference(text: &str) -> ModelRef {
    ModelRef::parse(text, &Catalogue::builtin().unwrap()).unwrap()
}

fn hub_ref() -> ModelRef {
    reference(&format!("hf.co/{REPO}/{FILE}"))
}

async fn pull(
    store: &ModelStore,
    reference: &ModelRef,
    options: &PullOptions,
) -> (Result<Pulled, ModelError>, Vec<PullProgress>) {
    let mut seen = Vec::new();
    let result = store
        .pull(
            reference,
            options,
            &mut |progress| seen.push(progress.clone()),
            &CancellationToken::new(),
        )
        .await;
    (result, seen)
}

/// The folder's files that are not hidden (the per-name lock files are).
fn files(dir: &Path) -> Vec<String> {
    let mut names: Vec<String> = std::fs::read_dir(dir)
        .unwrap()
        .map(|entry| entry.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|name| !name.starts_with('.'))
        .collect();
    names.sort();
    names
}

#[tokio::test]
async fn a_pull_through_the_hubs_redirect_is_verified_listed_and_not_repeated() {
    let bytes = model_bytes(300_000);
    let hub = hub(
        &bytes,
        HubOptions {
            redirect: true,
            ..HubOptions::default()
        },
    )
    .await;
    let dir = tempfile::tempdir().unwrap();
    let store = ModelStore::open(dir.path().join("models")).unwrap();

    let (result, seen) = pull(&store, &hub_ref(), &options(&hub)).await;
    let Pulled::Downloaded { model, stats } = result.unwrap() else {
        panic!("the model was downloaded");
    };
    assert_eq!(model.name, "tiny-q4_k_m");
    assert_eq!(model.sha256, sha256_hex(&bytes));
    assert_eq!(model.size_bytes, bytes.len() as u64);
    assert_eq!(std::fs::read(&model.path).unwrap(), bytes);
    assert_eq!(model.metadata.architecture.as_deref(), Some("llama"));
    assert_eq!(model.metadata.context_length, Some(8192));
    assert_eq!(model.metadata.quantization.as_deref(), Some("Q4_K_M"));
    assert!(model.metadata.chat_template_mentions_tools);
    assert_eq!(
        model.source,
        ModelSource::Hub {
            repo: REPO.into(),
            revision: "main".into(),
            file: FILE.into()
        }
    );
    assert_eq!(
        (stats.received, stats.resumed_from),
        (bytes.len() as u64, 0)
    );
    assert!(matches!(seen.first(), Some(PullProgress::Checking { .. })));
    assert!(matches!(seen.last(), Some(PullProgress::Verifying)));
    assert!(seen.iter().any(
        |p| matches!(p, PullProgress::Downloading { done, total: Some(total), .. } if done == total)
    ));

    assert_eq!(store.list().unwrap(), vec![model.clone()]);
    assert_eq!(store.find("Tiny-Q4_K_M").unwrap(), Some(model.clone()));
    assert_eq!(files(store.dir()), ["tiny-q4_k_m.gguf", "tiny-q4_k_m.json"]);
    let requests = hub.requests();
    assert_eq!(
        requests
            .iter()
            .map(|r| (r.method.as_str(), r.path.as_str()))
            .collect::<Vec<_>>(),
        [
            ("HEAD", "/acme/Tiny-GGUF/resolve/main/Tiny-Q4_K_M.gguf"),
            ("GET", "/cdn/acme/Tiny-GGUF/Tiny-Q4_K_M.gguf"),
        ]
    );

    // Pulled again: nothing is downloaded.
    let (again, _) = pull(&store, &hub_ref(), &options(&hub)).await;
    assert_eq!(again.unwrap(), Pulled::AlreadyInstalled(model));
    assert_eq!(hub.downloads().len(), 1);
}

#[tokio::test]
async fn a_connection_lost_halfway_keeps_the_bytes_and_the_next_pull_asks_for_the_rest() {
    let bytes = model_bytes(400_000);
    let half = bytes.len() as u64 / 2;
    let hub = hub(
        &bytes,
        HubOptions {
            cut_after: Some((half, 1)),
            ..HubOptions::default()
        },
    )
    .await;
    let dir = tempfile::tempdir().unwrap();
    let store = ModelStore::open(dir.path()).unwrap();

    let (result, _) = pull(&store, &hub_ref(), &options(&hub)).await;
    let error = result.unwrap_err();
    assert!(
        matches!(&error, ModelError::Interrupted { have, total: Some(total), .. } if *have == half && *total == bytes.len() as u64),
        "{error:?}"
    );
    let message = error.to_string();
    assert!(
        message.starts_with(
            "the connection to the hub was lost (the connection broke during the transfer"
        ),
        "{message}"
    );
    assert!(
        message.ends_with(
            "after 200 KB of 400 KB; the 200 KB downloaded are kept, and pulling tiny-q4_k_m again carries on from there"
        ),
        "{message}"
    );
    // Nothing is listed; the unfinished download is there to resume.
    assert_eq!(store.list().unwrap(), []);
    let pending = store.pending().unwrap();
    assert_eq!(
        (pending[0].name.as_str(), pending[0].have, pending[0].total),
        ("tiny-q4_k_m", half, Some(bytes.len() as u64))
    );

    let (result, seen) = pull(&store, &hub_ref(), &options(&hub)).await;
    let Pulled::Downloaded { model, stats } = result.unwrap() else {
        panic!("the rest was downloaded");
    };
    assert_eq!(stats.resumed_from, half);
    assert_eq!(stats.received, bytes.len() as u64 - half);
    assert!(seen.contains(&PullProgress::Resuming {
        have: half,
        total: Some(bytes.len() as u64)
    }));
    let downloads = hub.downloads();
    assert_eq!(downloads.len(), 2);
    assert_eq!(downloads[0].range, None);
    assert_eq!(downloads[1].range, Some(format!("bytes={half}-")));
    assert_eq!(std::fs::read(&model.path).unwrap(), bytes);
    assert_eq!(model.sha256, sha256_hex(&bytes));
    assert_eq!(store.pending().unwrap(), []);
    assert_eq!(files(store.dir()), ["tiny-q4_k_m.gguf", "tiny-q4_k_m.json"]);
}

#[tokio::test]
async fn a_broken_connection_is_retried_within_the_pull_from_where_it_broke() {
    let bytes = model_bytes(200_000);
    let hub = hub(
        &bytes,
        HubOptions {
            cut_after: Some((70_000, 2)),
            ..HubOptions::default()
        },
    )
    .await;
    let dir = tempfile::tempdir().unwrap();
    let store = ModelStore::open(dir.path()).unwrap();
    let options = PullOptions {
        retries: 2,
        ..options(&hub)
    };
    let (result, seen) = pull(&store, &hub_ref(), &options).await;
    let model = result.unwrap().model().clone();
    assert_eq!(std::fs::read(&model.path).unwrap(), bytes);
    let ranges: Vec<Option<String>> = hub.downloads().into_iter().map(|d| d.range).collect();
    assert_eq!(
        ranges,
        [
            None,
            Some("bytes=70000-".into()),
            Some("bytes=140000-".into())
        ]
    );
    let retries: Vec<(u32, u64)> = seen
        .iter()
        .filter_map(|p| match p {
            PullProgress::Retrying { attempt, have, .. } => Some((*attempt, *have)),
            _ => None,
        })
        .collect();
    assert_eq!(retries, [(1, 70_000), (2, 140_000)]);
}

#[tokio::test]
async fn a_wrong_sha256_keeps_nothing_and_lists_nothing() {
    let bytes = model_bytes(100_000);
    let hub = hub(
        &bytes,
        HubOptions {
            advertised_sha256: Some("ab".repeat(32)),
            ..HubOptions::default()
        },
    )
    .await;
    let dir = tempfile::tempdir().unwrap();
    let store = ModelStore::open(dir.path()).unwrap();
    let (result, _) = pull(&store, &hub_ref(), &options(&hub)).await;
    let error = result.unwrap_err().to_string();
    assert_eq!(
        error,
        format!(
            "the file downloaded for tiny-q4_k_m is not the one expected: its SHA-256 is {}, not \
             {}. Nothing was kept; pull it again, and if this happens again the hub's copy \
             differs from the one expected",
            sha256_hex(&bytes),
            "ab".repeat(32)
        )
    );
    assert_eq!(store.list().unwrap(), []);
    assert_eq!(store.pending().unwrap(), []);
    assert_eq!(files(store.dir()), Vec::<String>::new());
}

#[tokio::test]
async fn a_catalogue_entry_is_checked_against_the_hub_before_anything_is_downloaded() {
    let bytes = model_bytes(50_000);
    let hub = hub(&bytes, HubOptions::default()).await;
    let entry = |sha: &str, size: usize| {
        format!(
            "[[model]]\nname = \"tiny\"\ntitle = \"Tiny\"\ndescription = \"A test model.\"\nrepo = \"{REPO}\"\nfile = \"{FILE}\"\nsize_bytes = {size}\nsha256 = \"{sha}\"\nmemory_gb = 0.1\ncontext_length = 8192\nlicence = \"MIT\"\n"
        )
    };
    let dir = tempfile::tempdir().unwrap();
    let store = ModelStore::open(dir.path()).unwrap();

    let other = "cd".repeat(32);
    let catalogue = Catalogue::parse(&entry(&other, bytes.len())).unwrap();
    let reference = ModelRef::parse("tiny", &catalogue).unwrap();
    let (result, _) = pull(&store, &reference, &options(&hub)).await;
    assert_eq!(
        result.unwrap_err().to_string(),
        format!(
            "the hub's file for tiny is not the one the catalogue names (the hub's SHA-256 is {}, \
             the catalogue's {other}); nothing was downloaded",
            sha256_hex(&bytes)
        )
    );
    assert_eq!(hub.downloads().len(), 0);
    assert_eq!(files(store.dir()), Vec::<String>::new());

    let catalogue = Catalogue::parse(&entry(&sha256_hex(&bytes), bytes.len())).unwrap();
    let reference = ModelRef::parse("tiny", &catalogue).unwrap();
    let (result, _) = pull(&store, &reference, &options(&hub)).await;
    let model = result.unwrap().model().clone();
    assert_eq!(model.name, "tiny");
    assert_eq!(
        model.source,
        ModelSource::Catalogue {
            entry: "tiny".into(),
            repo: REPO.into(),
            revision: "main".into(),
            file: FILE.into()
        }
    );
}

#[tokio::test]
async fn a_missing_file_or_repository_is_a_clear_error() {
    let hub = hub(&model_bytes(1_000), HubOptions::default()).await;
    let dir = tempfile::tempdir().unwrap();
    let store = ModelStore::open(dir.path()).unwrap();
    let (result, _) = pull(
        &store,
        &reference(&format!("hf.co/{REPO}/Nope.gguf")),
        &options(&hub),
    )
    .await;
    assert_eq!(
        result.unwrap_err().to_string(),
        "the hub has no file Nope.gguf in acme/Tiny-GGUF (at main); check the file's name on the \
         repository's Files page"
    );
    let (result, _) = pull(
        &store,
        &reference("hf.co/nobody/Nothing/x.gguf"),
        &options(&hub),
    )
    .await;
    assert_eq!(
        result.unwrap_err().to_string(),
        "the hub has no repository nobody/Nothing, or it is private: check the name, or set \
         HF_TOKEN to a token that can read it"
    );
    assert_eq!(files(store.dir()), Vec::<String>::new());

    // Nothing listening: the hub cannot be reached.
    let gone = hub.endpoint();
    drop(hub);
    let options = PullOptions::new(Hub::new(&gone, None).unwrap());
    let (result, _) = pull(&store, &hub_ref(), &options).await;
    let error = result.unwrap_err().to_string();
    assert!(
        error.starts_with(&format!("the model hub {gone} could not be reached (")),
        "{error}"
    );
}

#[tokio::test]
async fn a_file_that_is_not_a_model_is_not_kept() {
    let bytes = b"<html>This is a login page, not a model.</html>".to_vec();
    let hub = hub(&bytes, HubOptions::default()).await;
    let dir = tempfile::tempdir().unwrap();
    let store = ModelStore::open(dir.path()).unwrap();
    let (result, _) = pull(&store, &hub_ref(), &options(&hub)).await;
    let error = result.unwrap_err().to_string();
    assert!(
        error.starts_with("the file downloaded for tiny-q4_k_m is not a model Tooltrail can run ("),
        "{error}"
    );
    assert!(error.ends_with("); nothing was kept"), "{error}");
    assert_eq!(files(store.dir()), Vec::<String>::new());
}

#[tokio::test]
async fn a_stopped_pull_keeps_its_bytes_for_the_next_one() {
    let bytes = model_bytes(1_000_000);
    let hub = hub(
        &bytes,
        HubOptions {
            chunk_delay: Duration::from_millis(20),
            ..HubOptions::default()
        },
    )
    .await;
    let dir = tempfile::tempdir().unwrap();
    let store = ModelStore::open(dir.path()).unwrap();
    let cancel = CancellationToken::new();
    let result = store
        .pull(
            &hub_ref(),
            &options(&hub),
            &mut |progress| {
                if let PullProgress::Downloading { done, .. } = progress
                    && *done >= 200_000
                {
                    cancel.cancel();
                }
            },
            &cancel,
        )
        .await;
    let error = result.unwrap_err();
    let ModelError::Cancelled { have, .. } = error else {
        panic!("the pull was stopped: {error:?}");
    };
    assert!(have >= 200_000 && have < bytes.len() as u64, "{have}");
    assert_eq!(
        std::fs::metadata(dir.path().join("tiny-q4_k_m.gguf.part"))
            .unwrap()
            .len(),
        have
    );
    assert_eq!(store.list().unwrap(), []);

    let (result, _) = pull(&store, &hub_ref(), &options(&hub)).await;
    assert_eq!(std::fs::read(&result.unwrap().model().path).unwrap(), bytes);
    assert_eq!(hub.downloads()[1].range, Some(format!("bytes={have}-")));
}

/// A 1 MiB tmpfs for the full-disk tests, unmounted when dropped; `None` (with the reason
/// printed) where mounting is not allowed, which fails the test under `CI=true`.
struct SmallDisk {
    dir: tempfile::TempDir,
}

impl SmallDisk {
    fn mount() -> Option<Self> {
        let dir = tempfile::tempdir().unwrap();
        let mounted = std::process::Command::new("mount")
            .args(["-t", "tmpfs", "-o", "size=1m", "tooltrail-test"])
            .arg(dir.path())
            .output();
        match mounted {
            Ok(output) if output.status.success() => Some(Self { dir }),
            Ok(output) => {
                tooltrail_test_support::dependency_missing(&format!(
                    "a 1 MiB tmpfs could not be mounted for the full-disk test, so `mount -t tmpfs` is not allowed here ({}); run it as root or where mounting is allowed",
                    String::from_utf8_lossy(&output.stderr).trim()
                ));
                None
            }
            Err(error) => {
                tooltrail_test_support::dependency_missing(&format!(
                    "the `mount` program could not be run for the full-disk test ({error})"
                ));
                None
            }
        }
    }
}

impl Drop for SmallDisk {
    fn drop(&mut self) {
        let _ = std::process::Command::new("umount")
            .arg(self.dir.path())
            .output();
    }
}

#[tokio::test]
async fn a_model_larger_than_the_free_space_is_refused_before_anything_is_written() {
    let Some(disk) = SmallDisk::mount() else {
        return;
    };
    let bytes = model_bytes(2_000_000);
    let hub = hub(&bytes, HubOptions::default()).await;
    let store = ModelStore::open(disk.dir.path().join("models")).unwrap();
    let (result, _) = pull(&store, &hub_ref(), &options(&hub)).await;
    let error = result.unwrap_err().to_string();
    assert!(
        error.starts_with(&format!(
            "there is not enough free space in {} for tiny-q4_k_m: it needs 2.0 MB more and ",
            store.dir().display()
        )),
        "{error}"
    );
    assert!(
        error.ends_with("is free. Nothing was downloaded."),
        "{error}"
    );
    assert_eq!(hub.downloads().len(), 0);
    assert_eq!(files(store.dir()), Vec::<String>::new());
}

#[tokio::test]
async fn a_disk_that_fills_up_during_a_download_is_left_without_the_unfinished_file() {
    let Some(disk) = SmallDisk::mount() else {
        return;
    };
    // A hub that says no size cannot be checked against the free space beforehand.
    let bytes = model_bytes(2_000_000);
    let hub = hub(
        &bytes,
        HubOptions {
            hide_size: true,
            ..HubOptions::default()
        },
    )
    .await;
    let store = ModelStore::open(disk.dir.path().join("models")).unwrap();
    let (result, _) = pull(&store, &hub_ref(), &options(&hub)).await;
    assert_eq!(
        result.unwrap_err().to_string(),
        format!(
            "the disk holding {} filled up while tiny-q4_k_m was downloading; the unfinished file \
             was removed. Free some space and pull again",
            store.dir().display()
        )
    );
    assert_eq!(files(store.dir()), Vec::<String>::new());
    assert_eq!(store.pending().unwrap(), []);
}

#[tokio::test]
async fn imports_copy_or_link_a_gguf_and_refuse_anything_else() {
    let dir = tempfile::tempdir().unwrap();
    let store = ModelStore::open(dir.path().join("models")).unwrap();
    let bytes = model_bytes(100_000);
    let original = dir.path().join("My Model.gguf");
    std::fs::write(&original, &bytes).unwrap();

    let mut last = (0, 0);
    let copied = store
        .import(&original, None, false, &mut |done, size| {
            last = (done, size)
        })
        .unwrap();
    assert_eq!(copied.name, "my-model");
    assert_eq!(copied.sha256, sha256_hex(&bytes));
    assert_eq!(last, (bytes.len() as u64, bytes.len() as u64));
    assert_eq!(
        copied.source,
        ModelSource::Imported {
            from: original.clone(),
            how: ImportMode::Copy
        }
    );
    assert_eq!(std::fs::read(&copied.path).unwrap(), bytes);

    let linked = store
        .import(&original, Some("Linked"), true, &mut |_, _| {})
        .unwrap();
    assert_eq!(linked.name, "linked");
    assert_eq!(
        linked.source,
        ModelSource::Imported {
            from: original.clone(),
            how: ImportMode::HardLink
        }
    );
    assert_eq!(linked.metadata, copied.metadata);

    let error = store
        .import(&original, Some("linked"), false, &mut |_, _| {})
        .unwrap_err();
    assert_eq!(
        error.to_string(),
        "a model named linked is already installed; remove it first (`tooltrail models rm \
         linked`) or choose another name with --name"
    );
    let text = dir.path().join("notes.gguf");
    std::fs::write(&text, "just some notes").unwrap();
    let error = store
        .import(&text, None, false, &mut |_, _| {})
        .unwrap_err();
    assert_eq!(
        error.to_string(),
        format!(
            "{} is not a GGUF model file (it does not start with the GGUF signature)",
            text.display()
        )
    );
    assert_eq!(
        store
            .list()
            .unwrap()
            .iter()
            .map(|m| m.name.as_str())
            .collect::<Vec<_>>(),
        ["linked", "my-model"]
    );

    // Removing the model takes the record and the file; the original stays.
    let removed = store.remove("my-model").unwrap();
    assert_eq!(removed.model.map(|m| m.name), Some("my-model".to_string()));
    assert!(original.exists());
    assert_eq!(files(store.dir()), ["linked.gguf", "linked.json"]);
    assert_eq!(
        store.remove("my-model").unwrap_err().to_string(),
        "no model named my-model is installed (`tooltrail models list` shows what is)"
    );
}

#[tokio::test]
async fn a_linked_import_across_file_systems_is_a_symbolic_link_and_missing_once_the_original_goes()
{
    use std::os::unix::fs::MetadataExt;
    let dir = tempfile::tempdir().unwrap();
    let store = ModelStore::open(dir.path().join("models")).unwrap();
    // The original on another file system, where no hard link can reach: /dev/shm when it is
    // one, else a small disk mounted for the test.
    let here = std::fs::metadata(dir.path()).unwrap().dev();
    let shm = tempfile::tempdir_in("/dev/shm")
        .ok()
        .filter(|shm| std::fs::metadata(shm.path()).unwrap().dev() != here);
    let disk = match shm {
        Some(_) => None,
        None => match SmallDisk::mount() {
            Some(disk) => Some(disk),
            None => return,
        },
    };
    let elsewhere = match (&shm, &disk) {
        (Some(shm), _) => shm.path().to_path_buf(),
        (None, Some(disk)) => disk.dir.path().to_path_buf(),
        (None, None) => return,
    };
    let original = elsewhere.join("m.gguf");
    let bytes = model_bytes(1_000);
    std::fs::write(&original, &bytes).unwrap();
    let linked = store.import(&original, None, true, &mut |_, _| {}).unwrap();
    assert_eq!(
        linked.source,
        ModelSource::Imported {
            from: original.clone(),
            how: ImportMode::SymLink
        }
    );
    assert_eq!(linked.sha256, sha256_hex(&bytes));
    assert!(!linked.missing);
    assert_eq!(
        std::fs::read_link(&linked.path).unwrap(),
        std::fs::canonicalize(&original).unwrap()
    );

    std::fs::remove_file(&original).unwrap();
    assert!(store.find("m").unwrap().unwrap().missing);
    // It can still be removed, which takes the link and not what it pointed at.
    assert!(store.remove("m").unwrap().model.is_some());
    assert_eq!(files(store.dir()), Vec::<String>::new());
}

#[tokio::test]
async fn an_import_that_does_not_fit_is_refused_before_copying() {
    let Some(disk) = SmallDisk::mount() else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let original = dir.path().join("big.gguf");
    std::fs::write(&original, model_bytes(2_000_000)).unwrap();
    let store = ModelStore::open(disk.dir.path().join("models")).unwrap();
    let error = store
        .import(&original, None, false, &mut |_, _| {})
        .unwrap_err()
        .to_string();
    assert!(
        error.starts_with(&format!(
            "there is not enough free space in {} to copy {}: it needs 2.0 MB and ",
            store.dir().display(),
            original.display()
        )),
        "{error}"
    );
    assert!(
        error.ends_with("is free; import it with --link to use no space"),
        "{error}"
    );
    assert_eq!(files(store.dir()), Vec::<String>::new());
}

#[tokio::test]
async fn the_hub_token_goes_to_the_hub_and_not_to_the_cdn_it_redirects_to() {
    let bytes = model_bytes(10_000);
    let hub = hub(
        &bytes,
        HubOptions {
            redirect: true,
            ..HubOptions::default()
        },
    )
    .await;
    let dir = tempfile::tempdir().unwrap();
    let store = ModelStore::open(dir.path()).unwrap();
    let (result, _) = pull(&store, &hub_ref(), &with_token(&hub)).await;
    result.unwrap();
    let seen: Vec<(String, bool)> = hub
        .requests()
        .into_iter()
        .map(|r| (format!("{} {}", r.method, r.path), r.authorized))
        .collect();
    assert_eq!(
        seen,
        [
            (format!("HEAD /{REPO}/resolve/main/{FILE}"), true),
            (format!("GET /cdn/{REPO}/{FILE}"), false),
        ]
    );
}

/// A second server standing for another host: it serves the same file under `/cdn/`, and
/// records whether a request carried an `Authorization` header.
async fn elsewhere(bytes: &[u8]) -> HubServer {
    hub(bytes, HubOptions::default()).await
}

fn port_of(server: &HubServer) -> u16 {
    server
        .endpoint()
        .rsplit(':')
        .next()
        .unwrap()
        .parse()
        .unwrap()
}

fn with_token(hub: &HubServer) -> PullOptions {
    PullOptions {
        hub: Hub::new(&hub.endpoint(), Some("hf_secret".into())).unwrap(),
        ..options(hub)
    }
}

/// Pulls the model into a folder of its own, with the token, from a hub serving `bytes` as
/// `redirecting` says; the bytes of the model kept, or the error, once it is checked that the
/// hub itself was asked one thing (the HEAD that redirects), with the token.
async fn pull_redirected_with_token(
    bytes: &[u8],
    redirecting: HubOptions,
) -> Result<Vec<u8>, ModelError> {
    let hub = hub(bytes, redirecting).await;
    let dir = tempfile::tempdir().unwrap();
    let store = ModelStore::open(dir.path()).unwrap();
    let (result, _) = pull(&store, &hub_ref(), &with_token(&hub)).await;
    assert_eq!(
        hub.requests()
            .iter()
            .map(|r| (r.method.as_str(), r.authorized))
            .collect::<Vec<_>>(),
        [("HEAD", true)]
    );
    result.map(|pulled| std::fs::read(&pulled.model().path).unwrap())
}

/// The redirect's target starts with the hub's own address, as `https://hub.example.com@evil.net`
/// starts with `https://hub.example.com`: a string-prefix test would hand it the token.
#[tokio::test]
async fn attack_hub_the_token_does_not_go_to_a_host_whose_address_starts_like_the_hubs() {
    let bytes = model_bytes(10_000);
    let other = elsewhere(&bytes).await;
    let result = pull_redirected_with_token(
        &bytes,
        HubOptions {
            redirect: true,
            redirect_to: Some(format!("http://{{hub}}@localhost:{}", port_of(&other))),
            ..HubOptions::default()
        },
    )
    .await;
    assert_eq!(result.unwrap(), bytes);
    assert_eq!(
        other
            .requests()
            .iter()
            .map(|r| (format!("{} {}", r.method, r.path), r.authorized))
            .collect::<Vec<_>>(),
        [(format!("GET /cdn/{REPO}/{FILE}"), false)]
    );
}

/// A redirect to `//other-host/…` starts with a slash, like a redirect within the hub; when it
/// carries no SHA-256 the hub used to be asked again there, with the token.
#[tokio::test]
async fn attack_hub_a_protocol_relative_redirect_gets_no_token() {
    let bytes = model_bytes(10_000);
    let other = elsewhere(&bytes).await;
    let result = pull_redirected_with_token(
        &bytes,
        HubOptions {
            redirect: true,
            bare_redirect: true,
            redirect_to: Some(format!("//localhost:{}", port_of(&other))),
            ..HubOptions::default()
        },
    )
    .await;
    let error = result.unwrap_err().to_string();
    assert!(error.starts_with("the hub gave no SHA-256 for "), "{error}");
    assert!(
        other.requests().iter().all(|r| !r.authorized),
        "{:?}",
        other.requests()
    );
}

/// A link with the hub's own origin (a mirror's `resolve` URL) is pulled from it; the same
/// path on another host is refused before anything is asked of anyone.
#[tokio::test]
async fn attack_hub_a_link_to_another_host_is_refused_and_one_to_the_hub_is_pulled() {
    let bytes = model_bytes(10_000);
    let hub = hub(&bytes, HubOptions::default()).await;
    let other = elsewhere(&bytes).await;
    let catalogue = Catalogue::builtin().unwrap();
    let link = |server: &HubServer| {
        format!(
            "{}/{REPO}/resolve/main/{FILE}",
            server.endpoint().replace("127.0.0.1", "localhost")
        )
    };
    let error = ModelRef::parse_for(&link(&other), &catalogue, &hub.endpoint())
        .unwrap_err()
        .to_string();
    assert!(
        error.contains(&format!(
            "it is a link to http://localhost:{}, which is not the hub models are pulled from ({}, set by HF_ENDPOINT)",
            port_of(&other),
            hub.endpoint()
        )),
        "{error}"
    );
    assert_eq!(other.requests(), []);
    let own = format!("{}/{REPO}/resolve/main/{FILE}", hub.endpoint());
    let reference = ModelRef::parse_for(&own, &catalogue, &hub.endpoint()).unwrap();
    let dir = tempfile::tempdir().unwrap();
    let store = ModelStore::open(dir.path()).unwrap();
    let (result, _) = pull(&store, &reference, &options(&hub)).await;
    assert_eq!(std::fs::read(&result.unwrap().model().path).unwrap(), bytes);
}

/// A reference built in code with a revision that climbs (`../..`) is refused by the pull
/// itself, before the hub is asked anything.
#[tokio::test]
async fn attack_hub_a_pull_of_a_revision_that_climbs_out_asks_the_hub_nothing() {
    let bytes = model_bytes(10_000);
    let hub = hub(&bytes, HubOptions::default()).await;
    let dir = tempfile::tempdir().unwrap();
    let store = ModelStore::open(dir.path()).unwrap();
    for (revision, file) in [
        ("../../other/repo/resolve/main", FILE),
        ("main", "%2e%2e/%2e%2e/x.gguf"),
    ] {
        let reference = ModelRef::Hub(tooltrail_runtime::models::HubFileRef {
            repo: REPO.into(),
            revision: revision.into(),
            file: file.into(),
        });
        let (result, _) = pull(&store, &reference, &with_token(&hub)).await;
        let error = result.unwrap_err().to_string();
        assert!(error.contains("is not a model to pull: "), "{error}");
    }
    assert_eq!(hub.requests(), []);
}

/// `models import --link` of a symbolic link links the file it points to. A hard link made of
/// the symbolic link itself would be another symbolic link whose relative target, read from
/// the models folder, names a different file (here a decoy beside the models folder).
#[test]
#[cfg(unix)]
fn attack_runtime_import_link_of_a_symlink_links_its_target() {
    let root = tempfile::tempdir().unwrap();
    let real = root.path().join("real/model.gguf");
    let decoy = root.path().join("data/real/model.gguf");
    for (path, size) in [(&real, 10_000), (&decoy, 20_000)] {
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, model_bytes(size)).unwrap();
    }
    let link = root.path().join("links/mine.gguf");
    std::fs::create_dir_all(link.parent().unwrap()).unwrap();
    std::os::unix::fs::symlink("../real/model.gguf", &link).unwrap();
    let store = ModelStore::open(root.path().join("data/models")).unwrap();

    let model = store.import(&link, None, true, &mut |_, _| {}).unwrap();
    assert_eq!(model.name, "mine");
    assert_eq!(std::fs::read(&model.path).unwrap(), model_bytes(10_000));
    assert_eq!(model.sha256, sha256_hex(&model_bytes(10_000)));
    assert_eq!(
        model.source,
        ModelSource::Imported {
            from: real.canonicalize().unwrap(),
            how: ImportMode::HardLink
        }
    );
    assert!(
        !std::fs::symlink_metadata(&model.path)
            .unwrap()
            .file_type()
            .is_symlink()
    );
}
