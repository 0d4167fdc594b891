//! The batch rule for one aggregate, pure: [`plan_aggregate`].

use crate::{Chain, Conflict, Decision, Envelope, Held, Outcome, decide};

/// One event a plan processes, in chain order: an event of the batch, or a held event the batch
/// released.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum Step {
    /// The batch's event at this index.
    Item(usize),
    /// A stored held event, released (deleted and processed).
    Released(Envelope),
}

/// What one aggregate's events in a batch come to (see [`plan_aggregate`]).
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct AggregatePlan {
    /// The chain: the aggregate in its shard.
    pub chain: Chain,
    /// Its watermark before the batch.
    pub watermark_before: Option<i64>,
    /// Its watermark after the batch.
    pub watermark: Option<i64>,
    /// The events to process, in chain order.
    pub steps: Vec<Step>,
    /// Indexes of the batch's events still waiting for a predecessor at its end (to store).
    pub holds: Vec<usize>,
    /// The outcome of each of the aggregate's events (by its index in the batch).
    pub outcomes: Vec<(usize, Outcome)>,
}

/// A held event the batch may release: stored, or held earlier in the same batch.
#[derive(Debug)]
enum Waiting {
    Stored(Held),
    Batch { index: usize },
}

/// The rule for one chain's events in a batch (`events` all of `chain`), given its watermark and its stored held
/// events: exactly the result of applying `events` (indexes into `batch`, in delivery order)
/// one by one with [`decide()`], as one transaction per event would. An event held earlier in the
/// batch and released later in it is never stored (its outcome is still [`Outcome::Held`], and
/// it is among the releasing event's steps). A forked chain (two events naming one predecessor,
/// which no correct producer makes) releases the lowest seq first.
pub fn plan_aggregate(
    chain: Chain,
    watermark: Option<i64>,
    stored: Vec<Held>,
    batch: &[Envelope],
    events: &[usize],
) -> AggregatePlan {
    let seq_prev = |w: &Waiting| match w {
        Waiting::Stored(h) => (h.seq, h.prev_seq),
        Waiting::Batch { index } => (batch[*index].seq, batch[*index].prev_seq.unwrap_or(0)),
    };
    let mut w = watermark;
    let mut waiting: Vec<Waiting> = stored.into_iter().map(Waiting::Stored).collect();
    let mut plan = AggregatePlan {
        chain,
        watermark_before: watermark,
        watermark,
        steps: Vec::new(),
        holds: Vec::new(),
        outcomes: Vec::with_capacity(events.len()),
    };
    for &n in events {
        let ev = &batch[n];
        let outcome = match decide(w, ev.seq, ev.prev_seq) {
            Decision::Skip => Outcome::Skipped { held: false },
            Decision::Hold(prev) => {
                if waiting.iter().any(|h| seq_prev(h).0 == ev.seq) {
                    Outcome::Skipped { held: true }
                } else {
                    waiting.push(Waiting::Batch { index: n });
                    Outcome::Held { waiting_for: prev }
                }
            }
            Decision::Conflict => Outcome::Conflict(Conflict::of(ev, w)),
            Decision::Process => {
                let mut seqs = vec![ev.seq];
                plan.steps.push(Step::Item(n));
                let mut last = ev.seq;
                // Release the held chain this event unblocked, in chain order.
                while let Some(pos) = waiting
                    .iter()
                    .enumerate()
                    .filter(|(_, h)| seq_prev(h).1 == last)
                    .min_by_key(|(_, h)| seq_prev(h).0)
                    .map(|(pos, _)| pos)
                {
                    let step = match waiting.remove(pos) {
                        Waiting::Stored(h) => Step::Released(h.into_envelope(&plan.chain)),
                        Waiting::Batch { index } => Step::Item(index),
                    };
                    last = match &step {
                        Step::Item(i) => batch[*i].seq,
                        Step::Released(e) => e.seq,
                    };
                    seqs.push(last);
                    plan.steps.push(step);
                }
                w = Some(last);
                Outcome::Processed { seqs }
            }
        };
        plan.outcomes.push((n, outcome));
    }
    plan.holds = waiting
        .into_iter()
        .filter_map(|h| match h {
            Waiting::Batch { index } => Some(index),
            Waiting::Stored(_) => None,
        })
        .collect();
    plan.watermark = w;
    plan
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ev(seq: i64, prev: Option<i64>) -> Envelope {
        Envelope::new(7, seq, prev, seq.to_be_bytes().to_vec())
    }

    fn stored(seq: i64, prev: i64) -> Held {
        Held {
            seq,
            prev_seq: prev,
            payload: seq.to_be_bytes().to_vec(),
            traceparent: None,
        }
    }

    /// Processed seqs, new holds (seqs), released stored seqs, the watermark after, outcomes.
    type Planned = (Vec<i64>, Vec<i64>, Vec<i64>, Option<i64>, Vec<Outcome>);

    fn plan(watermark: Option<i64>, stored: Vec<Held>, events: &[Envelope]) -> Planned {
        let idx: Vec<usize> = (0..events.len()).collect();
        let p = plan_aggregate(Chain::new(0, "", 7), watermark, stored, events, &idx);
        assert_eq!(p.outcomes.len(), events.len());
        let seq = |s: &Step| match s {
            Step::Item(i) => events[*i].seq,
            Step::Released(e) => e.seq,
        };
        (
            p.steps.iter().map(seq).collect(),
            p.holds.iter().map(|&i| events[i].seq).collect(),
            p.steps
                .iter()
                .filter_map(|s| match s {
                    Step::Released(e) => Some(e.seq),
                    Step::Item(_) => None,
                })
                .collect(),
            p.watermark,
            p.outcomes.into_iter().map(|(_, o)| o).collect(),
        )
    }

    fn processed(o: &Outcome) -> Vec<i64> {
        match o {
            Outcome::Processed { seqs } => seqs.clone(),
            other => panic!("not processed: {other:?}"),
        }
    }

    #[test]
    fn a_batch_applies_an_aggregates_events_as_one_transaction_each_would() {
        // In chain order.
        let (steps, holds, released, w, out) =
            plan(None, vec![], &[ev(1, None), ev(2, Some(1)), ev(3, Some(2))]);
        assert_eq!(
            (steps, holds, released, w),
            (vec![1, 2, 3], vec![], vec![], Some(3))
        );
        assert_eq!(
            out.iter().map(processed).collect::<Vec<_>>(),
            [[1], [2], [3]]
        );

        // Reversed: held in the batch, released in the batch, never stored.
        let (steps, holds, _, w, out) =
            plan(None, vec![], &[ev(3, Some(2)), ev(2, Some(1)), ev(1, None)]);
        assert_eq!((steps, holds, w), (vec![1, 2, 3], vec![], Some(3)));
        assert_eq!(out[0], Outcome::Held { waiting_for: 2 });
        assert_eq!(out[1], Outcome::Held { waiting_for: 1 });
        assert_eq!(processed(&out[2]), [1, 2, 3]);

        // A stored hold released; a duplicate of it while held; duplicates after.
        let (steps, holds, released, w, out) = plan(
            Some(1),
            vec![stored(3, 2)],
            &[ev(3, Some(2)), ev(2, Some(1)), ev(2, Some(1)), ev(1, None)],
        );
        assert_eq!(
            (steps, holds, released, w),
            (vec![2, 3], vec![], vec![3], Some(3))
        );
        assert_eq!(out[0], Outcome::Skipped { held: true });
        assert_eq!(processed(&out[1]), [2, 3]);
        assert_eq!(out[2], Outcome::Skipped { held: false });
        assert_eq!(out[3], Outcome::Skipped { held: false });

        // A duplicate of an event held earlier in the batch; what still waits is stored.
        let (steps, holds, _, w, out) = plan(Some(1), vec![], &[ev(5, Some(4)), ev(5, Some(4))]);
        assert_eq!((steps, holds, w), (vec![], vec![5], Some(1)));
        assert_eq!(out[1], Outcome::Skipped { held: true });

        // A forked chain releases the lowest seq first, as the one-event path does.
        let (steps, ..) = plan(Some(1), vec![stored(4, 2), stored(3, 2)], &[ev(2, Some(1))]);
        assert_eq!(steps, [2, 3]);

        // A conflict changes nothing.
        let (steps, _, _, w, out) = plan(Some(4), vec![], &[ev(9, None), ev(5, Some(4))]);
        assert!(matches!(out[0], Outcome::Conflict(_)));
        assert_eq!((steps, w), (vec![5], Some(5)));
    }

    #[test]
    fn released_payloads_are_the_stored_ones() {
        let p = plan_aggregate(
            Chain::new(0, "", 7),
            Some(1),
            vec![stored(3, 2)],
            &[ev(2, Some(1))],
            &[0],
        );
        assert_eq!(
            p.steps,
            [Step::Item(0), Step::Released(ev(3, Some(2)))],
            "the stored payload and aggregate come back as an envelope"
        );
    }
}
