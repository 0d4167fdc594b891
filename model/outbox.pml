/*
 * The outbox protocol, model-checked with SPIN: orders-svc's writers, relay-svc's leader, its
 * read from a floor, waves, confirms, returns and deletes, and mail-svc's consumers with their
 * watermark and holds, over a broker that may duplicate, reorder, return, nack and break, with
 * relays and consumers crashing.
 * model/README.md explains what is modelled, how, and what is not.
 *
 * Every step that stands for code names it in a comment of the fixed form
 *     models: crates/outbox-relay/src/cycle/batch.rs::cycle
 * (e2e/tests/it/model.rs checks that each of those functions exists).
 *
 * Bounds and switches (all -D at `spin -a` time):
 *   ORDERS, EVENTS (per order), ABORTS (rolled-back transactions), WRITERS, RELAYS (1..2),
 *   CONSUMERS (1..2), BATCH (relay BATCH_SIZE), MAIL_BATCH (1..2, mail-svc BATCH_SIZE),
 *   FAULTS (budget shared by every fault: crashes, returns, nacks, broken connections,
 *   duplicates, failed deletes, takeovers), POISON (events mail-svc dead-letters),
 *   FLOOR (1: the relay reads from its floor, see advance_floor; 0: from the head of the table).
 * Mutants (each must make SPIN find a violation):
 *   MUTANT_SEED_HWM          the seed's relay: read `seq > offset`, delete `seq <= last`
 *   MUTANT_NO_HOLD           mail-svc without its hold: an early event is processed at once
 *   MUTANT_RETURNS_BY_ORDER  a basic.return counted for whichever confirm completes next
 *                            (lapin's pairing) instead of the message its message_id names
 *   MUTANT_FLOOR_PAST_RUNNING_WRITER  the read floor moved to the sequence's head (M read now)
 *                            without waiting for the writers still running
 *   MUTANT_SEQ_BEFORE_XID    a writer takes its seq before its xid, so a checkpoint's xid bound
 *                            does not cover it
 *   MUTANT_FLOOR_ABOVE_HOLES the floor bounded by the first row read at or above it, the holes
 *                            read with it left out: holes that fill the batch let it pass rows
 *                            nobody read
 */

#ifndef ORDERS
#define ORDERS 2
#endif
#ifndef EVENTS
#define EVENTS 2
#endif
#ifndef ABORTS
#define ABORTS 1
#endif
#ifndef WRITERS
#define WRITERS 2
#endif
#ifndef RELAYS
#define RELAYS 2
#endif
#ifndef CONSUMERS
#define CONSUMERS 2
#endif
#ifndef BATCH
#define BATCH 2
#endif
#ifndef MAIL_BATCH
#define MAIL_BATCH 2
#endif
#ifndef FAULTS
#define FAULTS 1
#endif
#ifndef POISON
#define POISON 1
#endif
/* The relay's read: 1 = from its floor (seq >= floor, plus the holes below it), 0 = from the
 * head of the table (the oldest rows present). See advance_floor. */
#ifndef FLOOR
#define FLOOR 1
#endif
#ifdef MUTANT_SEED_HWM
#undef FLOOR
#define FLOOR 0   /* the seed read above its offset, and had no floor */
#endif

/* Which faults the budget may be spent on (each 0 or 1). */
#ifndef F_DUP
#define F_DUP 1
#endif
#ifndef F_RETURN
#define F_RETURN 1
#endif
#ifndef F_NACK
#define F_NACK 1
#endif
#ifndef F_BREAK
#define F_BREAK 1
#endif
#ifndef F_DELETE
#define F_DELETE 1
#endif
#ifndef F_TAKEOVER
#define F_TAKEOVER 1
#endif
#ifndef F_RCRASH
#define F_RCRASH 1
#endif
#ifndef F_CCRASH
#define F_CCRASH 1
#endif

#define NSEQ (ORDERS * EVENTS + ABORTS)
#define BIT(s) (1 << (s))
#define OBIT(o) (1 << (o))
#define WBIT(w) (1 << (w))
/* seqs 1..s */
#define UPTO(s) (BIT((s) + 1) - 2)
/* seqs lo..hi-1 */
#define RANGE(lo, hi) (UPTO((hi) - 1) & ~UPTO((lo) - 1))

/* ------------------------------------------------------------------------------------------ */
/* The orders database: orders and outbox (orders-svc writes, relay-svc reads and deletes).   */
/* Seq sets are bit masks over seqs 1..NSEQ, order sets over orders 0..ORDERS-1.              */

