-- The claim's work list, kept so that a claim costs O(batch) whatever the backlog (issue 24).
--
-- Until now the claim found each order's earliest unsent mail with an anti join ("no earlier
-- unsent mail of the order"). Its cost depended on the plan: with no statistics yet (a fresh or
-- just restored database) PostgreSQL chose a nested loop that scanned every unsent mail for each
-- mail claimed, and the mailer fell from ~650 to 45-180 mails/s after a burst.
--
-- head: this mail is its order's (its chain's: shard, order) next mail to send, the only one of
-- the order the claim may take. An order has exactly one head while it has an unsent mail (sent
-- and failed mails are not unsent), none otherwise. It is maintained under the order's advisory
-- lock, the one the inbox takes to process the order's events (mail-svc/src/db.rs): a mail
-- queued for an order without unsent mails is its head; marking the head sent or failed makes
-- the order's earliest unsent mail the head; an operator's retry puts a failed mail back before
-- the order's later unsent mails (the head steps back for it, unless a mailer is sending it at
-- that moment: then the retried mail follows it).
alter table mails add column head boolean not null default false;

-- Every order's earliest unsent mail, as the old claim chose it.
update mails set head = true
 where (shard, seq) in (select distinct on (shard, order_id) shard, seq
                          from mails
                         where sent_at is null and failed_at is null
                         order by shard, order_id, seq);

-- The claim walks this index from its start and stops after the batch: heads in the order they
-- became due (queued, or the deferred mail's next attempt), so a deferred mail's key lies ahead
-- and is not walked until it is due. Only heads are in it: its size is the number of orders
-- with mails to send, and neither an order's queued successors nor sent mails are ever visited.
-- "Unsent" is part of the condition although a head is always unsent: a mail marked sent by
-- anything that does not keep `head` (a mail-svc older than this migration, a hand edit) can
-- never be claimed again. Stop older mail-svc instances before starting this version: their
-- mailers send without moving heads, and an order whose head they sent keeps its later mails.
create index mails_claim on mails ((coalesce(next_attempt_at, queued_at)), seq)
    where head and sent_at is null and failed_at is null;

-- An order's unsent mails, for "does the order have an unsent mail?" when a mail is queued and
-- "which is its earliest?" when its head leaves: (shard, order_id) now, as chains are keyed
-- since 0005. The old claim's indexes are not used any more.
drop index mails_unsent;
drop index mails_unsent_seq;
create index mails_unsent on mails (shard, order_id, seq) where sent_at is null and failed_at is null;
