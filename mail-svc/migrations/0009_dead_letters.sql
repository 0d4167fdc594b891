-- One row per event sent to the dead-letter queue, written before its ack: an audit names such
-- an event "dead-lettered" instead of "lost", and `outboxctl trace` shows the reason. The chain
-- fields are null when the message did not carry them (a message that is not an event at all).
create table dead_letters (
    id             bigint generated always as identity primary key,
    shard          integer,
    aggregate_type text,
    order_id       bigint,
    seq            bigint,
    reason         text        not null,
    at             timestamptz not null default now()
);
create index dead_letters_event on dead_letters (shard, aggregate_type, order_id, seq);
