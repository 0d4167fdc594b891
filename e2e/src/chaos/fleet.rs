//! The chaos run of a relay fleet (`--fleet`): the relays run in fleet mode over the order
//! databases, listed in a registry of the run's own fleet database, each under its index as
//! source id (the shard orders-svc stamps on its events). A quarter of them are registered only
//! during the run. The fleet's faults come in turn: a relay killed and started again under a new
//! instance id, a database added, a relay frozen for longer than a lease and woken, a database
//! drained, removed and added back. After each change the run reads the registry until the fleet
//! has settled: every database to publish (active or draining) owned by a live instance and no
//! instance above its share (⌈databases / instances⌉ + 1); that time is the change's rebalance
//! time in the summary.

use std::{
    collections::BTreeSet,
    time::{Duration, Instant},
};

use anyhow::Context;
use outbox_relay::fleet::registry::{By, NewDatabase, Registry, State};
use outbox_support::secret::SecretUrl;
use rand::{Rng, rngs::StdRng};

use super::{ChaosOptions, ChaosReport};
use crate::stack::{ServiceProc, Stack, StackConfig, db_name};

/// How long a change may take to settle before the run counts it as never settling (and
/// [`super::assert_clean_run`] fails): far above the 2 lease periods the fleet promises, so
/// that only a fleet that does not rebalance at all trips it on a loaded machine.
pub const REBALANCE_WAIT: Duration = Duration::from_secs(120);

/// The fleet's kinds of fault, taken in this order (an add with nothing left to add drains).
#[derive(Debug, Clone, Copy)]
enum Change {
    Kill,
    Add,
    Freeze,
    Drain,
}

const TURNS: [Change; 4] = [Change::Kill, Change::Add, Change::Freeze, Change::Drain];

/// The fleet side of a chaos run: its registry, which shards are registered, which relay is
/// frozen. Dropping it drops the run's databases (the fleet's and the stack's, after the stack's
/// processes ended), also when the run failed half-way.
#[derive(Debug)]
pub(super) struct FleetRun {
    registry: Registry,
    lease: Duration,
    /// The shards in the registry, by index.
    registered: BTreeSet<usize>,
    /// Every order database, by index.
    shards: Vec<String>,
    exchange: String,
    /// The relay frozen now, if any (its instance is not live).
    frozen: Option<usize>,
    /// Fleet faults injected so far.
    turn: usize,
    databases: Vec<String>,
}

fn by() -> By {
    By {
        who: "chaos".into(),
        reason: "chaos run".into(),
    }
}

/// A shard's name in the registry.
fn name(index: usize) -> String {
    format!("shard-{index:02}")
}

impl FleetRun {
    /// Creates the run's fleet database and its registry, and points `cfg`'s relays at it.
    pub(super) async fn prepare(
        opts: &ChaosOptions,
        cfg: &mut StackConfig,
    ) -> anyhow::Result<Self> {
        anyhow::ensure!(
            opts.relays >= 2,
            "--fleet needs 2 or more --relays: a kill or a freeze must leave a live instance"
        );
        let db = outbox_testkit::unique("chaos_fleet");
        let (url, registry) = crate::fleet::fleet_database(&db).await?;
        let lease = Duration::from_secs(opts.fleet_lease_secs.max(1));
        cfg.fleet_database_url = Some(url);
        cfg.relay_env
            .push(("FLEET_LEASE".into(), format!("{}s", lease.as_secs())));
        Ok(Self {
            registry,
            lease,
            registered: BTreeSet::new(),
            shards: Vec::new(),
            exchange: String::new(),
            frozen: None,
            turn: 0,
            databases: vec![db],
        })
    }

    /// Registers three quarters of the stack's order databases (picked at random); the rest
    /// are added during the run, or at its end.
    pub(super) async fn register_initial(
        &mut self,
        stack: &Stack,
        rng: &mut StdRng,
    ) -> anyhow::Result<()> {
        self.shards = stack.orders_shard_urls.clone();
        self.exchange = stack.exchange.clone();
        self.databases.extend(
            self.shards
                .iter()
                .chain([&stack.mail_db_url])
                .map(|u| db_name(u)),
        );
        let mut later = BTreeSet::new();
        while later.len() < self.shards.len() / 4 {
            later.insert(rng.random_range(0..self.shards.len()));
        }
        for i in (0..self.shards.len()).filter(|i| !later.contains(i)) {
            self.add(i).await?;
        }
        eprintln!(
            "chaos: fleet of {} relays over {} databases, {} registered later, lease {}s",
            stack.relays.len(),
            self.shards.len(),
            later.len(),
            self.lease.as_secs()
        );
        Ok(())
    }

    /// True when the next fault is the fleet's: four of every five.
    pub(super) fn owes_fault(&self, report: &ChaosReport) -> bool {
        report.faults() % 5 != 4
    }

