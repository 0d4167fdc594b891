//! The fleet's registry: the outbox databases a fleet of relay instances publishes, their
//! leases, the live instances and the operators' audit, in tables of the fleet database
//! (`FLEET_DATABASE_URL`). Every statement of the fleet's coordination is here.
//!
//! - **Operators** ([`Registry::add`], [`Registry::drain`], [`Registry::remove`],
//!   [`Registry::list`]): each action writes its audit row (`fleet_actions`) in the same
//!   transaction as its effect. A URL's password is never printed: entries hold it as a
//!   [`SecretUrl`], whose `Display` and `Debug` redact it.
//! - **Instances** ([`heartbeat`], [`overview`], [`claim`], [`renew`], [`release`],
//!   [`mark_drained`], [`report`]): the lease protocol of [`crate::fleet`]. Every lease
//!   statement names the epoch it acts at: a [`claim`] bumps the epoch, so an older owner's
//!   renew, release or report matches no row.
//!
//! Time is the fleet database's (`now()`): one clock for every instance's leases.

use std::{fmt, str::FromStr};

use chrono::{DateTime, Utc};
use outbox_support::secret::SecretUrl;
use sqlx::{PgPool, postgres::PgConnectOptions};

/// An advisory-lock key of the migration ("fleet-mg" in ASCII): concurrent instances starting
/// together create the tables one after the other.
const MIGRATION_LOCK_KEY: i64 = 0x666c_6565_742d_6d67;

/// The registry's tables. Idempotent (`if not exists`) rather than a versioned migration: the
/// fleet database may be a database of the user's that has a migration history of its own.
const MIGRATION: &str = "
create table if not exists fleet_databases (
    -- A stable name (operators' commands and the metrics' `db` label use it).
    name               text primary key check (name ~ '^[a-z0-9][a-z0-9_-]{0,62}$'),
    -- The events' shard: the id consumers key chains by.
    source_id          integer not null unique check (source_id >= 0),
    -- May carry a password: never printed.
    url                text not null,
    outbox_table       text not null default 'outbox',
    exchange           text not null,
    state              text not null default 'active'
                         check (state in ('active', 'draining', 'drained')),
    -- The lease: its holder, its epoch (bumped by every claim) and its end.
    owner              text,
    epoch              bigint not null default 0,
    lease_until        timestamptz,
    -- The owner's reports.
    last_error         text,
    last_error_at      timestamptz,
    backlog            bigint,
    oldest_unsent_secs double precision,
    reported_at        timestamptz,
    added_at           timestamptz not null default now()
);
create table if not exists fleet_instances (
    id         text primary key,
    started_at timestamptz not null default now(),
    -- Live while seen within a lease.
    seen_at    timestamptz not null default now()
);
create table if not exists fleet_actions (
    id       bigint generated always as identity primary key,
    at       timestamptz not null default now(),
    actor    text not null,
    action   text not null,
    database text not null,
    reason   text not null default '',
    detail   text not null default ''
);
";

/// What a registry operation can fail with.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// An argument is not acceptable; `field` names it.
    #[error("invalid {field}: {reason}")]
    InvalidArgument {
        /// The argument.
        field: &'static str,
        /// Why.
        reason: String,
    },
    /// No database of this name is registered.
    #[error("no database {0:?} in the fleet")]
    NotFound(String),
    /// A database with this name or source id is registered already (`field` says which).
    #[error("a database with this {field} is in the fleet already: {value}")]
    AlreadyExists {
        /// `name` or `source_id`.
        field: &'static str,
        /// The value.
        value: String,
    },
    /// `remove` of a database that is not drained (drain it first, or force).
    #[error("database {name:?} is {state}, not drained: drain it first (or force the removal)")]
    NotDrained {
        /// The database.
        name: String,
        /// Its state.
        state: State,
    },
    /// The fleet database failed.
    #[error("fleet database: {0}")]
    Db(#[from] sqlx::Error),
}

/// A registered database's state.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum State {
    /// Published by its owner.
    Active,
    /// Its owner takes no new rows, finishes what is in flight, then marks it drained.
    Draining,
    /// Nobody publishes it; it may be removed.
    Drained,
}

impl State {
    /// The name stored and shown: `active`, `draining`, `drained`.
    pub fn as_str(self) -> &'static str {
        match self {
            State::Active => "active",
            State::Draining => "draining",
            State::Drained => "drained",
        }
    }
}

impl fmt::Display for State {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl FromStr for State {
    type Err = String;

