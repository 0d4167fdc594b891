//! [`TableName`]: an outbox's table names, and the migration that creates its tables.

use std::{borrow::Cow, fmt};

use sqlx::{
    AssertSqlSafe, SqlSafeStr,
    migrate::{Migration, MigrationType, Migrator},
};

use crate::Error;

/// A validated outbox table name, `table` or `schema.table`.
///
/// Each part is a lowercase SQL identifier (`[a-z_][a-z0-9_]*`, at most 40 characters), so the
/// derived names (`T_heads`, `T_quarantine`) are valid too and no quoting is ever needed.
///
/// For a table `T` (optionally `schema.T`) the crate uses these tables:
///
/// - `T`: one row per event, appended in the writer's transaction, deleted once published;
/// - `T_heads`: each aggregate's latest seq (its chain head). The relay deletes published rows,
///   so the head cannot be derived from the rows present: it is kept here, durably, and its row
///   is the lock that serialises the appends of one aggregate;
/// - `T_quarantine`: rows a relay can never publish, with the reason;
/// - `T_read_floor` (a sequence) and `T_holes`: the relay's read floor, so that its reads and
///   backlog figures never walk the rows it already relayed (see outbox-relay's `floor` module):
///   behind a pinned xmin horizon (a `pg_dump`, a long report) those deleted rows cannot be
///   vacuumed, and a read from the head of the table would visit every one of them;
/// - `T_published`: the published rows, kept for a retention window (where an event went, and
///   replay), in one partition per UTC day that is dropped whole when it expires: no row of it
///   is ever deleted, so it leaves no dead rows behind a pinned horizon.
///
/// sqlx's `migrate!` embeds files at compile time and cannot take a name, so the crate offers
/// both the SQL ([`TableName::migration_sql`], to paste into a migration of your own) and a
/// ready [`sqlx::migrate::Migrator`] ([`TableName::migrator`]) that keeps its own history table.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct TableName {
    schema: Option<String>,
    table: String,
}

