//! mail-svc working off a pre-loaded queue: `instances` of it sharing one queue and one mail
//! database, until every event is processed (or every mail sent).

use std::time::{Duration, Instant};

use prost::Message;

use super::{
    events::{event_properties, preload, sample_event},
    progress,
    stack::{amqp, drop_database},
};
use crate::{
    cpu::CpuUse,
    stack::{Stack, StackConfig},
    stats::Summary,
};

/// What one mail-svc run measured.
#[derive(Debug)]
pub struct MailRun {
    /// Events processed over the run's wall time.
    pub through: Summary,
    /// CPU seconds per group over the run.
    pub cpu: CpuUse,
    /// Busy CPU seconds of the whole machine over the run.
    pub machine_busy_secs: f64,
}

/// One mail-svc from `events` pre-loaded events until every mail is sent (its mailer included):
/// the rate of the whole consume side.
pub async fn mail_consume_until_sent(
    events: u64,
    orders: u64,
    prefetch: u16,
) -> anyhow::Result<Summary> {
    Ok(mail_consume_until(events, orders, prefetch, 1, Done::Sent)
        .await?
        .through)
}

/// When a mail-svc run is done.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Done {
    /// Every event turned into a queued mail.
    Processed,
    /// And every mail sent.
    Sent,
}

/// `instances` mail-svc (sharing one queue and one mail database) from `events` pre-loaded
/// events of `orders` orders (each order's chain in order, orders interleaved) until `done`.
pub async fn mail_consume_until(
    events: u64,
    orders: u64,
    prefetch: u16,
    instances: usize,
    done: Done,
) -> anyhow::Result<MailRun> {
    let mut cfg = StackConfig::new("bench");
    cfg.relays = 0;
    cfg.mails = instances;
    cfg.rust_log = "warn".into();
    cfg.mail_env.push(("PREFETCH".into(), prefetch.to_string()));
    let mut stack = Stack::start(cfg).await?;
    // Let mail-svc declare its topology, then stop it and fill its queue.
    let stopping = stack.mails.iter_mut();
    futures::future::join_all(stopping.map(|mail| mail.terminate(Duration::from_secs(10)))).await;
    let conn = amqp().await?;
    let ch = conn.create_channel().await?;
    preload(
        &ch,
        &stack.exchange,
        move |i| {
            let order = (i % orders) as i64 + 1;
            let seq = i + 1;
            let prev = (i >= orders).then(|| seq - orders);
            let event = sample_event(seq, order, prev);
            let key = if prev.is_some() {
                "order.status_changed"
            } else {
                "order.created"
            };
            let props = event_properties(seq, order, prev, &event.r#type);
            (key.to_owned(), event.encode_to_vec(), props)
        },
        events,
    )
    .await?;
    let started = Instant::now();
    // All at once: started one after another, the first would work alone for a while.
    futures::future::try_join_all(stack.mails.iter_mut().map(|mail| mail.start())).await?;
    let meter = stack.cpu_meter();
    let before = meter.sample();
    // Progress from mail-svc's own tables, in statements that cost O(orders) and O(unsent):
    // `GetStatus` counts every mail (80 ms of PostgreSQL at 100,000 mails), and polled every
    // 50 ms it took most of a core from the run it measured.
    let mail_db = sqlx::PgPool::connect(&stack.mail_db_url).await?;
    let mut last_report = Instant::now();
    loop {
        // An order's last event is applied only after every earlier one (held until then), so
        // the orders whose watermark passed their last event are the finished ones.
        let (finished, unsent): (i64, i64) = sqlx::query_as(
            "select (select count(*) from order_progress where last_seq > $1),
                    (select count(*) from mails where sent_at is null and failed_at is null)",
        )
        .bind(events.saturating_sub(orders) as i64)
        .fetch_one(&mail_db)
        .await?;
        let processed = finished as u64 >= orders.min(events);
        if processed && (done == Done::Processed || unsent == 0) {
            break;
        }
        if last_report.elapsed() > Duration::from_secs(2) {
            last_report = Instant::now();
            progress(format!(
                "   {finished} of {orders} orders processed, {unsent} mails unsent"
            ));
        }
        anyhow::ensure!(
            started.elapsed() < Duration::from_secs(900),
            "mail-svc stalled: {finished} of {orders} orders processed"
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    mail_db.close().await;
    let through = Summary::new(events, started.elapsed(), Vec::new());
    let after = meter.sample();
    stack.stop().await;
    drop_database(&stack.orders_db_url).await;
    drop_database(&stack.mail_db_url).await;
    Ok(MailRun {
        through,
        cpu: after.since(&before),
        machine_busy_secs: after.machine_busy_since(&before),
    })
}
