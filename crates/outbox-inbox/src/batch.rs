//! Many deliveries applied together: [`Inbox::batch`] takes their aggregates' locks and reads
//! their state in a fixed number of statements and plans them ([`plan_aggregate`]); a [`Batch`]
//! builds the ONE statement that writes every watermark, held row and release
//! ([`Batch::write`]), with the caller's own writes pushed into it; [`Inbox::apply_batch`] is the
//! `Consumer`'s use of both.

use sqlx::{PgConnection, Postgres, QueryBuilder};

use crate::{
    AggregatePlan, ApplyError, Chain, Envelope, Handler, Inbox, Outcome, Step, call, db,
    plan_aggregate,
};

/// Pushes `unnest($n::<type>[], …)` onto a query builder: each column a bound array and its
/// element type, so the statement's text is the same whatever the batch's size.
macro_rules! push_unnest {
    ($q:expr, $($column:expr => $ty:literal),+ $(,)?) => {{
        let q: &mut QueryBuilder<Postgres> = $q;
        q.push("unnest(");
        let mut columns = q.separated(", ");
        $(
            columns.push_bind($column);
            columns.push_unseparated(concat!("::", $ty, "[]"));
        )+
        columns.push_unseparated(")");
    }};
}

impl Inbox {
    /// Starts applying a batch of delivered events in the caller's transaction: takes their
    /// aggregates' locks (in ascending order, one statement) and reads their watermarks and held
    /// events (one statement), and plans every event with [`plan_aggregate`]: exactly the result
    /// of applying them one by one in slice (delivery) order. Hand the plan's
    /// [`Batch::processed`] events to your own writes and finish with [`Batch::write`].
    pub async fn batch<'e>(
        &self,
        conn: &mut PgConnection,
        envelopes: &'e [Envelope],
    ) -> Result<Batch<'_, 'e>, sqlx::Error> {
        let mut chains: Vec<Chain> = envelopes.iter().map(Envelope::chain).collect();
        chains.sort_unstable();
        chains.dedup();
        let mut ids: Vec<i64> = chains.iter().map(|c| c.aggregate_id).collect();
        ids.sort_unstable();
        ids.dedup();
        db::lock_all(conn, &ids).await?;
        let (watermarks, mut held) = self.sql.state(conn, &chains).await?;
        let plans = chains
            .iter()
            .map(|chain| {
                let events: Vec<usize> = (0..envelopes.len())
                    .filter(|&n| envelopes[n].chain() == *chain)
                    .collect();
                let stored = held.remove(chain).unwrap_or_default();
                plan_aggregate(
                    chain.clone(),
                    watermarks.get(chain).copied(),
                    stored,
                    envelopes,
                    &events,
                )
            })
            .collect();
        Ok(Batch {
            inbox: self,
            envelopes,
            plans,
        })
    }
}

impl Inbox {
    /// Applies a batch of delivered events in the caller's transaction the way the `amqp`
    /// feature's `Consumer` does: the locks and plan of [`Inbox::batch`], each chain's events
    /// (in chain order) staged with [`Handler::stage`] or else handled with
    /// [`Handler::handle`], then the inbox's writes and the handler's
    /// ([`Handler::push_writes`]) in ONE statement ([`Batch::write`]). Returns each event's
    /// outcome by its index: `None` for the events of a chain [`Handler::stage`] refused (its
    /// writes were left out: apply those events on their own with [`Inbox::apply`]). The caller
    /// commits; on `Err` it must roll back.
    pub async fn apply_batch<E, H>(
        &self,
        conn: &mut PgConnection,
        envelopes: &[Envelope],
        handler: &mut H,
    ) -> Result<Vec<Option<Outcome>>, ApplyError<E>>
    where
        H: Handler<Error = E>,
    {
        let mut batch = self.batch(conn, envelopes).await?;
        let mut refused = Vec::new();
        {
            // The plan lists its events aggregate by aggregate, each chain's in chain order.
            let mut chains: Vec<Vec<&Envelope>> = Vec::new();
            for p in batch.processed() {
                match chains.last_mut() {
                    Some(chain) if chain[0].chain() == p.envelope.chain() => {
                        chain.push(p.envelope);
                    }
                    _ => chains.push(vec![p.envelope]),
                }
            }
            for chain in chains {
                match handler.stage(&chain) {
                    Some(Ok(())) => {}
                    // Its deliveries, applied on their own, meet the error again in `handle`.
                    Some(Err(_)) => {
                        refused.push(chain[0].chain());
                    }
                    None => {
                        for e in chain {
                            call(handler, conn, e).await?;
                        }
                    }
                }
            }
        }
        for chain in &refused {
            batch.exclude(chain);
        }
        let duplicates = batch.duplicates();
        Ok(batch
            .write(conn, |q| handler.push_writes(q, duplicates))
            .await?)
    }
}
/// One event a batch processes (see [`Batch::processed`]).
#[derive(Debug, Clone, Copy)]
#[non_exhaustive]
pub struct Processed<'a> {
    /// The event.
    pub envelope: &'a Envelope,
    /// Its index in the batch, or `None` for a stored held event the batch released.
    pub item: Option<usize>,
}

/// A planned batch (see [`Inbox::batch`]): the locks are held, nothing is written yet.
#[derive(Debug)]
pub struct Batch<'i, 'e> {
    inbox: &'i Inbox,
    envelopes: &'e [Envelope],
    plans: Vec<AggregatePlan>,
}