short pending;        /* inserted by an open transaction: invisible to every reader */
short committed;      /* ghost: every seq that ever committed */
short present;        /* committed and not deleted: what a read sees */
short seqs_of[ORDERS];/* the seqs of each order's events (aggregate_id) */
byte ord[NSEQ + 1];   /* aggregate_id of a seq */
byte prv[NSEQ + 1];   /* prev_seq of a seq, 0 = none (OrderCreated) */
byte nextval = 1;     /* the outbox's identity sequence */
byte last_event_seq[ORDERS]; /* orders.last_event_seq, as committed */
byte appended[ORDERS];/* events of the order committed or in an open transaction */
bit rowlock[ORDERS];  /* the order's row lock (select ... for update), held until commit */
byte aborts;
byte to_write = ORDERS * EVENTS; /* events not committed yet */
short poison;         /* events mail-svc judges poison (dead-letters) */
byte poisons;
/* Transaction ids. Only their order matters: a relay checkpoint's X is younger than every xid
 * held when it was taken and older than every xid taken after. So an xid is a writer's bit in
 * `running` (it holds one: its transaction is open), and "the snapshot's xmin >= X" is "every
 * writer that was running when X was taken has finished": `cp_wait[r]`, the writers still
 * running of relay r's checkpoint, is empty. */
byte running;         /* writers holding an xid (pg_current_xact_id), until commit or rollback */
byte cp_wait[RELAYS]; /* relay r's checkpoint: the writers older than its X, still running */

/* ------------------------------------------------------------------------------------------ */
/* The broker: one queue, a bag (any order), counting copies per seq.                          */
byte q[NSEQ + 1];
byte qsize;

/* ------------------------------------------------------------------------------------------ */
/* mail-svc's database and the properties' ghosts.                                             */
byte wm[ORDERS];      /* order_progress.last_seq, 0 = none */
short hld;            /* held_events */
short mailed;         /* mails: one row per seq */
short dl;             /* ghost: dead-lettered seqs */
short excused;        /* ghost: dead-lettered, or a predecessor was (never mailed, rightly) */
byte lastmail[ORDERS];/* ghost: the last mailed seq of each order */

/* ------------------------------------------------------------------------------------------ */
/* Leadership and faults.                                                                      */
byte lock_holder;     /* the relay (1-based) whose session holds the advisory lock, 0 = none */
bit leading[RELAYS];  /* the relay runs `lead` (it may have lost the lock without knowing) */
bit lost[RELAYS];     /* its lease's heartbeat found the lock gone: lease.lost() resolves */
bit late[RELAYS];     /* taken over while frozen right after a lease check: one wave may
                       * still go out when it wakes up */
bit rcrash[RELAYS];   /* the relay process dies now */
short inflight[RELAYS];/* its batch being published (for the faults to aim at) */
short deleting[RELAYS];/* its delete running in the background */
byte faults;

#define FAULT (faults < FAULTS)
#define writers_done (to_write == 0)
/* Every committed event mailed, except those dead-lettered and their successors. */
#define settled (writers_done && (committed & ~mailed & ~excused) == 0)

/* The seqs of the orders in order set `os`. */
#if ORDERS == 1
#define SEQS_OF(os) (((os) & 1) -> seqs_of[0] : 0)
#elif ORDERS == 2
#define SEQS_OF(os) ((((os) & 1) -> seqs_of[0] : 0) | (((os) & 2) -> seqs_of[1] : 0))
#else
#define SEQS_OF(os) ((((os) & 1) -> seqs_of[0] : 0) | (((os) & 2) -> seqs_of[1] : 0) | (((os) & 4) -> seqs_of[2] : 0))
#endif

/* ------------------------------------------------------------------------------------------ */
/* Ghost bookkeeping for the properties.                                                       */

/* An event is excused when it or a predecessor was dead-lettered: its order's chain stops
 * there (mail-svc holds the successors until an operator acts), so it is rightly never mailed. */
inline excuse_successors() {
  t = 1;
  do
  :: t > NSEQ -> break
  :: t <= NSEQ ->
     if
     :: (committed & BIT(t)) && !(excused & BIT(t)) && prv[t] != 0 && (excused & BIT(prv[t])) ->
        excused = excused | BIT(t); t = 1
     :: else -> t++
     fi
  od
}

/* A mail is queued: the safety properties, checked at the moment it happens. */
inline mail(m) {
  assert(!(mailed & BIT(m)));          /* exactly once: never a second mail for an event */
  assert(committed & BIT(m));          /* no mail for an event that never committed */
  assert(prv[m] == lastmail[ord[m]]);  /* each order's mails follow its chain */
  mailed = mailed | BIT(m);
  lastmail[ord[m]] = m;
  printf("mail-svc  [mail] send seq=%d order=%d\n", m, ord[m] + 1)
}

/* ------------------------------------------------------------------------------------------ */
/* orders-svc                                                                                  */

#if ORDERS == 1
#define CHOOSE_ORDER(o) if :: appended[0] < EVENTS && !rowlock[0] -> o = 0 fi
#elif ORDERS == 2
#define CHOOSE_ORDER(o) if :: appended[0] < EVENTS && !rowlock[0] -> o = 0 \
                           :: appended[1] < EVENTS && !rowlock[1] -> o = 1 fi
#else
#define CHOOSE_ORDER(o) if :: appended[0] < EVENTS && !rowlock[0] -> o = 0 \
                           :: appended[1] < EVENTS && !rowlock[1] -> o = 1 \
                           :: appended[2] < EVENTS && !rowlock[2] -> o = 2 fi
