-- The audit trail of operator actions taken through relay-svc's admin gRPC service (outboxctl),
-- kept in the orders database beside the outbox they act on: one row
-- per mutating call that changed something, written in the same transaction as the change.
create table admin_actions (
    id       bigint generated always as identity primary key,
    at       timestamptz not null default clock_timestamp(),
    -- The RPC, e.g. 'RequeueQuarantined'.
    action   text        not null,
    -- The seqs (or order ids, see the action) it changed.
    ids      bigint[]    not null,
    reason   text        not null,
    -- The caller's x-operator metadata, when given.
    operator text,
    -- What else is worth keeping (e.g. a dropped row's content).
    detail   jsonb       not null default '{}'
);
create index admin_actions_at on admin_actions (at);
