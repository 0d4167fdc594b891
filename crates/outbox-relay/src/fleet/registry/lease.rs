//! The instances' side of the registry: the lease protocol of [`crate::fleet`]. Every lease
//! statement names the epoch it acts at: a [`claim`] bumps the epoch, so an older owner's renew,
//! release or report matches no row.

use std::time::Duration;

use outbox_support::secret::SecretUrl;

use super::{Error, Registry, State, state};

fn secs(d: Duration) -> f64 {
    d.as_secs_f64()
}

/// Instance `instance` is alive (its `seen_at` is now). Returns the live instances (seen within
/// `lease`), this one included, sorted.
pub async fn heartbeat(
    reg: &Registry,
    instance: &str,
    lease: Duration,
) -> Result<Vec<String>, Error> {
    let mut live: Vec<String> = sqlx::query_scalar(
        "with me as (insert into fleet_instances (id) values ($1) \
                     on conflict (id) do update set seen_at = now() returning id) \
         select id from fleet_instances \
          where id <> $1 and seen_at > now() - make_interval(secs => $2) \
         union select id from me",
    )
    .bind(instance)
    .bind(secs(lease))
    .fetch_all(&reg.pool)
    .await?;
    live.sort();
    Ok(live)
}

/// What an instance needs of the registry to plan a tick.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Overview {
    /// Databases someone must publish (active or draining).
    pub databases: usize,
    /// Those of them whose lease is free (no owner, or run out): claimable.
    pub free: Vec<String>,
}

/// The databases to share out and the claimable ones, in one statement.
pub async fn overview(reg: &Registry) -> Result<Overview, Error> {
    let rows: Vec<(String, bool)> = sqlx::query_as(
        "select name, owner is null or lease_until is null or lease_until < now() \
         from fleet_databases where state <> 'drained' order by name",
    )
    .fetch_all(&reg.pool)
    .await?;
    Ok(Overview {
        databases: rows.len(),
        free: rows
            .into_iter()
            .filter(|(_, free)| *free)
            .map(|(n, _)| n)
            .collect(),
    })
}

/// A lease just claimed: the database and the epoch the claim moved it to.
#[derive(Debug, Clone, PartialEq)]
pub struct Claimed {
    /// The database's name.
    pub name: String,
    /// Its events' shard.
    pub source_id: i32,
    /// The outbox database (password redacted when printed).
    pub url: SecretUrl,
    /// The outbox table.
    pub table: String,
    /// The exchange.
    pub exchange: String,
    /// The new epoch: the relay's fence (see [`crate::fleet::fence`]).
    pub epoch: i64,
    /// Active, or draining (a draining database whose owner vanished is claimed to finish it).
    pub state: State,
}

/// Claims `name` for `instance` for `lease` if its lease is free (no owner, or run out) and it
/// is not drained: `epoch = epoch + 1`. `None`: somebody holds it (or it is gone or drained).
///
/// One update: two instances claiming at once are ordered by the row lock, and the second
/// finds the lease taken when its `where` is evaluated again.
pub async fn claim(
    reg: &Registry,
    instance: &str,
    name: &str,
    lease: Duration,
) -> Result<Option<Claimed>, Error> {
    let row: Option<(String, i32, String, String, String, i64, String)> = sqlx::query_as(
        "update fleet_databases \
            set owner = $1, epoch = epoch + 1, lease_until = now() + make_interval(secs => $3) \
          where name = $2 and state <> 'drained' \
            and (owner is null or lease_until is null or lease_until < now()) \
         returning name, source_id, url, outbox_table, exchange, epoch, state",
    )
    .bind(instance)
    .bind(name)
    .bind(secs(lease))
    .fetch_optional(&reg.pool)
    .await?;
    row.map(|r| {
        Ok(Claimed {
            name: r.0,
            source_id: r.1,
            url: SecretUrl::new(r.2),
            table: r.3,
            exchange: r.4,
            epoch: r.5,
            state: state(&r.6)?,
        })
    })
    .transpose()
}

/// A lease still held after a [`renew`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Held {
    /// The database.
    pub name: String,
    /// The epoch it is held at.
    pub epoch: i64,
    /// Its state now (an operator may have started its drain).
    pub state: State,
}