#endif

inline take_seq() {
  /* models: orders-svc/src/db.rs::write_round */
  /* The seq is taken now, visible only at commit; prev_seq is the order's last event,
   * committed before (the row lock orders an order's writers). */
  s = nextval;
  nextval++;
  printf("orders-svc  insert{order_id=%d}: seq=%d taken\n", o + 1, s);
  ord[s] = o;
  prv[s] = last_event_seq[o];
  pending = pending | BIT(s);
  appended[o]++;
  seqs_of[o] = seqs_of[o] | BIT(s);
  if
  :: poisons < POISON -> poisons++; poison = poison | BIT(s)
  :: true
  fi
}

/* The outbox's BEFORE INSERT statement trigger calls pg_current_xact_id(): the transaction
 * holds an xid before the insert takes its seq (xids are handed out in increasing order). */
#define TAKE_XID(w) running = running | WBIT(w)

/* The transaction ends (COMMIT or ROLLBACK): its xid is no longer running, so no checkpoint
 * waits for it any more. */
#if RELAYS > 1
#define END_XID(w) running = running & ~WBIT(w); cp_wait[0] = cp_wait[0] & ~WBIT(w); \
                   cp_wait[1] = cp_wait[1] & ~WBIT(w)
#else
#define END_XID(w) running = running & ~WBIT(w); cp_wait[0] = cp_wait[0] & ~WBIT(w)
#endif

/* A writer task of the group commit. A transaction appends one event; two writers give every
 * interleaving of "seq taken" and "committed" across orders (a batch of several events commits
 * them at once, which is one of those interleavings). */
proctype writer(byte w) {
  byte o, s, t;
end_idle:
  do
  :: atomic {
       /* models: orders-svc/src/db.rs::lock_orders */
       CHOOSE_ORDER(o);
       rowlock[o] = 1;
#ifdef MUTANT_SEQ_BEFORE_XID
       take_seq()
     }
     atomic {
       TAKE_XID(w);
       printf("orders-svc  insert{order_id=%d seq=%d}: xid taken\n", o + 1, s)
     }
#else
       /* The insert: the trigger's xid, then the seq, in one step. A read between the two
        * would see this writer running without a seq yet: the checkpoint it takes waits for
        * the writer, though its M does not cover the seq; waiting longer only holds the floor
        * lower. (MUTANT_SEQ_BEFORE_XID splits them the wrong way round.) */
       TAKE_XID(w);
       take_seq()
     }
#endif
     if
     :: d_step {
          /* models: orders-svc/src/batch.rs::apply */
          /* COMMIT: the row appears; the row lock goes */
          pending = pending & ~BIT(s);
          committed = committed | BIT(s);
          present = present | BIT(s);
          last_event_seq[o] = s;
          rowlock[o] = 0;
          END_XID(w);
          to_write--;
          excuse_successors();
          printf("orders-svc  upsert{order_id=%d seq=%d}: event appended\n", o + 1, s);
          o = 0; s = 0; t = 0
        }
     :: atomic {
          aborts < ABORTS ->
          /* ROLLBACK (a database error, or a lost creation race): the seq is a gap */
          aborts++;
          pending = pending & ~BIT(s);
          poison = poison & ~BIT(s);
          appended[o]--;
          seqs_of[o] = seqs_of[o] & ~BIT(s);
          rowlock[o] = 0;
          END_XID(w);
          o = 0; s = 0
        }
     fi
  od
}

/* ------------------------------------------------------------------------------------------ */
/* relay-svc                                                                                   */

/* The rows a read may return: present, at or above the floor or a hole (FLOOR), not of a
 * skipped order, not a skipped seq. */
#if defined(MUTANT_SEED_HWM)
#define CANDIDATES(skip_orders, skip_seqs) (present & ~SEQS_OF(skip_orders) & ~(skip_seqs) & ~UPTO(hwm))
#elif FLOOR
#define CANDIDATES(skip_orders, skip_seqs) \
  (present & (~UPTO(floor - 1) | holes) & ~SEQS_OF(skip_orders) & ~(skip_seqs))
#else
#define CANDIDATES(skip_orders, skip_seqs) (present & ~SEQS_OF(skip_orders) & ~(skip_seqs))
#endif

/* The read's floor (FLOOR), computed by the read's own statement, inside the read's d_step
 * after the rows are read (the statement's snapshot is the read's, or an older one).
 *
 * The statement reads the snapshot's xmin (the oldest xid still running), a fresh xid X_k of
 * the relay's own and the sequence's last value M_k. Checkpoint (M_{k-1}, X_k): a writer holding
 * a seq <= M_{k-1} took its xid before its seq, so before M_{k-1} was read, so before X_k. Once a
 * later statement sees xmin >= X_k (`cp_wait[r]` empty), every seq <= M_{k-1} is final
 * (committed or rolled back): safe = M_{k-1}. The code may keep several checkpoints waiting;
 * the model keeps one (the next is taken when it resolves): the same rule, the floor moving
 * less often.
 *
 * floor := min(safe + 1, the first row the read returned, the lowest seq in flight), never
 * down. The rows passed that are still present and belong to a held order become holes, read
 * by key (CANDIDATES) until they are gone. The first row returned may be a hole (holes are
 * read with the range, in seq order, under the same LIMIT): then the floor stays, since the
 * rows at or above it that did not fit in the batch were not read. */
