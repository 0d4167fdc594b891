//! The read floor: where the relay's reads start, so that they never walk the rows it already
//! relayed.
//!
//! The relay deletes what it published. Behind a pinned xmin horizon (a `pg_dump`, a long
//! report, a session idle in a transaction) those deleted rows cannot be vacuumed, and a read
//! `order by seq limit n` from the head of the table visits every one of them, on every batch:
//! each event relayed makes the next read slower. Reads start at the floor instead: every row
//! below it is relayed, except a few *holes* (rows of held or quarantined aggregates) read by key.
//!
//! **When the floor may pass a seq.** Seqs are handed out before commit, so a writer still
//! running may commit a seq below rows already relayed (a high-water mark, `seq > offset`, loses
//! exactly that row). The floor passes a seq only once the seq is *final*: its writer committed
//! (the row is visible) or never will. Every inserting transaction holds a transaction id before
//! it draws its seq (a statement trigger of the outbox crate's second migration), and ids are
//! handed out in increasing order. Each read looks once at the database ([`Observation`]): the
//! oldest id still running (`xmin`), a fresh id of its own (`xid`, greater than every id handed out
//! before), and the last seq handed out. A seq handed out before look k-1 belongs to a writer
//! whose id is below look k's `xid`; once a later look's `xmin` reaches that `xid`, every such
//! writer has ended, and every seq up to look k-1's figure is final (a checkpoint).
//!
//! The floor then moves to the lowest of: the first seq not yet final, the first row the read
//! returned, and the lowest seq the relay still has in flight. Rows it passes that are still
//! present (left out of the read: held or quarantined aggregates) become holes; quarantined
//! seqs below the floor are holes too, because an operator may move them back.
//!
//! **What holds it back.** Only a transaction with an id (a writer) that stays open: a reader,
//! even in REPEATABLE READ, has none. While one does, the relay still reads and publishes
//! everything committed; only the floor waits, and reads walk the rows relayed since. The relay
//! says so (the oldest writer's age, a metric and a log line).
//!
//! **A database that goes back** (restored from a dump, another cluster behind the same URL):
//! ids or the sequence lower than before. The floor starts over from the table's head; nothing
//! is skipped, a restored row is read again.

use std::{
    collections::VecDeque,
    sync::Arc,
    time::{Duration, Instant},
};

use sqlx::PgPool;

use crate::{
    db::{self, Observation, OutboxRow, Queries, ReadFrom},
    error::Error,
    live::Status,
};

/// Every seq up to `handed_out` belongs to a writer whose id is below `xid`.
#[derive(Debug, Clone, Copy)]
struct Checkpoint {
    handed_out: i64,
    xid: i64,
    since: Instant,
}

/// At most this many checkpoints wait for their writers; beyond it the newest is replaced (the
/// floor then moves in coarser steps, never wrongly).
const MAX_CHECKPOINTS: usize = 64;

/// At most this many holes are tracked; beyond it the floor waits (reads walk from it) rather
/// than passing more present rows.
pub const MAX_HOLES: usize = 10_000;

/// The floor's state: one per relay term (a new leader starts from the table's head).
#[derive(Debug)]
pub struct Floor {
    floor: i64,
    holes: Vec<i64>,
    checkpoints: VecDeque<Checkpoint>,
    last: Option<Observation>,
    /// Every seq up to this is final (0: none known yet).
    final_up_to: i64,
}

impl Default for Floor {
    fn default() -> Self {
        Self {
            floor: 1,
            holes: Vec::new(),
            checkpoints: VecDeque::new(),
            last: None,
            final_up_to: 0,
        }
    }
}

/// What a look changed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Looked {
    /// As usual.
    Moved,
    /// The database went back (ids or the sequence lower than before): the floor starts over.
    WentBack,
}

impl Floor {
    /// Every row below it is relayed, except the holes.
    pub fn floor(&self) -> i64 {
        self.floor
    }

    /// Rows below the floor that may still be present.
    pub fn holes(&self) -> &[i64] {
        &self.holes
    }

    /// Since when the oldest checkpoint waits for a writer that has not ended (`None` when
    /// none waits).
    pub fn waiting_since(&self) -> Option<Instant> {
        self.checkpoints.front().map(|c| c.since)
    }

