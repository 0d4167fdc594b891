//! gRPC plumbing every service mounts beside its own service: server reflection in both v1 and
//! v1alpha, so grpcurl of any release can list, describe and call it. Health (`grpc.health.v1`)
//! is in [`crate::health`].

use anyhow::Context;
use tonic_reflection::server::{
    v1::{ServerReflection, ServerReflectionServer},
    v1alpha::{
        ServerReflection as ServerReflectionV1Alpha,
        ServerReflectionServer as ServerReflectionV1AlphaServer,
    },
};

/// Reflection services (v1 and v1alpha) that list `services` (full names, e.g.
/// `orders.v1.OrderService`) plus health and reflection itself, and describe every type they use.
pub fn reflection(
    services: &[&str],
) -> anyhow::Result<(
    ServerReflectionServer<impl ServerReflection>,
    ServerReflectionV1AlphaServer<impl ServerReflectionV1Alpha>,
)> {
    let builder = || {
        // Naming services explicitly keeps `grpcurl list` to what this server really serves
        // (the shared descriptor set also holds the other services' contracts).
        let mut b = tonic_reflection::server::Builder::configure()
            .register_encoded_file_descriptor_set(outbox_proto::FILE_DESCRIPTOR_SET)
            .register_encoded_file_descriptor_set(tonic_health::pb::FILE_DESCRIPTOR_SET)
            .with_service_name("grpc.health.v1.Health");
        for name in services {
            b = b.with_service_name(*name);
        }
        b
    };
    let v1 = builder()
        .build_v1()
        .context("building gRPC reflection v1")?;
    let v1alpha = builder()
        .build_v1alpha()
        .context("building gRPC reflection v1alpha")?;
    Ok((v1, v1alpha))
}
