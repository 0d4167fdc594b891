/*
 * The relay fleet's leases and fencing, model-checked with SPIN: one outbox database registered
 * in the fleet database, two relay instances that claim its lease, renew it, lose it when it
 * runs out (the instance froze or stalled for a lease) and go on where they stopped when they
 * wake up, or are killed at any step and restart; the fence row in the outbox database, taken by each new owner at its epoch; the
 * waves with their confirms, and the fenced effects (the delete of a confirmed batch, the move
 * of a row that cannot be encoded to quarantine), checked against the fence in their own
 * transaction. model/README.md ("The fleet model") explains what is modelled and what is not.
 *
 * Every step that stands for code names it in a comment of the fixed form
 *     models: crates/outbox-relay/src/fleet/registry/lease.rs::claim
 * (e2e/tests/it/model.rs checks that each of those functions exists).
 *
 * Bounds and switches (all -D at `spin -a` time):
 *   AGGS (aggregates, 1..2), EVENTS (per aggregate, 1..3), EXPIRIES (how many times a lease may
 *   run out while its owner is frozen), RELEASES (how many times an owner may give its lease
 *   back), KILLS (how many times an instance holding the lease may be killed, at any step),
 *   POISON (1: aggregate 1's first event cannot be encoded and goes to quarantine; its
 *   successors wait).
 * Mutant (must make SPIN find a violation):
 *   MUTANT_NO_FENCE  the epoch checked before the effect's transaction, in a statement of its
 *                    own, not in the transaction that deletes or moves the rows
 */

#ifndef AGGS
#define AGGS 2
#endif
#ifndef EVENTS
#define EVENTS 2
#endif
#ifndef EXPIRIES
#define EXPIRIES 1
#endif
#ifndef RELEASES
#define RELEASES 1
#endif
#ifndef POISON
#define POISON 0
#endif
#ifndef KILLS
#define KILLS 0
#endif

#define RELAYS 2
#define NSEQ (AGGS * EVENTS)
#define BIT(s) (1 << (s))
#define RBIT(r) (1 << (r))

/* ------------------------------------------------------------------------------------------ */
/* The fleet database: the registry entry of the one outbox database.                          */
byte reg_owner;       /* fleet_databases.owner: the instance (1-based), 0 = none */
byte reg_epoch;       /* fleet_databases.epoch: + 1 at every claim */
bit reg_expired;      /* lease_until < now(): a lease period passed since the owner's last renew */

/* ------------------------------------------------------------------------------------------ */
/* The outbox database. Seq sets are bit masks over seqs 1..NSEQ.                             */
byte fence;           /* the fence row's epoch (0: no row yet) */
byte fence_share;     /* instances whose open transaction holds the fence row `for share` */
byte committed;       /* ghost: every seq that committed */
byte present;         /* committed, neither deleted nor moved: what a read sees */
byte quarantined;     /* outbox_quarantine */
byte poison;          /* rows no instance can encode */
byte seqs_of[AGGS];   /* the seqs of each aggregate's events */
byte agg[NSEQ + 1];   /* aggregate of a seq */
byte prv[NSEQ + 1];   /* the aggregate's previous event, 0 = none */
byte last_seq[AGGS];
byte events_of[AGGS];
byte nextval = 1;

/* ------------------------------------------------------------------------------------------ */
/* The broker and the consumer: what arrived (an idempotent consumer records a seq once).     */
byte arrived;

/* ------------------------------------------------------------------------------------------ */
/* Time. `fresh[r]`: instance r's last successful renew started less than half a lease ago
 * (the publish guard, on its own monotonic clock). A lease runs out only a full lease after
 * the renew that set it, so never while its owner is fresh: the step that lets it run out
 * takes the owner's freshness with it. */
bit fresh[RELAYS];
byte expiries;
byte releases;
byte kills;
bit killing[RELAYS]; /* instance r is being killed (the chaos step below, the relay's `unless`) */
byte runs[RELAYS];    /* the epoch instance r's relay runs at, 0 = none (it was killed, or stopped) */