    /// The fleet's next fault, and the rebalance time of each change it makes.
    pub(super) async fn fault(
        &mut self,
        stack: &mut Stack,
        rng: &mut StdRng,
        report: &mut ChaosReport,
    ) -> anyhow::Result<()> {
        let mut change = TURNS[self.turn % TURNS.len()];
        self.turn += 1;
        if matches!(change, Change::Add) && self.registered.len() == self.shards.len() {
            change = Change::Drain;
        }
        match change {
            Change::Kill => {
                let i = rng.random_range(0..stack.relays.len());
                eprintln!("chaos: killing {}", instance(&stack.relays[i]));
                stack.relays[i].kill9().await;
                report.relay_kills += 1;
                self.settle(stack, "kill", Instant::now(), report).await?;
                let since = Instant::now();
                start(&mut stack.relays[i]).await?;
                self.settle(stack, "join", since, report).await?;
            }
            Change::Add => {
                let unregistered: Vec<usize> = (0..self.shards.len())
                    .filter(|i| !self.registered.contains(i))
                    .collect();
                let i = pick(&unregistered, rng).context("a database to add")?;
                eprintln!("chaos: adding {}", name(i));
                let since = Instant::now();
                self.add(i).await?;
                report.db_adds += 1;
                self.settle(stack, "add", since, report).await?;
            }
            Change::Freeze => {
                let i = rng.random_range(0..stack.relays.len());
                eprintln!("chaos: freezing {}", instance(&stack.relays[i]));
                stack.relays[i].signal("STOP").await?;
                self.frozen = Some(i);
                report.relay_freezes += 1;
                let since = Instant::now();
                self.settle(stack, "freeze", since, report).await?;
                // Frozen past its lease whatever the takeover took, then woken: whatever it
                // still meant to publish or delete must come to nothing.
                let frozen_for = self.lease.mul_f64(rng.random_range(1.2..2.5));
                tokio::time::sleep(frozen_for.saturating_sub(since.elapsed())).await;
                stack.relays[i].signal("CONT").await?;
                self.frozen = None;
                self.settle(stack, "wake", Instant::now(), report).await?;
            }
            Change::Drain => {
                let registered: Vec<usize> = self.registered.iter().copied().collect();
                let i = pick(&registered, rng).context("a database to drain")?;
                eprintln!("chaos: draining {}", name(i));
                self.drain_and_add_back(i, stack, report).await?;
            }
        }
        Ok(())
    }

    /// Drains shard `i`, waits until its owner marked it drained, removes it and adds it back.
    async fn drain_and_add_back(
        &mut self,
        i: usize,
        stack: &mut Stack,
        report: &mut ChaosReport,
    ) -> anyhow::Result<()> {
        let since = Instant::now();
        self.registry.drain(&name(i), &by()).await?;
        report.db_drains += 1;
        loop {
            let state = self
                .registry
                .list()
                .await?
                .into_iter()
                .find(|e| e.name == name(i))
                .map(|e| e.state);
            if state == Some(State::Drained) {
                report.rebalances.push(("drain", since.elapsed()));
                break;
            }
            if since.elapsed() > REBALANCE_WAIT {
                report
                    .problems
                    .push(format!("{} not drained after {REBALANCE_WAIT:?}", name(i)));
                report.rebalances.push(("drain", REBALANCE_WAIT));
                return Ok(());
            }
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
        self.registry.remove(&name(i), false, &by()).await?;
        self.registered.remove(&i);
        let since = Instant::now();
        self.add(i).await?;
        self.settle(stack, "add back", since, report).await
    }

    /// After the load: every database registered and the fleet settled, so that the run can
    /// drain.
    pub(super) async fn heal(
        &mut self,
        stack: &mut Stack,
        report: &mut ChaosReport,
    ) -> anyhow::Result<()> {
        if let Some(i) = self.frozen.take() {
            stack.relays[i].signal("CONT").await?;
        }
        let since = Instant::now();
        let missing: Vec<usize> = (0..self.shards.len())
            .filter(|i| !self.registered.contains(i))
            .collect();
        for &i in &missing {
            self.add(i).await?;
        }
        if !missing.is_empty() {
            report.db_adds += missing.len() as u32;
            self.settle(stack, "add", since, report).await?;
        }
        Ok(())
    }

    async fn add(&mut self, i: usize) -> anyhow::Result<()> {
        let new = NewDatabase {
            name: name(i),
            source_id: i32::try_from(i)?,
            url: SecretUrl::new(self.shards[i].clone()),
            table: "outbox".into(),
            exchange: self.exchange.clone(),
        };
        self.registry
            .add(&new, &by())
            .await
            .with_context(|| format!("adding {}", name(i)))?;
        self.registered.insert(i);
        Ok(())
    }

    /// Waits until the fleet settled after the change `what` made at `since`, and records how
    /// long that took.
    async fn settle(
        &self,
        stack: &mut Stack,
        what: &'static str,
        since: Instant,
        report: &mut ChaosReport,
    ) -> anyhow::Result<()> {
        let live: BTreeSet<String> = stack
            .relays
            .iter_mut()
            .enumerate()
            .filter(|(i, _)| Some(*i) != self.frozen)
            .filter_map(|(_, r)| r.is_running().then(|| instance(r)))
            .collect();
        loop {
            let Some(why) = crate::fleet::unsettled(&self.registry, &live).await? else {
                report.rebalances.push((what, since.elapsed()));
                return Ok(());
            };
            if since.elapsed() > REBALANCE_WAIT {
                report.problems.push(format!(
                    "the fleet had not settled {REBALANCE_WAIT:?} after a {what}: {why}"
                ));
                report.rebalances.push((what, REBALANCE_WAIT));
                return Ok(());
            }
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
    }
}

impl Drop for FleetRun {
    fn drop(&mut self) {
        for db in self.databases.drain(..) {
            outbox_testkit::drop_database_blocking(db);
        }
    }
}

/// One of `items` at random.
fn pick(items: &[usize], rng: &mut StdRng) -> Option<usize> {
    (!items.is_empty()).then(|| items[rng.random_range(0..items.len())])
}

/// The instance id relay `r` runs (or will run) under.
fn instance(r: &ServiceProc) -> String {
    r.env("FLEET_INSTANCE_ID").unwrap_or_default().to_owned()
}

/// Starts relay `r` again under a new instance id (`relay-svc-2.3`: its third start), as a
/// restarted pod would be: the registry must not take it for the instance that died.
async fn start(r: &mut ServiceProc) -> anyhow::Result<()> {
    let id = format!("{}.{}", r.name, r.starts + 1);
    r.set_env("FLEET_INSTANCE_ID", &id);
    r.start().await
}
