-- A sharded orders-svc (SHARDS) numbers each shard's outbox from 1: an event is (shard, seq) and
-- an order's chain is (shard, order_id). The shard comes with each message (header `shard`,
-- absent for shard 0). Every existing row is shard 0's, the only shard of an unsharded
-- orders-svc, and keeps its idempotency key (`order-event-<seq>`; other shards' mails get
-- `order-event-<shard>-<seq>`), so nothing already queued or sent changes.
alter table order_progress add column shard integer not null default 0,
    drop constraint order_progress_pkey, add primary key (shard, order_id);
alter table held_events add column shard integer not null default 0,
    drop constraint held_events_pkey, add primary key (shard, seq);
drop index held_events_successor;
create index held_events_successor on held_events (shard, order_id, prev_seq);
alter table mails add column shard integer not null default 0,
    drop constraint mails_pkey, add primary key (shard, seq);
