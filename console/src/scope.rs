//! [`Scope`]: the outbox database a list, the audit or "where is" reads: one of the console's
//! orders shards (`shard=N`), or the database `db=` names, resolved by `outbox_ops::fleet`'s
//! `targets` as outboxctl's `--db` is (a fleet database's name with a fleet database, else
//! `shard-N`); an unknown name is a 400 naming `db`.

use outbox_ops::fleet as ops;
use sqlx::PgPool;

use crate::{
    error::{Error, Result},
    form::Fields,
    state::AppState,
};

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
