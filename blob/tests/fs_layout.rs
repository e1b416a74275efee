//! What the filesystem backend leaves on disk: the fan-out layout, no
//! temporary files, and mtimes that retention can rely on.

use std::fs::File;
use std::time::{Duration, SystemTime};

use arena_blob::{BlobStore, blob_id};

fn fs_store(store: &BlobStore) -> &arena_blob::FsBlobs {
    match store {
        BlobStore::Fs(fs) => fs,
        BlobStore::S3(_) => panic!("a path opened as S3"),
    }
}

#[tokio::test]
async fn blobs_fan_out_by_the_first_two_hex_digits() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().join("blobs");
    let store = BlobStore::open(&root.display().to_string()).await.unwrap();
    let id = store.put(b"fan me out").await.unwrap();

    let expected = root.join(&id[..2]).join(&id[2..]);
    assert!(expected.is_file(), "{} missing", expected.display());
    let names: Vec<_> = std::fs::read_dir(root.join(&id[..2]))
        .unwrap()
        .map(|entry| entry.unwrap().file_name().into_string().unwrap())
        .collect();
    assert_eq!(
        names,
        vec![id[2..].to_owned()],
        "temporary files left behind"
    );
}

#[tokio::test]
async fn file_urls_open_the_filesystem_backend() {
    let dir = tempfile::tempdir().unwrap();
    let url = format!("file://{}/from-url", dir.path().display());
    let store = BlobStore::open(&url).await.unwrap();
    assert_eq!(fs_store(&store).root(), dir.path().join("from-url"));
    assert_eq!(
        store.describe(),
        format!("filesystem {}", dir.path().join("from-url").display())
    );
    let id = store.put(b"via a url").await.unwrap();
    assert_eq!(
        store.get(&id).await.unwrap().as_deref(),
        Some(&b"via a url"[..])
    );
}

#[tokio::test]
async fn re_put_touches_the_mtime_and_sweep_follows_it() {
    let dir = tempfile::tempdir().unwrap();
    let store = BlobStore::open(&dir.path().display().to_string())
        .await
        .unwrap();
    let id = store.put(b"an old log").await.unwrap();
    let path = fs_store(&store).path_of(&id).unwrap();

    // Age the file by a day, as if it had been stored yesterday.
    let yesterday = SystemTime::now() - Duration::from_secs(86_400);
    File::options()
        .write(true)
        .open(&path)
        .unwrap()
        .set_modified(yesterday)
        .unwrap();
    let an_hour_ago = SystemTime::now() - Duration::from_secs(3600);
    assert!(store.stored_at(&id).await.unwrap().unwrap() < an_hour_ago);

    // Putting it again counts as storing it now, so an hour's cutoff keeps it.
    assert_eq!(store.put(b"an old log").await.unwrap(), id);
    assert!(store.stored_at(&id).await.unwrap().unwrap() > an_hour_ago);
    assert_eq!(store.sweep(an_hour_ago).await.unwrap(), 0);

    File::options()
        .write(true)
        .open(&path)
        .unwrap()
        .set_modified(yesterday)
        .unwrap();
    assert_eq!(store.sweep(an_hour_ago).await.unwrap(), 1);
    assert!(!path.exists());
    assert_eq!(store.get(&blob_id(b"an old log")).await.unwrap(), None);
}

#[tokio::test]
async fn a_missing_root_is_created_and_an_unusable_one_is_an_error() {
    let dir = tempfile::tempdir().unwrap();
    let nested = dir.path().join("a/b/c");
    BlobStore::open(&nested.display().to_string())
        .await
        .unwrap();
    assert!(nested.is_dir());

    let file = dir.path().join("a-file");
    std::fs::write(&file, b"").unwrap();
    let error = BlobStore::open(&file.join("under").display().to_string())
        .await
        .unwrap_err();
    assert!(error.to_string().contains("create directory"), "{error}");
}

#[tokio::test]
async fn sweep_clears_temporary_files_of_crashed_writes_only_when_stale() {
    let dir = tempfile::tempdir().unwrap();
    let store = BlobStore::open(&dir.path().display().to_string())
        .await
        .unwrap();
    let id = store.put(b"written before the crash").await.unwrap();
    let fan_out = dir.path().join(&id[..2]);
    let stale = fan_out.join(".tmp-1-1");
    let in_progress = fan_out.join(".tmp-1-2");
    std::fs::write(&stale, b"half a blob").unwrap();
    std::fs::write(&in_progress, b"half a blob").unwrap();
    let two_hours_ago = SystemTime::now() - Duration::from_secs(2 * 3600);
    File::options()
        .write(true)
        .open(&stale)
        .unwrap()
        .set_modified(two_hours_ago)
        .unwrap();

    // Only blobs are counted; the stale temporary file goes, the fresh one stays.
    let after_everything = SystemTime::now() + Duration::from_secs(1);
    assert_eq!(store.sweep(after_everything).await.unwrap(), 1);
    assert!(!stale.exists(), "stale temporary file kept");
    assert!(in_progress.exists(), "a write in progress lost its file");
}

#[tokio::test]
async fn an_oversized_stored_file_is_refused_unread() {
    let dir = tempfile::tempdir().unwrap();
    let store = BlobStore::open(&dir.path().display().to_string())
        .await
        .unwrap();
    let id = store.put(b"about to be swollen").await.unwrap();
    // Sparse: the size is claimed, no disk or memory is used.
    let path = fs_store(&store).path_of(&id).unwrap();
    File::options()
        .write(true)
        .open(&path)
        .unwrap()
        .set_len(arena_blob::MAX_STORED_BYTES + 1)
        .unwrap();
    let error = store.get(&id).await.unwrap_err();
    assert!(error.to_string().contains("stored file is"), "{error}");
}
