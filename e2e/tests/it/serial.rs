//! Which tests of this binary may run side by side. Each test used to be a binary of its own
//! among binaries that cargo runs one after another, and some rely on that: the chaos runs and
//! the demo restart the machine's broker under everyone's connections, and the cluster script
//! test starts the cluster's nodes outside [`e2e::cluster::Cluster`]'s turn. Such a test takes [`alone`]; every
//! other test that talks to the machine's PostgreSQL or RabbitMQ, starts services or RabbitMQ
//! nodes, or keeps the CPU busy takes [`shared`] before it starts anything (tests that only read
//! the repository's files take neither). The guard is the test's first binding, so it is dropped
//! last, after whatever the test started.

use tokio::sync::{RwLock, RwLockReadGuard, RwLockWriteGuard};

static TURN: RwLock<()> = RwLock::const_new(());

/// Runs beside other `shared` tests, never beside an `alone` one.
pub async fn shared() -> RwLockReadGuard<'static, ()> {
    TURN.read().await
}

/// [`shared`] for a test without an async runtime.
pub fn shared_blocking() -> RwLockReadGuard<'static, ()> {
    TURN.blocking_read()
}

/// Runs beside no test that takes `shared` or `alone`. The lock is fair: once an `alone` test
/// waits, later tests wait behind it, so it is not starved.
pub async fn alone() -> RwLockWriteGuard<'static, ()> {
    TURN.write().await
}

/// [`alone`] for a test without an async runtime.
pub fn alone_blocking() -> RwLockWriteGuard<'static, ()> {
    TURN.blocking_write()
}
