//! What the fleet's chaos run and its bench section share: a fresh fleet database with its
//! registry, and the registry's answer to "has the fleet settled?".

use std::collections::{BTreeMap, BTreeSet};

use anyhow::Context;
use outbox_relay::fleet::{
    assign,
    registry::{Registry, State},
};
use sqlx::postgres::PgPoolOptions;

/// Creates database `name` on the tests' server (empty).
pub async fn create_database(name: &str) -> anyhow::Result<()> {
    let admin = sqlx::PgPool::connect(&format!("{}/postgres", outbox_testkit::pg_server_url()))
        .await
        .context("connecting to PostgreSQL as admin")?;
    sqlx::query(sqlx::AssertSqlSafe(format!("create database \"{name}\"")))
        .execute(&admin)
        .await
        .with_context(|| format!("creating database {name}"))?;
    admin.close().await;
    Ok(())
}

/// A fresh fleet database `name` with the registry's tables; its URL and the registry.
pub async fn fleet_database(name: &str) -> anyhow::Result<(String, Registry)> {
    create_database(name).await?;
    let url = format!("{}/{name}", outbox_testkit::pg_server_url());
    let pool = PgPoolOptions::new()
        .max_connections(2)
        .connect(&url)
        .await
        .context("connecting to the fleet database")?;
    let registry = Registry::new(pool);
    registry.migrate().await?;
    Ok((url, registry))
}

/// Why the fleet has not settled (`None`: it has), as the registry says: a database to publish
/// (active or draining) without an owner among the `live` instances, or a live instance above
/// its share (⌈databases / instances⌉ + 1, the most the fleet lets one hold).
pub async fn unsettled(
    registry: &Registry,
    live: &BTreeSet<String>,
) -> anyhow::Result<Option<String>> {
    let entries = registry.list().await?;
    let to_publish: Vec<_> = entries
        .iter()
        .filter(|e| e.state != State::Drained)
        .collect();
    let mut held: BTreeMap<&str, usize> = BTreeMap::new();
    for e in &to_publish {
        match e.owner.as_deref() {
            Some(owner) if live.contains(owner) => *held.entry(owner).or_default() += 1,
            Some(owner) => return Ok(Some(format!("{} is held by {owner}", e.name))),
            None => return Ok(Some(format!("{} has no owner", e.name))),
        }
    }
    let share = assign::quota(to_publish.len(), live.len()) + 1;
    Ok(held
        .into_iter()
        .find(|(_, n)| *n > share)
        .map(|(owner, n)| format!("{owner} holds {n}, above its share of {share}")))
}
