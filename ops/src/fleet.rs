//! The relay fleet as operators run it: the registry's actions (add, drain, remove, list) with
//! the checks an operator's command needs before them, and the databases a scoped command
//! (`--db NAME`) or the fleet-wide audit reads.
//!
//! The registry itself (its tables, the audit row written with each effect, the URL's
//! redaction) is `outbox_relay::fleet::registry`'s; this module adds what only an operator's
//! action needs:
//! - the reason, checked by the same rule as the services' admin calls;
//! - `add`'s source-id check: a database whose producer already stamps its events with a shard
//!   (orders-svc's shards keep their index as their id) cannot join under another id, or its
//!   consumers would key the same chains twice ([`check_source_id`]);
//! - `--db NAME` resolved to a database ([`Target`]): through the registry in a fleet, or to the
//!   shard of a fixed deployment (orders-svc's `SHARDS`, relay-svc's `RELAY_SHARDS`).

use std::{collections::BTreeSet, str::FromStr, time::Duration};

use outbox::{TableName, wire::parse_shard};
pub use outbox_relay::fleet::registry;
pub use outbox_relay::fleet::registry::{By, Entry, NewDatabase, Registry, State};
pub use outbox_support::secret::SecretUrl;
use sqlx::{
    AssertSqlSafe, PgPool,
    postgres::{PgConnectOptions, PgPoolOptions},
};

/// How many of the newest rows of each outbox table `add` reads for the shard they carry: a
/// producer stamps every event alike, so a sample finds a disagreement as well as a full scan,
/// without reading a million-row backlog.
pub const STAMP_SAMPLE: i64 = 1000;

/// How long connecting to the fleet database or an outbox database may take.
pub const CONNECT_TIMEOUT: Duration = Duration::from_secs(5);

/// Why an operator's fleet action did not happen. `field` names the argument as the registry
/// does (`name`, `source_id`, `url`, `table`, `exchange`, `reason`, `db`): the tools word it as
/// their flag or form field.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// An argument is not acceptable; nothing changed.
    #[error("invalid {field}: {reason}")]
    InvalidArgument {
        /// The argument.
        field: &'static str,
        /// Why (free of any password).
        reason: String,
    },
    /// A database could not be reached (already free of its password).
    #[error("cannot reach {what}: {detail}")]
    Unreachable {
        /// Which database (its redacted URL).
        what: String,
        /// The driver's words, scrubbed.
        detail: String,
    },
    /// The registry refused or failed (not found, already there, not drained, ...).
    #[error(transparent)]
    Registry(#[from] registry::Error),
}

/// Connects to the fleet database and creates the registry's tables if missing (the relay
/// instances do the same on start: whichever comes first).
pub async fn connect(url: &SecretUrl) -> Result<Registry, Error> {
    let pool = pool(url, "the fleet database", false).await?;
    let reg = Registry::new(pool);
    reg.migrate().await?;
    Ok(reg)
}

/// A small pool of `url`; `read_only` sessions for the checks and the reads that must never
/// write.
async fn pool(url: &SecretUrl, what: &str, read_only: bool) -> Result<PgPool, Error> {
    let options = url
        .parse("url", "PostgreSQL URL", PgConnectOptions::from_str)
        .map_err(|e| Error::InvalidArgument {
            field: "url",
            reason: e.to_string(),
        })?;
    let options = if read_only {
        options.options([("default_transaction_read_only", "on")])
    } else {
        options
    };
    PgPoolOptions::new()
        .max_connections(2)
        .acquire_timeout(CONNECT_TIMEOUT)
        .connect_with(options)
        .await
        .map_err(|e| Error::Unreachable {
            what: format!("{what} ({url})"),
            detail: url.scrub(&e.to_string()),
        })
}

/// The operator's reason, by the rule of every admin call (required, bounded).
pub fn by(operator: Option<&str>, reason: &str) -> Result<By, Error> {
    let reason = outbox_kit::admin::reason(reason).map_err(|s| Error::InvalidArgument {
        field: "reason",
        reason: s.message().trim_start_matches("reason: ").to_owned(),
    })?;
    let who = operator
        .map(str::trim)
        .filter(|o| !o.is_empty())
        .unwrap_or("unknown");
    Ok(By {
        who: who
            .chars()
            .take(outbox_kit::admin::MAX_OPERATOR_CHARS)
            .collect(),
        reason,
    })
}

