-- The relay's read floor, from the outbox crate's second migration for table `outbox`
-- (outbox::TableName::read_floor_sql): relay-svc's reads and backlog figures start at the floor
-- instead of walking the rows it already relayed, which a pinned xmin horizon keeps from vacuum.

-- The relay's read floor: every seq below it is relayed, except the holes.
create sequence outbox_read_floor minvalue 1 start 1;

-- Rows below the floor still present: their aggregate is held or quarantined.
create table outbox_holes (seq bigint primary key);

-- A transaction id before the seq, for every inserting statement (see the relay's floor).
create function outbox_xid_first() returns trigger language plpgsql as $$
begin
    perform pg_current_xact_id();
    return null;
end $$;
create trigger outbox_xid_first before insert on outbox
    for each statement execute function outbox_xid_first();

-- One update per append: vacuum after a fixed number of dead rows.
alter table outbox_heads set (
    autovacuum_vacuum_scale_factor = 0,
    autovacuum_vacuum_threshold = 10000,
    autovacuum_vacuum_cost_delay = 0
);
