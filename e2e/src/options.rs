//! The knobs of one benchmark run (the bench binary's flags), read by every section.

/// Knobs of one benchmark run.
#[derive(Debug, Clone, clap::Args)]
pub struct BenchOptions {
    /// Seconds each write-path measurement runs.
    #[arg(long, default_value_t = 5.0)]
    pub write_secs: f64,
    /// Client concurrencies for the write path.
    #[arg(long, value_delimiter = ',', default_value = "1,8,32")]
    pub concurrency: Vec<usize>,
    /// Events for the relay drain and the consume path.
    #[arg(long, default_value_t = 100_000)]
    pub events: u64,
    /// Orders the consume-path events are spread over.
    #[arg(long, default_value_t = 1_000)]
    pub orders: u64,
    /// Messages in flight for the publisher ceiling (relay-svc's default BATCH_SIZE).
    #[arg(long, default_value_t = 256)]
    pub window: usize,
    /// Prefetch for the consumer ceiling (match mail-svc's prefetch).
    #[arg(long, default_value_t = 256)]
    pub prefetch: u16,
    /// Offered loads (events/s) for the end-to-end latency.
    #[arg(long, value_delimiter = ',', default_value = "100,1000")]
    pub loads: Vec<u64>,
    /// Seconds each end-to-end load runs.
    #[arg(long, default_value_t = 10.0)]
    pub e2e_secs: f64,
    /// Closed-loop writers for the maximum sustained end-to-end load.
    #[arg(long, default_value_t = 64)]
    pub max_writers: usize,
    /// Seconds to watch an idle stack.
    #[arg(long, default_value_t = 10.0)]
    pub idle_secs: f64,
    /// How often each ratio and latency measurement is repeated; the table shows the median and
    /// the spread (min–max), so one unlucky second on a noisy machine cannot decide a verdict.
    #[arg(long, default_value_t = 3, value_parser = clap::value_parser!(u32).range(1..))]
    pub runs: u32,
    /// A smoke run: every section with small sizes, in under two minutes (overrides the sizes).
    #[arg(long)]
    pub quick: bool,
    /// mail-svc instances for the scaling section (6), each consuming the same pre-loaded queue.
    #[arg(long, value_delimiter = ',', default_value = "1,2,4",
          value_parser = at_least_one)]
    pub mail_instances: Vec<usize>,
    /// Order shards for the scaling section (6): `--e2e-secs` of Upsert load from
    /// `--max-writers` writers each.
    #[arg(long, value_delimiter = ',', default_value = "1,2,4",
          value_parser = at_least_one)]
    pub shards: Vec<usize>,
    /// Machine sizes (cores) the scaling section's capacity model predicts for.
    #[arg(long, value_delimiter = ',', default_value = "2,8,32",
          value_parser = at_least_one)]
    pub model_cores: Vec<usize>,
    /// Events the cost section (7) drains behind a pinned horizon, and soaks through the stack.
    #[arg(long, default_value_t = 1_000_000)]
    pub cost_events: u64,
    /// The cost section's rounds (7a) and chunks (7b): rates, CPU and sizes are per round.
    #[arg(long, default_value_t = 100_000, value_parser = clap::value_parser!(u64).range(1..))]
    pub cost_round: u64,
    /// Seconds of the cost section's light probe load, before the first round and after the last.
    #[arg(long, default_value_t = 10.0)]
    pub probe_secs: f64,
    /// Events pre-loaded for mail-svc's backlog drain (7c); its steady rate is measured on a
    /// tenth of them.
    #[arg(long, default_value_t = 50_000)]
    pub mail_backlog: u64,
    /// Orders the audit section (8) measures one pass at.
    #[arg(long, default_value_t = 1_000_000, value_parser = clap::value_parser!(i64).range(1_000..))]
    pub audit_aggregates: i64,
    /// Orders the console section (9) fills (a tenth dead-lettered, a hundredth held).
    #[arg(long, default_value_t = 1_000_000, value_parser = clap::value_parser!(i64).range(1_000..))]
    pub console_orders: i64,
    /// Outbox databases of the fleet section (10), created on this machine's PostgreSQL and
    /// dropped after. The relays hold up to 3 connections to each (a LISTEN and a pool of 2):
    /// PostgreSQL's max_connections must have room for 3 × this beside everything else.
    #[arg(long, default_value_t = 200, value_parser = at_least_one)]
    pub fleet_databases: usize,
    /// relay-svc instances of the fleet section (10), 2 or more: one is killed and a new one
    /// joins.
    #[arg(long, default_value_t = 3, value_parser = at_least_one)]
    pub fleet_relays: usize,
    /// Rows of backlog in the fleet section's noisy database (10).
    #[arg(long, default_value_t = 1_000_000)]
    pub fleet_backlog: u64,
    /// Events per second the fleet section (10) writes, spread over all its databases.
    #[arg(long, default_value_t = 100.0)]
    pub fleet_rate: f64,
    /// Seconds of the fleet section's steady traffic (10); the kill and the join follow.
    #[arg(long, default_value_t = 30.0)]
    pub fleet_secs: f64,
    /// The fleet section's lease (`FLEET_LEASE`), seconds (relay-svc's default: 10).
    #[arg(long, default_value_t = 10, value_parser = clap::value_parser!(u64).range(1..))]
    pub fleet_lease_secs: u64,
    /// Sections to run (1-10; 7, cost vs work done, 8, the audit's cost, 9, the console at
    /// scale, and 10, the relay fleet over 200 databases, take the longest and are not in the
    /// default).
    #[arg(long, value_delimiter = ',', default_value = "1,2,3,4,5,6")]
    pub sections: Vec<u8>,
    /// Where to write the JSON results.
    #[arg(long, default_value = "bench-results.json")]
    pub json: std::path::PathBuf,
}

/// A count of instances, shards or cores: 1 or more.
fn at_least_one(arg: &str) -> Result<usize, String> {
    match arg.parse::<usize>() {
        Ok(n) if n >= 1 => Ok(n),
        _ => Err(format!("{arg:?} is not a count of 1 or more")),
    }
}

impl BenchOptions {
    /// The sizes `--quick` runs with; other settings are kept.
    pub fn quick(mut self) -> Self {
        self.write_secs = 0.5;
        self.events = 3_000;
        self.orders = 200;
        self.e2e_secs = 1.0;
        self.idle_secs = 1.0;
        self.max_writers = 16;
        self.cost_events = 20_000;
        self.cost_round = 5_000;
        self.probe_secs = 1.0;
        self.mail_backlog = 2_000;
        self.audit_aggregates = 20_000;
        self.console_orders = 20_000;
        self.fleet_databases = 20;
        self.fleet_backlog = 20_000;
        self.fleet_secs = 4.0;
        self.fleet_lease_secs = 2;
        self
    }
}
