-- The outbox chains events per (aggregate_type, aggregate_id) and types may share ids, so the
-- inbox keys a chain by (shard, aggregate_type, order_id) (outbox-inbox's migration 3 for its own
-- tables). Every row so far is an order's: mail-svc applies events of type `order` only.
alter table order_progress add column aggregate_type text not null default 'order',
    drop constraint order_progress_pkey, add primary key (shard, aggregate_type, order_id);
alter table held_events add column aggregate_type text not null default 'order';
drop index held_events_successor;
create index held_events_successor on held_events (shard, aggregate_type, order_id, prev_seq);
