//! What the inbox tests share: a fresh database holding an inbox of the test's own and the
//! table its handlers write to.

use outbox_inbox::Inbox;
use sqlx::PgPool;

/// A fresh database with the tables of inbox `prefix` migrated and the handlers' table created
/// by `handled_table` (its unique constraint checks exactly-once in the database too).
pub async fn fresh_inbox(
    prefix: &str,
    handled_table: &'static str,
) -> (PgPool, Inbox, outbox_testkit::Made) {
    let (pool, made) = fresh_pool().await;
    let inbox = Inbox::new(prefix).expect("prefix");
    inbox
        .tables()
        .migrator()
        .expect("migrator")
        .run(&pool)
        .await
        .expect("migrate");
    sqlx::query(handled_table)
        .execute(&pool)
        .await
        .expect("handled table");
    (pool, inbox, made)
}

/// A pool on a fresh database of the test server, and the guard that drops the database when
/// the test ends, passed or failed.
pub async fn fresh_pool() -> (PgPool, outbox_testkit::Made) {
    use sqlx::Connection;
    let url = outbox_testkit::fresh_database_url("inbox");
    let made = outbox_testkit::Made::new();
    made.database(&url);
    let mut admin =
        sqlx::PgConnection::connect(&format!("{}/postgres", outbox_testkit::pg_server_url()))
            .await
            .expect("the test server");
    sqlx::query(sqlx::AssertSqlSafe(format!(
        "create database \"{}\"",
        outbox_testkit::database_name(&url)
    )))
    .execute(&mut admin)
    .await
    .expect("create the database");
    let _ = admin.close().await;
    let pool = PgPool::connect(&url).await.expect("the fresh database");
    (pool, made)
}

/// A test handler's write of `e` to its handled table: `insert` with the event's aggregate id and
/// seq as $1 and $2, the database's error as the handler's.
#[cfg(feature = "amqp")]
pub async fn record_handled(
    conn: &mut sqlx::PgConnection,
    insert: &'static str,
    e: &outbox_inbox::Envelope,
) -> Result<(), String> {
    sqlx::query(insert)
        .bind(e.aggregate_id)
        .bind(e.seq)
        .execute(conn)
        .await
        .map(drop)
        .map_err(|e| e.to_string())
}

/// A consumer's `shutdown` future and the sender that completes it: the test's SIGTERM, sent
/// once the test has seen what it waits for.
#[cfg(feature = "amqp")]
pub fn shutdown_signal() -> (
    tokio::sync::oneshot::Sender<()>,
    impl std::future::Future<Output = ()>,
) {
    let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
    // A dropped sender ends the run too: a test that panics must not leave it running.
    (stop, async {
        let _ = stopped.await;
    })
}

/// Runs `consumer` on `b`'s connection, accepting every delivery, with the handlers
/// `make_handler` makes, until `drive` is done; then shuts it down and expects a clean end
/// (what it had started finished, nothing failed).
#[cfg(feature = "amqp")]
pub async fn consume_while<M, H, D>(
    consumer: &outbox_inbox::amqp::Consumer,
    (b, pool, inbox): (&crate::amqp::Broker, &PgPool, &Inbox),
    make_handler: M,
    drive: D,
) -> D::Output
where
    M: Fn() -> H,
    H: outbox_inbox::Handler,
    H::Error: std::fmt::Display,
    D: std::future::Future,
{
    let (stop, stopped) = shutdown_signal();
    let run = consumer.run(&b.conn, pool, inbox, accept_all, make_handler, stopped);
    let drive = async {
        let out = drive.await;
        let _ = stop.send(());
        out
    };
    let (ran, out) = tokio::join!(run, drive);
    ran.expect("the consumer ends cleanly at shutdown");
    out
}

/// The judge that accepts every envelope (the tests' deliveries are all well-formed).
#[cfg(feature = "amqp")]
pub fn accept_all(_: &outbox_inbox::Envelope) -> Result<(), String> {
    Ok(())
}
