//! One conformance suite, run against both backends: the filesystem in a
//! temporary directory, and S3 against a real moto server on loopback.
//!
//! Each case opens its own namespace (a subdirectory, or a key prefix), so
//! a sweep in one case cannot see another case's blobs.

mod support;

use std::path::Path;
use std::time::{Duration, Instant, SystemTime};

use arena_blob::{BlobError, BlobStore, blob_id};
use futures_util::TryStreamExt;
use object_store::aws::{AmazonS3, AmazonS3Builder};
use object_store::path::Path as ObjectPath;
use object_store::{ObjectStore, ObjectStoreExt, PutPayload};
use support::moto::MotoServer;

const BUCKET: &str = "arena-blob-test";
const ACCESS_KEY: &str = "arena-test-key";
const SECRET_KEY: &str = "arena-test-secret";

/// How long a case may wait for the backend's clock to move on (S3's
/// Last-Modified has one-second resolution).
const CLOCK_DEADLINE: Duration = Duration::from_secs(10);
const CLOCK_POLL: Duration = Duration::from_millis(100);

/// A backend under test, with raw access to what it stored.
enum Backend {
    Fs { dir: tempfile::TempDir },
    S3 { server: MotoServer, raw: AmazonS3 },
}

impl Backend {
    fn fs() -> Backend {
        Backend::Fs {
            dir: tempfile::tempdir().expect("create a temporary directory"),
        }
    }

    fn s3() -> Backend {
        let server = MotoServer::start();
        server.create_bucket(BUCKET);
        // The crate installs this when it opens an S3 store; the raw client
        // here may be built first. (An Err means one is already installed.)
        let _ = rustls::crypto::ring::default_provider().install_default();
        let raw = AmazonS3Builder::new()
            .with_bucket_name(BUCKET)
            .with_region("us-east-1")
            .with_endpoint(server.endpoint())
            .with_allow_http(true)
            .with_access_key_id(ACCESS_KEY)
            .with_secret_access_key(SECRET_KEY)
            .build()
            .expect("build the raw S3 client");
        Backend::S3 { server, raw }
    }

    fn location(&self, namespace: &str) -> String {
        match self {
            Backend::Fs { dir } => dir.path().join(namespace).display().to_string(),
            Backend::S3 { server, .. } => format!(
                "s3://{BUCKET}/cases/{namespace}?endpoint={}&region=us-east-1&allow_http=true\
                 &access_key_id={ACCESS_KEY}&secret_access_key={SECRET_KEY}",
                server.endpoint()
            ),
        }
    }

    async fn open(&self, namespace: &str) -> BlobStore {
        let location = self.location(namespace);
        BlobStore::open(&location)
            .await
            .unwrap_or_else(|error| panic!("open {location}: {error}"))
    }

    /// The bytes stored for `id`, as the backend holds them.
    async fn read_stored(&self, store: &BlobStore, id: &str) -> Vec<u8> {
        match (self, store) {
            (Backend::Fs { .. }, BlobStore::Fs(fs)) => {
                std::fs::read(fs.path_of(id).unwrap()).expect("read the blob file")
            }
            (Backend::S3 { raw, .. }, BlobStore::S3(s3)) => {
                let object = raw.get(&s3.key_of(id).unwrap()).await.expect("get object");
                object.bytes().await.expect("download object").to_vec()
            }
            _ => panic!("store of another backend"),
        }
    }

    /// Replaces what is stored for `id`, behind the store's back.
    async fn write_stored(&self, store: &BlobStore, id: &str, bytes: &[u8]) {
        match (self, store) {
            (Backend::Fs { .. }, BlobStore::Fs(fs)) => {
                std::fs::write(fs.path_of(id).unwrap(), bytes).expect("overwrite the blob file")
            }
            (Backend::S3 { raw, .. }, BlobStore::S3(s3)) => {
                raw.put(&s3.key_of(id).unwrap(), PutPayload::from(bytes.to_vec()))
                    .await
                    .expect("put garbage object");
            }
            _ => panic!("store of another backend"),
        }
    }

