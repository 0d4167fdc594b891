//! What an outside client without proto files sees: health, and reflection in v1 and v1alpha.

use outbox_testkit::{health, reflection};
use tonic_health::pb::health_check_response::ServingStatus;

use crate::common;

#[tokio::test]
async fn health_is_serving_for_the_server_and_the_orders_service() {
    let t = common::start().await;
    for service in ["", "orders.v1.OrderService"] {
        let status = health::status(t.grpc_addr, service).await;
        assert_eq!(status, ServingStatus::Serving as i32, "{service:?}");
    }
}

#[tokio::test]
async fn reflection_v1_and_v1alpha_list_and_describe_the_service() {
    let t = common::start().await;

    let names = reflection::services_v1(t.grpc_addr).await;
    assert!(
        names.iter().any(|n| n == "orders.v1.OrderService")
            && names.iter().any(|n| n == "grpc.health.v1.Health"),
        "{names:?}"
    );
    assert!(
        !names.iter().any(|n| n == "mail.v1.MailService"),
        "only what this server serves: {names:?}"
    );
    let files = reflection::files_containing_v1(t.grpc_addr, "orders.v1.OrderService").await;
    assert!(!files.is_empty());

    let names = reflection::services_v1alpha(t.grpc_addr).await;
    assert!(names.iter().any(|n| n == "orders.v1.OrderService"));
}
