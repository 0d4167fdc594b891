//! The relay fleet as the console reaches it: the registry in the fleet database (`CONSOLE_FLEET_DATABASE_URL`), connected on
//!   first use and kept: a fleet database that is down when the console starts is a 503 on the
//!   pages that need it, not a console that does not start. The fleet's failures in the
//!   console's words ([`Fleet::refused`]): a 400 naming the form field, a 404, a 409, a 503.
//!   The outbox database a page reads is [`crate::scope::Scope`].
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

use crate::error::{Error, Result};

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
    pub(crate) fn pool(&self, t: &Target) -> Result<PgPool> {
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
