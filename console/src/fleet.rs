//! The relay fleet as the console reaches it, and the outbox database a page reads.
//!
//! - [`Fleet`]: the registry in the fleet database (`CONSOLE_FLEET_DATABASE_URL`), connected on
//!   first use and kept: a fleet database that is down when the console starts is a 503 on the
//!   pages that need it, not a console that does not start. The fleet's failures in the
//!   console's words ([`Fleet::refused`]): a 400 naming the form field, a 404, a 409, a 503.
//! - [`Scope`]: the outbox database a list, the audit or "where is" reads: one of the console's
//!   orders shards (`shard=N`), or the database `db=` names, resolved by `outbox_ops::fleet`'s
//!   `targets` as outboxctl's `--db` is (a fleet database's name with a fleet database, else
//!   `shard-N`); an unknown name is a 400 naming `db`.
//!
//! The URLs are [`SecretUrl`]s throughout: a page, a log line or an error shows them redacted.

use std::{collections::HashMap, str::FromStr, sync::Mutex, time::Duration};

use outbox_ops::fleet::{
    self as ops, Registry, SecretUrl, Target, registry::Error as RegistryError,
};
use sqlx::{
    PgPool,
    postgres::{PgConnectOptions, PgPoolOptions},
};
use tokio::sync::OnceCell;

use crate::{
    error::{Error, Result},
    form::Fields,
    state::AppState,
};

/// How long a page waits for a connection to a fleet database it reads.
const ACQUIRE_TIMEOUT: Duration = Duration::from_secs(5);

/// The fleet database, if the console has one, and read-only pools of the fleet's databases
/// the pages have read.
#[derive(Debug, Default)]
pub struct Fleet {
    url: Option<SecretUrl>,
    registry: OnceCell<Registry>,
    /// By name, with the URL each pool was made for (a database re-added under the same name
    /// with another URL gets a new pool).
    pools: Mutex<HashMap<String, (SecretUrl, PgPool)>>,
}

impl Fleet {
    /// The fleet of `url` (`None`, or an empty URL: no fleet database).
    pub fn new(url: Option<&SecretUrl>) -> Self {
        Self {
            url: url.filter(|u| !u.trim().is_empty()).cloned(),
            ..Self::default()
        }
    }

    /// True when the console has a fleet database.
    pub fn configured(&self) -> bool {
        self.url.is_some()
    }

    /// The registry (`None` without a fleet database); a 503 that names the fleet database
    /// (redacted) when it cannot be reached. A failed connect is tried again by the next page.
    pub async fn registry(&self) -> Result<Option<&Registry>> {
        let Some(url) = &self.url else {
            return Ok(None);
        };
        self.registry
            .get_or_try_init(|| ops::connect(url))
            .await
            .map(Some)
            .map_err(|e| match e {
                ops::Error::Unreachable { what, detail } => {
                    Error::Unavailable(format!("cannot reach {what}: {detail}"))
                }
                other => self.refused(other),
            })
    }

    /// A fleet action's failure as the console answers it: a bad field is a 400 naming it (the
    /// form's fields are named as the registry names them: `name`, `source_id`, `url`, `table`,
    /// `exchange`, `reason`, `db`), a database to add that cannot be reached is a 400 naming
    /// `url`, an unknown database a 404, a removal of one not drained a 409, and the fleet
    /// database failing a 503. No text carries a password.
    pub fn refused(&self, e: ops::Error) -> Error {
        let scrub = |text: String| match &self.url {
            Some(u) => u.scrub(&text),
            None => text,
        };
        match e {
            ops::Error::InvalidArgument { field, reason } => Error::bad(field, reason),
            ops::Error::Unreachable { what, detail } => {
                Error::bad("url", format!("cannot reach {what}: {detail}"))
            }
            ops::Error::Registry(e) => match e {
                RegistryError::InvalidArgument { field, reason } => Error::bad(field, reason),
                RegistryError::AlreadyExists { field, .. } => Error::bad(field, e.to_string()),
                RegistryError::NotFound(_) => Error::NotFound(e.to_string()),
                RegistryError::NotDrained { .. } => Error::Conflict(format!(
                    "{e}. Drain it and wait until its owner marks it drained, or tick \"force\" \
                     (its owner stops at its next lease renewal; rows still in its outbox stay \
                     there unpublished)"
                )),
                RegistryError::Db(db) => Error::Unavailable(format!(
                    "the fleet database ({}) cannot be read: {}",
                    self.url
                        .as_ref()
                        .map_or_else(String::new, |u| u.to_string()),
                    scrub(db.to_string())
                )),
                other => Error::Unavailable(scrub(other.to_string())),
            },
        }
    }

