//! Load: 8 agents × 10,000 requests while the person moves and types.

use crate::load_driver::{self, host_pid, rss_kib};

#[tokio::test]
async fn eight_agents_flooding_while_the_person_types_are_all_served() {
    let session = crate::load_driver::session().await;
    let host = host_pid(&session).await;
    let idle = rss_kib(host);
    let report = load_driver::run(&session, 8, 10_000, 24).await;
    assert_eq!(report.answered, vec![10_000; 8], "every request answered");
    for (agent, seen) in report.selections.iter().enumerate() {
        for row in &report.moved_to {
            assert!(
                seen.contains(row),
                "agent {agent} missed the move to row {row}"
            );
        }
    }
    session.wait_clients(0).await;
    let after = rss_kib(host);
    assert!(
        after < idle + 32 * 1024,
        "host memory grew from {idle} KiB to {after} KiB"
    );
}
