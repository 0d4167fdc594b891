-- What an audit and a replay need, from the outbox crate's third migration for table `outbox`
-- (outbox::TableName::published_sql): the published rows, kept for relay-svc's
-- PUBLISHED_RETENTION in one partition per day, and when each order's head last moved.

-- When each aggregate's head last moved (the audit's "since when"); not indexed: the
-- update stays HOT.
alter table outbox_heads add column appended_at timestamptz;

create or replace function outbox_move_heads() returns trigger language plpgsql as $$
begin
    insert into outbox_heads as h (aggregate_type, aggregate_id, last_seq, appended_at)
    select aggregate_type, aggregate_id, max(seq), clock_timestamp() from inserted group by 1, 2
    on conflict (aggregate_type, aggregate_id)
        do update set last_seq = greatest(h.last_seq, excluded.last_seq),
                      appended_at = case when excluded.last_seq > h.last_seq
                                         then excluded.appended_at else h.appended_at end;
    return null;
end $$;

-- The published rows, kept for a retention window: one partition per UTC day, dropped whole.
create table outbox_published (
    seq            bigint      not null,
    aggregate_type text        not null,
    aggregate_id   bigint      not null,
    event_type     text        not null,
    prev_seq       bigint,
    -- Nullable as in an adopted outbox (orders-svc's first one), where they may be.
    routing_key    text,
    content_type   text,
    headers        jsonb,
    payload        bytea       not null,
    traceparent    text,
    created_at     timestamptz not null,
    -- When the relay recorded the broker's confirm (its delete of the row).
    published_at   timestamptz not null
) partition by range (published_at);
create index outbox_published_aggregate on outbox_published (aggregate_type, aggregate_id, seq);
create index outbox_published_seq on outbox_published using brin (seq);
-- An audit reads what was published since its last pass.
create index outbox_published_at on outbox_published using brin (published_at);

-- Creates the partitions of today and the next two days (UTC) and drops those whose day ended
-- more than `keep` ago. Returns what it did. Its locks wait at most 200 ms: a roll that would
-- queue writers behind a long reader fails instead and is retried.
create function outbox_published_roll(keep interval) returns setof text language plpgsql as $$
declare
    today date := (now() at time zone 'utc')::date;
    day date;
    part text;
begin
    perform set_config('lock_timeout', '200ms', true);
    for day in select d::date from generate_series(today, today + 2, interval '1 day') d loop
        part := 'outbox_published_p' || to_char(day, 'YYYYMMDD');
        if to_regclass(part) is null then
            execute format('create table %s partition of outbox_published for values from (%L) to (%L)',
                           part, day::timestamp at time zone 'utc',
                           (day + 1)::timestamp at time zone 'utc');
            return next 'created ' || part;
        end if;
    end loop;
    for part in
        select c.oid::regclass::text from pg_inherits i join pg_class c on c.oid = i.inhrelid
        where i.inhparent = 'outbox_published'::regclass
          and (to_date(right(c.relname, 8), 'YYYYMMDD') + 1)::timestamp at time zone 'utc'
              <= now() - keep
    loop
        execute format('drop table %s', part);
        return next 'dropped ' || part;
    end loop;
end $$;
-- Today's partitions now, so that a relay can publish before its first roll.
select outbox_published_roll(interval '7 days');
