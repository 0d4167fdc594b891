//! Section 5, idle cost: queries per second the relay and mail-svc make when nothing happens.

use std::{
    collections::HashMap,
    time::{Duration, Instant},
};

use sqlx::PgPool;

use super::report::Idle;
use crate::stack::{Stack, db_name};

/// Transactions (each autocommit query is one) per second in the orders database (the relay's;
/// orders-svc makes none while no calls arrive) and in mail-svc's database, with no load.
pub(super) async fn idle(stack: &Stack, secs: f64) -> anyhow::Result<Idle> {
    let admin = PgPool::connect(&format!("{}/postgres", outbox_testkit::pg_server_url())).await?;
    let dbs = [db_name(&stack.orders_db_url), db_name(&stack.mail_db_url)];
    // Wait until the end-to-end load has fully settled (nothing unsent, no mail queued), then
    // let the statistics flush.
    let mut mail = stack.mail_client(0).await?;
    let orders_pool = PgPool::connect(&stack.orders_db_url).await?;
    let settle_deadline = Instant::now() + Duration::from_secs(600);
    loop {
        let status = mail
            .get_status(outbox_proto::mail::v1::GetStatusRequest {})
            .await?
            .into_inner();
        let backlog: i64 = sqlx::query_scalar("select count(*) from outbox")
            .fetch_one(&orders_pool)
            .await?;
        if backlog == 0 && status.held == 0 && status.unsent_mails == 0 {
            break;
        }
        anyhow::ensure!(
            Instant::now() < settle_deadline,
            "the stack never settled: {status:?}"
        );
        tokio::time::sleep(Duration::from_millis(500)).await;
    }
    orders_pool.close().await;
    tokio::time::sleep(Duration::from_secs(3)).await;
    let count = |admin: PgPool, dbs: [String; 2]| async move {
        sqlx::query("select pg_stat_clear_snapshot()")
            .execute(&admin)
            .await?;
        let rows: Vec<(String, i64)> = sqlx::query_as(
            "select datname::text, (xact_commit + xact_rollback)::bigint from pg_stat_database where datname = any($1)",
        )
        .bind(&dbs[..])
        .fetch_all(&admin)
        .await?;
        anyhow::Ok(rows.into_iter().collect::<HashMap<_, _>>())
    };
    let before = count(admin.clone(), dbs.clone()).await?;
    tokio::time::sleep(Duration::from_secs_f64(secs)).await;
    // Statistics are flushed by each backend at most once a second: wait for the last flush.
    tokio::time::sleep(Duration::from_millis(1500)).await;
    let after = count(admin.clone(), dbs.clone()).await?;
    let rate = |db: &String| {
        (after.get(db).copied().unwrap_or(0) - before.get(db).copied().unwrap_or(0)) as f64 / secs
    };
    Ok(Idle {
        secs,
        relay_queries_per_sec: rate(&dbs[0]),
        mail_queries_per_sec: rate(&dbs[1]),
    })
}
