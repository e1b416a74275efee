//! Submissions reach a coordinator in chunks: `arena tournament submit`
//! uploads a bot over gRPC's 4 MiB message limit (once refused with tonic's
//! raw "past the valid range" text) to a real coordinator on loopback, and a
//! worker fetches exactly what was packed. The 2 GiB limit is the one
//! `arena run` applies, and past it the answer says so.

use arena_proto::v1::{FetchSubmissionRequest, UploadSubmissionChunk};
use tonic::Code;

use crate::support::arena::{self, Coordinator};
use crate::support::bots::write_bot;
use crate::support::redis::RedisServer;

/// Bytes of the bot's data file: half as much again as one gRPC message may hold.
const PAYLOAD: usize = 6 << 20;

/// Deterministic bytes that no tar header or padding looks like.
fn payload() -> Vec<u8> {
    let mut state: u64 = 0x9e37_79b9_7f4a_7c15;
    (0..PAYLOAD)
        .map(|_| {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            state.to_le_bytes()[0]
        })
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_submission_over_4_mib_uploads_in_chunks_and_fetches_whole() {
    let root = tempfile::Builder::new()
        .prefix("arena-e2e-upload-")
        .tempdir()
        .expect("temp dir");
    let data = payload();
    write_bot(
        root.path(),
        "big",
        "#!/bin/sh\nexec python3 -B -u bot.py\n",
        &[("weights.bin", &data)],
    );
    let redis = RedisServer::start();
    let coordinator = Coordinator::start(&redis, "127.0.0.1:0", 30);
    let url = coordinator.url();

    let bot = root.path().join("big");
    let hash = arena::tournament(&url, &["submit", bot.to_str().expect("a UTF-8 path")])
        .trim()
        .to_owned();
    assert!(
        hash.len() >= 32 && hash.bytes().all(|b| b.is_ascii_hexdigit()),
        "submit printed {hash:?}"
    );

    // What a worker fetches is the archive: the data file's bytes whole,
    // after its tar header.
    let mut worker = arena::worker_rpc(&url, Some(arena::WORKER_TOKEN)).await;
    let mut stream = worker
        .fetch_submission(FetchSubmissionRequest { hash: hash.clone() })
        .await
        .expect("FetchSubmission")
        .into_inner();
    let mut archive = Vec::new();
    while let Some(chunk) = stream.message().await.expect("the submission's chunks") {
        archive.extend_from_slice(&chunk.data);
    }
    assert!(archive.len() > PAYLOAD, "{} bytes fetched", archive.len());
    let found = archive
        .chunks(512)
        .position(|block| block == &data[..512])
        .expect("the data file's first block in the archive");
    assert_eq!(
        &archive[found * 512..found * 512 + PAYLOAD],
        &data[..],
        "the data file arrives whole"
    );

    // The same bot again is the same submission.
    let again = arena::tournament(&url, &["submit", bot.to_str().expect("a UTF-8 path")]);
    assert_eq!(again.trim(), hash);

    // The streamed call is an Admin call like any other: no token, no upload.
    let mut anonymous = arena::admin(&url, None).await;
    let refused = anonymous
        .upload_submission_chunks(tokio_stream_of(vec![UploadSubmissionChunk {
            name: "anonymous".to_owned(),
            data: b"archive".to_vec(),
        }]))
        .await
        .expect_err("no token");
    assert_eq!(refused.code(), Code::Unauthenticated, "{refused:?}");
    // And an empty stream is no submission.
    let mut admin = arena::admin(&url, Some(arena::ADMIN_TOKEN)).await;
    let empty = admin
        .upload_submission_chunks(tokio_stream_of(Vec::new()))
        .await
        .expect_err("nothing uploaded");
    assert_eq!(empty.code(), Code::InvalidArgument, "{empty:?}");
}

#[test]
fn a_bot_over_2_gib_is_refused_before_anything_is_sent() {
    let root = tempfile::Builder::new()
        .prefix("arena-e2e-upload-huge-")
        .tempdir()
        .expect("temp dir");
    write_bot(root.path(), "huge", "#!/bin/sh\nexit 0\n", &[]);
    // Sparse: the test writes nothing, and the limit is checked on sizes
    // before a byte is read.
    std::fs::File::create(root.path().join("huge/blob"))
        .expect("blob")
        .set_len((2 << 30) + 1)
        .expect("a sparse 2 GiB + 1 byte file");
    // No coordinator listens here: the limit is checked first.
    let out = arena::arena()
        .args(["tournament", "--coordinator", "http://127.0.0.1:9"])
        .args(["--token", arena::ADMIN_TOKEN, "submit"])
        .arg(root.path().join("huge"))
        .output()
        .expect("arena tournament submit");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    assert!(stderr.contains("more than 2147483648 bytes"), "{stderr}");
}

/// A client stream of `chunks`.
fn tokio_stream_of(
    chunks: Vec<UploadSubmissionChunk>,
) -> impl tonic::codegen::tokio_stream::Stream<Item = UploadSubmissionChunk> {
    tonic::codegen::tokio_stream::iter(chunks)
}