inline advance_floor() {
  /* models: crates/outbox-relay/src/floor.rs::next */
#ifdef MUTANT_FLOOR_PAST_RUNNING_WRITER
  /* safe = M read now: the writers still running below it are not waited for */
  safe = nextval - 1;
#else
  if
  :: cp_on && cp_wait[r] == 0 ->
     safe = cp_m; cp_on = 0;
     printf("relay-svc-%d  relay: xmin passed the checkpoint: seq <= %d final\n", r + 1, safe)
  :: else
  fi;
  if
  :: !cp_on -> cp_on = 1; cp_m = last_m; cp_wait[r] = running
  :: else
  fi;
  last_m = nextval - 1;
#endif
  /* The rows in flight: the batch being published and the read-ahead; the rows just read
   * are one of them. */
  t = safe + 1;
#ifdef MUTANT_FLOOR_ABOVE_HOLES
  /* bounded by the first row read at or above the floor only, as if the holes did not count */
  k = floor;
#else
  k = 1;
#endif
  do
  :: k >= t -> break
  :: k < t && ((batch | ahead) & BIT(k)) -> t = k
  :: else -> k++
  od;
  if
  :: t > floor ->
     holes = holes | (present & RANGE(floor, t) & SEQS_OF(held));
     printf("relay-svc-%d  relay: floor=%d (safe=%d, holes=%d as a seq bit mask)\n", r + 1, t, safe, holes & present);
     floor = t
  :: else
  fi;
  holes = holes & present;
  k = 0; t = 0
}

/* The oldest BATCH rows among the candidates, in one snapshot (inside an atomic step). */
inline fetch_batch(into, skip_orders, skip_seqs) {
  /* models: crates/outbox-relay/src/db.rs::fetch_batch */
  d_step {
    into = 0; t = 0; k = 1;
    do
    :: k > NSEQ || t >= BATCH -> break
    :: else ->
       if
       :: CANDIDATES(skip_orders, skip_seqs) & BIT(k) -> into = into | BIT(k); t++
       :: else
       fi;
       k++
    od;
    k = 0; t = 0;
#if FLOOR
    advance_floor()
#endif
  }
}

/* Waits for the background delete, then deletes again what failed before (inside an atomic
 * step). A delete that fails leaves its seqs out of reads until a later one succeeds. */
inline settle_deletes() {
  /* models: crates/outbox-relay/src/cycle/deletes.rs::settle_deletes */
  if
  :: deleting[r] != 0 ->
     if
     :: present = present & ~deleting[r]
     :: FAULT && F_DELETE -> faults++; undeleted = undeleted | deleting[r]; del_failed = 1;
        printf("relay-svc-%d  relay: cannot delete the confirmed seq=%d.. (left out of reads, deleted again before the next one)\n", r + 1, deleting[r])
     fi;
     deleting[r] = 0
  :: else
  fi;
  if
  :: !del_failed && undeleted != 0 ->
     if
     :: present = present & ~undeleted; undeleted = 0;
        printf("relay-svc-%d  relay: deleted the confirmed seq=.. at last\n", r + 1)
     :: FAULT && F_DELETE -> faults++
     fi
  :: else
  fi;
  del_failed = 0
}

/* One relay instance: stands by until it holds the leader lock, then runs cycles until it
 * crashes or its lease finds the lock gone. Each atomic step below is one interleaving point;
 * the other processes run between any two of them. */
