//! Every call needs `authorization: Bearer <token>`: an admin token for the
//! Admin service, a worker (or admin) token for the Worker service.

use arena_proto::v1::admin_client::AdminClient;
use arena_proto::v1::worker_client::WorkerClient;
use arena_proto::v1::{
    FetchSubmissionRequest, LeaseRequest, MatchesRequest, ReleaseWorkerRequest, RequeueRequest,
    StatusRequest, UploadSubmissionRequest, WorkersRequest,
};
use tonic::Code;

use crate::support::arena::{
    self, ADMIN_TOKEN, Admin, Bearer, Coordinator, WORKER_TOKEN, WorkerRpc,
};
use crate::support::redis::RedisServer;

/// Credentials that must be refused everywhere, by name.
fn refused_everywhere() -> Vec<(&'static str, Bearer)> {
    vec![
        ("no token", Bearer::new(None)),
        ("a wrong token", Bearer::new(Some("not-a-token"))),
        ("an empty token", Bearer::new(Some(""))),
        (
            "a token with a suffix",
            Bearer::new(Some(&format!("{ADMIN_TOKEN}x"))),
        ),
        (
            "the admin token without `Bearer `",
            Bearer::header(ADMIN_TOKEN),
        ),
        (
            "the worker token without `Bearer `",
            Bearer::header(WORKER_TOKEN),
        ),
    ]
}

async fn admin_calls(admin: &mut Admin) -> Vec<(&'static str, Result<(), tonic::Status>)> {
    vec![
        (
            "UploadSubmission",
            admin
                .upload_submission(UploadSubmissionRequest {
                    name: "probe".to_owned(),
                    archive: b"probe archive".to_vec(),
                })
                .await
                .map(drop),
        ),
        (
            "Status",
            admin
                .status(StatusRequest {
                    tournament_id: "t-unknown".to_owned(),
                })
                .await
                .map(drop),
        ),
        (
            "Matches",
            admin
                .matches(MatchesRequest {
                    tournament_id: "t-unknown".to_owned(),
                })
                .await
                .map(drop),
        ),
        (
            "Requeue",
            admin
                .requeue(RequeueRequest {
                    match_id: "t-unknown:0:0".to_owned(),
                })
                .await
                .map(drop),
        ),
        ("Workers", admin.workers(WorkersRequest {}).await.map(drop)),
        (
            "ReleaseWorker",
            admin
                .release_worker(ReleaseWorkerRequest {
                    worker_id: "auth-probe".to_owned(),
                })
                .await
                .map(drop),
        ),
    ]
}

async fn worker_calls(worker: &mut WorkerRpc) -> Vec<(&'static str, Result<(), tonic::Status>)> {
    vec![
        (
            "Register",
            worker
                .register(arena::register_request("auth-probe"))
                .await
                .map(drop),
        ),
        (
            "Lease",
            worker
                .lease(LeaseRequest {
                    worker_id: "auth-probe".to_owned(),
                })
                .await
                .map(drop),
        ),
        (
            "FetchSubmission",
            async {
                let mut stream = worker
                    .fetch_submission(FetchSubmissionRequest {
                        hash: "00".repeat(32),
                    })
                    .await?
                    .into_inner();
                while stream.message().await?.is_some() {}
                Ok(())
            }
            .await,
        ),
    ]
}

fn assert_unauthenticated(
    service: &str,
    who: &str,
    results: Vec<(&'static str, Result<(), tonic::Status>)>,
) {
    for (call, result) in results {
        match result {
            Err(status) if status.code() == Code::Unauthenticated => {}
            other => panic!("{service}.{call} with {who}: expected Unauthenticated, got {other:?}"),
        }
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn requests_without_a_valid_token_are_refused() {
    let redis = RedisServer::start();
    let coordinator = Coordinator::start(&redis, "127.0.0.1:0", 30);
    let url = coordinator.url();
    let channel = arena::channel(&url).await;
    let admin_with = |bearer: Bearer| AdminClient::with_interceptor(channel.clone(), bearer);
    let worker_with = |bearer: Bearer| WorkerClient::with_interceptor(channel.clone(), bearer);

    for (who, bearer) in refused_everywhere() {
        assert_unauthenticated(
            "Admin",
            who,
            admin_calls(&mut admin_with(bearer.clone())).await,
        );
        assert_unauthenticated("Worker", who, worker_calls(&mut worker_with(bearer)).await);
    }
    // A worker's token does not open the Admin service.
    assert_unauthenticated(
        "Admin",
        "the worker token",
        admin_calls(&mut admin_with(Bearer::new(Some(WORKER_TOKEN)))).await,
    );

    // The admin token opens the Admin service: the calls reach the
    // coordinator (an unknown tournament is NotFound, not a refusal).
    let mut admin = admin_with(Bearer::new(Some(ADMIN_TOKEN)));
    let hash = admin
        .upload_submission(UploadSubmissionRequest {
            name: "probe".to_owned(),
            archive: b"probe archive".to_vec(),
        })
        .await
        .expect("UploadSubmission with the admin token")
        .into_inner()
        .hash;
    assert_eq!(hash.len(), 64, "{hash:?}");
    let status = admin
        .status(StatusRequest {
            tournament_id: "t-unknown".to_owned(),
        })
        .await
        .expect_err("no such tournament");
    assert_eq!(status.code(), Code::NotFound, "{status:?}");

    // The worker token opens the Worker service, and so does the admin
    // token (an admin may run a worker, as grpc.rs documents).
    for (who, token) in [
        ("the worker token", WORKER_TOKEN),
        ("the admin token", ADMIN_TOKEN),
    ] {
        let mut worker = worker_with(Bearer::new(Some(token)));
        worker
            .register(arena::register_request("auth-probe"))
            .await
            .unwrap_or_else(|e| panic!("Register with {who}: {e:?}"));
        let leased = worker
            .lease(LeaseRequest {
                worker_id: "auth-probe".to_owned(),
            })
            .await
            .unwrap_or_else(|e| panic!("Lease with {who}: {e:?}"))
            .into_inner();
        assert!(leased.r#match.is_none(), "nothing is queued");
        let mut stream = worker
            .fetch_submission(FetchSubmissionRequest { hash: hash.clone() })
            .await
            .unwrap_or_else(|e| panic!("FetchSubmission with {who}: {e:?}"))
            .into_inner();
        let mut fetched = Vec::new();
        while let Some(chunk) = stream.message().await.expect("the submission's chunks") {
            fetched.extend_from_slice(&chunk.data);
        }
        assert_eq!(fetched, b"probe archive");
    }
}
