//! What a chaos run found, and its summary as the run prints it.

use std::time::Duration;

/// What a run found.
#[derive(Debug, Default, Clone)]
pub struct ChaosReport {
    pub seed: u64,
    pub upserts: u64,
    pub events: u64,
    pub orders: usize,
    /// Order databases (`SHARDS`; 1: unsharded).
    pub shards: usize,
    pub rejected: u64,
    pub ambiguous: u64,
    pub relay_kills: u32,
    pub mail_kills: u32,
    pub broker_restarts: u32,
    pub db_terminations: u32,
    /// Cluster mode: kills of the node leading the mail queue.
    pub leader_kills: u32,
    /// Cluster mode: kills of a node picked at random (the leader's, sometimes).
    pub node_kills: u32,
    /// Cluster mode: a node cut off from the other two for a while.
    pub partitions: u32,
    /// Cluster mode: each node fault and the longest time no mail went out from it until mail
    /// flowed again after the node was back (at most [`super::RECOVERY_WAIT`]: a fault after
    /// which none went out within it counts as that long).
    pub recoveries: Vec<(&'static str, Duration)>,
    /// Fleet mode: relays frozen (SIGSTOP) past their lease, then woken.
    pub relay_freezes: u32,
    /// Fleet mode: databases added to the registry.
    pub db_adds: u32,
    /// Fleet mode: databases drained, removed and added back.
    pub db_drains: u32,
    /// Fleet mode: each change (a kill, the killed relay's join, an add, a freeze, the frozen
    /// relay's wake, a drain until drained, the drained database added back) and how long the
    /// fleet took from it until every database to publish was owned by a live instance, none
    /// above its share (at most [`super::fleet::REBALANCE_WAIT`]: a change after which it never
    /// settled counts as that long).
    pub rebalances: Vec<(&'static str, Duration)>,
    pub lost: u64,
    pub duplicated: u64,
    pub reordered: u64,
    pub phantom: u64,
    pub drain: Duration,
    pub problems: Vec<String>,
}

impl ChaosReport {
    /// Every fault injected.
    pub fn faults(&self) -> u32 {
        self.relay_kills
            + self.mail_kills
            + self.broker_restarts
            + self.db_terminations
            + self.leader_kills
            + self.node_kills
            + self.partitions
            + self.relay_freezes
            + self.db_adds
            + self.db_drains
    }

    /// The longest time the fleet took to settle after a change.
    pub fn slowest_rebalance(&self) -> Duration {
        self.rebalances
            .iter()
            .map(|(_, d)| *d)
            .max()
            .unwrap_or_default()
    }

    /// The longest time no mail went out after a node fault.
    pub fn slowest_recovery(&self) -> Duration {
        self.recoveries
            .iter()
            .map(|(_, d)| *d)
            .max()
            .unwrap_or_default()
    }

    /// True when nothing was lost, doubled, reordered or invented.
    pub fn is_clean(&self) -> bool {
        self.lost == 0 && self.duplicated == 0 && self.reordered == 0 && self.phantom == 0
    }
}

impl std::fmt::Display for ChaosReport {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        writeln!(f, "chaos summary (seed {})", self.seed)?;
        writeln!(
            f,
            "  upserts        {:>8}  ({} rejected by the rules, {} ambiguous failures)",
            self.upserts, self.rejected, self.ambiguous
        )?;
        writeln!(
            f,
            "  events         {:>8}  over {} orders{}",
            self.events,
            self.orders,
            if self.shards > 1 {
                format!(" in {} shards", self.shards)
            } else {
                String::new()
            }
        )?;
        writeln!(
            f,
            "  faults         relay kills {}, mail kills {}, broker restarts {}, db terminations {}",
            self.relay_kills, self.mail_kills, self.broker_restarts, self.db_terminations
        )?;
        if self.leader_kills + self.node_kills + self.partitions > 0 {
            writeln!(
                f,
                "  cluster faults queue leader kills {}, node kills {}, partitions {}",
                self.leader_kills, self.node_kills, self.partitions
            )?;
        }
        if !self.recoveries.is_empty() {
            let each: Vec<String> = self
                .recoveries
                .iter()
                .map(|(what, d)| format!("{what} {:.1}s", d.as_secs_f64()))
                .collect();
            writeln!(
                f,
                "  mail stopped   {:>7.1}s at most, after {}",
                self.slowest_recovery().as_secs_f64(),
                each.join(", ")
            )?;
        }
        if self.relay_freezes + self.db_adds + self.db_drains > 0 || !self.rebalances.is_empty() {
            writeln!(
                f,
                "  fleet faults   relay freezes {}, database adds {}, drains {}",
                self.relay_freezes, self.db_adds, self.db_drains
            )?;
            writeln!(f, "  rebalance      slowest / median / each, seconds")?;
            let mut kinds: Vec<&str> = self.rebalances.iter().map(|(k, _)| *k).collect();
            kinds.sort_unstable();
            kinds.dedup();
            for kind in kinds {
                let mut each: Vec<f64> = self
                    .rebalances
                    .iter()
                    .filter(|(k, _)| *k == kind)
                    .map(|(_, d)| d.as_secs_f64())
                    .collect();
                let listed: Vec<String> = each.iter().map(|s| format!("{s:.1}")).collect();
                each.sort_by(f64::total_cmp);
                writeln!(
                    f,
                    "    {kind:<12} {:>5.1} / {:>5.1} / {}",
                    each[each.len() - 1],
                    each[each.len() / 2],
                    listed.join(" ")
                )?;
            }
        }
        writeln!(f, "  lost           {:>8}", self.lost)?;
        writeln!(f, "  duplicated     {:>8}", self.duplicated)?;
        writeln!(f, "  reordered      {:>8}", self.reordered)?;
        writeln!(f, "  phantom        {:>8}", self.phantom)?;
        write!(f, "  time to drain  {:>8.1}s", self.drain.as_secs_f64())?;
        for p in self.problems.iter().take(20) {
            write!(f, "\n  ! {p}")?;
        }
        Ok(())
    }
}