/// Extends every lease in `held` (name, epoch) that `instance` still holds at that epoch by
/// `lease` from now, in one statement. A database not returned is lost (claimed by another
/// instance after the lease ran out, or removed): its relay must stop at once.
pub async fn renew(
    reg: &Registry,
    instance: &str,
    held: &[(String, i64)],
    lease: Duration,
) -> Result<Vec<Held>, Error> {
    if held.is_empty() {
        return Ok(Vec::new());
    }
    let (names, epochs): (Vec<String>, Vec<i64>) = held.iter().cloned().unzip();
    let rows: Vec<(String, i64, String)> = sqlx::query_as(
        "update fleet_databases d set lease_until = now() + make_interval(secs => $4) \
           from unnest($2::text[], $3::bigint[]) as h(name, epoch) \
          where d.name = h.name and d.epoch = h.epoch and d.owner = $1 \
         returning d.name, d.epoch, d.state",
    )
    .bind(instance)
    .bind(&names)
    .bind(&epochs)
    .bind(secs(lease))
    .fetch_all(&reg.pool)
    .await?;
    rows.into_iter()
        .map(|(name, epoch, s)| {
            Ok(Held {
                name,
                epoch,
                state: state(&s)?,
            })
        })
        .collect()
}

/// Gives the lease of `name` back (at `epoch`): another instance may claim it at once. False
/// when it was no longer this instance's at that epoch.
pub async fn release(
    reg: &Registry,
    instance: &str,
    name: &str,
    epoch: i64,
) -> Result<bool, Error> {
    give_back(
        reg,
        Owned {
            instance,
            name,
            epoch,
        },
        "",
        "",
    )
    .await
}

/// Marks the draining `name` drained and gives its lease back, at `epoch`: its relay finished
/// and confirmed what was in flight. False when the lease was no longer this instance's at that
/// epoch, or the database is not draining.
pub async fn mark_drained(
    reg: &Registry,
    instance: &str,
    name: &str,
    epoch: i64,
) -> Result<bool, Error> {
    let owned = Owned {
        instance,
        name,
        epoch,
    };
    give_back(reg, owned, "state = 'drained', ", " and state = 'draining'").await
}

/// A lease as its owner names it.
struct Owned<'a> {
    instance: &'a str,
    name: &'a str,
    epoch: i64,
}

/// Clears the owner of `owned` (also setting `set`) where it still holds the lease at its epoch
/// (and `only_if`): whether it did.
async fn give_back(
    reg: &Registry,
    owned: Owned<'_>,
    set: &'static str,
    only_if: &'static str,
) -> Result<bool, Error> {
    let sql = format!(
        "update fleet_databases set {set}owner = null, lease_until = null \
          where name = $2 and owner = $1 and epoch = $3{only_if}"
    );
    let done = sqlx::query(sqlx::AssertSqlSafe(sql))
        .bind(owned.instance)
        .bind(owned.name)
        .bind(owned.epoch)
        .execute(&reg.pool)
        .await?;
    Ok(done.rows_affected() == 1)
}

/// An owner's figures of one database.
#[derive(Debug, Clone, PartialEq)]
pub struct Report {
    /// The database.
    pub name: String,
    /// The epoch the reporter holds it at (a report of an older owner matches nothing).
    pub epoch: i64,
    /// Unsent rows.
    pub backlog: u64,
    /// Age of the oldest unsent row, seconds (`None`: none).
    pub oldest_unsent_secs: Option<f64>,
    /// The last failure, until the relay succeeds again (`None` clears it). Already free of the
    /// URL's password.
    pub last_error: Option<String>,
}

/// Records the owner's figures of its databases, in one statement. A last error keeps the time
/// it was first reported while it stays the same.
pub async fn report(reg: &Registry, instance: &str, reports: &[Report]) -> Result<(), Error> {
    if reports.is_empty() {
        return Ok(());
    }
    let names: Vec<&str> = reports.iter().map(|r| r.name.as_str()).collect();
    let epochs: Vec<i64> = reports.iter().map(|r| r.epoch).collect();
    let backlogs: Vec<i64> = reports
        .iter()
        .map(|r| i64::try_from(r.backlog).unwrap_or(i64::MAX))
        .collect();
    let ages: Vec<Option<f64>> = reports.iter().map(|r| r.oldest_unsent_secs).collect();
    let errors: Vec<Option<&str>> = reports.iter().map(|r| r.last_error.as_deref()).collect();
    sqlx::query(
        "update fleet_databases d \
            set backlog = r.backlog, oldest_unsent_secs = r.age, reported_at = now(), \
                last_error = r.error, \
                last_error_at = case when r.error is null then null \
                                     when r.error is not distinct from d.last_error \
                                       then d.last_error_at \
                                     else now() end \
           from unnest($2::text[], $3::bigint[], $4::bigint[], $5::float8[], $6::text[]) \
                  as r(name, epoch, backlog, age, error) \
          where d.name = r.name and d.epoch = r.epoch and d.owner = $1",
    )
    .bind(instance)
    .bind(&names)
    .bind(&epochs)
    .bind(&backlogs)
    .bind(&ages)
    .bind(&errors)
    .execute(&reg.pool)
    .await?;
    Ok(())
}