    /// A read-only pool of the fleet database `t` (made on first use, connected lazily: a
    /// database that is down is a 503 of the page that reads it).
    fn pool(&self, t: &Target) -> Result<PgPool> {
        let mut pools = self.pools.lock().unwrap_or_else(|e| e.into_inner());
        if let Some((url, pool)) = pools.get(&t.name)
            && *url == t.url
        {
            return Ok(pool.clone());
        }
        let options = t
            .url
            .parse(&t.name, "PostgreSQL URL", PgConnectOptions::from_str)
            .map_err(|e| Error::Unavailable(e.to_string()))?;
        let pool = PgPoolOptions::new()
            .max_connections(2)
            .acquire_timeout(ACQUIRE_TIMEOUT)
            .connect_lazy_with(options.options([("default_transaction_read_only", "on")]));
        pools.insert(t.name.clone(), (t.url.clone(), pool.clone()));
        Ok(pool)
    }
}

/// The outbox database a page reads and acts on.
#[derive(Debug, Clone)]
pub struct Scope {
    /// The database's name as `db=` gave it (`None`: chosen by `shard=`).
    pub db: Option<String>,
    /// The shard its events carry: what mail-svc keys chains by and the admin calls name.
    pub shard: i32,
    /// A read-only pool of it.
    pub pool: PgPool,
}

impl Scope {
    /// The database `f` names: `db` if given (a 400 naming `db` when there is no such
    /// database), else the orders shard `shard` (0 when absent).
    pub async fn read(state: &AppState, f: &Fields) -> Result<Scope> {
        let Some(db) = f.text("db")? else {
            let shard = f.shard("shard", state.sources.shards.len())?;
            return Ok(Scope {
                db: None,
                shard,
                pool: state.sources.shards[shard as usize].clone(),
            });
        };
        let registry = state.fleet.registry().await?;
        let target = ops::targets(registry, &state.cfg.ops.orders_db, Some(db))
            .await
            .map_err(|e| state.fleet.refused(e))?
            .into_iter()
            .next()
            .ok_or_else(|| Error::bad("db", format!("no database {db:?}")))?;
        let pool = match registry {
            Some(_) => state.fleet.pool(&target)?,
            // A fixed deployment's `shard-N` is the console's own pool of shard N.
            None => state
                .sources
                .shards
                .get(target.shard as usize)
                .cloned()
                .ok_or_else(|| Error::bad("db", format!("no shard {}", target.shard)))?,
        };
        Ok(Scope {
            db: Some(target.name),
            shard: target.shard,
            pool,
        })
    }

    /// The query fields that choose this database again: `db=` or `shard=`.
    pub fn pairs(&self) -> Vec<(&'static str, String)> {
        match &self.db {
            Some(db) => vec![("db", db.clone())],
            None => vec![("shard", self.shard.to_string())],
        }
    }

    /// How a page names it: `tenant-acme (shard 7)`, `shard 0`.
    pub fn label(&self) -> String {
        match &self.db {
            Some(db) => format!("{db} (shard {})", self.shard),
            None => format!("shard {}", self.shard),
        }
    }
}