proctype relay(byte r) {
  byte held;          /* orders held back by a returned or nacked event (Relay::held) */
  short batch;        /* the batch being published */
  short rest;         /* its rows not sent yet */
  short wave;         /* the wave in flight */
  short retn, nacked, attributed;
  byte blocked;       /* orders with an undelivered event in this batch */
  byte refused;       /* orders to hold after this batch */
  short delivered;
  byte dorders;       /* orders that had an event delivered */
  short ahead;        /* the read-ahead (Relay::prefetched) */
  bit from_ahead, ahead_due, more, broken, interrupted, del_failed;
  short undeleted;    /* confirmed seqs whose delete failed (Relay::undeleted) */
  byte hwm;           /* MUTANT_SEED_HWM: the seed's offset */
  byte floor = 1;     /* reads take seq >= floor ... */
  short holes;        /* ... and these rows below it, by key */
  byte safe;          /* every seq <= safe is final */
  byte last_m;        /* M_{k-1}: the sequence's last value at the previous read */
  bit cp_on;          /* a checkpoint (cp_m, X) waits for xmin >= X (cp_wait[r]) */
  byte cp_m;
  byte s, t, k, n;

  /* Relay 1 took the lock first (see init). A test of the parameter, not of lock_holder: a
   * step on local data only, which partial-order reduction does not interleave (a test of the
   * global lock would double the states: every state with and without relay 2's first step). */
  if
  :: r == 0 -> goto leader
  :: else
  fi;
end_standby:
  do
  :: atomic {
       /* the delete of a term that ended with lease.lost() (lead's finish_deletes) */
       deleting[r] != 0 ->
       if
       :: present = present & ~deleting[r]
       :: FAULT && F_DELETE -> faults++
       fi;
       deleting[r] = 0
     }
  :: atomic {
       /* models: crates/outbox-relay/src/db.rs::try_lock */
       lock_holder == 0 -> lock_holder = r + 1; leading[r] = 1;
       printf("relay-svc-%d  relay: active (holding the leader lock)\n", r + 1);
       break
     }
  :: atomic {
       /* models: crates/outbox-relay/src/db.rs::terminate_stale_leader */
       /* The holder's session was silent for LEADER_LEASE (it froze, or its host vanished):
        * terminate it and take over. The old leader does not know yet. */
       lock_holder != 0 && lock_holder != r + 1 && FAULT && F_TAKEOVER &&
       (inflight[lock_holder - 1] != 0 || deleting[lock_holder - 1] != 0) ->
       faults++; late[lock_holder - 1] = 1; lock_holder = r + 1; leading[r] = 1;
       printf("relay-svc-%d  relay: the leader's lock session was silent for 10.0s (LEADER_LEASE 10s): terminated it, taking over\n", r + 1);
       break
     }
  od;

leader:
  /* models: crates/outbox-relay/src/cycle/mod.rs::lead */
  {
    skip;
    /* models: crates/outbox-relay/src/cycle/batch.rs::cycle */
    /* Drained, it waits (models: crates/outbox-relay/src/cycle/wake.rs::wait) for a NOTIFY or the poll (a
     * row to read), or the end of a hold. */
end_cycle:
    if
    :: atomic {
         /* A relay whose lock was taken over publishes nothing new: its lease check fails
          * (the takeover needed a full LEADER_LEASE of silence, the check wants a ping less
          * than half a lease old). Between cycles nothing else happens until lease.lost(). */
         lock_holder != r + 1 -> lost[r] = 1
       }
    :: atomic {
      lock_holder == r + 1 &&
      (ahead != 0 || CANDIDATES(held, undeleted) != 0 || held != 0 || undeleted != 0
       || deleting[r] != 0) ->
      /* models: crates/outbox-relay/src/cycle/holds.rs::held_orders */
      /* a hold ends when its own backoff has elapsed: at any time */
      if
      :: held & 1 -> held = held & ~1
      :: held & 2 -> held = held & ~2
      :: held & 4 -> held = held & ~4
      :: true
      fi;
      if
      :: ahead == 0 && held != 0 && CANDIDATES(held, undeleted) == 0 ->
         /* nothing else to read: the wait ends with the earliest hold */
         held = held & (held - 1)
      :: else
      fi;
      if
      :: ahead != 0 -> batch = ahead; ahead = 0; from_ahead = 1
      :: else ->
         /* models: crates/outbox-relay/src/cycle/deletes.rs::finish_deletes */
         settle_deletes();
         fetch_batch(batch, held, undeleted);
         from_ahead = 0
      fi;
      if
      :: batch != 0 ->
         inflight[r] = batch; rest = batch;
         d_step {
           n = 0; k = 1;
           do
           :: k > NSEQ -> break
           :: else -> if :: batch & BIT(k) -> n++ :: else fi; k++
           od;
           more = (n >= BATCH || from_ahead); ahead_due = more;
           k = 0; n = 0
         }
      :: else
      fi
       }
    fi;
    if
    :: batch == 0 -> goto end_cycle
    :: else
    fi;

    /* models: crates/outbox-relay/src/cycle/waves.rs::publish_in_waves */
    do
    :: atomic {
         ahead_due ->
         /* The read-ahead, beside the waves: the previous batch's delete ends, then the next
          * batch is read without this batch's orders nor the held ones. */
         settle_deletes();
         if
         :: more ->
            d_step {
              n = 0; k = 1;
              do
              :: k > NSEQ -> break
              :: else -> if :: batch & BIT(k) -> n = n | OBIT(ord[k]) :: else fi; k++
              od
            };
            fetch_batch(ahead, held | n, undeleted);
            n = 0
         :: else
         fi;
         ahead_due = 0
       }
    :: atomic {
         wave == 0 && (rest & ~SEQS_OF(blocked)) != 0 && !broken && !interrupted ->
         /* models: crates/outbox-relay/src/lease.rs::check */
         if
         :: lock_holder != r + 1 && !late[r] ->
            /* the lease is not proven (the lock was taken over): nothing more goes out */
            interrupted = 1
         :: else ->
            /* the lock is held, or this wave passed its check just before the freeze */
            late[r] = 0;
            /* Wave k: the k-th event of every order of the batch not blocked. */
            d_step {
              n = 0; k = 1;
              do
              :: k > NSEQ -> break
              :: else ->
                 if
                 :: (rest & BIT(k)) && !(blocked & OBIT(ord[k])) && !(n & OBIT(ord[k])) ->
                    wave = wave | BIT(k); n = n | OBIT(ord[k])
                 :: else
                 fi;
                 k++
              od;
              rest = rest & ~wave; k = 0; n = 0
            };
            /* models: crates/outbox-relay/src/publisher.rs::publish_wave */
            /* All messages pipelined (mandatory, persistent); what the broker does with each: */
            s = 1;
            do
            :: s > NSEQ -> break
            :: s <= NSEQ && (!(wave & BIT(s)) || broken) -> s++
            :: s <= NSEQ && (wave & BIT(s)) && !broken ->
               assert(q[s] < 3);
               if
               :: q[s]++; qsize++
               :: FAULT && F_DUP -> faults++;
                  /* duplicated on its way into the queue */
                  q[s] = q[s] + 2; qsize = qsize + 2
               :: FAULT && F_RETURN -> faults++;
                  /* unroutable: a basic.return, then the ack */
                  retn = retn | BIT(s)
               :: FAULT && F_NACK -> faults++;
                  /* nacked: the broker may have enqueued it anyway */
                  nacked = nacked | BIT(s);
                  if :: q[s]++; qsize++ :: true fi
               :: FAULT && F_BREAK -> faults++;
                  /* the connection breaks: this message may be in the queue; no confirm
                   * comes for any message of the wave, and the rest are not sent */
                  broken = 1;
                  if :: q[s]++; qsize++ :: true fi
               fi;
               s++
            od;
            s = 0
         fi
       }
    :: atomic {
         wave != 0 ->
         /* The confirms of the wave. */
         /* models: crates/outbox-relay/src/publisher.rs::attribute */
         /* Which message did each return come for? lapin hands a return to whichever confirm
          * completes next (acks are coalesced, in any order); the relay matches it by the
          * returned message's message_id. */
#ifdef MUTANT_RETURNS_BY_ORDER
         k = 1;
         do
         :: k > NSEQ -> break
         :: else ->
            if
            :: retn & BIT(k) ->
               /* counted for the confirm of any message of the wave */
               s = 1;
               do
               :: s > NSEQ -> s = k; break
               :: s <= NSEQ && (wave & BIT(s)) -> break
               :: s <= NSEQ -> s++
               od;
               attributed = attributed | BIT(s)
            :: else
            fi;
            k++
         od;
         k = 0; s = 0;
#else
         attributed = retn;
#endif
         /* models: crates/outbox-relay/src/cycle/fate.rs::decide */
         /* models: crates/outbox-relay/src/cycle/waves.rs::settle */
         d_step {
         k = 1;
         do
         :: k > NSEQ -> break
         :: else ->
            if
            :: !(wave & BIT(k)) -> skip
            :: (wave & BIT(k)) && broken ->
               /* no answer: it stays, read again later */
               blocked = blocked | OBIT(ord[k])
            :: (wave & BIT(k)) && !broken && (nacked & BIT(k)) ->
               blocked = blocked | OBIT(ord[k]); refused = refused | OBIT(ord[k]);
               printf("relay-svc-%d  relay: seq=%d order=%d nacked by the broker; order held, retry=1 in 100ms\n", r + 1, k, ord[k] + 1)
            :: (wave & BIT(k)) && !broken && !(nacked & BIT(k)) && (attributed & BIT(k)) ->
               blocked = blocked | OBIT(ord[k]); refused = refused | OBIT(ord[k]);
               printf("relay-svc-%d  relay: seq=%d order=%d returned by the broker: 312 NO_ROUTE; order held, retry=1 in 100ms\n", r + 1, k, ord[k] + 1)
            :: (wave & BIT(k)) && !broken && !(nacked & BIT(k)) && !(attributed & BIT(k)) ->
               delivered = delivered | BIT(k); dorders = dorders | OBIT(ord[k]);
               printf("relay-svc-%d  relay: sent seq=%d order=%d\n", r + 1, k, ord[k] + 1)
            fi;
            k++
         od;
         k = 0; wave = 0; retn = 0; nacked = 0; attributed = 0
         }
       }
    :: else -> break
    od;

    atomic {
      inflight[r] = 0;
      /* the rows of blocked orders that were never sent stay too */
      if
      :: delivered != 0 ->
         held = held & ~dorders;
#ifdef MUTANT_SEED_HWM
         /* the seed: offset = the batch's last seq; delete seq <= last */
         k = NSEQ;
         do
         :: k == 0 || (delivered & BIT(k)) -> break
         :: else -> k--
         od;
         if :: k > hwm -> hwm = k :: else fi;
         k = 0;
         deleting[r] = UPTO(hwm)
#else
         /* exactly the delivered seqs, in the background */
         deleting[r] = delivered
#endif
      :: else
      fi;
      held = held | refused;
      if
      :: !more || (batch & ~delivered) != 0 -> settle_deletes()
      :: else
      fi;
      if
      :: broken ->
         /* the cycle fails: backoff, reconnect; its read-ahead is dropped */
         printf("relay-svc-%d  relay: broker connection broken, reconnecting\n", r + 1);
         ahead = 0
      :: interrupted -> ahead = 0
      :: else
      fi;
      batch = 0; rest = 0; blocked = 0; refused = 0; delivered = 0; dorders = 0;
      broken = 0; more = 0; from_ahead = 0
    };
    /* after an interrupted cycle: nothing until the lease is proven again (never: it is gone) */
    goto end_cycle
  } unless { rcrash[r] || lost[r] };

  atomic {
    if
    :: rcrash[r] ->
       /* the process is gone: its background delete may or may not have run */
       if
       :: present = present & ~deleting[r]
       :: true
       fi;
       deleting[r] = 0; undeleted = 0; hwm = 0;
       printf("relay-svc-%d  (killed, restarted)\n", r + 1)
       /* Its session ended with it, and with the session the lock. Whoever takes the lock
        * next starts a fresh term; the restarted instance and the standby are alike, so the
        * model lets the restarted one take it again (see the crash in chaos). */
    :: else ->
       /* lease.lost(): the cycle is abandoned (its wave in flight too); a new term starts
        * with no holds and no read-ahead. The background delete still runs (see standby).
        * Its failed deletes are forgotten too (the code keeps them for its next term): at
        * worst those rows go out again, which the other relay does anyway. */
       printf("relay-svc-%d  relay: lost the leader lock, standing by\n", r + 1);
       undeleted = 0
    fi;
    inflight[r] = 0; leading[r] = 0; lost[r] = 0; rcrash[r] = 0; late[r] = 0;
    held = 0; ahead = 0; batch = 0; rest = 0; wave = 0; retn = 0; nacked = 0; attributed = 0;
    blocked = 0; refused = 0; delivered = 0; dorders = 0;
    broken = 0; interrupted = 0; more = 0; from_ahead = 0; ahead_due = 0;
    s = 0; t = 0; k = 0; n = 0;
    /* the floor is the term's memory: a new term reads from the head again */
    floor = 1; holes = 0; safe = 0; last_m = 0; cp_on = 0; cp_m = 0; cp_wait[r] = 0;
    leading[r] = (lock_holder == r + 1)
  };
  if
  :: leading[r] -> goto leader
  :: else -> goto end_standby
  fi
}

