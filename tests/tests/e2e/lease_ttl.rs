//! Workers are told to heartbeat often enough to keep their leases.

use crate::support::arena::{self, Coordinator, WORKER_TOKEN};
use crate::support::redis::RedisServer;

/// Heartbeats are derived from the lease TTL in milliseconds: with a 1 s
/// lease, a heartbeat every second would always arrive just after the lease
/// it should extend had expired, and a healthy worker would lose every match
/// longer than that.
///
/// The contract checked: at least two heartbeats per lease lifetime, so one
/// late heartbeat does not cost a lease.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn heartbeats_come_at_least_twice_per_lease_ttl() {
    let redis = RedisServer::start();
    for ttl_s in [1, 2, 3, 5, 30] {
        let coordinator = Coordinator::start(&redis, "127.0.0.1:0", ttl_s);
        let mut worker = arena::worker_rpc(&coordinator.url(), Some(WORKER_TOKEN)).await;
        let registration = worker
            .register(arena::register_request("ttl-probe"))
            .await
            .expect("Register")
            .into_inner();
        assert_eq!(registration.lease_ttl_ms, ttl_s * 1000);
        assert!(
            2 * registration.heartbeat_interval_ms <= registration.lease_ttl_ms,
            "--lease-ttl {ttl_s}: heartbeat every {} ms for a {} ms lease",
            registration.heartbeat_interval_ms,
            registration.lease_ttl_ms
        );
    }
}
