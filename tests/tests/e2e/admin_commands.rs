//! The organiser's commands for matches and workers that keep failing, on a
//! real coordinator: a worker (raw gRPC calls standing in for one whose
//! sandbox setup always fails) fails one match until it is stuck and is
//! itself quarantined; `arena tournament status`, `matches`, `requeue`,
//! `workers` and `release-worker` show and undo both.

use std::process::Output;

use arena_proto::v1::{LeaseRequest, ReportFailureRequest};

use crate::support::arena::{self, ADMIN_TOKEN, Coordinator};
use crate::support::bots::Fixture;
use crate::support::redis::RedisServer;

/// `arena tournament ... <args>` run to completion, whatever its exit.
fn tournament(url: &str, args: &[&str]) -> Output {
    arena::arena()
        .args(["tournament", "--coordinator", url, "--token", ADMIN_TOKEN])
        .args(args)
        .output()
        .expect("running arena tournament")
}

fn stdout(output: &Output) -> String {
    assert!(
        output.status.success(),
        "{:?}: {}",
        output.status,
        String::from_utf8_lossy(&output.stderr)
    );
    String::from_utf8_lossy(&output.stdout).into_owned()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn stuck_matches_and_quarantined_workers_are_shown_and_undone() {
    let fixture = Fixture::ungated("admin", 2, "E2E admin", 5, 1);
    let redis = RedisServer::start();
    let coordinator = Coordinator::start_with(
        &redis,
        "127.0.0.1:0",
        30,
        &["--max-attempts", "3", "--quarantine-failures", "3"],
    );
    let url = coordinator.url();
    let id = arena::create_tournament(&url, fixture.file());

    let mut worker = arena::worker_rpc(&url, Some(arena::WORKER_TOKEN)).await;
    worker
        .register(arena::register_request("flaky"))
        .await
        .expect("register");
    let mut match_id = String::new();
    for attempt in 1..=3 {
        let leased = worker
            .lease(LeaseRequest {
                worker_id: "flaky".into(),
            })
            .await
            .expect("lease")
            .into_inner()
            .r#match
            .expect("the match is queued again");
        assert_eq!(leased.attempt, attempt);
        match_id = leased.match_id.clone();
        worker
            .report_failure(ReportFailureRequest {
                worker_id: "flaky".into(),
                lease_id: leased.lease_id,
                match_id: leased.match_id,
                reason: format!("cgroup setup failed ({attempt})"),
            })
            .await
            .expect("report failure");
    }

    let status = stdout(&tournament(&url, &["status", &id]));
    assert!(status.contains("1 stuck"), "{status}");
    assert!(status.contains("finished"), "{status}");
    for attempt in 1..=3 {
        let line = format!("attempt {attempt} on flaky: cgroup setup failed ({attempt})");
        assert!(status.contains(&line), "{line:?} missing from:\n{status}");
    }
    let stuck = stdout(&tournament(&url, &["matches", &id, "--stuck"]));
    assert_eq!(
        stuck.lines().filter(|l| l.contains("\tstuck\t")).count(),
        1,
        "{stuck}"
    );

    // Three failed leases quarantined the worker.
    let workers = stdout(&tournament(&url, &["workers"]));
    assert!(workers.starts_with("flaky\tquarantined\t"), "{workers}");
    let refused = worker
        .lease(LeaseRequest {
            worker_id: "flaky".into(),
        })
        .await
        .expect_err("a quarantined worker gets no lease");
    assert_eq!(refused.code(), tonic::Code::PermissionDenied, "{refused:?}");

    // The organiser requeues the match and releases the worker, which gets
    // the match again under its next attempt.
    let requeued = stdout(&tournament(&url, &["requeue", &match_id]));
    assert!(requeued.contains("requeued"), "{requeued}");
    let again = tournament(&url, &["requeue", &match_id]);
    assert!(!again.status.success(), "a queued match is not stuck");
    let said = String::from_utf8_lossy(&again.stderr);
    assert!(said.contains("not stuck"), "{said}");
    stdout(&tournament(&url, &["release-worker", "flaky"]));
    let workers = stdout(&tournament(&url, &["workers"]));
    assert!(workers.starts_with("flaky\talive\t"), "{workers}");
    let leased = worker
        .lease(LeaseRequest {
            worker_id: "flaky".into(),
        })
        .await
        .expect("a released worker leases again")
        .into_inner()
        .r#match
        .expect("the requeued match");
    assert_eq!(
        (leased.match_id.as_str(), leased.attempt),
        (match_id.as_str(), 4)
    );
}