/* ------------------------------------------------------------------------------------------ */
/* mail-svc                                                                                    */

#define TAKE1(x, v) :: q[v] > 0 -> x = v
inline take(x) {
  if
  TAKE1(x, 1)
  TAKE1(x, 2)
#if NSEQ >= 3
  TAKE1(x, 3)
#endif
#if NSEQ >= 4
  TAKE1(x, 4)
#endif
#if NSEQ >= 5
  TAKE1(x, 5)
#endif
#if NSEQ >= 6
  TAKE1(x, 6)
#endif
#if NSEQ >= 7
  TAKE1(x, 7)
#endif
#if NSEQ >= 8
  TAKE1(x, 8)
#endif
#if NSEQ >= 9
  TAKE1(x, 9)
#endif
#if NSEQ >= 10
  TAKE1(x, 10)
#endif
#if NSEQ >= 11
  TAKE1(x, 11)
#endif
#if NSEQ >= 12
  TAKE1(x, 12)
#endif
#if NSEQ >= 13
  TAKE1(x, 13)
#endif
#if NSEQ >= 14
  TAKE1(x, 14)
#endif
  fi;
  q[x]--;
  qsize--
}

/* One delivery of a batch, applied in delivery order inside the batch's transaction. */
inline apply_one(d) {
  o = ord[d];
  if
  :: poison & BIT(d) ->
     /* models: crates/outbox-inbox/src/amqp/batch.rs::dead_letter */
     /* judged poison before any database work: dead-lettered (confirmed), then acked */
     dl = dl | BIT(d);
     excused = excused | BIT(d);
     excuse_successors();
     printf("mail-svc  [mail] dead-letter seq=%d reason=...\n", d)
  :: else ->
     /* models: crates/outbox-inbox/src/plan.rs::plan_aggregate */
     /* models: crates/outbox-inbox/src/decide.rs::decide */
     w = wm[o];
     if
     :: w != 0 && d <= w ->
        printf("mail-svc  [mail] skip seq=%d order=%d (already sent)\n", d, o + 1)
#ifdef MUTANT_NO_HOLD
     :: else ->
        /* no hold: whatever is not a duplicate is processed at once */
        mail(d);
        wm[o] = d
#else
     :: else ->
        if
        :: prv[d] == w ->
           /* process: the mail, then the held successors it releases, in chain order */
           mail(d);
           last = d;
           do
           :: true ->
              t = 1;
              do
              :: t > NSEQ -> break
              :: t <= NSEQ && (hld & BIT(t)) && ord[t] == o && prv[t] == last -> break
              :: else -> t++
              od;
              if
              :: t > NSEQ -> break
              :: else -> hld = hld & ~BIT(t); mail(t); last = t
              fi
           od;
           wm[o] = last
        :: else ->
           if
           :: hld & BIT(d) ->
              printf("mail-svc  [mail] skip seq=%d order=%d (already held)\n", d, o + 1)
           :: !(hld & BIT(d)) && ((w == 0 && prv[d] != 0) || prv[d] > w) ->
              /* models: crates/outbox-inbox/src/db.rs::hold */
              hld = hld | BIT(d);
              printf("mail-svc  [mail] hold seq=%d order=%d (waiting for seq=%d)\n", d, o + 1, prv[d])
           :: else ->
              /* a chain conflict: no correct producer causes one */
              assert(false)
           fi
        fi
#endif
     fi
  fi
}