/* The seqs of the aggregates that have a row in quarantine: they wait for an operator. */
#if AGGS == 1
#define HELD ((quarantined & seqs_of[0]) -> seqs_of[0] : 0)
#else
#define HELD (((quarantined & seqs_of[0]) -> seqs_of[0] : 0) | ((quarantined & seqs_of[1]) -> seqs_of[1] : 0))
#endif

/* ------------------------------------------------------------------------------------------ */
/* orders-svc (any producer): commits the aggregates' events in any interleaving.             */
inline commit(a) {
  /* one committed transaction: the event's row, its seq from the outbox's sequence */
  s = nextval; nextval++;
  agg[s] = a; prv[s] = last_seq[a]; last_seq[a] = s;
  seqs_of[a] = seqs_of[a] | BIT(s);
  if
  :: POISON && a == 0 && events_of[a] == 0 -> poison = poison | BIT(s)
  :: else
  fi;
  events_of[a]++;
  committed = committed | BIT(s); present = present | BIT(s);
  printf("orders-svc    event appended seq=%d aggregate=%d\n", s, a + 1);
  s = 0
}

active proctype writer() {
  byte s;
  do
  :: atomic { events_of[0] < EVENTS -> commit(0) }
  :: atomic { AGGS > 1 && events_of[AGGS - 1] < EVENTS -> commit(AGGS - 1) }
  :: nextval > NSEQ -> break
  od
}

/* ------------------------------------------------------------------------------------------ */
/* Time and chaos: an instance frozen (SIGSTOP, a stall) for a full lease; one killed.        */
active proctype clock() {
end:
  do
  :: atomic {
       expiries < EXPIRIES && reg_owner != 0 && !reg_expired && runs[reg_owner - 1] == reg_epoch ->
       expiries++; reg_expired = 1; fresh[reg_owner - 1] = 0;
       printf("relay-svc-%d  (frozen for a lease: its lease at epoch %d ran out)\n", reg_owner, reg_epoch)
     }
  :: atomic {
       /* nobody renews a killed instance's lease: it runs out, always */
       reg_owner != 0 && !reg_expired && runs[reg_owner - 1] != reg_epoch ->
       reg_expired = 1;
       printf("relay-svc-%d  (killed: its lease at epoch %d ran out)\n", reg_owner, reg_epoch)
     }
  :: atomic {
       /* an instance holding a lease is killed, at whatever step it is */
       kills < KILLS && runs[0] != 0 -> kills++; killing[0] = 1
     }
  :: atomic {
       kills < KILLS && runs[1] != 0 -> kills++; killing[1] = 1
     }
  od
}

/* ------------------------------------------------------------------------------------------ */
/* A relay instance: the fleet's tick (claim, renew, release) and the database's relay loop.  */

/* Renew every lease held at its epoch; a lease not renewed is lost: the relay stops at once. */
inline renew() {
  /* models: crates/outbox-relay/src/fleet/registry/lease.rs::renew */
  atomic {
    if
    :: reg_owner == me && reg_epoch == ep -> reg_expired = 0; fresh[me - 1] = 1
    :: else -> stop = 1;
       printf("relay-svc-%d  fleet: lease lost at epoch %d (now %d): relay stopped\n", me, ep, reg_epoch)
    fi
  }
}

/* The effect of a fenced write, applied in its transaction. Rows another instance deleted or
 * moved first are not there any more: the statement changes the others only. */
inline apply_effect(rows, to_quarantine) {
  d_step {
    s = 1;
    do
    :: s > NSEQ -> break
    :: else ->
       if
       :: (rows & BIT(s)) && to_quarantine ->
          printf("relay-svc-%d  relay: quarantine seq=%d (epoch %d, fence %d)\n", me, s, ep, fence)
       :: (rows & BIT(s)) && !to_quarantine ->
          printf("relay-svc-%d  relay: delete seq=%d (epoch %d, fence %d)\n", me, s, ep, fence)
       :: else
       fi;
       s++
    od;
    s = 0
  };
  assert(fence == ep);                  /* every effect commits under the current epoch */
  if
  :: to_quarantine ->
     assert((rows & ~poison) == 0);
     quarantined = quarantined | (rows & present)
  :: else ->
     assert((rows & ~arrived) == 0)     /* nothing leaves the outbox before it reached the broker */
  fi;
  present = present & ~rows
}

