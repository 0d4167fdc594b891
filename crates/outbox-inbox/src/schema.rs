//! The inbox's tables for a configurable name, and the migration that creates them.
//!
//! For a prefix `P` (optionally `schema.P`) an inbox uses two tables:
//!
//! - `P_progress`: each aggregate's watermark, the seq of its last processed event. An
//!   aggregate's events are processed strictly in chain order, so "already processed" is exactly
//!   "seq <= watermark": deduplication never expires and the table holds one row per aggregate;
//! - `P_held`: events that arrived before their predecessor, kept until it is processed.
//!
//! Neither grows with the events processed: progress rows with the aggregates, held rows only
//! while their predecessor is missing. No retention is needed, and none may touch the progress
//! table (its rows are the deduplication record); see the README's "Retention and vacuum".
//!
//! A service that already has tables of this shape under other names (mail-svc's
//! `order_progress` and `held_events`, keyed by `order_id`) names them with
//! [`Tables::existing`] instead of migrating.
//!
//! sqlx's `migrate!` embeds files at compile time and cannot take a name, so the crate offers
//! both the SQL ([`Tables::migration_sql`], to paste into a migration of your own) and a ready
//! [`sqlx::migrate::Migrator`] ([`Tables::migrator`]) that keeps its own history table.

use std::borrow::Cow;

use sqlx::{
    AssertSqlSafe, SqlSafeStr,
    migrate::{Migration, MigrationType, Migrator},
};

use crate::Error;

/// The validated names of an inbox's tables and of their aggregate column.
///
/// Every name is one or two lowercase SQL identifiers (`[a-z_][a-z0-9_]*`, at most 40
/// characters each), so no quoting is ever needed and no name can smuggle SQL.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct Tables {
    schema: Option<String>,
    prefix: String,
    progress: String,
    held: String,
    aggregate_column: String,
}

/// Checks `name` (`table` or `schema.table`) with the outbox crates' one naming rule
/// ([`outbox::TableName::split_name`]) and splits it.
fn split(name: &str) -> Result<(Option<&str>, &str), Error> {
    outbox::TableName::split_name(name).map_err(|reason| Error::InvalidTableName {
        name: name.to_owned(),
        reason,
    })
}

/// Checks a column name: one identifier, no schema.
fn check_column(name: &str) -> Result<(), Error> {
    match split(name)? {
        (None, _) => Ok(()),
        (Some(_), _) => Err(Error::InvalidTableName {
            name: name.to_owned(),
            reason: "a column name has no schema part".to_owned(),
        }),
    }
}

impl Tables {
    /// The inbox named `prefix` or `schema.prefix`: tables `prefix_progress` and `prefix_held`,
    /// keyed by `aggregate_id`.
    ///
    /// ```
    /// use outbox_inbox::Tables;
    /// let t = Tables::new("billing.inbox")?;
    /// assert_eq!((t.progress(), t.held()), ("billing.inbox_progress", "billing.inbox_held"));
    /// assert!(Tables::new("Inbox; drop table x").is_err());
    /// # Ok::<(), outbox_inbox::Error>(())
    /// ```
    pub fn new(prefix: &str) -> Result<Self, Error> {
        let (schema, table) = split(prefix)?;
        let qualified = |suffix: &str| match schema {
            Some(s) => format!("{s}.{table}{suffix}"),
            None => format!("{table}{suffix}"),
        };
        Ok(Self {
            schema: schema.map(str::to_owned),
            prefix: table.to_owned(),
            progress: qualified("_progress"),
            held: qualified("_held"),
            aggregate_column: "aggregate_id".to_owned(),
        })
    }

    /// Tables a service created itself, with the columns of [`Tables::migration_sql`] except
    /// that the aggregate id column is called `aggregate_column` in both: the watermark table
    /// `progress` (`shard integer, aggregate_type text, aggregate_column bigint, last_seq bigint
    /// not null`, primary key `(shard, aggregate_type, aggregate_column)`) and the held table
    /// `held` (`shard integer, seq bigint, aggregate_type text, aggregate_column bigint,
    /// prev_seq bigint, event bytea, traceparent text, held_at timestamptz default now()`,
    /// primary key `(shard, seq)`). Such an inbox has no
    /// migrator of its own ([`Tables::migrator`] refuses it): its owner migrates it.
    pub fn existing(progress: &str, held: &str, aggregate_column: &str) -> Result<Self, Error> {
        split(progress)?;
        split(held)?;
        check_column(aggregate_column)?;
        Ok(Self {
            schema: None,
            prefix: String::new(),
            progress: progress.to_owned(),
            held: held.to_owned(),
            aggregate_column: aggregate_column.to_owned(),
        })
    }

    /// The watermark table, as written in SQL.
    pub fn progress(&self) -> &str {
        &self.progress
    }

    /// The held-events table, as written in SQL.
    pub fn held(&self) -> &str {
        &self.held
    }

    /// The aggregate id column of both tables.
    pub fn aggregate_column(&self) -> &str {
        &self.aggregate_column
    }

    /// The SQL of the crate's migrations for this name, in order: creates the schema (when
    /// named), the progress and held tables and their indexes, then keys them by chain (shard
    /// and aggregate). Paste it into a migration of your own when you want one migration
    /// history, or run [`Tables::migrator`].
    pub fn migration_sql(&self) -> String {
        format!(
            "{}\n{}\n{}",
            self.create_sql(),
            self.shard_sql(),
            self.aggregate_type_sql()
        )
    }