    /// Takes in one look at the database, with the holes it found still present (or in
    /// quarantine).
    pub fn observe(&mut self, now: Observation, holes: Vec<i64>, at: Instant) -> Looked {
        if let Some(last) = self.last
            && (now.xid < last.xid || now.handed_out < last.handed_out)
        {
            *self = Self {
                last: Some(now),
                ..Self::default()
            };
            return Looked::WentBack;
        }
        let mut holes = holes;
        holes.retain(|s| *s < self.floor);
        holes.sort_unstable();
        holes.dedup();
        self.holes = holes;
        if let Some(last) = self.last {
            // Seqs handed out before the last look belong to writers with ids below ours.
            let checkpoint = Checkpoint {
                handed_out: last.handed_out,
                xid: now.xid,
                since: at,
            };
            if self.checkpoints.len() >= MAX_CHECKPOINTS {
                self.checkpoints.pop_back();
            }
            self.checkpoints.push_back(checkpoint);
        }
        while let Some(c) = self.checkpoints.front()
            && c.xid <= now.xmin
        {
            self.final_up_to = self.final_up_to.max(c.handed_out);
            self.checkpoints.pop_front();
        }
        self.last = Some(now);
        Looked::Moved
    }

    /// Where the floor may go after a read from it: `returned` are the seqs the read returned,
    /// `exhausted` whether it returned fewer rows than it could take, `in_flight` the seqs the
    /// relay still holds that the read left out (the batch being confirmed, undeleted seqs).
    /// Never below the current floor.
    pub fn next(&self, returned: &[i64], exhausted: bool, in_flight: &[i64]) -> i64 {
        let mut next = self.final_up_to + 1;
        match returned.iter().filter(|s| **s >= self.floor).min() {
            Some(first) => next = next.min(*first),
            // Holes filled the batch: how far the rows above the floor go is unknown.
            None if !exhausted => next = self.floor,
            None => {}
        }
        if let Some(lowest) = in_flight.iter().min() {
            next = next.min(*lowest);
        }
        if self.holes.len() >= MAX_HOLES {
            next = self.floor;
        }
        next.max(self.floor)
    }

    /// Moves the floor to `to`, the rows it passed that are still present (`passed`) becoming
    /// holes.
    pub fn moved(&mut self, to: i64, passed: Vec<i64>) {
        self.floor = self.floor.max(to);
        self.holes.extend(passed);
        self.holes.sort_unstable();
        self.holes.dedup();
    }
}

/// A floor that moved with the holes unchanged is written for the figures at most this often: a
/// figure counted from an older floor walks a few more rows but is as exact (every present row
/// below the written floor is a written hole), and one write per relayed batch would cost a
/// statement and a WAL flush per event at a light load.
const PERSIST_EVERY: Duration = Duration::from_millis(500);

/// How long a checkpoint may wait before the relay names the writer holding it.
const WRITER_WARN_AFTER: Duration = Duration::from_secs(10);
/// While one does, look for the writer at most this often.
const WRITER_LOOK_EVERY: Duration = Duration::from_secs(5);

/// The relay's reads: each one from the floor, moving it afterwards. Cloned into the read-ahead;
/// reads never overlap (one term, one reader at a time).
#[derive(Debug, Clone)]
pub(crate) struct Reader {
    queries: Arc<Queries>,
    pool: PgPool,
    status: Arc<Status>,
    state: Arc<tokio::sync::Mutex<ReaderState>>,
}

#[derive(Debug, Default)]
struct ReaderState {
    floor: Floor,
    /// Where the last read found the floor may go: moved there (the rows it passes collected as
    /// holes) after the batch was handed out, off the path from a commit to its publish (see
    /// [`Reader::advance`]).
    pending: Option<i64>,
    /// The floor and holes last written for the figures (`None`: not yet in this term), and when.
    persisted: Option<(i64, Vec<i64>)>,
    persisted_at: Option<Instant>,
    /// The writer holding the floor was named (said once per episode).
    warned: bool,
    last_writer_look: Option<Instant>,
}