/* One mail-svc consumer. A batch's transaction runs under its orders' advisory locks, so no
 * other transaction on those orders interleaves with it: here it is one step with the taking of
 * its deliveries and their ack. A crash between the commit and the ack is that step's other
 * ending: the deliveries go back to the queue (the broker redelivers what was not acked). A
 * crash before the commit changes nothing (the deliveries come back, nothing was written), and
 * a delivery held unacked for a while is, for everybody else, a message not taken yet: the
 * queue is a bag, so the deliveries that come back may be taken in any order, at any time. */
proctype consumer(byte c) {
  byte d0, d1, n, o, w, t, last;
end_idle:
  do
  :: atomic {
       /* models: crates/outbox-inbox/src/amqp/consumer.rs::session */
       qsize > 0 -> take(d0); n = 1;
       /* and whatever else has arrived already, up to BATCH_SIZE */
       if
       :: MAIL_BATCH > 1 && qsize > 0 -> take(d1); n = 2
       :: true
       fi;
       /* models: crates/outbox-inbox/src/amqp/batch.rs::batch */
       /* models: crates/outbox-inbox/src/batch.rs::apply_batch */
       d_step {
         apply_one(d0);
         if :: n == 2 -> apply_one(d1) :: else fi
       };
       if
       :: true
          /* models: crates/outbox-inbox/src/amqp/ack.rs::ack_together */
       :: FAULT && F_CCRASH -> faults++;
          /* killed after the commit, before the ack: redelivered */
          q[d0]++; qsize++;
          if :: n == 2 -> q[d1]++; qsize++ :: else fi;
          printf("mail-svc-%d  (killed after the commit, before the ack; restarted)\n", c + 1)
       fi;
       d0 = 0; d1 = 0; n = 0; o = 0; w = 0; t = 0; last = 0
     }
  od
}

