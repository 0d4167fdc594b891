//! After the load: waiting for the stack to drain, then every order's mails against the ledger.

use std::{
    collections::{BTreeMap, BTreeSet},
    time::{Duration, Instant},
};

use futures::StreamExt;
use outbox_proto::mail::v1::{GetStatusRequest as MailStatusRequest, ListMailsRequest};

use super::{ChaosReport, OrderLedger};
use crate::stack::Stack;

/// Waits until the outbox is empty, nothing is held, and mail-svc processed every event.
pub(super) async fn wait_drained(
    stack: &Stack,
    events: u64,
    timeout: Duration,
) -> anyhow::Result<()> {
    let mut shards = Vec::new();
    for url in &stack.orders_shard_urls {
        shards.push(sqlx::PgPool::connect(url).await?);
    }
    let deadline = Instant::now() + timeout;
    let mut last_report = Instant::now();
    loop {
        let mut backlog = 0_i64;
        for shard in &shards {
            let n: i64 = sqlx::query_scalar("select count(*) from outbox")
                .fetch_one(shard)
                .await?;
            backlog += n;
        }
        let status = stack
            .mail_client(0)
            .await?
            .get_status(MailStatusRequest {})
            .await?
            .into_inner();
        if backlog == 0 && status.held == 0 && status.processed >= events {
            return Ok(());
        }
        if last_report.elapsed() > Duration::from_secs(10) {
            last_report = Instant::now();
            eprintln!(
                "chaos: draining: outbox {backlog}, held {}, processed {} of {events}",
                status.held, status.processed
            );
        }
        if Instant::now() > deadline {
            anyhow::bail!(
                "not drained after {timeout:?}: outbox {backlog}, held {}, processed {} of {events}",
                status.held,
                status.processed
            );
        }
        tokio::time::sleep(Duration::from_millis(500)).await;
    }
}

/// Compares every order's mails with the ledger and the orders table.
pub(super) async fn check(
    stack: &Stack,
    ledger: &BTreeMap<i64, OrderLedger>,
    report: &mut ChaosReport,
) -> anyhow::Result<()> {
    // Every shard's orders; an order lives in exactly one.
    let mut committed: BTreeMap<i64, (i64, i64)> = BTreeMap::new();
    for url in &stack.orders_shard_urls {
        let shard = sqlx::PgPool::connect(url).await?;
        let rows: Vec<(i64, i64, i64)> =
            sqlx::query_as("select id, version, last_event_seq from orders")
                .fetch_all(&shard)
                .await?;
        shard.close().await;
        for (id, v, last) in rows {
            if committed.insert(id, (v, last)).is_some() {
                report
                    .problems
                    .push(format!("order {id} is in two shards' databases"));
                report.phantom += 1;
            }
        }
    }
    let shards = stack.orders_shard_urls.len();
    let mail = stack.mail_client(0).await?;
    let empty = OrderLedger::default();
    let ids: BTreeSet<i64> = ledger.keys().chain(committed.keys()).copied().collect();
    // Ask for every order's mails, 32 calls at a time.
    let all_mails: Vec<(i64, Vec<outbox_proto::mail::v1::Mail>)> =
        futures::stream::iter(ids.iter().copied())
            .map(|id| {
                let mut mail = mail.clone();
                async move {
                    let mails = mail
                        .list_mails(ListMailsRequest { order_id: id })
                        .await?
                        .into_inner()
                        .mails;
                    anyhow::Ok((id, mails))
                }
            })
            .buffer_unordered(32)
            .collect::<Vec<_>>()
            .await
            .into_iter()
            .collect::<anyhow::Result<_>>()?;
    for (id, mails) in all_mails {
        let expected = ledger.get(&id).unwrap_or(&empty);
        // Seqs are per shard: an order's mails must all be of its own shard's events.
        let home = orders_svc::shard::of(id, shards) as u32;
        let strays = mails.iter().filter(|m| m.shard != home).count() as u64;
        if strays > 0 {
            report.problems.push(format!(
                "order {id} lives in shard {home}, but {strays} of its mails name another"
            ));
            report.phantom += strays;
        }
        let seqs: Vec<u64> = mails.iter().map(|m| m.seq).collect();
        let distinct: BTreeSet<u64> = seqs.iter().copied().collect();
        let duplicated = (seqs.len() - distinct.len()) as u64;
        let lost: Vec<u64> = expected.seqs.difference(&distinct).copied().collect();
        let extra: Vec<u64> = distinct.difference(&expected.seqs).copied().collect();
        // Mails must come in chain order: seqs strictly increasing in send order.
        let reordered = seqs.windows(2).filter(|w| w[0] >= w[1]).count() as u64;
        // An event the ledger does not know is acceptable only as the outcome of a call that
        // failed without a definite answer, and only if the order's row agrees it was committed.
        let (version, last_seq) = committed.get(&id).copied().unwrap_or((0, 0));
        let chain_matches_db = distinct.len() as i64 == version
            && distinct.iter().next_back().copied().unwrap_or(0) as i64 == last_seq;
        let phantom = if extra.len() as u32 <= expected.ambiguous && chain_matches_db {
            0
        } else {
            extra.len() as u64
        };
        if !chain_matches_db {
            report.problems.push(format!(
                "order {id}: {} mails, last seq {:?}, but the order has version {version}, last_event_seq {last_seq}",
                distinct.len(),
                distinct.iter().next_back()
            ));
        }
        if !lost.is_empty() || duplicated > 0 || reordered > 0 || phantom > 0 {
            report.problems.push(format!(
                "order {id}: mails {seqs:?}, ledger {:?}, ambiguous {}",
                expected.seqs, expected.ambiguous
            ));
        }
        report.lost += lost.len() as u64;
        report.duplicated += duplicated;
        report.reordered += reordered;
        report.phantom += phantom;
        if !chain_matches_db && lost.is_empty() && phantom == 0 {
            // The database disagrees with the mails in a way the counters above miss.
            report.lost += 1;
        }
    }
    Ok(())
}
