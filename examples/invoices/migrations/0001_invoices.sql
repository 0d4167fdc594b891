-- The service's own tables. The outbox (billing.invoice_outbox*) and the inbox
-- (billing.ledger_inbox_*) come from the crates' migrators, with histories of their own.
create schema if not exists billing;

-- The write side: one row per invoice, changed in the same transaction as its event is appended.
create table billing.invoices (
    id           bigint generated always as identity primary key,
    customer     text   not null,
    amount_cents bigint not null check (amount_cents > 0),
    paid_cents   bigint not null default 0 check (paid_cents between 0 and amount_cents),
    status       text   not null default 'open' check (status in ('open', 'paid', 'voided'))
);

-- The read side, built from the events alone: one line per event applied, in the order applied
-- (`line`), with what the event did to the amount owed. No unique key on `seq`: exactly once is
-- the inbox's job, and the tests count the lines to prove it.
create table billing.ledger (
    line         bigint generated always as identity primary key,
    invoice_id   bigint not null,
    seq          bigint not null,
    event        text   not null,
    amount_cents bigint not null
);
