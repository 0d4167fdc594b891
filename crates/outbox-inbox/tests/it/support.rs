//! What the inbox tests share: a fresh database holding an inbox of the test's own and the
//! table its handlers write to.

use outbox_inbox::Inbox;
use sqlx::PgPool;

/// A fresh database with the tables of inbox `prefix` migrated and the handlers' table created
/// by `handled_table` (its unique constraint checks exactly-once in the database too).
pub async fn fresh_inbox(prefix: &str, handled_table: &'static str) -> (PgPool, Inbox) {
    let pool = outbox_inbox::doctest_pool().await.expect("fresh database");
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
    (pool, inbox)
}
