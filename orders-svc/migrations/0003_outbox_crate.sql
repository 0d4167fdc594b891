-- Brings the outbox of migrations 0001/0002 to the shape of the `outbox` crate (table `outbox`),
-- which orders-svc appends through from now on. Rows already present stay relayable: they keep
-- a null routing_key, which relay-svc reads as "an event of the first orders outbox" and
-- publishes exactly as before. The defaults serve the same rows and writers of the old shape.
alter table outbox
    add column aggregate_type text not null default 'order',
    add column routing_key    text,
    add column content_type   text,
    add column headers        jsonb;

alter table outbox_quarantine
    add column aggregate_type text not null default 'order',
    add column routing_key    text,
    add column content_type   text,
    add column headers        jsonb;

-- Each order's chain head, taken over from orders.last_event_seq (which this migration's
-- transaction reads consistently: no writer appends without it). From now on the outbox crate
-- keeps it, under the head's row lock, in the writer's transaction.
create table outbox_heads (
    aggregate_type text   not null,
    aggregate_id   bigint not null,
    last_seq       bigint,
    primary key (aggregate_type, aggregate_id)
);
insert into outbox_heads (aggregate_type, aggregate_id, last_seq)
select 'order', id, last_event_seq from orders;

-- Every insert into the outbox moves its aggregate's head, whoever inserts (the crate, an
-- operator releasing a quarantined row, a replica of the previous version during a rolling
-- upgrade): the outbox crate's trigger for table `outbox` (outbox::TableName::heads_trigger_sql).
create function outbox_move_heads() returns trigger language plpgsql as $$
begin
    insert into outbox_heads as h (aggregate_type, aggregate_id, last_seq)
    select aggregate_type, aggregate_id, max(seq) from inserted group by 1, 2
    on conflict (aggregate_type, aggregate_id)
        do update set last_seq = greatest(h.last_seq, excluded.last_seq);
    return null;
end $$;
create trigger outbox_move_heads after insert on outbox
    referencing new table as inserted
    for each statement execute function outbox_move_heads();
