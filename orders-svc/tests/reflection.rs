//! What an outside client without proto files sees: health, and reflection in v1 and v1alpha.

mod common;

async fn channel(url: String) -> tonic::transport::Channel {
    tonic::transport::Endpoint::from_shared(url)
        .expect("url")
        .connect()
        .await
        .expect("connect")
}

use futures::StreamExt;
use tonic_health::pb::{
    HealthCheckRequest, health_check_response::ServingStatus, health_client::HealthClient,
};

#[tokio::test]
async fn health_is_serving_for_the_server_and_the_orders_service() {
    let t = common::start().await;
    let mut health = HealthClient::new(channel(format!("http://{}", t.grpc_addr)).await);
    for service in ["", "orders.v1.OrderService"] {
        let resp = health
            .check(HealthCheckRequest {
                service: service.into(),
            })
            .await
            .expect("check")
            .into_inner();
        assert_eq!(resp.status, ServingStatus::Serving as i32, "{service:?}");
    }
}

#[tokio::test]
async fn reflection_v1_and_v1alpha_list_and_describe_the_service() {
    let t = common::start().await;
    let url = format!("http://{}", t.grpc_addr);

    {
        use tonic_reflection::pb::v1::{
            ServerReflectionRequest, server_reflection_client::ServerReflectionClient,
            server_reflection_request::MessageRequest, server_reflection_response::MessageResponse,
        };
        let mut client = ServerReflectionClient::new(channel(url.clone()).await);
        let requests = vec![
            ServerReflectionRequest {
                host: String::new(),
                message_request: Some(MessageRequest::ListServices(String::new())),
            },
            ServerReflectionRequest {
                host: String::new(),
                message_request: Some(MessageRequest::FileContainingSymbol(
                    "orders.v1.OrderService".into(),
                )),
            },
        ];
        let mut responses = client
            .server_reflection_info(futures::stream::iter(requests))
            .await
            .expect("v1")
            .into_inner();
        let Some(MessageResponse::ListServicesResponse(list)) = responses
            .next()
            .await
            .expect("reply")
            .expect("ok")
            .message_response
        else {
            panic!("expected a service list");
        };
        let names: Vec<_> = list.service.iter().map(|s| s.name.as_str()).collect();
        assert!(
            names.contains(&"orders.v1.OrderService") && names.contains(&"grpc.health.v1.Health"),
            "{names:?}"
        );
        assert!(
            !names.contains(&"mail.v1.MailService"),
            "only what this server serves: {names:?}"
        );
        let Some(MessageResponse::FileDescriptorResponse(files)) = responses
            .next()
            .await
            .expect("reply")
            .expect("ok")
            .message_response
        else {
            panic!("expected file descriptors");
        };
        assert!(!files.file_descriptor_proto.is_empty());
    }
    {
        use tonic_reflection::pb::v1alpha::{
            ServerReflectionRequest, server_reflection_client::ServerReflectionClient,
            server_reflection_request::MessageRequest, server_reflection_response::MessageResponse,
        };
        let mut client = ServerReflectionClient::new(channel(url).await);
        let request = ServerReflectionRequest {
            host: String::new(),
            message_request: Some(MessageRequest::ListServices(String::new())),
        };
        let mut responses = client
            .server_reflection_info(futures::stream::iter(vec![request]))
            .await
            .expect("v1alpha")
            .into_inner();
        let Some(MessageResponse::ListServicesResponse(list)) = responses
            .next()
            .await
            .expect("reply")
            .expect("ok")
            .message_response
        else {
            panic!("expected a service list");
        };
        assert!(
            list.service
                .iter()
                .any(|s| s.name == "orders.v1.OrderService")
        );
    }
}