    /// Writes a file or object that is not a blob into the namespace, at
    /// `relative` (a path under the root, or a key under the prefix).
    async fn write_foreign(&self, store: &BlobStore, namespace: &str, relative: &str) {
        match (self, store) {
            (Backend::Fs { .. }, BlobStore::Fs(fs)) => {
                let path = fs.root().join(relative);
                std::fs::create_dir_all(path.parent().unwrap()).expect("create directory");
                std::fs::write(&path, b"not a blob").expect("write foreign file");
            }
            (Backend::S3 { raw, .. }, BlobStore::S3(_)) => {
                let key = ObjectPath::from(format!("cases/{namespace}/{relative}"));
                raw.put(&key, PutPayload::from_static(b"not a blob"))
                    .await
                    .expect("put foreign object");
            }
            _ => panic!("store of another backend"),
        }
    }

    /// How many files or objects the store's namespace holds.
    async fn stored_count(&self, store: &BlobStore, namespace: &str) -> usize {
        match (self, store) {
            (Backend::Fs { .. }, BlobStore::Fs(fs)) => count_files(fs.root()),
            (Backend::S3 { raw, .. }, BlobStore::S3(_)) => {
                let prefix = ObjectPath::from(format!("cases/{namespace}"));
                let listed: Vec<_> = raw.list(Some(&prefix)).try_collect().await.expect("list");
                listed.len()
            }
            _ => panic!("store of another backend"),
        }
    }
}

fn count_files(dir: &Path) -> usize {
    std::fs::read_dir(dir)
        .expect("list directory")
        .map(|entry| entry.expect("read directory entry").path())
        .map(|path| if path.is_dir() { count_files(&path) } else { 1 })
        .sum()
}

/// Deterministic bytes that zstd cannot shrink much.
fn noise(len: usize) -> Vec<u8> {
    let mut state: u64 = 0x9e37_79b9_7f4a_7c15;
    (0..len)
        .map(|_| {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            (state >> 24) as u8
        })
        .collect()
}