impl Reader {
    pub(crate) fn new(queries: Arc<Queries>, pool: PgPool, status: Arc<Status>) -> Self {
        Self {
            queries,
            pool,
            status,
            state: Arc::default(),
        }
    }

    /// A new term starts from the table's head.
    pub(crate) async fn reset(&self) {
        *self.state.lock().await = ReaderState::default();
        self.status.set_oldest_writer_age(0.0);
    }

    /// The oldest `limit` rows present from the floor on (and the holes), leaving out
    /// `skip_orders` and `skip_seqs`; `in_flight` are rows the relay still holds (the batch
    /// being confirmed). Moves the floor afterwards.
    pub(crate) async fn read(
        &self,
        limit: u32,
        skip_orders: &[i64],
        skip_seqs: &[i64],
        in_flight: &[i64],
    ) -> Result<Vec<OutboxRow>, Error> {
        let (q, pool) = (self.queries.as_ref(), &self.pool);
        let mut state = self.state.lock().await;
        let st = &mut *state;
        self.advance_locked(st).await?;
        let from = ReadFrom {
            floor: st.floor.floor(),
            holes: st.floor.holes(),
        };
        let mut read = db::fetch_batch(q, pool, limit, skip_orders, skip_seqs, from).await?;
        if st.floor.observe(read.look, read.present, Instant::now()) == Looked::WentBack {
            tracing::warn!(
                xid = read.look.xid,
                handed_out = read.look.handed_out,
                "relay: the database went back (restored, or another cluster): the read floor starts over from the table's head"
            );
            // This read started at the old floor: read again from the head.
            read = db::fetch_batch(q, pool, limit, skip_orders, skip_seqs, ReadFrom::START).await?;
        }
        self.watch_writers(st).await?;
        let rows = read.rows;
        let returned: Vec<i64> = rows.iter().map(|r| r.seq).collect();
        let held: Vec<i64> = in_flight.iter().chain(skip_seqs).copied().collect();
        let to = st.floor.next(&returned, rows.len() < limit as usize, &held);
        // Every seq below `to` is final and none of them is in this batch or in flight, so the
        // move stays right however late it happens: it waits for the next read or `advance`.
        st.pending = (to > st.floor.floor()).then_some(to);
        Ok(rows)
    }

    /// Moves the floor where the last read found it may go, and writes it for the figures when
    /// due. The relay calls it once a batch is handed to the broker; the next read does it
    /// first in any case.
    pub(crate) async fn advance(&self) -> Result<(), Error> {
        let mut state = self.state.lock().await;
        self.advance_locked(&mut state).await
    }

    async fn advance_locked(&self, st: &mut ReaderState) -> Result<(), Error> {
        let (q, pool) = (self.queries.as_ref(), &self.pool);
        if let Some(to) = st.pending.take()
            && to > st.floor.floor()
        {
            let passed = db::collect_holes(q, pool, st.floor.floor(), to).await?;
            st.floor.moved(to, passed);
        }
        let current = (st.floor.floor(), st.floor.holes().to_vec());
        let due = match &st.persisted {
            None => true,
            Some((_, holes)) if *holes != current.1 => true,
            Some(persisted) => {
                *persisted != current
                    && st.persisted_at.is_none_or(|t| t.elapsed() >= PERSIST_EVERY)
            }
        };
        if due {
            db::persist_floor(q, pool, current.0, &current.1).await?;
            st.persisted = Some(current);
            st.persisted_at = Some(Instant::now());
        }
        Ok(())
    }