impl Batch<'_, '_> {
    /// The events to process, aggregate by aggregate, each aggregate's in chain order (the
    /// batch's own events and the held events they release).
    pub fn processed(&self) -> impl Iterator<Item = Processed<'_>> {
        self.plans.iter().flat_map(move |p| {
            p.steps.iter().map(move |s| match s {
                Step::Item(n) => Processed {
                    envelope: &self.envelopes[*n],
                    item: Some(*n),
                },
                Step::Released(e) => Processed {
                    envelope: e,
                    item: None,
                },
            })
        })
    }

    /// The duplicates found so far (a held event's duplicate that [`Batch::write`] finds stored
    /// already, under another aggregate, is found only then).
    pub fn duplicates(&self) -> i64 {
        self.plans
            .iter()
            .flat_map(|p| &p.outcomes)
            .filter(|(_, o)| matches!(o, Outcome::Skipped { .. }))
            .count() as i64
    }

    /// Leaves `chain`'s events out of the batch: nothing is written for them and their
    /// outcomes are `None` (e.g. your handler cannot process one of its released events: apply
    /// them on their own with [`Inbox::apply`], which reports the error).
    pub fn exclude(&mut self, chain: &Chain) {
        self.plans.retain(|p| p.chain != *chain);
    }

    /// Writes the batch in ONE statement and returns each event's outcome (by its index; `None`
    /// for excluded aggregates). The statement is a chain of data-modifying CTEs: the inbox's
    /// (release, watermark, hold) and the caller's own, pushed by `extra` onto the builder as
    /// complete CTEs each followed by a comma (`name as (insert ...),`), with their values
    /// bound by `push_bind`. Every CTE sees one snapshot; the inbox's touch only its own rows.
    /// Keep `extra`'s SQL text the same from batch to batch (bind arrays, not values) so the
    /// prepared statement is reused.
    pub async fn write(
        self,
        conn: &mut PgConnection,
        extra: impl FnOnce(&mut QueryBuilder<Postgres>),
    ) -> Result<Vec<Option<Outcome>>, sqlx::Error> {
        let sql = &self.inbox.sql;
        let (p, h, a) = (&sql.progress, &sql.held, &sql.column);
        let (mut released_shards, mut released) = (Vec::new(), Vec::new());
        let (mut w_shards, mut w_types, mut w_ids, mut w_seqs) =
            (Vec::new(), Vec::new(), Vec::new(), Vec::new());
        let mut holds = Holds::default();
        let mut outcomes: Vec<Option<Outcome>> = vec![None; self.envelopes.len()];
        for plan in &self.plans {
            for step in &plan.steps {
                if let Step::Released(e) = step {
                    released_shards.push(e.shard);
                    released.push(e.seq);
                }
            }
            if plan.watermark != plan.watermark_before
                && let Some(w) = plan.watermark
            {
                w_shards.push(plan.chain.shard);
                w_types.push(plan.chain.aggregate_type.as_str());
                w_ids.push(plan.chain.aggregate_id);
                w_seqs.push(w);
            }
            for &n in &plan.holds {
                holds.push(&self.envelopes[n]);
            }
            for (n, o) in &plan.outcomes {
                outcomes[*n] = Some(o.clone());
            }
        }
        let mut q = QueryBuilder::<Postgres>::new(format!(
            "with released as (delete from {h} where (shard, seq) in (select * from "
        ));
        push_unnest!(&mut q, &released_shards => "integer", &released => "bigint");
        q.push(format!(
            ")), moved as (insert into {p} (shard, aggregate_type, {a}, last_seq) select * from "
        ));
        push_unnest!(
            &mut q,
            &w_shards => "integer",
            &w_types => "text",
            &w_ids => "bigint",
            &w_seqs => "bigint",
        );
        q.push(format!(
            " on conflict (shard, aggregate_type, {a}) \
             do update set last_seq = excluded.last_seq),\n"
        ));
        extra(&mut q);
        q.push(format!(
            "\nheld as (insert into {h} (shard, seq, aggregate_type, {a}, prev_seq, event, \
             traceparent) select * from "
        ));
        push_unnest!(
            &mut q,
            &holds.shards => "integer",
            &holds.seqs => "bigint",
            &holds.types => "text",
            &holds.ids => "bigint",
            &holds.prevs => "bigint",
            &holds.events => "bytea",
            &holds.traceparents => "text",
        );
        q.push(
            " on conflict (shard, seq) do nothing returning shard, seq) \
             select shard, seq from held",
        );
        let stored: Vec<(i32, i64)> = q.build_query_as().fetch_all(conn).await?;
        // A (shard, seq) held already (under another aggregate: a broken producer reusing seqs)
        // is a duplicate, as the one-event path reports it.
        for (shard, seq) in holds.shards.iter().zip(&holds.seqs) {
            if !stored.contains(&(*shard, *seq)) {
                for (m, e) in self.envelopes.iter().enumerate() {
                    if (e.shard, e.seq) == (*shard, *seq)
                        && matches!(outcomes[m], Some(Outcome::Held { .. }))
                    {
                        outcomes[m] = Some(Outcome::Skipped { held: true });
                    }
                }
            }
        }
        Ok(outcomes)
    }
}

/// The columns of the events a batch stores as held, one array each (bound to `unnest`).
#[derive(Default)]
struct Holds<'e> {
    shards: Vec<i32>,
    seqs: Vec<i64>,
    types: Vec<&'e str>,
    ids: Vec<i64>,
    prevs: Vec<i64>,
    events: Vec<&'e [u8]>,
    traceparents: Vec<Option<&'e str>>,
}

impl<'e> Holds<'e> {
    fn push(&mut self, e: &'e Envelope) {
        self.shards.push(e.shard);
        self.seqs.push(e.seq);
        self.types.push(&e.aggregate_type);
        self.ids.push(e.aggregate_id);
        self.prevs.push(e.prev_seq.unwrap_or_default());
        self.events.push(&e.payload);
        self.traceparents.push(e.traceparent.as_deref());
    }
}
