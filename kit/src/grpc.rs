//! gRPC plumbing every service mounts beside its own service: [`serve`], the one server wiring
//! (the service, health, reflection, shutdown), and [`reflection`] in both v1 and v1alpha, so
//! grpcurl of any release can list, describe and call it. Health (`grpc.health.v1`) is in
//! [`crate::health`].

use std::convert::Infallible;

use anyhow::Context;
use tokio::{net::TcpListener, task::JoinHandle};
use tokio_stream::wrappers::TcpListenerStream;
use tonic::{
    body::Body,
    codegen::{Service, http::Request},
    server::NamedService,
    service::Routes,
};
use tonic_health::pb::health_server::{Health as HealthService, HealthServer};
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

/// The services a server serves beside health and reflection; reflection lists their names.
#[derive(Debug)]
pub struct Services {
    routes: Routes,
    names: Vec<&'static str>,
}

impl Services {
    /// The server's first (main) service.
    pub fn new<S>(service: S) -> Self
    where
        S: Service<Request<Body>, Error = Infallible>
            + NamedService
            + Clone
            + Send
            + Sync
            + 'static,
        S::Response: axum::response::IntoResponse,
        S::Future: Send + 'static,
    {
        Self {
            routes: Routes::new(service),
            names: vec![S::NAME],
        }
    }

    /// One more service on the same server (e.g. an admin service).
    pub fn with<S>(mut self, service: S) -> Self
    where
        S: Service<Request<Body>, Error = Infallible>
            + NamedService
            + Clone
            + Send
            + Sync
            + 'static,
        S::Response: axum::response::IntoResponse,
        S::Future: Send + 'static,
    {
        self.names.push(S::NAME);
        self.routes = self.routes.add_service(service);
        self
    }
}

/// Serves `services` on `listener` beside health (`health_service`, whose statuses `health`
/// sets) and reflection v1 and v1alpha naming them, until shutdown: health turns NOT_SERVING
/// first, then the server stops taking calls and finishes the calls in flight.
pub fn serve<H: HealthService>(
    listener: TcpListener,
    services: Services,
    health: &crate::health::Health,
    health_service: HealthServer<H>,
) -> anyhow::Result<JoinHandle<Result<(), tonic::transport::Error>>> {
    let (reflection_v1, reflection_v1alpha) = reflection(&services.names)?;
    let routes = services
        .routes
        .add_service(health_service)
        .add_service(reflection_v1)
        .add_service(reflection_v1alpha);
    Ok(tokio::spawn(
        tonic::transport::Server::builder()
            .add_routes(routes)
            // NOT_SERVING first, then stop taking calls.
            .serve_with_incoming_shutdown(TcpListenerStream::new(listener), health.stopped()),
    ))
}
