-- Outbox rows relay-svc can never encode (a payload this version cannot decode, an event type it
-- does not know). relay-svc moves such a row here with its reason, in one statement; the row's
-- order is held back (its later events stay in the outbox, unpublished) for as long as any row
-- of that order is here, so no consumer sees a later event of the order before this one.
--
-- An operator releases a row (after fixing it, or after deploying a relay that understands it)
-- by moving it back with its seq, in one statement; the relay publishes it normally within a
-- poll interval, and the order's later events after it:
--
--   with r as (delete from outbox_quarantine where seq = $1
--              returning seq, aggregate_id, event_type, prev_seq, payload, traceparent, created_at)
--   insert into outbox (seq, aggregate_id, event_type, prev_seq, payload, traceparent, created_at)
--   overriding system value select * from r;
create table outbox_quarantine (
    -- The same columns as outbox; seq is kept (consumers chain events by seq and prev_seq).
    seq            bigint      primary key,
    aggregate_id   bigint      not null,
    event_type     text        not null,
    prev_seq       bigint,
    payload        bytea       not null,
    traceparent    text,
    created_at     timestamptz not null,
    -- Why the relay could not encode it.
    reason         text        not null,
    quarantined_at timestamptz not null default clock_timestamp()
);

-- The relay's read leaves out every order with a row here (`not exists ... where aggregate_id`).
create index outbox_quarantine_aggregate_id on outbox_quarantine (aggregate_id);