    /// Names the writer that keeps the floor from moving, once per episode, with its age as a
    /// gauge; says when it ended.
    async fn watch_writers(&self, st: &mut ReaderState) -> Result<(), Error> {
        let waiting = st
            .floor
            .waiting_since()
            .is_some_and(|since| since.elapsed() >= WRITER_WARN_AFTER);
        if !waiting {
            if st.warned {
                st.warned = false;
                self.status.set_oldest_writer_age(0.0);
                tracing::info!(
                    floor = st.floor.floor(),
                    "relay: the read floor moves again"
                );
            }
            return Ok(());
        }
        if st
            .last_writer_look
            .is_some_and(|t| t.elapsed() < WRITER_LOOK_EVERY)
        {
            return Ok(());
        }
        st.last_writer_look = Some(Instant::now());
        let Some(w) = db::oldest_writer(&self.queries, &self.pool).await? else {
            return Ok(());
        };
        self.status.set_oldest_writer_age(w.age_secs);
        if !st.warned {
            st.warned = true;
            tracing::warn!(
                pid = w.pid,
                database = %w.database,
                age_secs = w.age_secs,
                floor = st.floor.floor(),
                "relay: a writer transaction open for {:.0}s (pid {} in database {:?}) holds the read floor at seq={}: everything committed is still published, but reads walk the rows relayed since until it ends",
                w.age_secs,
                w.pid,
                w.database,
                st.floor.floor()
            );
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn look(xmin: i64, xid: i64, handed_out: i64) -> Observation {
        Observation {
            xmin,
            xid,
            handed_out,
        }
    }

    #[test]
    fn without_running_writers_the_floor_follows_one_look_behind() {
        let mut f = Floor::default();
        let t = Instant::now();
        // Nothing running: xmin is the next id.
        assert_eq!(f.observe(look(100, 100, 10), vec![], t), Looked::Moved);
        // The first look gives no checkpoint: nothing is known final yet.
        assert_eq!(f.next(&[], true, &[]), 1);
        f.observe(look(101, 101, 20), vec![], t);
        // Seqs up to 10 (handed out before the first look) are final.
        assert_eq!(f.next(&[], true, &[]), 11);
        assert_eq!(f.next(&[5, 6], false, &[]), 5);
        assert_eq!(f.next(&[8], true, &[3]), 3);
    }

    #[test]
    fn a_running_writer_holds_the_floor_until_it_ends() {
        let mut f = Floor::default();
        let t = Instant::now();
        // Writer 90 is running (xmin 90) and may hold any seq handed out so far.
        f.observe(look(90, 100, 10), vec![], t);
        f.observe(look(90, 101, 20), vec![], t);
        f.observe(look(90, 102, 30), vec![], t);
        assert_eq!(f.next(&[], true, &[]), 1, "no seq is final while 90 runs");
        assert!(f.waiting_since().is_some());
        // Writer 90 ends: the checkpoints whose id is at most the new xmin are final (20, from
        // the look before id 102); 30 waits for look 103's writers.
        f.observe(look(102, 103, 40), vec![], t);
        assert_eq!(f.next(&[], true, &[]), 21);
        f.observe(look(104, 104, 40), vec![], t);
        assert_eq!(f.next(&[], true, &[]), 41);
        assert!(f.waiting_since().is_none());
    }

    #[test]
    fn the_floor_never_moves_back_and_keeps_its_holes() {
        let mut f = Floor::default();
        let t = Instant::now();
        f.observe(look(100, 100, 50), vec![], t);
        f.observe(look(101, 101, 60), vec![], t);
        let to = f.next(&[40], false, &[]);
        assert_eq!(to, 40);
        f.moved(to, vec![7, 12]);
        assert_eq!((f.floor(), f.holes()), (40, &[7, 12][..]));
        assert_eq!(f.next(&[], false, &[]), 40, "holes filled the batch: stay");
        // A later look finds hole 7 gone and 12 still there, and a quarantined seq 3.
        f.observe(look(102, 102, 60), vec![12, 3], t);
        assert_eq!(f.holes(), &[3, 12][..]);
    }

    #[test]
    fn a_database_that_went_back_starts_the_floor_over() {
        let mut f = Floor::default();
        let t = Instant::now();
        f.observe(look(100, 100, 50), vec![], t);
        f.observe(look(101, 101, 60), vec![], t);
        f.moved(51, vec![]);
        // Restored elsewhere: ids start over.
        assert_eq!(f.observe(look(5, 5, 60), vec![], t), Looked::WentBack);
        assert_eq!((f.floor(), f.next(&[], true, &[])), (1, 1));
        // Restored from an older dump: the sequence went back.
        let mut f = Floor::default();
        f.observe(look(100, 100, 50), vec![], t);
        f.observe(look(101, 101, 60), vec![], t);
        f.moved(51, vec![]);
        assert_eq!(f.observe(look(102, 102, 30), vec![], t), Looked::WentBack);
        assert_eq!(f.floor(), 1);
    }
}
