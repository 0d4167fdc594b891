//! Section 1, the write path: `Upsert` over gRPC vs the same SQL transaction through sqlx.

use std::sync::Arc;

use anyhow::Context;
use orders_svc::{batch as orders_batch, db as orders_db, order::UpsertCommand, shard::Shard};
use outbox_proto::orders::v1::OrderStatus;
use outbox_testkit::orders::{upsert_as, walk_lives};

use crate::{
    cpu::{CpuMeter, CpuUse},
    load::{
        orders::EMAIL,
        stack::{bench_stack, drop_database},
    },
    stack::db_name,
    stats::Summary,
};

/// [`walk_lives`] summed up.
async fn run_writers<F, Fut>(c: usize, secs: f64, op: F) -> anyhow::Result<Summary>
where
    F: Fn(usize, i64, OrderStatus) -> Fut + Send + Sync + Clone + 'static,
    Fut: std::future::Future<Output = anyhow::Result<()>> + Send,
{
    let (latencies, elapsed) = walk_lives(c, secs, op).await?;
    Ok(Summary::new(latencies.len() as u64, elapsed, latencies))
}

pub(super) const TRACEPARENT: &str = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01";

/// The write path's database ceiling: orders-svc's own transaction for one call
/// (`batch::apply_one`, the code a batch of any size runs), one call per transaction, straight on
/// a pool.
pub(super) async fn write_ceiling(c: usize, secs: f64) -> anyhow::Result<(Summary, CpuUse)> {
    let url = outbox_testkit::fresh_database_url("bench_test_ceiling");
    let pool = outbox_kit::db::connect(&url, c as u32).await?;
    orders_db::MIGRATOR.run(&pool).await?;
    let meter = CpuMeter::new(Vec::new(), vec![db_name(&url)]);
    let before = meter.sample();
    let trace =
        outbox::trace::TraceHeaders::parse(TRACEPARENT, None).context("the bench's traceparent")?;
    let summary = run_writers(c, secs, move |_, id, status| {
        let (pool, trace) = (pool.clone(), trace.clone());
        async move {
            let cmd = UpsertCommand::parse(id, status as i32, EMAIL)?;
            // The write path's transaction for one call, straight on the pool: no queue, no gRPC.
            orders_batch::apply_one(&pool, Shard::ONLY, &cmd, Some(&trace)).await?;
            Ok(())
        }
    })
    .await?;
    let cpu = meter.sample().since(&before);
    drop_database(&url).await;
    Ok((summary, cpu))
}

pub(super) async fn write_service(c: usize, secs: f64) -> anyhow::Result<(Summary, CpuUse)> {
    let mut stack = bench_stack(0, 0).await?;
    let mut clients = Vec::new();
    for _ in 0..c {
        // One HTTP/2 connection per client, as separate callers would have.
        clients.push(stack.orders_client().await?);
    }
    let clients = Arc::new(clients);
    let meter = stack.cpu_meter();
    let before = meter.sample();
    let summary = run_writers(c, secs, move |worker, id, status| {
        let client = clients[worker].clone();
        async move { Ok(upsert_as(client, id, status, EMAIL).await?) }
    })
    .await?;
    let cpu = meter.sample().since(&before);
    stack.stop().await;
    drop_database(&stack.orders_db_url).await;
    Ok((summary, cpu))
}
