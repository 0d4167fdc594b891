//! The outbox databases the admin service acts on, each with the shard its rows are tagged
//! with: a fixed deployment's (`DATABASE_URL`, or `RELAY_SHARDS` with shard N at index N), or a
//! fleet's (`FLEET_DATABASE_URL`: every database of the registry, by its source id).
//!
//! A fleet's list is read from the registry at each call, so a database added a moment ago is
//! listed and one removed is not. Any instance answers for any database, owned or not: the
//! admin calls only touch the tables (and a replay the broker), never the lease. Each database's
//! pool is opened on its first use and kept while the database stays registered with the same
//! URL, table and exchange; it holds no connection while idle for long.

use std::{
    collections::HashMap,
    sync::{Arc, Mutex},
    time::Duration,
};

use outbox::TableName;
use outbox_relay::{
    Settings,
    fleet::registry::{Entry, Registry},
    operator::Operator,
};
use sqlx::{PgPool, postgres::PgPoolOptions};
use tonic::Status;

use super::replay::Broker;

/// How long an admin call's pool of a fleet database keeps an unused connection.
const FLEET_IDLE: Duration = Duration::from_secs(30);

/// One database as an admin call acts on it.
#[derive(Debug, Clone)]
pub struct Target {
    /// The shard its events carry (a fleet database's source id).
    pub shard: u32,
    pub pool: PgPool,
    /// The statements for its outbox table.
    pub operator: Arc<Operator>,
    /// Its broker and exchange, for a replay.
    pub broker: Arc<Broker>,
}

impl Target {
    fn new(shard: u32, pool: PgPool, settings: &Settings) -> Self {
        Self {
            shard,
            pool,
            operator: Arc::new(Operator::new(&settings.table)),
            broker: Arc::new(Broker::new(settings)),
        }
    }
}

/// The databases the admin service serves.
#[derive(Debug)]
pub enum Databases {
    /// A fixed deployment's shards, shard N at index N.
    Fixed(Vec<Target>),
    /// A fleet registry's databases.
    Fleet(Box<Fleet>),
}

impl Databases {
    /// A fixed deployment: `pools[N]` is shard N's database, all with the relay's `settings`.
    pub fn fixed(pools: Vec<PgPool>, settings: &Settings) -> Self {
        Self::Fixed(
            (0u32..)
                .zip(pools)
                .map(|(shard, pool)| Target::new(shard, pool, settings))
                .collect(),
        )
    }

    /// A fleet: the databases of `registry`, each published with `settings` but for its own
    /// table and exchange; its sessions get `statement_timeout`.
    pub fn fleet(registry: Registry, settings: Settings, statement_timeout: Duration) -> Self {
        Self::Fleet(Box::new(Fleet {
            registry,
            settings,
            statement_timeout,
            open: Mutex::new(HashMap::new()),
        }))
    }

    /// Every database, lowest shard first.
    pub async fn all(&self) -> Result<Vec<Target>, Status> {
        match self {
            Self::Fixed(targets) => Ok(targets.clone()),
            Self::Fleet(fleet) => fleet.all().await,
        }
    }

    /// The database of `shard`; INVALID_ARGUMENT naming `shard` when there is none.
    pub async fn one(&self, shard: u32) -> Result<Target, Status> {
        match self {
            Self::Fixed(targets) => targets.get(shard as usize).cloned().ok_or_else(|| {
                Status::invalid_argument(match targets.len() {
                    1 => format!("shard: {shard} is out of range: this relay has shard 0 only"),
                    n => format!(
                        "shard: {shard} is out of range: this relay has shards 0 to {}",
                        n - 1
                    ),
                })
            }),
            Self::Fleet(fleet) => fleet.all().await?.into_iter().find(|t| t.shard == shard).ok_or_else(|| {
                Status::invalid_argument(format!(
                    "shard: no database of the fleet has source id {shard} (outboxctl fleet list)"
                ))
            }),
        }
    }

    /// Whether a seq names a row only together with its shard (several databases).
    pub fn several(&self) -> bool {
        match self {
            Self::Fixed(targets) => targets.len() > 1,
            Self::Fleet(_) => true,
        }
    }
}

/// A fleet registry's databases, their pools opened on first use.
#[derive(Debug)]
pub struct Fleet {
    registry: Registry,
    settings: Settings,
    statement_timeout: Duration,
    /// By name: what the target was made from (URL, table, exchange), and the target.
    open: Mutex<HashMap<String, (Made, Target)>>,
}

/// What a fleet database's target was made from: a change makes a new one.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Made {
    source_id: i32,
    url: String,
    table: String,
    exchange: String,
}

impl Made {
    fn of(e: &Entry) -> Self {
        Self {
            source_id: e.source_id,
            url: e.url.expose().to_owned(),
            table: e.table.clone(),
            exchange: e.exchange.clone(),
        }
    }
}

impl Fleet {
    async fn all(&self) -> Result<Vec<Target>, Status> {
        let entries = self.registry.list().await.map_err(|e| {
            tracing::warn!(error = %e, "[admin] the fleet registry cannot be read");
            Status::unavailable(format!("the fleet database cannot be read: {e}"))
        })?;
        let mut open = self.open.lock().unwrap_or_else(|p| p.into_inner());
        // A removed database's pool goes with it.
        open.retain(|name, _| entries.iter().any(|e| &e.name == name));
        let mut targets = Vec::with_capacity(entries.len());
        for e in &entries {
            let made = Made::of(e);
            if let Some((was, target)) = open.get(&e.name)
                && *was == made
            {
                targets.push(target.clone());
                continue;
            }
            match self.target(e) {
                Ok(target) => {
                    open.insert(e.name.clone(), (made, target.clone()));
                    targets.push(target);
                }
                // Checked by the registry when added: only a row edited by hand gets here.
                Err(why) => tracing::warn!(db = %e.name, "[admin] db={} left out: {why}", e.name),
            }
        }
        targets.sort_by_key(|t| t.shard);
        Ok(targets)
    }

    fn target(&self, e: &Entry) -> Result<Target, String> {
        let shard = u32::try_from(e.source_id).map_err(|_| "a negative source id".to_owned())?;
        let pg = outbox_kit::db::options_for("the fleet database's url", &e.url)
            .map_err(|e| e.to_string())?;
        let pg = outbox_kit::db::with_session_timeouts(
            &pg,
            self.statement_timeout,
            self.statement_timeout,
        );
        let pool = PgPoolOptions::new()
            .max_connections(2)
            .min_connections(0)
            .idle_timeout(FLEET_IDLE)
            .acquire_timeout(Duration::from_secs(5))
            .connect_lazy_with(pg);
        let mut settings = self.settings.clone();
        settings.table = TableName::parse(&e.table).map_err(|e| e.to_string())?;
        settings.amqp_exchange = e.exchange.clone();
        Ok(Target::new(shard, pool, &settings))
    }
}