    /// Migration 1: the tables, keyed by aggregate and seq alone.
    fn create_sql(&self) -> String {
        let schema = match &self.schema {
            Some(s) => format!("create schema if not exists {s};\n"),
            None => String::new(),
        };
        let (progress, held, agg) = (&self.progress, &self.held, &self.aggregate_column);
        let index = self.index_prefix();
        format!(
            "{schema}\
-- Each aggregate's watermark: the seq of its last processed event. Events are processed in chain
-- order (prev_seq links), so \"already processed\" is exactly \"seq <= last_seq\".
create table {progress} (
    {agg} bigint primary key,
    last_seq bigint not null
);

-- Events that arrived before their predecessor, released (deleted and processed) in the
-- transaction that processes the predecessor.
create table {held} (
    seq         bigint primary key,
    {agg}       bigint      not null,
    prev_seq    bigint      not null,
    -- The event's payload as the consumer handed it over.
    event       bytea       not null,
    traceparent text,
    held_at     timestamptz not null default now()
);
create index {index}_successor on {held} ({agg}, prev_seq);
create index {index}_age on {held} (held_at);
"
        )
    }

    /// Migration 2: a sharded producer's seqs are unique per shard only, so a chain is
    /// (shard, aggregate) and an event (shard, seq). Existing rows are shard 0, as every event
    /// of an unsharded producer is.
    fn shard_sql(&self) -> String {
        let (progress, held, agg) = (&self.progress, &self.held, &self.aggregate_column);
        let in_schema = |name: String| match &self.schema {
            Some(s) => format!("{s}.{name}"),
            None => name,
        };
        let index = in_schema(self.index_prefix());
        // A primary key constraint is named after its table, without the schema.
        let progress_pkey = format!("{}_progress_pkey", self.prefix);
        let held_pkey = format!("{}_held_pkey", self.prefix);
        format!(
            "\
alter table {progress} add column shard integer not null default 0,
    drop constraint {progress_pkey}, add primary key (shard, {agg});
alter table {held} add column shard integer not null default 0,
    drop constraint {held_pkey}, add primary key (shard, seq);
drop index {index}_successor;
create index {}_successor on {held} (shard, {agg}, prev_seq);
",
            self.index_prefix()
        )
    }

    /// Migration 3: the outbox chains events per `(aggregate_type, aggregate_id)`, and types may
    /// share ids, so a chain is (shard, aggregate type, aggregate). Rows stored before have the
    /// empty type, which is what an envelope without an `aggregate_type` header carries; an
    /// inbox that received typed events before this migration sets their type itself (see the
    /// CHANGELOG).
    fn aggregate_type_sql(&self) -> String {
        let (progress, held, agg) = (&self.progress, &self.held, &self.aggregate_column);
        let index = self.index_prefix();
        let old_index = match &self.schema {
            Some(s) => format!("{s}.{index}"),
            None => index.clone(),
        };
        let progress_pkey = format!("{}_progress_pkey", self.prefix);
        format!(
            "\
alter table {progress} add column aggregate_type text not null default '',
    drop constraint {progress_pkey}, add primary key (shard, aggregate_type, {agg});
alter table {held} add column aggregate_type text not null default '';
drop index {old_index}_successor;
create index {index}_successor on {held} (shard, aggregate_type, {agg}, prev_seq);
"
        )
    }

    fn index_prefix(&self) -> String {
        if self.prefix.is_empty() {
            "held".to_owned()
        } else {
            format!("{}_held", self.prefix)
        }
    }

    /// A migrator that creates this inbox, recording its history in its own table
    /// (`_inbox_migrations_<prefix>` in the inbox's schema) so that it never conflicts with the
    /// caller's own `sqlx::migrate!` history. Run it next to your own migrator. Tables named
    /// with [`Tables::existing`] have none: [`Error::NoMigrator`].
    pub fn migrator(&self) -> Result<Migrator, Error> {
        if self.prefix.is_empty() {
            return Err(Error::NoMigrator {
                progress: self.progress.clone(),
            });
        }
        let migration = |version, description: &str, sql: String| {
            Migration::new(
                version,
                Cow::Owned(format!("{description} {}", self.progress)),
                MigrationType::Simple,
                AssertSqlSafe(sql).into_sql_str(),
                false,
            )
        };
        let migrations = vec![
            migration(1, "create inbox", self.create_sql()),
            migration(2, "key by shard", self.shard_sql()),
            migration(3, "key by aggregate type", self.aggregate_type_sql()),
        ];
        let mut migrator = Migrator::with_migrations(migrations);
        let history = match &self.schema {
            Some(s) => format!("{s}._inbox_migrations_{}", self.prefix),
            None => format!("_inbox_migrations_{}", self.prefix),
        };
        migrator.dangerous_set_table_name(history);
        if let Some(s) = &self.schema {
            migrator.create_schema(s.clone());
        }
        Ok(migrator)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_derive_from_the_prefix() {
        let t = Tables::new("inbox").expect("valid");
        assert_eq!(
            (t.progress(), t.held(), t.aggregate_column()),
            ("inbox_progress", "inbox_held", "aggregate_id")
        );
        let t = Tables::new("billing.inv").expect("valid");
        assert_eq!(t.held(), "billing.inv_held");
        let t = Tables::existing("order_progress", "held_events", "order_id").expect("valid");
        assert_eq!(t.aggregate_column(), "order_id");
        assert!(matches!(t.migrator(), Err(Error::NoMigrator { .. })));
    }

    #[test]
    fn bad_names_are_refused_with_the_name() {
        for bad in [
            "",
            "Inbox",
            "a.b.c",
            "1inbox",
            "in box",
            "x\"; drop",
            ".inbox",
        ] {
            let err = Tables::new(bad).expect_err(bad).to_string();
            assert!(err.contains("table name"), "{err}");
        }
        let err = Tables::existing("p", "h", "Order_Id").expect_err("column");
        assert!(err.to_string().contains("Order_Id"), "{err}");
    }
}