/* ------------------------------------------------------------------------------------------ */
/* Faults aimed at the processes, each from the shared budget. */

#define RELAY_FAULTS(i) \
  :: atomic { i < RELAYS && leading[i] && !rcrash[i] && (inflight[i] != 0 || deleting[i] != 0) && FAULT && F_RCRASH -> \
       faults++; rcrash[i] = 1 } \
  :: atomic { i < RELAYS && leading[i] && !rcrash[i] && !lost[i] && lock_holder != i + 1 && inflight[i] != 0 -> lost[i] = 1 }

active proctype chaos() {
end_chaos:
  do
  RELAY_FAULTS(0)
#if RELAYS > 1
  RELAY_FAULTS(1)
#endif
  od
}

/* ------------------------------------------------------------------------------------------ */
/* The end state: when nothing can move any more, every committed event was mailed (unless it
 * or a predecessor was dead-lettered). A row left behind, or a message lost, fails here. */
active proctype end_check() {
  byte s;
  timeout ->
  d_step {
    assert(writers_done);
    s = 1;
    do
    :: s > NSEQ -> break
    :: else ->
       if
       :: (committed & BIT(s)) && !(mailed & BIT(s)) && !(excused & BIT(s)) ->
          printf("end state: committed seq=%d of order %d was never mailed\n", s, ord[s] + 1)
       :: else
       fi;
       s++
    od;
    assert((committed & ~mailed & ~excused) == 0);
    assert((mailed & ~committed) == 0)
  }
}

init {
  byte i;
  atomic {
    /* The first relay to start takes the lock (which one is symmetric). */
    lock_holder = 1; leading[0] = 1;
    printf("relay-svc-1  relay: active (holding the leader lock)\n");
    i = 0;
    do :: i < WRITERS -> run writer(i); i++ :: else -> break od;
    i = 0;
    do :: i < RELAYS -> run relay(i); i++ :: else -> break od;
    i = 0;
    do :: i < CONSUMERS -> run consumer(i); i++ :: else -> break od
  }
}

/* Liveness: with weak fairness, every committed event is eventually mailed (or dead-lettered
 * with its successors). Checked with `pan -a -f -N live`. */
ltl live { <> settled }
