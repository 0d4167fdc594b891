//! gRPC plumbing every service mounts beside its own service: [`serve`], the one server wiring
//! (the service, health, reflection, TLS, bearer tokens, shutdown), and [`reflection`] in both
//! v1 and v1alpha, so grpcurl of any release can list, describe and call it. Health
//! (`grpc.health.v1`) is in [`crate::health`].
//!
//! [`SecuritySettings`] are the settings every service has for its gRPC port: TLS
//! ([`crate::tls::ServerTls`]) and `AUTH_TOKENS_FILE`. With a token list, every call but health
//! and reflection must carry `authorization: Bearer <token>` of the list (or, for an admin
//! service, an admin token), else it is answered UNAUTHENTICATED; each mutating call (any method
//! not named `Get…` or `List…`) is logged with the token's name.

use std::{convert::Infallible, path::PathBuf, sync::Arc};

use crate::{
    admin::AdminToken,
    auth::{Tokens, bearer},
    tls::ServerTls,
};
use anyhow::Context;
use axum::{extract::State, middleware::Next, response::IntoResponse};
use tokio::{net::TcpListener, task::JoinHandle};
use tokio_stream::wrappers::TcpListenerStream;
use tonic::{
    body::Body,
    codegen::{Service, http::Request},
    server::NamedService,
    service::Routes,
    transport::ServerTlsConfig,
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

/// A trait alias: `$name` for every type with `$bounds`, the bounds written once for the trait
/// and its blanket impl.
macro_rules! trait_alias {
    ($(#[$doc:meta])* $name:ident = $($bounds:tt)+) => {
        $(#[$doc])*
        pub trait $name: $($bounds)+ {}
        impl<S> $name for S where S: $($bounds)+ {}
    };
}

trait_alias! {
    /// What the server takes as a service: a tonic-generated `…Server` (the bounds tonic's
    /// router puts on it).
    GrpcService = Service<
        Request<Body>,
        Error = Infallible,
        Response: axum::response::IntoResponse,
        Future: Send + 'static,
    > + NamedService
        + Clone
        + Send
        + Sync
        + 'static
}

/// The services a server serves beside health and reflection; reflection lists their names.
#[derive(Debug)]
pub struct Services {
    routes: Routes,
    names: Vec<&'static str>,
    /// The admin services and their tokens (accepted by the token check on their calls).
    admin: Vec<(&'static str, AdminToken)>,
}

impl Services {
    /// The server's first (main) service.
    pub fn new<S>(service: S) -> Self
    where
        S: GrpcService,
    {
        Self {
            routes: Routes::new(service),
            names: vec![S::NAME],
            admin: Vec::new(),
        }
    }

    /// One more service on the same server (e.g. an admin service).
    pub fn with<S>(mut self, service: S) -> Self
    where
        S: GrpcService,
    {
        self.names.push(S::NAME);
        self.routes = self.routes.add_service(service);
        self
    }

    /// An admin service: with `AUTH_TOKENS_FILE`, its calls also accept the admin tokens
    /// `token` (its mutations check them again, and only them).
    pub fn with_admin<S>(mut self, service: S, token: AdminToken) -> Self
    where
        S: GrpcService,
    {
        self.admin.push((S::NAME, token));
        self.with(service)
    }
}

/// The settings of the gRPC port every service has.
#[derive(Debug, Clone, Default, clap::Args)]
pub struct SecuritySettings {
    #[command(flatten)]
    pub tls: ServerTls,

    /// File of the bearer tokens every gRPC call but health and reflection must carry
    /// (`authorization: Bearer <token>`), one `<name> <token>` a line, `#` comments; re-read on
    /// SIGHUP. The logs show the token's name with each mutating call, never the token. Unset:
    /// calls need no token.
    #[arg(long, env = "AUTH_TOKENS_FILE")]
    pub auth_tokens_file: Option<PathBuf>,
}

impl SecuritySettings {
    /// Reads and checks the files; errors name the setting.
    pub fn load(&self) -> anyhow::Result<Security> {
        Ok(Security {
            tls: self.tls.load()?,
            tokens: self
                .auth_tokens_file
                .as_deref()
                .map(|p| Tokens::load("AUTH_TOKENS_FILE", p))
                .transpose()?,
        })
    }
}

/// How the gRPC port is protected (see [`SecuritySettings`]); the default is neither.
#[derive(Debug, Clone, Default)]
pub struct Security {
    /// TLS (and client certificates) on the port.
    pub tls: Option<ServerTlsConfig>,
    /// The tokens calls must carry.
    pub tokens: Option<Tokens>,
}

/// The services no token is asked for: a load balancer's health check and grpcurl's `list`
/// and `describe` must work without one.
pub const OPEN_SERVICES: [&str; 3] = [
    "grpc.health.v1.Health",
    "grpc.reflection.v1.ServerReflection",
    "grpc.reflection.v1alpha.ServerReflection",
];

/// The name of the token a call was authenticated with, in the request's extensions.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Caller(pub String);

/// True for a method that may change something: every method but `Get…` and `List…`.
pub fn is_mutating(method: &str) -> bool {
    !(method.starts_with("Get") || method.starts_with("List"))
}

#[derive(Debug, Clone)]
struct Gate {
    tokens: Tokens,
    admin: Arc<Vec<(&'static str, AdminToken)>>,
}

/// The token check of every call (see [`SecuritySettings`]).
async fn authenticate(
    State(gate): State<Gate>,
    mut request: axum::extract::Request,
    next: Next,
) -> axum::response::Response {
    let path = request.uri().path().to_owned();
    let (service, method) = path
        .trim_start_matches('/')
        .split_once('/')
        .unwrap_or((path.as_str(), ""));
    if OPEN_SERVICES.contains(&service) {
        return next.run(request).await;
    }
    let Some(token) = bearer(request.headers()) else {
        return unauthenticated("missing token: send `authorization: Bearer <token>`");
    };
    let caller = gate.tokens.check(token).or_else(|| {
        gate.admin
            .iter()
            .find(|(name, _)| *name == service)
            .and_then(|(_, admin)| admin.check(token))
    });
    let Some(caller) = caller else {
        return unauthenticated("unknown token");
    };
    if is_mutating(method) {
        tracing::info!(caller = %caller, method = %path, "call caller={caller} method={path}");
    }
    request.extensions_mut().insert(Caller(caller));
    next.run(request).await
}

fn unauthenticated(message: &str) -> axum::response::Response {
    tonic::Status::unauthenticated(message)
        .into_http::<axum::body::Body>()
        .into_response()
}

/// Serves `services` on `listener` beside health (`health_service`, whose statuses `health`
/// sets) and reflection v1 and v1alpha naming them, protected by `security`, until shutdown:
/// health turns NOT_SERVING first, then the server stops taking calls and finishes the calls in
/// flight.
pub fn serve<H: HealthService>(
    listener: TcpListener,
    services: Services,
    health: &crate::health::Health,
    health_service: HealthServer<H>,
    security: Security,
) -> anyhow::Result<JoinHandle<Result<(), tonic::transport::Error>>> {
    let (reflection_v1, reflection_v1alpha) = reflection(&services.names)?;
    let mut routes = services
        .routes
        .add_service(health_service)
        .add_service(reflection_v1)
        .add_service(reflection_v1alpha);
    if let Some(tokens) = security.tokens {
        let gate = Gate {
            tokens,
            admin: Arc::new(services.admin),
        };
        routes = Routes::from(
            routes
                .into_axum_router()
                .layer(axum::middleware::from_fn_with_state(gate, authenticate)),
        );
    }
    let mut server = tonic::transport::Server::builder();
    if let Some(tls) = security.tls {
        server = server
            .tls_config(tls)
            .context("TLS_CERT_FILE/TLS_KEY_FILE: not a usable certificate and key")?;
    }
    Ok(tokio::spawn(
        server
            .add_routes(routes)
            // NOT_SERVING first, then stop taking calls.
            .serve_with_incoming_shutdown(TcpListenerStream::new(listener), health.stopped()),
    ))
}
