//! What a test made on the shared servers (databases, queues, exchanges), removed when the
//! guard goes, whether the test passed or failed: the servers are shared by every test run on
//! the machine, and a failing test's leftovers would outlive the run that could explain them.

use std::sync::Mutex;

use lapin::options::{ExchangeDeleteOptions, QueueDeleteOptions};

/// The names a test made (or will have a service make), each removed when the guard is
/// dropped: queues first (a queue holds memory on the broker), then exchanges, then the
/// databases, with their sessions ended. Removing a name that was never made does nothing, so a
/// test registers names before it makes them and is covered from its first step.
///
/// Stop the services that use the names before the guard goes: a running mail-svc declares its
/// queue again once it is deleted.
#[derive(Debug, Default)]
pub struct Made {
    names: Mutex<Names>,
}

#[derive(Debug, Default, Clone)]
struct Names {
    databases: Vec<String>,
    queues: Vec<String>,
    exchanges: Vec<String>,
}

impl Made {
    pub fn new() -> Self {
        Self::default()
    }

    /// A database, by its name or by a URL naming it ([`crate::fresh_database_url`]).
    pub fn database(&self, name_or_url: &str) -> &Self {
        self.with(|n| {
            n.databases
                .push(crate::database_name(name_or_url).to_owned())
        })
    }

    pub fn queue(&self, name: &str) -> &Self {
        self.with(|n| n.queues.push(name.to_owned()))
    }

    pub fn exchange(&self, name: &str) -> &Self {
        self.with(|n| n.exchanges.push(name.to_owned()))
    }

    /// What a mail-svc (or any consumer of `outbox_inbox::amqp::Topology`) on `exchange` and
    /// `queue` declares: the two exchanges, the queue, its dead-letter exchange and queue, and
    /// the redrive exchange of its admin API.
    pub fn mail_topology(&self, exchange: &str, queue: &str) -> &Self {
        self.exchange(exchange)
            .queue(queue)
            .queue(&format!("{queue}.dead-letter"))
            .exchange(&format!("{queue}.dlx"))
            .exchange(&format!("{queue}.redrive"))
    }

    fn with(&self, add: impl FnOnce(&mut Names)) -> &Self {
        add(&mut self.names.lock().unwrap_or_else(|e| e.into_inner()));
        self
    }

    /// Removes everything now (the guard then has nothing left to do). Errors are returned, not
    /// swallowed: a test that cleans up on purpose wants to know.
    pub async fn remove(&self) -> anyhow::Result<()> {
        let names = std::mem::take(&mut *self.names.lock().unwrap_or_else(|e| e.into_inner()));
        remove(&names).await
    }
}

/// Removes every one of `names`, going on past a failure; the failures, named.
async fn remove(names: &Names) -> anyhow::Result<()> {
    let mut failed = Vec::new();
    if !names.queues.is_empty() || !names.exchanges.is_empty() {
        match broker_remove(names).await {
            Ok(f) => failed.extend(f),
            Err(e) => failed.push(format!("the broker: {e}")),
        }
    }
    for db in &names.databases {
        if let Err(e) = crate::drop_database(db).await {
            failed.push(format!("database {db}: {e}"));
        }
    }
    anyhow::ensure!(failed.is_empty(), "not removed: {}", failed.join("; "));
    Ok(())
}

async fn broker_remove(names: &Names) -> anyhow::Result<Vec<String>> {
    let conn =
        lapin::Connection::connect(&crate::amqp_url(), lapin::ConnectionProperties::default())
            .await?;
    let mut failed = Vec::new();
    // A failed delete closes its channel: one channel per name.
    for q in &names.queues {
        let ch = conn.create_channel().await?;
        if let Err(e) = ch
            .queue_delete(q.as_str().into(), QueueDeleteOptions::default())
            .await
        {
            failed.push(format!("queue {q}: {e}"));
        }
    }
    for x in &names.exchanges {
        let ch = conn.create_channel().await?;
        if let Err(e) = ch
            .exchange_delete(x.as_str().into(), ExchangeDeleteOptions::default())
            .await
        {
            failed.push(format!("exchange {x}: {e}"));
        }
    }
    let _ = conn.close(200, "test names removed".into()).await;
    Ok(failed)
}

impl Drop for Made {
    fn drop(&mut self) {
        let names = std::mem::take(self.names.get_mut().unwrap_or_else(|e| e.into_inner()));
        if names.databases.is_empty() && names.queues.is_empty() && names.exchanges.is_empty() {
            return;
        }
        crate::on_own_runtime(async move {
            if let Err(e) = remove(&names).await {
                eprintln!("cannot remove the test's names: {e:#}");
            }
        });
    }
}