/// Registers `new` after checking it: its fields, that its database answers, and that its
/// source id agrees with the shard its producer stamps ([`check_source_id`]).
pub async fn add(reg: &Registry, new: &NewDatabase, by: &By) -> Result<(), Error> {
    new.validate()?;
    check_source_id(new).await?;
    reg.add(new, by).await?;
    Ok(())
}

/// Starts draining `name`; returns the state it had.
pub async fn drain(reg: &Registry, name: &str, by: &By) -> Result<State, Error> {
    Ok(reg.drain(name, by).await?)
}

/// Removes `name` (drained, or any state with `force`); returns the state it had. Its outbox
/// database is left as it is.
pub async fn remove(reg: &Registry, name: &str, force: bool, by: &By) -> Result<State, Error> {
    Ok(reg.remove(name, force, by).await?)
}

/// Every registered database with its owner, lease epoch, state and the owner's figures.
pub async fn list(reg: &Registry) -> Result<Vec<Entry>, Error> {
    Ok(reg.list().await?)
}

/// Refuses a source id that disagrees with the shard the database's existing events carry (the
/// `shard` header its producer stamps; absent means shard 0, the wire's rule). Consumers key
/// chains by (shard, type, id): a database published under another id than its producer
/// stamps would start every chain again. A database without events takes any id.
pub async fn check_source_id(new: &NewDatabase) -> Result<(), Error> {
    let table = TableName::parse(&new.table).map_err(|e| Error::InvalidArgument {
        field: "table",
        reason: e.to_string(),
    })?;
    let db = pool(&new.url, "the database to add", true).await?;
    let stamped = stamped_shards(&db, &table).await;
    db.close().await;
    let stamped = stamped.map_err(|e| Error::Unreachable {
        what: format!("the database to add ({})", new.url),
        detail: new.url.scrub(&e.to_string()),
    })?;
    let others: Vec<String> = stamped
        .iter()
        .filter(|s| parse_shard(s.as_deref()) != Ok(new.source_id))
        .map(|s| match s {
            Some(v) => format!("shard {v:?}"),
            None => "no shard header: 0".to_owned(),
        })
        .collect();
    if others.is_empty() {
        return Ok(());
    }
    Err(Error::InvalidArgument {
        field: "source_id",
        reason: format!(
            "{} disagrees with the shard its producer stamps on the events already in {} \
             ({}): a database keeps the id its events carry (orders-svc's shards their index \
             in SHARDS; no shard header means 0)",
            new.source_id,
            table.events(),
            others.join(", ")
        ),
    })
}

/// The distinct `shard` header values (`None`: no header) of the newest [`STAMP_SAMPLE`] rows
/// of the outbox, its quarantine and its published rows, of those tables that exist.
async fn stamped_shards(
    db: &PgPool,
    table: &TableName,
) -> Result<BTreeSet<Option<String>>, sqlx::Error> {
    let mut stamped = BTreeSet::new();
    for t in [table.events(), table.quarantine(), table.published()] {
        let exists: bool = sqlx::query_scalar("select to_regclass($1) is not null")
            .bind(&t)
            .fetch_one(db)
            .await?;
        if !exists {
            continue;
        }
        // The table name is a parsed TableName, never free text.
        let found: Vec<Option<String>> = sqlx::query_scalar(AssertSqlSafe(format!(
            "select distinct s from (select headers->>'shard' as s from {t} \
              order by seq desc limit {STAMP_SAMPLE}) newest"
        )))
        .fetch_all(db)
        .await?;
        stamped.extend(found);
    }
    Ok(stamped)
}

/// One outbox database a scoped command reads or acts on: its name, the shard its events
/// carry, and its URL.
#[derive(Debug, Clone, PartialEq)]
pub struct Target {
    /// The registry's name, or `shard-N` in a fixed deployment.
    pub name: String,
    /// The events' shard (the registry's source id, or the index in `SHARDS`).
    pub shard: i32,
    /// The database.
    pub url: SecretUrl,
}

