//! A small write-path benchmark that prints figures and asserts none (the machine is noisy):
//! Upsert over gRPC at C=1 and C=32 next to the one-transaction-per-call SQL ceiling
//! (`batch::apply_one`, the write path's transaction for one call straight on a pool, as
//! `e2e/src/bench/` measures it), both in the same run.
//!
//! `cargo test -p orders-svc --test it bench:: -- --nocapture` shows the table.

use std::sync::Arc;

use orders_svc::{batch, db, order::UpsertCommand, shard::Shard};
use outbox_proto::orders::v1::{OrderStatus, order_service_client::OrderServiceClient};
use outbox_testkit::{
    fresh_database_url,
    orders::{upsert_as, walk_lives},
};

use crate::common::{config, start_with};

const EMAIL: &str = "bench@example.com";
const TRACEPARENT: &str = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01";
const SECS: f64 = 3.0;

struct Figures {
    per_sec: f64,
    p50_ms: f64,
    p99_ms: f64,
}

/// Like the e2e bench: each worker walks its own orders through their four statuses
/// ([`walk_lives`]), so every call appends exactly one event.
async fn run<F, Fut>(c: usize, op: F) -> Figures
where
    F: Fn(usize, i64, OrderStatus) -> Fut + Send + Sync + Clone + 'static,
    Fut: std::future::Future<Output = anyhow::Result<()>> + Send,
{
    let (mut all, elapsed) = walk_lives(c, SECS, op).await.expect("worker");
    all.sort();
    let pick = |q: f64| all[((all.len() - 1) as f64 * q) as usize].as_secs_f64() * 1e3;
    Figures {
        per_sec: all.len() as f64 / elapsed.as_secs_f64(),
        p50_ms: pick(0.5),
        p99_ms: pick(0.99),
    }
}

async fn ceiling(c: usize) -> (Figures, String) {
    let url = fresh_database_url("orders_bench_test_ceiling");
    let pool = outbox_kit::db::connect(&url, c as u32).await.expect("pool");
    db::MIGRATOR.run(&pool).await.expect("migrate");
    let p = pool.clone();
    let trace = outbox::trace::TraceHeaders::parse(TRACEPARENT, None).expect("valid");
    let figures = run(c, move |_, id, status| {
        let (pool, trace) = (p.clone(), trace.clone());
        async move {
            let cmd = UpsertCommand::parse(id, status as i32, EMAIL).expect("valid");
            batch::apply_one(&pool, Shard::ONLY, &cmd, Some(&trace))
                .await
                .expect("ceiling upsert");
            Ok(())
        }
    })
    .await;
    pool.close().await;
    (figures, url)
}

async fn service(c: usize) -> (Figures, String) {
    let url = fresh_database_url("orders_bench_test_service");
    let mut cfg = config(url.clone());
    // The service's default pool size.
    cfg.db_max_connections = 32;
    let t = start_with(cfg).await;
    let mut clients = Vec::new();
    for _ in 0..c {
        // One HTTP/2 connection per client, as separate callers would have.
        clients.push(
            OrderServiceClient::connect(format!("http://{}", t.grpc_addr))
                .await
                .expect("client"),
        );
    }
    let clients = Arc::new(clients);
    let figures = run(c, move |worker, id, status| {
        let client = clients[worker].clone();
        async move {
            upsert_as(client, id, status, EMAIL)
                .await
                .expect("service upsert");
            Ok(())
        }
    })
    .await;
    t.shutdown.cancel();
    t.app.await.expect("app task").expect("app stops");
    (figures, url)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn upsert_throughput_next_to_the_sql_ceiling() {
    let mut out = String::from(
        "\nwrite path                        upserts/s    p50 ms    p99 ms    ratio\n",
    );
    for c in [1, 32] {
        let (ceil, ceil_db) = ceiling(c).await;
        let (svc, svc_db) = service(c).await;
        out += &format!(
            "C={c:<3} SQL transaction (ceiling) {:>10.0} {:>9.2} {:>9.2}\n",
            ceil.per_sec, ceil.p50_ms, ceil.p99_ms
        );
        out += &format!(
            "C={c:<3} Upsert over gRPC          {:>10.0} {:>9.2} {:>9.2}   {:>4.0}%\n",
            svc.per_sec,
            svc.p50_ms,
            svc.p99_ms,
            100.0 * svc.per_sec / ceil.per_sec
        );
        outbox_testkit::drop_database(outbox_testkit::database_name(&ceil_db))
            .await
            .expect("drop database");
        outbox_testkit::drop_database(outbox_testkit::database_name(&svc_db))
            .await
            .expect("drop database");
    }
    println!("{out}");
}