    fn from_str(s: &str) -> Result<Self, String> {
        match s {
            "active" => Ok(State::Active),
            "draining" => Ok(State::Draining),
            "drained" => Ok(State::Drained),
            other => Err(format!("unknown state {other:?}")),
        }
    }
}

fn state(s: &str) -> Result<State, Error> {
    s.parse().map_err(|reason| {
        Error::Db(sqlx::Error::Decode(
            format!("fleet_databases.state: {reason}").into(),
        ))
    })
}

/// A database to add to the fleet.
#[derive(Debug, Clone)]
pub struct NewDatabase {
    /// Its stable name: 1 to 63 of `a-z 0-9 _ -`, starting with a letter or digit.
    pub name: String,
    /// Its events' shard (what consumers key chains by); unique in the fleet, at least 0.
    pub source_id: i32,
    /// The outbox database.
    pub url: SecretUrl,
    /// The outbox table (`outbox`, `billing.outbox`).
    pub table: String,
    /// The topic exchange its events go to.
    pub exchange: String,
}

impl NewDatabase {
    /// Checks every field; the error names the first bad one.
    pub fn validate(&self) -> Result<(), Error> {
        let invalid = |field, reason: String| Err(Error::InvalidArgument { field, reason });
        let name_ok = !self.name.is_empty()
            && self.name.len() <= 63
            && self
                .name
                .bytes()
                .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'_' || b == b'-')
            && self
                .name
                .bytes()
                .next()
                .is_some_and(|b| b.is_ascii_lowercase() || b.is_ascii_digit());
        if !name_ok {
            return invalid(
                "name",
                format!(
                    "{:?}: 1 to 63 of a-z, 0-9, '_' and '-', starting with a letter or digit",
                    self.name
                ),
            );
        }
        if self.source_id < 0 {
            return invalid("source_id", format!("{} is negative", self.source_id));
        }
        if !["postgres://", "postgresql://"]
            .iter()
            .any(|scheme| self.url.expose().starts_with(scheme))
        {
            return invalid(
                "url",
                format!("{}: not a postgres:// or postgresql:// URL", self.url),
            );
        }
        if let Err(e) = self
            .url
            .parse("url", "PostgreSQL URL", PgConnectOptions::from_str)
        {
            return invalid("url", e.to_string());
        }
        if let Err(e) = outbox::TableName::parse(&self.table) {
            return invalid("table", e.to_string());
        }
        if self.exchange.is_empty() || self.exchange.len() > 255 {
            return invalid("exchange", "must be 1 to 255 bytes long".into());
        }
        Ok(())
    }
}

/// Who did an operator action, and why (the audit row's).
#[derive(Debug, Clone, Default)]
pub struct By {
    /// The operator (a user, a token's name, `outboxctl`).
    pub who: String,
    /// Why, in the operator's words (may be empty).
    pub reason: String,
}

/// One registered database as [`Registry::list`] shows it.
#[derive(Debug, Clone, PartialEq)]
pub struct Entry {
    /// Its stable name.
    pub name: String,
    /// Its events' shard.
    pub source_id: i32,
    /// The outbox database: printed with the password redacted.
    pub url: SecretUrl,
    /// The outbox table.
    pub table: String,
    /// The exchange.
    pub exchange: String,
    /// Its state.
    pub state: State,
    /// The instance holding its lease, if the lease has not run out.
    pub owner: Option<String>,
    /// The lease's epoch (bumped by every claim).
    pub epoch: i64,
    /// When the lease runs out.
    pub lease_until: Option<DateTime<Utc>>,
    /// The owner's last reported error (a database down, a password refused), with when.
    pub last_error: Option<(String, DateTime<Utc>)>,
    /// Unsent rows, as the owner last reported.
    pub backlog: Option<i64>,
    /// Age of the oldest unsent row, seconds, as the owner last reported.
    pub oldest_unsent_secs: Option<f64>,
    /// When the owner last reported.
    pub reported_at: Option<DateTime<Utc>>,
    /// When it was added.
    pub added_at: DateTime<Utc>,
}

/// The registry in a fleet database.
#[derive(Debug, Clone)]
pub struct Registry {
    pool: PgPool,
}

type EntryRow = (
    String,
    i32,
    String,
    String,
    String,
    String,
    Option<String>,
    i64,
    Option<DateTime<Utc>>,
    Option<String>,
    Option<DateTime<Utc>>,
    Option<i64>,
    Option<f64>,
    Option<DateTime<Utc>>,
    DateTime<Utc>,
);

impl Registry {
    /// The registry in the database `pool` connects to (run [`Registry::migrate`] once first).
    pub fn new(pool: PgPool) -> Self {
        Self { pool }
    }

    /// The fleet database's pool.
    pub fn pool(&self) -> &PgPool {
        &self.pool
    }

    /// Creates the registry's tables if missing (any number of instances may run it at once).
    pub async fn migrate(&self) -> Result<(), Error> {
        let mut tx = self.pool.begin().await?;
        sqlx::query("select pg_advisory_xact_lock($1)")
            .bind(MIGRATION_LOCK_KEY)
            .execute(&mut *tx)
            .await?;
        sqlx::raw_sql(MIGRATION).execute(&mut *tx).await?;
        tx.commit().await?;
        Ok(())
    }