/* A fenced write: the fence row read `for share` in the effect's own transaction, so the next
 * owner's fence::take waits for it, and an older epoch changes nothing. */
inline fenced(rows, to_quarantine) {
#ifdef MUTANT_NO_FENCE
  /* the epoch checked first, in a statement of its own ... */
  if
  :: fence == ep -> printf("relay-svc-%d  relay: fence holds epoch %d\n", me, ep)
  :: else -> stop = 1
  fi;
  /* ... and the rows deleted or moved in a transaction that does not look at the fence */
  if
  :: !stop -> atomic { apply_effect(rows, to_quarantine) }
  :: else
  fi;
#else
  atomic {
    /* begin; select epoch from fence for share */
    if
    :: fence == ep -> fence_share = fence_share | RBIT(me)
    :: else -> stop = 1
    fi
  };
  if
  :: !stop ->
     atomic {
       /* the delete or move, then commit (the share lock goes with it) */
       apply_effect(rows, to_quarantine);
       fence_share = fence_share & ~RBIT(me)
     }
  :: else
  fi;
#endif
  if
  :: stop -> printf("relay-svc-%d  relay: fenced out at epoch %d (fence %d): relay stopped\n", me, ep, fence)
  :: else
  fi
}

/* models: crates/outbox-relay/src/fleet/mod.rs::run */
proctype relay(byte me) {
  byte ep;            /* the epoch of the lease this instance holds */
  byte batch;         /* rows read, not sent yet */
  byte sent;          /* rows sent and confirmed in this batch */
  byte wave, qwave, s, a;
  bit stop;

idle:
#if KILLS > 0
  {
#endif
  atomic {
    ep = 0; batch = 0; sent = 0; wave = 0; qwave = 0; s = 0; a = 0; stop = 0;
    fresh[me - 1] = 0; runs[me - 1] = 0
  };
end_idle:
  atomic {
    /* models: crates/outbox-relay/src/fleet/registry/lease.rs::claim */
    /* a free database, or one whose lease ran out: epoch + 1 */
    (reg_owner == 0 || reg_expired) ->
    reg_epoch++; reg_owner = me; reg_expired = 0; ep = reg_epoch; fresh[me - 1] = 1;
    runs[me - 1] = ep;
    printf("relay-svc-%d  fleet: claimed the database at epoch %d\n", me, ep)
  };
  atomic {
    /* models: crates/outbox-relay/src/fleet/fence.rs::take */
    /* an update of the fence row: it waits for every transaction holding it `for share` */
    (fence_share & ~RBIT(me)) == 0 ->
    if
    :: fence < ep -> fence = ep;
       printf("relay-svc-%d  fleet: fence taken at epoch %d\n", me, ep)
    :: else -> stop = 1;
       printf("relay-svc-%d  fleet: fence holds epoch %d > %d: relay stopped\n", me, fence, ep)
    fi
  };
  if
  :: stop -> goto idle
  :: else
  fi;

cycle:
  /* models: crates/outbox-relay/src/fleet/registry/lease.rs::renew */
  if
  :: !fresh[me - 1] -> renew(); if :: stop -> goto idle :: else fi
  :: else
  fi;
  if
  :: atomic {
       /* models: crates/outbox-relay/src/fleet/registry/lease.rs::release */
       /* above quota: the relay stopped between batches, the lease given back at its epoch */
       releases < RELEASES && reg_owner == me && reg_epoch == ep ->
       releases++; reg_owner = 0; reg_expired = 0;
       printf("relay-svc-%d  fleet: released the database at epoch %d\n", me, ep)
     };
     goto idle
  :: true
  fi;
end_wait:
  atomic {
    /* models: crates/outbox-relay/src/db.rs::fetch_batch */
    /* the rows present, in seq order, without the aggregates waiting for quarantine */
    (present & ~HELD) != 0 -> batch = present & ~HELD
  };

  /* models: crates/outbox-relay/src/cycle/waves.rs::publish_in_waves */
  do
  :: batch == 0 -> break
  :: else ->
     d_step {
       /* the wave: the first row of every aggregate in the batch */
       wave = 0; a = 0;
       do
       :: a == AGGS -> break
       :: else ->
          s = 1;
          do
          :: s > NSEQ -> break
          :: batch & seqs_of[a] & BIT(s) -> wave = wave | BIT(s); break
          :: else -> s++
          od;
          a++
       od;
       qwave = wave & poison; wave = wave & ~poison;
       /* a row that cannot be encoded: its aggregate's later rows wait */
       s = 1;
       do
       :: s > NSEQ -> break
       :: else -> if :: qwave & BIT(s) -> batch = batch & ~seqs_of[agg[s]] :: else fi; s++
       od;
       batch = batch & ~wave; s = 0; a = 0
     };
     if
     :: qwave != 0 ->
        /* models: crates/outbox-relay/src/db.rs::quarantine */
        fenced(qwave, 1);
        qwave = 0;
        if :: stop -> goto idle :: else fi
     :: else
     fi;
     if
     :: wave != 0 ->
        /* models: crates/outbox-relay/src/lease.rs::check */
        /* The publish guard: the last renew started less than half a lease ago. It may fail
         * now (renew, or stop), or pass and the instance freeze right after, the wave checked. */
        if
        :: !fresh[me - 1] -> renew(); if :: stop -> goto idle :: else fi
        :: else
        fi;
        atomic {
          /* models: crates/outbox-relay/src/publisher.rs::publish_wave */
          /* sent, and confirmed by the broker; the consumer records a seq once */
          s = 1;
          do
          :: s > NSEQ -> break
          :: else ->
             if
             :: (wave & BIT(s)) && !(arrived & BIT(s)) ->
                /* each aggregate's events arrive first in their order */
                assert(prv[s] == 0 || (arrived & BIT(prv[s])));
                arrived = arrived | BIT(s);
                printf("relay-svc-%d  relay: sent seq=%d aggregate=%d (epoch %d)\n", me, s, agg[s] + 1, ep)
             :: (wave & BIT(s)) && (arrived & BIT(s)) ->
                printf("relay-svc-%d  relay: sent seq=%d aggregate=%d again (epoch %d)\n", me, s, agg[s] + 1, ep)
             :: else
             fi;
             s++
          od;
          sent = sent | wave; wave = 0; s = 0
        }
     :: else
     fi
  od;
  if
  :: sent != 0 ->
     /* models: crates/outbox-relay/src/db.rs::delete */
     fenced(sent, 0);
     sent = 0;
     if :: stop -> goto idle :: else fi
  :: else
  fi;
  goto cycle
#if KILLS > 0
  } unless {
    atomic {
      /* Killed at any step while it holds a lease: its sessions end, an open transaction rolls
       * back (the fence row's share lock goes with it). It restarts with nothing in memory. */
      killing[me - 1] ->
      killing[me - 1] = 0; fence_share = fence_share & ~RBIT(me);
      printf("relay-svc-%d  (killed at epoch %d; restarted)\n", me, ep)
    }
  };
  goto idle
#endif
}

/* ------------------------------------------------------------------------------------------ */
/* When nothing can move any more: nothing committed is missing.                               */
active proctype end_check() {
  timeout ->
  assert(nextval == NSEQ + 1);
  /* every committed event arrived, or is in quarantine, or waits behind one there */
  assert((committed & ~arrived & ~quarantined & ~HELD) == 0);
  /* and the outbox keeps only the rows waiting for an operator */
  assert((present & ~HELD) == 0)
}

init {
  atomic {
    run relay(1);
    run relay(2)
  }
}
