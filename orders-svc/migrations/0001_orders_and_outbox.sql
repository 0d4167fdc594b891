-- The business table. status is the lowercase name of orders.v1.OrderStatus.
create table orders (
    id             bigint primary key,
    status         text        not null
        check (status in ('pending', 'paid', 'shipped', 'delivered', 'cancelled')),
    customer_email text        not null,
    -- 1 on creation, +1 per change.
    version        bigint      not null,
    -- The seq of this order's latest event: the next event's prev_seq. Kept here (not derived
    -- from the outbox) because the relay deletes outbox rows once they are published.
    last_event_seq bigint      not null,
    created_at     timestamptz not null,
    updated_at     timestamptz not null
);

-- The transactional outbox: one row per event, appended in the same transaction as the order
-- change, deleted by relay-svc once the broker confirmed it. See outbox_kit::outbox for how it
-- must be read (never by a seq high-water mark: rows commit out of seq order).
create table outbox (
    seq          bigint generated always as identity primary key,
    aggregate_id bigint      not null,
    event_type   text        not null,
    prev_seq     bigint,
    -- An encoded orders.events.v1.OrderPayload.
    payload      bytea       not null,
    -- W3C trace context of the request that caused the event, carried to the consumer.
    traceparent  text,
    created_at   timestamptz not null default clock_timestamp()
) with (
    -- Rows live for milliseconds; vacuum after a fixed number of dead rows rather than a
    -- fraction of a table that is nearly always empty, so the dead tuples never pile up.
    autovacuum_vacuum_scale_factor = 0,
    autovacuum_vacuum_threshold = 10000,
    autovacuum_vacuum_cost_delay = 0
);
