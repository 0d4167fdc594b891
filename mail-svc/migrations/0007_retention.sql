-- Retention and vacuum by design (issue 24): every table either stays bounded, or has a
-- retention setting and an index-driven prune (mail-svc/src/retention.rs), and the tables that
-- churn vacuum early.
--
-- mails: one row per event, forever until now. Sent mails older than MAIL_RETENTION (30d) are
-- deleted, oldest first, a small batch per transaction, walking this index from a cursor (never
-- a scan of the table, never over the batches already deleted). Deduplication does not need
-- them: a redelivered event is recognised by its order's watermark (order_progress), whose rows
-- are never deleted. FAILED mails are kept until an operator retries them: they are the
-- operator's work list (`outboxctl mails failed`), bounded by the server's permanent rejections.
create index mails_sent_at on mails (sent_at) where sent_at is not null;

-- Each mail is inserted, updated twice (its head flag, then sent) and deleted: vacuum after 1 %
-- of the table changed (default 20 %), so that dead rows and the claim index's dead entries of
-- sent heads (0006) are cleared while few, and the statistics follow the queue.
alter table mails set (
    autovacuum_vacuum_scale_factor = 0.01,
    autovacuum_vacuum_threshold = 1000,
    autovacuum_vacuum_insert_scale_factor = 0.05,
    autovacuum_analyze_scale_factor = 0.02,
    autovacuum_analyze_threshold = 1000
);

-- order_progress: one row per order (its chain in its shard), whatever its number of events: it
-- grows with orders, not with events, and it is the deduplication record itself (a seq at or
-- below the watermark is a duplicate, forever). Deleting a row would make the order's old events
-- new again: no retention. Every processed event updates its order's row; the watermark is not
-- indexed, so the update can stay on its page (HOT) when the page has room: keep a fifth free,
-- and vacuum early.
alter table order_progress set (
    fillfactor = 80,
    autovacuum_vacuum_scale_factor = 0.02,
    autovacuum_vacuum_threshold = 1000
);

-- held_events: an event lives here only until its predecessor is processed (released and deleted
-- in that transaction): bounded by the events out of order at one time. A row that stays is a
-- lost predecessor (MAIL_HOLD_ALERT warns; ReleaseHeld resolves it), never something to delete
-- silently: no retention. Rows come and go in bursts of reordering: vacuum early.
alter table held_events set (
    autovacuum_vacuum_scale_factor = 0.02,
    autovacuum_vacuum_threshold = 200
);

-- counters: one row per counter and instance (an instance's id is drawn at each start), summed
-- by the readers: a few rows per start of a mail-svc, not per event. No retention.
--
-- admin_actions (0004): one row per operator action; kept ADMIN_ACTIONS_RETENTION (365d), pruned
-- by its `admin_actions_at` index like mails.