/// A replay-shaped JSON payload: the same structure over and over.
fn repetitive_json() -> Vec<u8> {
    let turns: Vec<String> = (0..2000)
        .map(|turn| {
            format!(
                r#"{{"turn":{turn},"actions":[{{"seat":0,"move":"N"}},{{"seat":1,"move":"pass"}}],"faults":[]}}"#
            )
        })
        .collect();
    format!(r#"{{"game":"generals","turns":[{}]}}"#, turns.join(",")).into_bytes()
}

async fn stored_at(store: &BlobStore, id: &str) -> SystemTime {
    store
        .stored_at(id)
        .await
        .expect("stored_at")
        .expect("blob is present")
}

/// Puts `content` again and again until the backend stamps it later than
/// `after` (at most [`CLOCK_DEADLINE`]); returns the new stamp.
async fn put_until_later(store: &BlobStore, content: &[u8], after: SystemTime) -> SystemTime {
    let deadline = Instant::now() + CLOCK_DEADLINE;
    loop {
        let id = store.put(content).await.expect("put");
        let stamp = stored_at(store, &id).await;
        if stamp > after {
            return stamp;
        }
        assert!(
            Instant::now() < deadline,
            "the backend's clock did not pass {after:?} within {CLOCK_DEADLINE:?}"
        );
        tokio::time::sleep(CLOCK_POLL).await;
    }
}

async fn round_trip(backend: &Backend) {
    let store = backend.open("round-trip").await;
    for content in [Vec::new(), b"hello, arena".to_vec(), noise(5 * 1024 * 1024)] {
        let id = store.put(&content).await.expect("put");
        assert_eq!(id, blob_id(&content));
        let back = store.get(&id).await.expect("get").expect("present");
        assert!(
            back == content,
            "{} bytes came back different",
            content.len()
        );
    }
}

async fn put_is_idempotent(backend: &Backend) {
    let store = backend.open("idempotent").await;
    let content = b"the same log twice".to_vec();
    let first = store.put(&content).await.expect("first put");
    let second = store.put(&content).await.expect("second put");
    assert_eq!(first, second);
    assert_eq!(backend.stored_count(&store, "idempotent").await, 1);
    store.put(b"another log").await.expect("third put");
    assert_eq!(backend.stored_count(&store, "idempotent").await, 2);
}

async fn absent_blobs(backend: &Backend) {
    let store = backend.open("absent").await;
    let id = blob_id(b"never stored");
    assert_eq!(store.get(&id).await.expect("get"), None);
    assert_eq!(store.stored_at(&id).await.expect("stored_at"), None);
    assert!(!store.delete(&id).await.expect("delete"));
}

async fn invalid_ids_are_refused(backend: &Backend) {
    let store = backend.open("invalid").await;
    let upper = blob_id(b"x").to_uppercase();
    let traversal = format!("../{}", &blob_id(b"x")[3..]);
    for id in [
        "",
        "abc",
        upper.as_str(),
        traversal.as_str(),
        "../../etc/passwd",
    ] {
        assert!(
            matches!(store.get(id).await, Err(BlobError::InvalidId(_))),
            "get {id:?}"
        );
        assert!(
            matches!(store.delete(id).await, Err(BlobError::InvalidId(_))),
            "delete {id:?}"
        );
        assert!(
            matches!(store.stored_at(id).await, Err(BlobError::InvalidId(_))),
            "stored_at {id:?}"
        );
    }
}

async fn corrupt_data_is_an_error(backend: &Backend) {
    let store = backend.open("corrupt").await;
    let victim = store.put(b"a replay to damage").await.expect("put");
    let other = store.put(b"some other replay").await.expect("put");

    backend
        .write_stored(&store, &victim, b"garbage, not a blob")
        .await;
    let error = store.get(&victim).await.expect_err("garbage accepted");
    assert!(matches!(error, BlobError::Corrupt { .. }), "{error}");

    // A well-formed blob under the wrong id: only the hash check catches it.
    let other_stored = backend.read_stored(&store, &other).await;
    backend.write_stored(&store, &victim, &other_stored).await;
    let error = store
        .get(&victim)
        .await
        .expect_err("wrong content accepted");
    assert!(
        error.to_string().contains("does not match its id"),
        "{error}"
    );

    // A truncated frame.
    backend
        .write_stored(&store, &victim, &other_stored[..other_stored.len() - 4])
        .await;
    let error = store
        .get(&victim)
        .await
        .expect_err("truncated blob accepted");
    assert!(matches!(error, BlobError::Corrupt { .. }), "{error}");

    assert_eq!(
        store.get(&other).await.expect("get").as_deref(),
        Some(&b"some other replay"[..])
    );
}

async fn delete_removes(backend: &Backend) {
    let store = backend.open("delete").await;
    let id = store.put(b"short-lived").await.expect("put");
    assert!(store.delete(&id).await.expect("delete"));
    assert_eq!(store.get(&id).await.expect("get"), None);
    assert!(!store.delete(&id).await.expect("second delete"));
    assert_eq!(backend.stored_count(&store, "delete").await, 0);
}

async fn sweep_deletes_older_blobs(backend: &Backend) {
    let store = backend.open("sweep").await;
    let old = store.put(b"old replay").await.expect("put old");
    let old_stamp = stored_at(&store, &old).await;
    let new_stamp = put_until_later(&store, b"new replay", old_stamp).await;
    let new = blob_id(b"new replay");

    // The cutoff lies between the two puts, by the backend's own clock.
    assert_eq!(store.sweep(old_stamp).await.expect("sweep at old"), 0);
    assert_eq!(store.sweep(new_stamp).await.expect("sweep at new"), 1);
    assert_eq!(store.get(&old).await.expect("get old"), None);
    assert!(store.get(&new).await.expect("get new").is_some());
    assert_eq!(store.sweep(new_stamp).await.expect("sweep again"), 0);
}

async fn sweep_leaves_foreign_files_alone(backend: &Backend) {
    let namespace = "foreign";
    let store = backend.open(namespace).await;
    let id = store.put(b"a blob among strangers").await.expect("put");
    let (fan_out, rest) = id.split_at(2);
    let foreign = [
        format!("{fan_out}/notes.txt"),
        format!("{fan_out}/{}", rest.to_uppercase()),
        format!("nested/{id}"),
        "README".to_owned(),
    ];
    for relative in &foreign {
        backend.write_foreign(&store, namespace, relative).await;
    }
    // A cutoff after everything: each foreign file is old enough, only the
    // blob may go. (Loopback server, same clock; the second is S3's grain.)
    let after_everything = SystemTime::now() + Duration::from_secs(1);
    assert_eq!(store.sweep(after_everything).await.expect("sweep"), 1);
    assert_eq!(store.get(&id).await.expect("get"), None);
    assert_eq!(
        backend.stored_count(&store, namespace).await,
        foreign.len(),
        "sweep touched files that are not blobs"
    );
}

async fn re_put_refreshes_retention(backend: &Backend) {
    let store = backend.open("refresh").await;
    let kept = store.put(b"replay still in use").await.expect("put kept");
    let first_stamp = stored_at(&store, &kept).await;
    let other_stamp = put_until_later(&store, b"replay nobody wants", first_stamp).await;
    let other = blob_id(b"replay nobody wants");
    // Putting `kept` again moves its stamp past `other`'s ...
    let refreshed = put_until_later(&store, b"replay still in use", other_stamp).await;
    // ... so a cutoff at that moment sweeps `other` only.
    assert_eq!(store.sweep(refreshed).await.expect("sweep"), 1);
    assert!(store.get(&kept).await.expect("get kept").is_some());
    assert_eq!(store.get(&other).await.expect("get other"), None);
}

async fn compression_shrinks_json(backend: &Backend) {
    let store = backend.open("compression").await;
    let content = repetitive_json();
    let id = store.put(&content).await.expect("put");
    let stored = backend.read_stored(&store, &id).await;
    assert!(
        stored.len() * 10 < content.len(),
        "{} bytes stored for {} bytes of JSON",
        stored.len(),
        content.len()
    );
    assert_eq!(&stored[..4], b"ABLB", "stored form lacks the header");
}

async fn describe_names_the_place(backend: &Backend) {
    let store = backend.open("describe").await;
    let description = store.describe();
    match backend {
        Backend::Fs { dir } => {
            assert!(description.starts_with("filesystem "), "{description}");
            assert!(
                description.contains(&dir.path().display().to_string()),
                "{description}"
            );
        }
        Backend::S3 { server, .. } => {
            assert!(
                description.starts_with(&format!("s3 bucket {BUCKET}")),
                "{description}"
            );
            assert!(description.contains(&server.endpoint()), "{description}");
            assert!(!description.contains(SECRET_KEY), "{description}");
            assert!(
                !format!("{store:?}").contains(SECRET_KEY),
                "Debug shows the secret"
            );
        }
    }
}

async fn run_suite(backend: &Backend) {
    round_trip(backend).await;
    put_is_idempotent(backend).await;
    absent_blobs(backend).await;
    invalid_ids_are_refused(backend).await;
    corrupt_data_is_an_error(backend).await;
    delete_removes(backend).await;
    sweep_deletes_older_blobs(backend).await;
    re_put_refreshes_retention(backend).await;
    sweep_leaves_foreign_files_alone(backend).await;
    compression_shrinks_json(backend).await;
    describe_names_the_place(backend).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn filesystem_backend_conforms() {
    run_suite(&Backend::fs()).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn s3_backend_conforms() {
    run_suite(&Backend::s3()).await;
}