impl TableName {
    /// Checks `name`, one lowercase SQL identifier or `schema.name`, and splits it; the error says
    /// what is wrong. The one naming rule of the outbox crates' tables (the inbox's too): each part
    /// is `[a-z_][a-z0-9_]*`, at most 40 characters, so derived names stay valid and no quoting is
    /// ever needed.
    pub fn split_name(name: &str) -> Result<(Option<&str>, &str), String> {
        let (schema, table) = match name.split_once('.') {
            Some((s, t)) => (Some(s), t),
            None => (None, name),
        };
        for part in schema.into_iter().chain([table]) {
            let ok = !part.is_empty()
                && part.len() <= 40
                && part.starts_with(|c: char| c.is_ascii_lowercase() || c == '_')
                && part
                    .chars()
                    .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '_');
            if !ok {
                return Err(format!(
                    "{part:?} is not a lowercase SQL identifier of at most 40 characters ([a-z_][a-z0-9_]*)"
                ));
            }
        }
        Ok((schema, table))
    }

    /// Parses `table` or `schema.table`.
    ///
    /// ```
    /// use outbox::TableName;
    /// assert_eq!(TableName::parse("billing.outbox")?.heads(), "billing.outbox_heads");
    /// assert!(TableName::parse("Outbox; drop table x").is_err());
    /// # Ok::<(), outbox::Error>(())
    /// ```
    pub fn parse(name: &str) -> Result<Self, Error> {
        let (schema, table) = Self::split_name(name).map_err(|reason| Error::InvalidTableName {
            name: name.to_owned(),
            reason,
        })?;
        Ok(Self {
            schema: schema.map(str::to_owned),
            table: table.to_owned(),
        })
    }

    fn qualified(&self, suffix: &str) -> String {
        match &self.schema {
            Some(s) => format!("{s}.{}{suffix}", self.table),
            None => format!("{}{suffix}", self.table),
        }
    }

    /// The events table, as written in SQL (`outbox`, `billing.outbox`).
    pub fn events(&self) -> String {
        self.qualified("")
    }

    /// The chain-head table (`T_heads`).
    pub fn heads(&self) -> String {
        self.qualified("_heads")
    }

    /// The quarantine table (`T_quarantine`).
    pub fn quarantine(&self) -> String {
        self.qualified("_quarantine")
    }

    /// The relay's read floor (`T_read_floor`), a sequence: every seq below its value is relayed
    /// or one of the [`TableName::holes`].
    pub fn read_floor(&self) -> String {
        self.qualified("_read_floor")
    }

    /// Rows below the read floor that are still present (`T_holes`): their aggregate is held or
    /// quarantined.
    pub fn holes(&self) -> String {
        self.qualified("_holes")
    }

    /// The published rows, kept for a retention window (`T_published`, partitioned by day).
    pub fn published(&self) -> String {
        self.qualified("_published")
    }

    /// The function that creates the coming days' partitions of [`TableName::published`] and
    /// drops the expired ones (`T_published_roll(keep interval)`).
    pub fn published_roll(&self) -> String {
        self.qualified("_published_roll")
    }

    /// The `LISTEN`/`NOTIFY` channel of this outbox: `T_events` (`outbox_events` for `outbox`),
    /// without the schema (channels are per database).
    pub fn notify_channel(&self) -> String {
        format!("{}_events", self.table)
    }

    /// The schema, when the name has one.
    pub fn schema(&self) -> Option<&str> {
        self.schema.as_deref()
    }

    /// The SQL of the crate's migrations for this name, in one text: creates the schema (when
    /// named), the events, heads and quarantine tables and their index
    /// ([`TableName::create_sql`]), the relay's read floor ([`TableName::read_floor_sql`]),
    /// then the published rows and the heads' append time ([`TableName::published_sql`]).
    /// Paste it into a migration of your own when you want one migration history, or run
    /// [`TableName::migrator`].
    pub fn migration_sql(&self) -> String {
        format!(
            "{}\n{}\n{}",
            self.create_sql(),
            self.read_floor_sql(),
            self.published_sql()
        )
    }

    /// The SQL of the crate's first migration: the schema (when named), the events, heads and
    /// quarantine tables and their index.
    pub fn create_sql(&self) -> String {
        let schema = match &self.schema {
            Some(s) => format!("create schema if not exists {s};\n"),
            None => String::new(),
        };
        let (events, heads, quarantine) = (self.events(), self.heads(), self.quarantine());
        let index = format!("{}_quarantine_aggregate_id", self.table);
        let trigger = self.heads_trigger_sql();
        format!(
            "{schema}\
-- One row per event, appended in the writer's transaction, deleted by the relay once the
-- broker confirmed it. Read it by the rows present, never by a seq high-water mark: rows commit
-- out of seq order.
create table {events} (
    seq            bigint generated always as identity primary key,
    aggregate_type text        not null,
    aggregate_id   bigint      not null,
    event_type     text        not null,
    -- The aggregate's previous event (null for its first): consumers apply events in this chain.
    prev_seq       bigint,
    routing_key    text        not null,
    content_type   text        not null,
    -- Extra message headers, a JSON object of strings (null: none).
    headers        jsonb,
    payload        bytea       not null,
    -- W3C trace context of the work that appended the event.
    traceparent    text,
    created_at     timestamptz not null default clock_timestamp()
) with (
    -- Rows live for milliseconds: vacuum after a fixed number of dead rows, not a fraction of a
    -- table that is nearly always empty.
    autovacuum_vacuum_scale_factor = 0,
    autovacuum_vacuum_threshold = 10000,
    autovacuum_vacuum_cost_delay = 0
);

-- Each aggregate's latest seq. Kept apart from the events because the relay deletes them; its
-- row lock serialises the appends of one aggregate.
create table {heads} (
    aggregate_type text   not null,
    aggregate_id   bigint not null,
    last_seq       bigint,
    primary key (aggregate_type, aggregate_id)
);

-- Rows a relay can never publish, with why. Their aggregate's later events wait until an
-- operator moves the row back (see the crate README).
create table {quarantine} (
    seq            bigint      primary key,
    aggregate_type text        not null,
    aggregate_id   bigint      not null,
    event_type     text        not null,
    prev_seq       bigint,
    routing_key    text,
    content_type   text,
    headers        jsonb,
    payload        bytea       not null,
    traceparent    text,
    created_at     timestamptz not null,
    reason         text        not null,
    quarantined_at timestamptz not null default clock_timestamp()
);
create index {index} on {quarantine} (aggregate_id);
{trigger}"
        )
    }

    /// The SQL of the trigger that moves each aggregate's head (`T_heads`) with every insert
    /// into the events table, by whoever inserts: [`crate::Outbox::append`], a row an operator
    /// moves back from quarantine, or a writer that predates the crate. Part of
    /// [`TableName::migration_sql`]; run it alone when adopting an existing outbox table.
    ///
    /// One statement-level upsert per insert statement (not per row), so a set-based append of
    /// many events costs one more statement inside the database, not one per event. `greatest`
    /// keeps a head from going back when an older row is re-inserted.
    pub fn heads_trigger_sql(&self) -> String {
        let (events, heads) = (self.events(), self.heads());
        let function = self.qualified("_move_heads");
        let name = format!("{}_move_heads", self.table);
        format!(
            "create function {function}() returns trigger language plpgsql as $$
begin
    insert into {heads} as h (aggregate_type, aggregate_id, last_seq)
    select aggregate_type, aggregate_id, max(seq) from inserted group by 1, 2
    on conflict (aggregate_type, aggregate_id)
        do update set last_seq = greatest(h.last_seq, excluded.last_seq);
    return null;
end $$;
create trigger {name} after insert on {events}
    referencing new table as inserted
    for each statement execute function {function}();
"
        )
    }

    /// The SQL of the crate's second migration: the relay's read floor and what it relies on.
    ///
    /// - `T_read_floor`, a sequence holding the floor the leading relay reached, for the backlog
    ///   figures of every instance. A sequence because `setval` writes in place: moving the floor
    ///   leaves no dead row behind, however long the xmin horizon stays pinned.
    /// - `T_holes`: the rows below the floor still present (held or quarantined aggregates);
    ///   few, and rarely changed.
    /// - A statement trigger that gives every inserting transaction its transaction id *before*
    ///   the insert draws its seq: the relay moves its floor past a seq only once every
    ///   transaction that was running when the seq was handed out has ended, and a transaction
    ///   without an id is invisible to that wait.
    /// - Vacuum settings for the heads table, updated by every append.
    ///
    /// The seq must come from the column's own sequence with `cache 1` (the default): a cached
    /// range would hand out seqs below the sequence's value later.
    pub fn read_floor_sql(&self) -> String {
        let (events, heads, floor, holes) =
            (self.events(), self.heads(), self.read_floor(), self.holes());
        let function = self.qualified("_xid_first");
        let name = format!("{}_xid_first", self.table);
        format!(
            "-- The relay's read floor: every seq below it is relayed, except the holes.
create sequence {floor} minvalue 1 start 1;

-- Rows below the floor still present: their aggregate is held or quarantined.
create table {holes} (seq bigint primary key);

-- A transaction id before the seq, for every inserting statement (see the relay's floor).
create function {function}() returns trigger language plpgsql as $$
begin
    perform pg_current_xact_id();
    return null;
end $$;
create trigger {name} before insert on {events}
    for each statement execute function {function}();

-- One update per append: vacuum after a fixed number of dead rows.
alter table {heads} set (
    autovacuum_vacuum_scale_factor = 0,
    autovacuum_vacuum_threshold = 10000,
    autovacuum_vacuum_cost_delay = 0
);
"
        )
    }

    /// The SQL of the crate's third migration: what an audit and a replay need.
    ///
    /// - `T_heads.appended_at`: when each aggregate's head last moved (set by the heads trigger,
    ///   which this migration replaces). Not indexed, so the update stays a HOT update.
    /// - `T_published`: every row the relay published, with the time its confirm was recorded
    ///   (`published_at`), written by the relay's delete in the same statement. Partitioned by
    ///   `published_at`, one partition per UTC day, indexed by aggregate (and a BRIN index by
    ///   seq). Nothing deletes from it: `T_published_roll(keep)` creates the partitions of today
    ///   and the next two days and drops those whose whole day is older than `keep`, so storage
    ///   is bounded by the retention window, not by the work done, and no dead row is ever left
    ///   behind a pinned xmin horizon. The relay runs it (see outbox-relay's
    ///   `Settings::published_retention`); its locks wait at most 200 ms, and a roll that cannot
    ///   get them is retried later (the partitions are made two days ahead).
    pub fn published_sql(&self) -> String {
        let (heads, published, roll) = (self.heads(), self.published(), self.published_roll());
        let move_heads = self.qualified("_move_heads");
        let table = &self.table;
        format!(
            "-- When each aggregate's head last moved (the audit's \"since when\"); not indexed: the
-- update stays HOT.
alter table {heads} add column appended_at timestamptz;

create or replace function {move_heads}() returns trigger language plpgsql as $$
begin
    insert into {heads} as h (aggregate_type, aggregate_id, last_seq, appended_at)
    select aggregate_type, aggregate_id, max(seq), clock_timestamp() from inserted group by 1, 2
    on conflict (aggregate_type, aggregate_id)
        do update set last_seq = greatest(h.last_seq, excluded.last_seq),
                      appended_at = case when excluded.last_seq > h.last_seq
                                         then excluded.appended_at else h.appended_at end;
    return null;
end $$;

-- The published rows, kept for a retention window: one partition per UTC day, dropped whole.
create table {published} (
    seq            bigint      not null,
    aggregate_type text        not null,
    aggregate_id   bigint      not null,
    event_type     text        not null,
    prev_seq       bigint,
    -- Nullable as in an adopted outbox (orders-svc's first one), where they may be.
    routing_key    text,
    content_type   text,
    headers        jsonb,
    payload        bytea       not null,
    traceparent    text,
    created_at     timestamptz not null,
    -- When the relay recorded the broker's confirm (its delete of the row).
    published_at   timestamptz not null
) partition by range (published_at);
create index {table}_published_aggregate on {published} (aggregate_type, aggregate_id, seq);
create index {table}_published_seq on {published} using brin (seq);
-- An audit reads what was published since its last pass.
create index {table}_published_at on {published} using brin (published_at);

-- Creates the partitions of today and the next two days (UTC) and drops those whose day ended
-- more than `keep` ago. Returns what it did. Its locks wait at most 200 ms: a roll that would
-- queue writers behind a long reader fails instead and is retried.
create function {roll}(keep interval) returns setof text language plpgsql as $$
declare
    today date := (now() at time zone 'utc')::date;
    day date;
    part text;
begin
    perform set_config('lock_timeout', '200ms', true);
    for day in select d::date from generate_series(today, today + 2, interval '1 day') d loop
        part := '{published}_p' || to_char(day, 'YYYYMMDD');
        if to_regclass(part) is null then
            execute format('create table %s partition of {published} for values from (%L) to (%L)',
                           part, day::timestamp at time zone 'utc',
                           (day + 1)::timestamp at time zone 'utc');
            return next 'created ' || part;
        end if;
    end loop;
    for part in
        select c.oid::regclass::text from pg_inherits i join pg_class c on c.oid = i.inhrelid
        where i.inhparent = '{published}'::regclass
          and (to_date(right(c.relname, 8), 'YYYYMMDD') + 1)::timestamp at time zone 'utc'
              <= now() - keep
    loop
        execute format('drop table %s', part);
        return next 'dropped ' || part;
    end loop;
end $$;
-- Today's partitions now, so that a relay can publish before its first roll.
select {roll}(interval '7 days');
"
        )
    }

    /// A migrator that creates this outbox, recording its history in its own table
    /// (`_outbox_migrations_<table>` in the outbox's schema) so that it never conflicts with the
    /// caller's own `sqlx::migrate!` history. Run it next to your own migrator.
    pub fn migrator(&self) -> Migrator {
        let migration = |version, description: String, sql: String| {
            Migration::new(
                version,
                Cow::Owned(description),
                MigrationType::Simple,
                AssertSqlSafe(sql).into_sql_str(),
                false,
            )
        };
        let mut migrator = Migrator::with_migrations(vec![
            migration(
                1,
                format!("create outbox {}", self.events()),
                self.create_sql(),
            ),
            migration(
                2,
                format!("read floor of {}", self.events()),
                self.read_floor_sql(),
            ),
            migration(
                3,
                format!("published rows of {}", self.events()),
                self.published_sql(),
            ),
        ]);
        let history = match &self.schema {
            Some(s) => format!("{s}._outbox_migrations_{}", self.table),
            None => format!("_outbox_migrations_{}", self.table),
        };
        migrator.dangerous_set_table_name(history);
        if let Some(s) = &self.schema {
            migrator.create_schema(s.clone());
        }
        migrator
    }
}

impl fmt::Display for TableName {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.events())
    }
}

impl std::str::FromStr for TableName {
    type Err = Error;
    fn from_str(s: &str) -> Result<Self, Error> {
        Self::parse(s)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_derive_from_the_table() {
        let t = TableName::parse("outbox").expect("valid");
        assert_eq!(
            (t.events(), t.heads(), t.quarantine(), t.notify_channel()),
            (
                "outbox".into(),
                "outbox_heads".into(),
                "outbox_quarantine".into(),
                "outbox_events".into()
            )
        );
        let t = TableName::parse("billing.inv_outbox").expect("valid");
        assert_eq!(t.quarantine(), "billing.inv_outbox_quarantine");
        assert_eq!(t.notify_channel(), "inv_outbox_events");
    }

    #[test]
    fn bad_names_are_refused_with_the_name() {
        for bad in [
            "",
            "Outbox",
            "a.b.c",
            "1outbox",
            "out box",
            "x\"; drop",
            ".outbox",
            &"a".repeat(41),
        ] {
            let err = TableName::parse(bad).expect_err(bad).to_string();
            assert!(err.contains("table name"), "{err}");
        }
    }
}
