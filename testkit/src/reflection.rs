//! What the reflection tests share: asking a running server, as grpcurl would, in both the v1 and
//! the v1alpha protocol, which services it serves and which files describe a symbol.

use std::net::SocketAddr;

use tonic::transport::Channel;
use tonic_reflection::pb::v1;

async fn channel(addr: SocketAddr) -> Channel {
    tonic::transport::Endpoint::from_shared(format!("http://{addr}"))
        .expect("url")
        .connect()
        .await
        .expect("connect")
}

/// One reflection v1 request, its one answer.
async fn ask_v1(
    addr: SocketAddr,
    request: v1::server_reflection_request::MessageRequest,
) -> v1::server_reflection_response::MessageResponse {
    use v1::{ServerReflectionRequest, server_reflection_client::ServerReflectionClient};
    ServerReflectionClient::new(channel(addr).await)
        .server_reflection_info(futures::stream::iter([ServerReflectionRequest {
            host: String::new(),
            message_request: Some(request),
        }]))
        .await
        .expect("v1")
        .into_inner()
        .message()
        .await
        .expect("ok")
        .expect("reply")
        .message_response
        .expect("an answer")
}

/// The services the server at `addr` lists through reflection v1.
pub async fn services_v1(addr: SocketAddr) -> Vec<String> {
    use v1::{
        server_reflection_request::MessageRequest, server_reflection_response::MessageResponse,
    };
    let MessageResponse::ListServicesResponse(list) =
        ask_v1(addr, MessageRequest::ListServices(String::new())).await
    else {
        panic!("expected a service list");
    };
    list.service.into_iter().map(|s| s.name).collect()
}

/// The encoded file descriptors reflection v1 returns for `symbol` (e.g. a service name).
pub async fn files_containing_v1(addr: SocketAddr, symbol: &str) -> Vec<Vec<u8>> {
    use v1::{
        server_reflection_request::MessageRequest, server_reflection_response::MessageResponse,
    };
    let MessageResponse::FileDescriptorResponse(files) =
        ask_v1(addr, MessageRequest::FileContainingSymbol(symbol.into())).await
    else {
        panic!("expected file descriptors");
    };
    files.file_descriptor_proto
}

/// The services the server at `addr` lists through reflection v1alpha (older grpcurl).
pub async fn services_v1alpha(addr: SocketAddr) -> Vec<String> {
    use tonic_reflection::pb::v1alpha::{
        ServerReflectionRequest, server_reflection_client::ServerReflectionClient,
        server_reflection_request::MessageRequest, server_reflection_response::MessageResponse,
    };
    let mut responses = ServerReflectionClient::new(channel(addr).await)
        .server_reflection_info(futures::stream::iter([ServerReflectionRequest {
            host: String::new(),
            message_request: Some(MessageRequest::ListServices(String::new())),
        }]))
        .await
        .expect("v1alpha")
        .into_inner();
    let Some(MessageResponse::ListServicesResponse(list)) = responses
        .message()
        .await
        .expect("ok")
        .expect("reply")
        .message_response
    else {
        panic!("expected a service list");
    };
    list.service.into_iter().map(|s| s.name).collect()
}
