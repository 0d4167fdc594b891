//! The getting-started of the outbox crates' READMEs as one program (`tests/it/readme.rs` holds
//! the READMEs to this file): a shipments service with its own outbox table, the relay library
//! publishing it, and the inbox's consumer applying each event once, in each shipment's order.

use std::{sync::Arc, time::Duration};

use outbox::sqlx::{self, PgConnection, PgPool};
use outbox::{NewEvent, Outbox};
use outbox_inbox::amqp::{self, Consumer, Topology};
use outbox_inbox::{Envelope, Handler, Inbox, lapin::ConnectionProperties};
use outbox_relay::{Relay, Settings, Status, tokio_util::sync::CancellationToken};

/// Where it runs.
#[derive(Debug, Clone)]
pub struct Setup {
    /// Your database, e.g. `postgres://postgres@127.0.0.1:5432/shipments`.
    pub database_url: String,
    /// Your broker, e.g. `amqp://guest:guest@127.0.0.1:5672/%2f`.
    pub amqp_url: String,
    /// The topic exchange the relay publishes to.
    pub exchange: String,
    /// The queue the consumer reads.
    pub queue: String,
}

/// What goes wrong, at this program's edge.
pub type Error = Box<dyn std::error::Error + Send + Sync>;

/// Each shipment's events, in the order they happen.
pub const EVENTS: [&str; 3] = ["created", "packed", "sent"];

/// Appends three shipments' events, relays them and applies each once; returns the log lines
/// the consumer wrote for them, in the order it wrote them: `(shipment, seq, event)`.
pub async fn run(setup: &Setup) -> Result<Vec<(i64, i64, String)>, Error> {
    // 1. Migrations: your tables, then the outbox's and the inbox's (each migrator keeps its
    //    history in a table of its own, beside your `sqlx::migrate!`'s).
    let pool = PgPool::connect(&setup.database_url).await?;
    sqlx::raw_sql(
        "create table if not exists shipments (id bigint primary key, status text not null);
         create table if not exists shipment_log (line bigserial primary key,
             shipment bigint not null, seq bigint not null, event text not null)",
    )
    .execute(&pool)
    .await?;
    let outbox = Outbox::new("shipments_outbox")?;
    outbox.table().migrator().run(&pool).await?;
    let inbox = Inbox::new("shipment_log_inbox")?;
    inbox.tables().migrator()?.run(&pool).await?;

    // 2. Topology, before the relay publishes: it publishes `mandatory`, and an event that no
    //    binding routes stays in the outbox, holding its shipment back with a growing backoff.
    let tls = amqp::Tls::default();
    let properties = ConnectionProperties::default();
    let conn = amqp::connect(&setup.amqp_url, &tls, amqp::DEFAULT_HEARTBEAT, properties).await?;
    let topology = Topology::new(&setup.exchange, &setup.queue, "shipment.#");
    topology.declare(&conn.create_channel().await?).await?;

    // 3. Your writes, each with its events, in your own transactions.
    let upsert = "insert into shipments values ($1, $2) on conflict (id) do update set status = $2";
    let mut seqs = Vec::new();
    for id in 1..=3 {
        let mut tx = pool.begin().await?;
        for event in EVENTS {
            let write = sqlx::query(upsert).bind(id).bind(event);
            write.execute(&mut *tx).await?;
            let key = format!("shipment.{event}"); // the routing key
            let new = NewEvent::new("shipment", id, event, key, event.into());
            let new = new.content_type("text/plain");
            seqs.push(outbox.append(&mut tx, new).await?.seq);
        }
        tx.commit().await?;
    }
    outbox.notify(&pool).await?; // after commit: wakes the relay now rather than at its next poll

    // 4. The relay of *your* table (the default is `outbox`), in the pool's database.
    let shutdown = CancellationToken::new();
    let mut settings = Settings::new(setup.amqp_url.as_str(), setup.exchange.as_str());
    settings.table = outbox.table().clone();
    let status = Arc::new(Status::default());
    let relay = tokio::spawn(Relay::new(settings, pool.clone(), status, shutdown.clone()).run());

    // 5. The consumer: judge, apply in a transaction of its own, commit, then ack.
    let consumer = Consumer::new(topology);
    let judge = |_: &Envelope| Ok(()); // refuse (dead-letter) what your handler cannot take
    let consume = async {
        let consumed = consumer.run(&conn, &pool, &inbox, judge, || Log, shutdown.cancelled());
        Ok::<_, Error>(consumed.await?)
    };
    // 6. Shutdown: a service cancels on SIGTERM or ctrl-c; this program once its events are in.
    let stop = async {
        let applied = "select count(*) from shipment_log where seq = any($1)";
        while sqlx::query_scalar::<_, i64>(applied)
            .bind(&seqs)
            .fetch_one(&pool)
            .await?
            < seqs.len() as i64
        {
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
        shutdown.cancel();
        Ok::<_, Error>(())
    };
    let consumed = tokio::try_join!(consume, stop);
    shutdown.cancel();
    relay.await?; // it finishes the last confirmed batch's delete and releases its lock
    consumed?;
    conn.close(200, "bye".into()).await?;
    let log = "select shipment, seq, event from shipment_log where seq = any($1) order by line";
    Ok(sqlx::query_as(log).bind(&seqs).fetch_all(&pool).await?)
}

/// Your processing of one event, in the inbox's transaction: exactly once, in chain order.
struct Log;

impl Handler for Log {
    type Error = sqlx::Error;

    async fn handle(&mut self, tx: &mut PgConnection, event: &Envelope) -> Result<(), Self::Error> {
        sqlx::query("insert into shipment_log (shipment, seq, event) values ($1, $2, $3)")
            .bind(event.aggregate_id)
            .bind(event.seq)
            .bind(String::from_utf8_lossy(&event.payload).as_ref())
            .execute(tx)
            .await
            .map(drop)
    }
}
