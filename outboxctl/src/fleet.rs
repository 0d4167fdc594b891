//! The relay fleet's registry as outboxctl reaches it (`--fleet-database-url` /
//! `FLEET_DATABASE_URL`), its failures in outboxctl's words (the flag to fix), and `--db NAME`
//! resolved to the shard an admin call names.

use outbox_ops::fleet::{Error, Registry, SecretUrl, registry::Error as RegistryError};

use outbox_ops::{audit::Sources, settings::ToolSettings};

use crate::{
    Failure, Result,
    cli::{Cli, Shard},
};

/// The fleet database, if one was given.
#[derive(Debug, Clone)]
pub struct Fleet {
    url: SecretUrl,
}

impl Fleet {
    /// `None` without a URL (an empty one counts as none).
    pub(crate) fn new(url: Option<&str>) -> Option<Self> {
        url.map(str::trim).filter(|u| !u.is_empty()).map(|u| Self {
            url: SecretUrl::new(u),
        })
    }

    /// The registry, its tables created if missing.
    pub async fn registry(&self) -> Result<Registry> {
        outbox_ops::fleet::connect(&self.url).await.map_err(failure)
    }
}

/// The registry of `fleet`, or the failure that says how to name one.
pub(crate) async fn required(fleet: Option<&Fleet>) -> Result<Registry> {
    match fleet {
        Some(f) => f.registry().await,
        None => Err(Failure::new(
            Failure::FAILED,
            "the fleet commands need the fleet database: pass --fleet-database-url or set \
             FLEET_DATABASE_URL (relay-svc's)",
        )),
    }
}

/// Read-only pools of the databases the audit and the trace read (the orders databases and
/// mail's of `ops`): every registered one of the fleet when `fleet` is given, else the orders
/// shards `ops` names; only `db` when given.
pub(crate) async fn connect(
    ops: &ToolSettings<Cli>,
    fleet: Option<&Fleet>,
    db: Option<&str>,
) -> Result<Sources> {
    let registry = match fleet {
        Some(f) => Some(f.registry().await?),
        None => None,
    };
    let targets = outbox_ops::fleet::targets(registry.as_ref(), &ops.orders_db, db)
        .await
        .map_err(failure)?;
    ops.connect_targets(&targets).await.map_err(|e| {
        let fleet_hint = match fleet {
            Some(_) => " (the fleet's databases: see --fleet-database-url / FLEET_DATABASE_URL)",
            None => "",
        };
        Failure::new(Failure::UNREACHABLE, format!("{e}{fleet_hint}"))
    })
}

/// The shard an admin call acts on: `--shard`, or the one `--db NAME` names (the fleet
/// database's source id, or a fixed deployment's shard), with the name for the output.
pub(crate) async fn shard(fleet: Option<&Fleet>, s: &Shard) -> Result<(u32, Option<String>)> {
    let Some(db) = s.db.as_deref() else {
        return Ok((s.shard, None));
    };
    let shard = match fleet {
        Some(f) => {
            let reg = f.registry().await?;
            let target = outbox_ops::fleet::targets(Some(&reg), &[], Some(db))
                .await
                .map_err(failure)?;
            target.first().map(|t| t.shard)
        }
        None => outbox_ops::fleet::fixed_shard(db),
    };
    match shard.and_then(|s| u32::try_from(s).ok()) {
        Some(n) => Ok((n, Some(db.trim().to_owned()))),
        None => Err(Failure::new(
            Failure::FAILED,
            format!(
                "--db: {db:?} is not an orders shard (shard-N or N); a fleet database's name \
                 needs --fleet-database-url / FLEET_DATABASE_URL"
            ),
        )),
    }
}

/// The registry's field as outboxctl's flag.
fn flag(field: &str) -> String {
    format!("--{}", field.replace('_', "-"))
}

/// A fleet action's failure in outboxctl's words: the flag to fix, or the database to reach.
pub(crate) fn failure(e: Error) -> Failure {
    match e {
        Error::InvalidArgument { field, reason } => {
            Failure::new(Failure::FAILED, format!("{}: {reason}", flag(field)))
        }
        Error::Unreachable { what, detail } => Failure::new(
            Failure::UNREACHABLE,
            format!("cannot reach {what}: {detail}"),
        ),
        Error::Registry(e) => match e {
            RegistryError::InvalidArgument { field, reason } => {
                Failure::new(Failure::FAILED, format!("{}: {reason}", flag(field)))
            }
            RegistryError::NotFound(_) => Failure::new(Failure::NOT_FOUND, e.to_string()),
            RegistryError::AlreadyExists { field, .. } => {
                Failure::new(Failure::FAILED, format!("{}: {e}", flag(field)))
            }
            RegistryError::NotDrained { ref name, .. } => Failure::new(
                Failure::FAILED,
                format!(
                    "{e}: `outboxctl fleet drain {name} --reason ...`, or `outboxctl fleet \
                     remove {name} --force --reason ...`"
                ),
            ),
            other => Failure::new(Failure::FAILED, other.to_string()),
        },
    }
}
