//! Fleet mode (`FLEET_DATABASE_URL` set): this instance is one of a fleet that publishes every
//! outbox database of a registry (`outbox_relay::fleet`), each by one instance at a time under
//! a lease, its deletes fenced at the lease's epoch. `DATABASE_URL` and `RELAY_SHARDS` are then
//! not read: the databases are the registry's, added, drained and removed at runtime.
//!
//! - Metrics: each owned database's relay metrics carry the label `db="<name>"`; the instance's
//!   own are `relay_fleet_owned_databases` and `relay_fleet_registry_up`.
//! - `GetStatus`: the figures summed over the databases this instance owns now ([`FleetGrpc`]).
//! - Health: SERVING while the fleet database answers and no owned database's relay lost its
//!   broker connection ([`FleetBrokerProbe`]). A database that is down is not a health matter
//!   of the instance (it slows no other one): it shows in the registry's `last_error`.
//! - The admin service (`RelayAdmin`): every database of the registry, each by its source id as
//!   its shard, whichever instance owns it ([`crate::admin::targets`]).

use std::time::Duration;

use outbox_kit::{
    config::{default_duration, parse_duration},
    health::{AllOf, DbProbe, Health, Probe},
};
use outbox_proto::relay::admin::v1::relay_admin_server::RelayAdminServer;
use outbox_proto::relay::v1::{
    GetStatusRequest, RelayStatus, relay_service_server::RelayService,
    relay_service_server::RelayServiceServer,
};
use outbox_relay::fleet::{Fleet, FleetSettings, FleetStatus, registry::Registry};
use outbox_support::secret::SecretUrl;
use tokio_util::sync::CancellationToken;
use tonic::{Request, Response, Status as GrpcStatus};

use crate::{
    App, Config,
    admin::{RelayAdminGrpc, targets::Databases},
    grpc,
};

/// A shorter lease renews too often to be worth it; the registry's clock and a busy machine
/// need a second.
const MIN_LEASE: Duration = Duration::from_secs(1);
const MAX_LEASE: Duration = Duration::from_secs(3600);

/// Fleet mode's settings (flattened into [`Config`]).
#[derive(Debug, Clone, clap::Args)]
pub struct FleetConfig {
    /// The fleet database holding the registry of outbox databases. Set: fleet mode (the
    /// databases are the registry's; DATABASE_URL and RELAY_SHARDS are not read). Printed only
    /// with the password masked.
    #[arg(long, env = "FLEET_DATABASE_URL", hide_env_values = true)]
    pub fleet_database_url: Option<SecretUrl>,

    /// This instance's id in the fleet, unique among the live ones. Default: `<hostname>-<pid>`.
    #[arg(long, env = "FLEET_INSTANCE_ID")]
    pub fleet_instance_id: Option<String>,

    /// The lease of each database: renewed every third of it; a database whose owner stays
    /// silent this long is taken over by another instance. At least 1s.
    #[arg(long, env = "FLEET_LEASE", value_parser = parse_duration,
          default_value = default_duration(outbox_relay::fleet::DEFAULT_LEASE))]
    pub fleet_lease: Duration,

    /// Each owned outbox's fallback poll when no NOTIFY arrives (an idle database costs about
    /// one read per poll). At least 50ms.
    #[arg(long, env = "FLEET_POLL_INTERVAL", value_parser = parse_duration,
          default_value = default_duration(outbox_relay::fleet::DEFAULT_POLL_INTERVAL))]
    pub fleet_poll_interval: Duration,
}

/// Not in fleet mode; the library's defaults.
impl Default for FleetConfig {
    fn default() -> Self {
        Self {
            fleet_database_url: None,
            fleet_instance_id: None,
            fleet_lease: outbox_relay::fleet::DEFAULT_LEASE,
            fleet_poll_interval: outbox_relay::fleet::DEFAULT_POLL_INTERVAL,
        }
    }
}

impl FleetConfig {
    /// Checks what clap cannot; the error names the setting.
    pub fn validate(&self) -> anyhow::Result<()> {
        if let Some(url) = &self.fleet_database_url {
            outbox_kit::db::options_for("FLEET_DATABASE_URL", url)?;
        }
        if self.fleet_lease < MIN_LEASE || self.fleet_lease > MAX_LEASE {
            anyhow::bail!("FLEET_LEASE must be between {MIN_LEASE:?} and {MAX_LEASE:?}");
        }
        if self.fleet_poll_interval < Duration::from_millis(50) {
            anyhow::bail!(
                "FLEET_POLL_INTERVAL must be at least 50ms (it is {:?})",
                self.fleet_poll_interval
            );
        }
        if self
            .fleet_instance_id
            .as_ref()
            .is_some_and(|id| id.is_empty() || id.len() > 200)
        {
            anyhow::bail!("FLEET_INSTANCE_ID must be 1 to 200 bytes long");
        }
        Ok(())
    }