    /// Registers `new` as `active`: an instance claims it within two lease periods.
    pub async fn add(&self, new: &NewDatabase, by: &By) -> Result<(), Error> {
        new.validate()?;
        let mut tx = self.pool.begin().await?;
        let added = sqlx::query(
            "insert into fleet_databases (name, source_id, url, outbox_table, exchange) \
             values ($1, $2, $3, $4, $5) on conflict do nothing",
        )
        .bind(&new.name)
        .bind(new.source_id)
        .bind(new.url.expose())
        .bind(&new.table)
        .bind(&new.exchange)
        .execute(&mut *tx)
        .await?;
        if added.rows_affected() == 0 {
            let name_taken: bool =
                sqlx::query_scalar("select exists (select from fleet_databases where name = $1)")
                    .bind(&new.name)
                    .fetch_one(&mut *tx)
                    .await?;
            return Err(if name_taken {
                Error::AlreadyExists {
                    field: "name",
                    value: new.name.clone(),
                }
            } else {
                Error::AlreadyExists {
                    field: "source_id",
                    value: new.source_id.to_string(),
                }
            });
        }
        let detail = format!(
            "source_id={} url={} table={} exchange={}",
            new.source_id, new.url, new.table, new.exchange
        );
        audit(&mut tx, by, "add", &new.name, &detail).await?;
        tx.commit().await?;
        Ok(())
    }

    /// Starts draining `name`: its owner takes no new rows, finishes and confirms what is in
    /// flight, then marks it drained. Returns the state it had (draining or drained again is
    /// no change).
    pub async fn drain(&self, name: &str, by: &By) -> Result<State, Error> {
        let mut tx = self.pool.begin().await?;
        let was = locked_state(&mut tx, name).await?;
        if was == State::Active {
            sqlx::query("update fleet_databases set state = 'draining' where name = $1")
                .bind(name)
                .execute(&mut *tx)
                .await?;
        }
        audit(&mut tx, by, "drain", name, &format!("was {was}")).await?;
        tx.commit().await?;
        Ok(was)
    }

    /// Removes `name` from the registry: only a drained one unless `force` (a forced removal
    /// of a database still published: its owner finds its lease gone at its next renewal and
    /// stops). The outbox database itself is never touched.
    pub async fn remove(&self, name: &str, force: bool, by: &By) -> Result<State, Error> {
        let mut tx = self.pool.begin().await?;
        let was = locked_state(&mut tx, name).await?;
        if was != State::Drained && !force {
            return Err(Error::NotDrained {
                name: name.to_owned(),
                state: was,
            });
        }
        sqlx::query("delete from fleet_databases where name = $1")
            .bind(name)
            .execute(&mut *tx)
            .await?;
        let action = if force { "remove --force" } else { "remove" };
        audit(&mut tx, by, action, name, &format!("was {was}")).await?;
        tx.commit().await?;
        Ok(was)
    }

    /// Every registered database, by name; an owner whose lease ran out shows as none.
    pub async fn list(&self) -> Result<Vec<Entry>, Error> {
        let rows: Vec<EntryRow> = sqlx::query_as(
            "select name, source_id, url, outbox_table, exchange, state, \
                    case when lease_until > now() then owner end, epoch, \
                    case when lease_until > now() then lease_until end, \
                    last_error, last_error_at, backlog, oldest_unsent_secs, reported_at, added_at \
             from fleet_databases order by name",
        )
        .fetch_all(&self.pool)
        .await?;
        rows.into_iter()
            .map(|r| {
                Ok(Entry {
                    name: r.0,
                    source_id: r.1,
                    url: SecretUrl::new(r.2),
                    table: r.3,
                    exchange: r.4,
                    state: state(&r.5)?,
                    owner: r.6,
                    epoch: r.7,
                    lease_until: r.8,
                    last_error: r.9.zip(r.10),
                    backlog: r.11,
                    oldest_unsent_secs: r.12,
                    reported_at: r.13,
                    added_at: r.14,
                })
            })
            .collect()
    }
}

/// The state of `name`, its row locked for the transaction: orders an operator's change
/// against a concurrent one and against the owner's `mark_drained`.
async fn locked_state(tx: &mut sqlx::PgConnection, name: &str) -> Result<State, Error> {
    let was: Option<String> =
        sqlx::query_scalar("select state from fleet_databases where name = $1 for update")
            .bind(name)
            .fetch_optional(tx)
            .await?;
    state(&was.ok_or_else(|| Error::NotFound(name.to_owned()))?)
}

/// The operators' audit row, in the transaction of the action's effect.
async fn audit(
    tx: &mut sqlx::PgConnection,
    by: &By,
    action: &str,
    database: &str,
    detail: &str,
) -> Result<(), Error> {
    sqlx::query(
        "insert into fleet_actions (actor, action, database, reason, detail) \
         values ($1, $2, $3, $4, $5)",
    )
    .bind(&by.who)
    .bind(action)
    .bind(database)
    .bind(&by.reason)
    .bind(detail)
    .execute(tx)
    .await?;
    Ok(())
}

mod lease;

pub use lease::{
    Claimed, Held, Overview, Report, claim, heartbeat, mark_drained, overview, release, renew,
    report,
};
