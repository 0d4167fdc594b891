-- The per-order watermark: the seq of the last event of this order that was processed (turned into a
-- mail). An order's events are processed strictly in chain order (prev_seq links), so "already
-- processed" is exactly "seq <= last_seq": deduplication never expires and the table holds one row
-- per order, not one per event.
create table order_progress (
    order_id bigint primary key,
    last_seq bigint not null
);

-- Events that arrived before their predecessor: kept here until the predecessor is processed, then
-- released (deleted and processed) in the same transaction.
create table held_events (
    seq         bigint primary key,
    order_id    bigint      not null,
    prev_seq    bigint      not null,
    -- The validated event, re-encoded as an orders.events.v1.OrderEvent.
    event       bytea       not null,
    traceparent text,
    held_at     timestamptz not null default now()
);
create index held_events_successor on held_events (order_id, prev_seq);
create index held_events_age on held_events (held_at);

-- One row per processed event: the mail to send. The mailer sets sent_at once delivered (or
-- failed_at when the server rejected it for good).
create table mails (
    seq             bigint primary key,
    order_id        bigint      not null,
    event_type      text        not null,
    recipient       text        not null,
    subject         text        not null,
    body            text        not null,
    idempotency_key text        not null unique,
    traceparent     text,
    queued_at       timestamptz not null default now(),
    sent_at         timestamptz,
    failed_at       timestamptz,
    last_error      text
);
create index mails_by_order on mails (order_id, seq);
-- The mailer's work list: small, because delivered mails leave it.
create index mails_unsent on mails (order_id, seq) where sent_at is null and failed_at is null;
create index mails_unsent_seq on mails (seq) where sent_at is null and failed_at is null;

-- Durable counters for what leaves no row behind (skipped duplicates, dead-lettered messages).
-- One row per (name, instance): an instance only ever updates its own rows, so concurrent
-- instances never contend on a single hot row; readers sum over instances.
create table counters (
    name     text   not null,
    instance text   not null,
    value    bigint not null,
    primary key (name, instance)
);