    /// `FLEET_INSTANCE_ID`, or `<hostname>-<pid>`.
    pub fn instance_id(&self) -> String {
        self.fleet_instance_id.clone().unwrap_or_else(|| {
            let host = std::fs::read_to_string("/proc/sys/kernel/hostname")
                .ok()
                .or_else(|| std::env::var("HOSTNAME").ok())
                .map(|h| h.trim().to_owned())
                .filter(|h| !h.is_empty())
                .unwrap_or_else(|| "relay".into());
            format!("{host}-{}", std::process::id())
        })
    }
}

/// [`App::build`] in fleet mode: the registry's migration and the instance's loop, `GetStatus`
/// and health over the databases it owns.
pub(crate) async fn build(
    cfg: Config,
    url: SecretUrl,
    shutdown: CancellationToken,
) -> anyhow::Result<App> {
    let fleet_cfg = &cfg.fleet;
    fleet_cfg.validate()?;
    let pg = outbox_kit::db::options_for("FLEET_DATABASE_URL", &url)?;
    // Lazy: the instance starts (and reports NOT_SERVING) while the fleet database is away.
    let pool = outbox_kit::db::lazy_pool(&cfg.pool_options(&pg), 4);
    let (listener, grpc_addr, metrics_addr) = crate::listen(&cfg, &shutdown).await?;
    outbox_support::metrics::describe(outbox_relay::status::FLEET_METRICS);
    let security = cfg.server.grpc_security.load()?;

    let relay_settings = cfg.settings()?;
    let mut settings = FleetSettings::new(fleet_cfg.instance_id(), relay_settings.clone());
    settings.lease = fleet_cfg.fleet_lease;
    settings.poll_interval = fleet_cfg.fleet_poll_interval;
    tracing::info!(instance = %settings.instance_id, lease = ?settings.lease, "relay-svc: fleet mode");
    let registry = Registry::new(pool);
    let fleet = Fleet::new(registry.clone(), settings, shutdown.clone());
    let status = fleet.status();
    let relay = tokio::spawn(fleet.run());

    let (health, health_service) =
        Health::new::<RelayServiceServer<FleetGrpc>>(shutdown.clone()).await;
    let mut probe = (
        AllOf(vec![("FLEET_DATABASE_URL".to_owned(), DbProbe::new(pg))]),
        FleetBrokerProbe(status.clone()),
    );
    health.set(probe.check().await).await;
    let health_monitor = tokio::spawn(outbox_kit::health::monitor(health.clone(), probe));
    let admin_token = cfg.server.admin.tokens()?;
    let admin = RelayAdminServer::new(RelayAdminGrpc::new(
        Databases::fleet(
            registry,
            relay_settings,
            cfg.server.liveness.db_statement_timeout,
        ),
        admin_token.clone(),
    ));
    let services = outbox_kit::grpc::Services::new(RelayServiceServer::new(FleetGrpc(status)))
        .with_admin(admin, admin_token.clone());
    let token_lists = security.tokens.iter().chain(admin_token.list()).cloned();
    outbox_kit::auth::reload_on_sighup(token_lists.collect(), shutdown.clone());
    let server = outbox_kit::grpc::serve(listener, services, &health, health_service, security)?;
    tracing::info!(%grpc_addr, %metrics_addr, "relay-svc listening");
    Ok(App {
        grpc_addr,
        metrics_addr,
        statuses: Vec::new(),
        schemas: Vec::new(),
        server,
        relays: vec![relay],
        health: health_monitor,
    })
}

/// NOT_SERVING while the relay of a database this instance owns lost its broker connection.
#[derive(Debug)]
pub struct FleetBrokerProbe(pub FleetStatus);

impl Probe for FleetBrokerProbe {
    async fn check(&mut self) -> Result<(), String> {
        for (db, status) in self.0.databases() {
            if let Some(why) = status.broker_lost() {
                return Err(format!(
                    "broker: connection lost ({why}) by db={db}; reconnecting"
                ));
            }
        }
        Ok(())
    }
}

/// `GetStatus` in fleet mode: the figures of the databases this instance owns, summed
/// ([`grpc::combine`]); backlogs as last counted by their relays.
#[derive(Debug, Clone)]
pub struct FleetGrpc(pub FleetStatus);

#[tonic::async_trait]
impl RelayService for FleetGrpc {
    async fn get_status(
        &self,
        _request: Request<GetStatusRequest>,
    ) -> Result<Response<RelayStatus>, GrpcStatus> {
        let databases = self.0.databases();
        let snapshots: Vec<_> = databases.iter().map(|(_, s)| s.snapshot()).collect();
        let reason = databases
            .iter()
            .filter_map(|(_, s)| s.broker_blocked())
            .max_by_key(|(_, for_)| *for_)
            .map(|(reason, _)| reason)
            .unwrap_or_default();
        Ok(Response::new(grpc::to_proto(
            grpc::combine(&snapshots),
            reason,
        )))
    }
}