/// The name of shard `index` of a fixed deployment (`--db shard-1`; `--db 1` means it too).
pub fn shard_name(index: usize) -> String {
    format!("shard-{index}")
}

/// The shard a fixed deployment's database name means (`shard-1` or `1`), if it is one.
pub fn fixed_shard(name: &str) -> Option<i32> {
    let name = name.trim();
    let index = name.strip_prefix("shard-").unwrap_or(name);
    index.parse::<i32>().ok().filter(|i| *i >= 0)
}

/// The databases a command reads: every registered one (by name) when `registry` is given, else
/// every orders shard of `fixed` (orders-svc's SHARDS, in order); only `db` when given (an
/// unknown name is an error naming `db`).
pub async fn targets(
    registry: Option<&Registry>,
    fixed: &[String],
    db: Option<&str>,
) -> Result<Vec<Target>, Error> {
    let all: Vec<Target> = match registry {
        Some(reg) => reg
            .list()
            .await?
            .into_iter()
            .map(|e| Target {
                name: e.name,
                shard: e.source_id,
                url: e.url,
            })
            .collect(),
        None => fixed
            .iter()
            .enumerate()
            .map(|(i, url)| Target {
                name: shard_name(i),
                shard: i as i32,
                url: SecretUrl::new(url.trim()),
            })
            .collect(),
    };
    let Some(db) = db else {
        return Ok(all);
    };
    let wanted = db.trim();
    let pick = all
        .iter()
        .find(|t| t.name == wanted || (registry.is_none() && fixed_shard(wanted) == Some(t.shard)));
    match pick {
        Some(t) => Ok(vec![t.clone()]),
        None => Err(Error::InvalidArgument {
            field: "db",
            reason: format!(
                "no database {wanted:?} {}: {}",
                if registry.is_some() {
                    "in the fleet"
                } else {
                    "among the orders shards"
                },
                if all.is_empty() {
                    "there is none".to_owned()
                } else {
                    all.iter()
                        .map(|t| t.name.as_str())
                        .collect::<Vec<_>>()
                        .join(", ")
                }
            ),
        }),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_fixed_deployments_names_are_its_shards() {
        assert_eq!(fixed_shard("shard-1"), Some(1));
        assert_eq!(fixed_shard(" 2 "), Some(2));
        assert_eq!(fixed_shard(&shard_name(7)), Some(7));
        for not_a_shard in ["tenant-acme", "shard-", "-1", "shard--1", ""] {
            assert_eq!(fixed_shard(not_a_shard), None, "{not_a_shard:?}");
        }
    }

    #[tokio::test]
    async fn db_picks_one_shard_of_a_fixed_deployment_or_names_the_ones_there_are() {
        let fixed = [
            "postgres://a/orders".to_owned(),
            "postgres://b/orders_s1".to_owned(),
        ];
        let all = targets(None, &fixed, None).await.expect("all");
        assert_eq!(
            all.iter()
                .map(|t| (t.name.as_str(), t.shard))
                .collect::<Vec<_>>(),
            [("shard-0", 0), ("shard-1", 1)]
        );
        for name in ["shard-1", "1"] {
            let one = targets(None, &fixed, Some(name)).await.expect("one");
            assert_eq!(one, [all[1].clone()], "{name}");
        }
        match targets(None, &fixed, Some("tenant-acme")).await {
            Err(Error::InvalidArgument { field, reason }) => {
                assert_eq!(field, "db");
                assert!(reason.contains("shard-0, shard-1"), "{reason}");
            }
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn the_reason_follows_the_admin_calls_rule() {
        let by = by(Some(" ana "), " INC-1 ").expect("a reason");
        assert_eq!((by.who.as_str(), by.reason.as_str()), ("ana", "INC-1"));
        for bad in ["", "   ", &"x".repeat(1001), "INC-1\0", "a\u{1b}[2Kb"] {
            assert!(
                matches!(
                    super::by(None, bad),
                    Err(Error::InvalidArgument {
                        field: "reason",
                        ..
                    })
                ),
                "{bad:?}"
            );
        }
    }
}
