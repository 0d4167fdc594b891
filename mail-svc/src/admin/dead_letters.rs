//! Reading and redriving the dead-letter queue (`<MAIL_QUEUE>.dead-letter`, see [`crate::amqp`]).
//!
//! AMQP has no "peek": both operations take messages with `basic.get` (manual ack) on a channel
//! of their own, look at them, and hand back what they do not move (`basic.nack` with requeue;
//! closing the channel or a broken connection hands back the rest as well). A dead letter being
//! looked at is invisible to a second reader for that moment, nothing more.
//!
//! **Redrive never loses a message**: each matching dead letter is published to the main queue
//! through `<MAIL_QUEUE>.redrive` (a fanout exchange bound to the main queue only, declared here:
//! the copy reaches mail-svc's queue and no other binding of the events exchange, and mail-svc's
//! broker user needs no right beyond its own `<MAIL_QUEUE>*` names) on a confirm channel with
//! `mandatory`, and the dead letter is acked only after the broker confirmed the copy and did not
//! return it. A crash between the two leaves the
//! message in both queues; the consumer skips the second delivery as a duplicate (`seq` dedup).

use std::{str::FromStr, sync::Arc, time::Duration};

use anyhow::{Context, anyhow, bail};
use lapin::{
    BasicProperties, Channel, Confirmation, Connection, ConnectionProperties, ExchangeKind,
    message::Delivery,
    options::{
        BasicGetOptions, BasicNackOptions, BasicPublishOptions, ConfirmSelectOptions,
        ExchangeDeclareOptions, QueueBindOptions, QueueDeclareOptions,
    },
    types::{AMQPValue, FieldTable, LongString, ShortString},
    uri::{AMQPUri, SASLMechanism},
};

use outbox_support::{
    failover::{BrokerUrls, Failover},
    secret::SecretUrl,
};

use crate::{amqp::Topology, event};

/// The header a redriven message carries: how often it was redriven (1 after the first).
pub const REDRIVE_COUNT_HEADER: &str = "x-redrive-count";

/// The most dead letters one call looks at: a bound on what one call holds unacked in memory.
pub const MAX_SCAN: usize = 10_000;

/// How long connecting, and each broker call, may take.
const BROKER_TIMEOUT: Duration = Duration::from_secs(10);

/// Where the dead letters are and how to reach them.
#[derive(Debug, Clone)]
pub struct DeadLetters {
    /// Shared by the clones (one per call): a connect moves on from the node last used.
    broker: Arc<Failover>,
    amqp_tls: outbox_support::amqp::Tls,
    /// `AMQP_HEARTBEAT`.
    heartbeat: Duration,
    topology: Topology,
    /// This service's broker user: a redriven copy's `user_id` (RabbitMQ refuses any other).
    own_user: Option<String>,
}

/// One dead letter as listed.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Entry {
    /// The orders-svc shard its `shard` header names (absent: 0); -1 when the header names none.
    pub shard: i32,
    /// From the body, else the `message_id`; 0 when neither says.
    pub seq: i64,
    /// 0 when the body cannot be read.
    pub order_id: i64,
    pub event_type: String,
    pub routing_key: String,
    pub reason: String,
    pub redrive_count: u32,
    pub message_id: String,
    pub body_bytes: usize,
    /// The `timestamp` property, seconds since the epoch.
    pub timestamp: Option<u64>,
}

/// Which dead letters an operation takes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Filter {
    /// These seqs of one orders-svc shard (seqs are unique per shard).
    Seqs {
        shard: i32,
        seqs: Vec<i64>,
    },
    Order(i64),
    All,
}

impl Filter {
    pub fn matches(&self, e: &Entry) -> bool {
        match self {
            Filter::Seqs { shard, seqs } => e.seq > 0 && e.shard == *shard && seqs.contains(&e.seq),
            Filter::Order(o) => e.order_id == *o,
            Filter::All => true,
        }
    }
}

/// What a redrive did.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Redriven {
    pub moved: Vec<Entry>,
    /// Matching dead letters left because of the limit.
    pub remaining: u64,
    /// The audit row written before the first move (what the `record` of
    /// [`DeadLetters::redrive`] returned); `None` when nothing was about to move.
    pub audit_id: Option<i64>,
}

/// Why a dead-letter operation failed.
#[derive(Debug, thiserror::Error)]
pub enum DeadLetterError {
    /// The filter matched no dead letter; nothing changed.
    #[error("{0} (nothing changed)")]
    NoMatch(String),
    /// The broker cannot be reached or refused something; what was moved before is reported.
    #[error("broker: {0:#}")]
    Broker(anyhow::Error),
    /// The audit row could not be written: nothing moved.
    #[error("the audit row could not be written (nothing changed): {0}")]
    NotRecorded(sqlx::Error),
}

/// The broker user of `amqp_url` (none with EXTERNAL or ANONYMOUS authentication).
pub fn url_user(amqp_url: &str) -> Option<String> {
    let u = AMQPUri::from_str(amqp_url).ok()?;
    match u.query.auth_mechanism.unwrap_or_default() {
        SASLMechanism::External | SASLMechanism::Anonymous => None,
        _ => Some(u.authority.userinfo.username),
    }
}

impl DeadLetters {
    /// This service's broker user, the `user_id` of every redriven copy.
    pub fn own_user(&self) -> Option<&str> {
        self.own_user.as_deref()
    }

    /// `amqp_url`: one address or several (all with the same user, which validation checks).
    pub fn new(
        amqp_url: impl Into<BrokerUrls>,
        amqp_tls: outbox_support::amqp::Tls,
        topology: Topology,
    ) -> Self {
        let urls = amqp_url.into();
        let own_user = url_user(&urls.first());
        Self {
            broker: Arc::new(Failover::new(urls)),
            amqp_tls,
            heartbeat: outbox_support::amqp::DEFAULT_HEARTBEAT,
            topology,
            own_user,
        }
    }

    /// The heartbeat its connections ask for (`AMQP_HEARTBEAT`).
    pub fn with_heartbeat(mut self, heartbeat: Duration) -> Self {
        self.heartbeat = heartbeat;
        self
    }

    async fn connect(&self) -> anyhow::Result<(Connection, Channel)> {
        let connect_one = async move |url: &SecretUrl| {
            let connect = async {
                let props =
                    ConnectionProperties::default().with_connection_name("mail-svc-admin".into());
                let conn =
                    outbox_support::amqp::connect(url, &self.amqp_tls, self.heartbeat, props)
                        .await?;
                let ch = conn.create_channel().await?;
                Ok::<_, lapin::Error>((conn, ch))
            };
            tokio::time::timeout(BROKER_TIMEOUT, connect)
                .await
                .map_err(|_| anyhow!("connecting to RabbitMQ timed out after {BROKER_TIMEOUT:?}"))?
                .map_err(anyhow::Error::from)
        };
        let (conn_ch, _) = self
            .broker
            .connect(connect_one)
            .await
            .context("cannot connect to RabbitMQ (AMQP_URL)")?;
        Ok(conn_ch)
    }

    /// Messages in the dead-letter queue (0 when it does not exist yet).
    async fn count(&self, conn: &Connection) -> anyhow::Result<u64> {
        // A channel of its own: a passive declare of a missing queue closes its channel.
        let ch = conn.create_channel().await?;
        let passive = QueueDeclareOptions {
            passive: true,
            ..QueueDeclareOptions::default()
        };
        let declared = call(
            "queue.declare",
            ch.queue_declare(
                self.topology.dead_letter_queue.as_str().into(),
                passive,
                FieldTable::default(),
            ),
        )
        .await;
        let _ = ch.close(200, "done".into()).await;
        match declared {
            Ok(q) => Ok(u64::from(q.message_count())),
            Err(e) if e.to_string().contains("NOT_FOUND") => Ok(0),
            Err(e) => Err(e),
        }
    }

    /// Takes the next dead letter (unacked), or `None` when none is ready.
    async fn take(&self, ch: &Channel) -> anyhow::Result<Option<Delivery>> {
        let got = call(
            "basic.get",
            ch.basic_get(
                self.topology.dead_letter_queue.as_str().into(),
                // Manual ack: what is not moved goes back to the queue.
                BasicGetOptions { no_ack: false },
            ),
        )
        .await?;
        Ok(got.map(|m| m.delivery))
    }

    /// The dead letters in queue order: how many there are, and the first `limit` matching
    /// `filter`.
    pub async fn list(&self, limit: usize, filter: &Filter) -> anyhow::Result<(u64, Vec<Entry>)> {
        let (conn, ch) = self.connect().await?;
        let result = async {
            let count = self.count(&conn).await?;
            let mut out = Vec::new();
            let mut last_tag = None;
            for _ in 0..scan_bound(count) {
                let Some(d) = self.take(&ch).await? else {
                    break;
                };
                last_tag = Some(d.delivery_tag);
                let e = entry(&d);
                // The whole queue is taken before anything goes back, even past `limit`: a
                // quorum queue puts a returned message at its end, so handing back only the
                // first few would reorder the queue each time someone looks at it.
                if filter.matches(&e) && out.len() < limit {
                    out.push(e);
                }
            }
            if let Some(tag) = last_tag {
                // Everything back, in one call.
                call(
                    "basic.nack",
                    ch.basic_nack(
                        tag,
                        BasicNackOptions {
                            multiple: true,
                            requeue: true,
                        },
                    ),
                )
                .await?;
            }
            Ok::<_, anyhow::Error>((count, out))
        }
        .await;
        outbox_support::amqp::close(&conn, "done").await;
        result
    }

    /// Moves up to `limit` dead letters matching `filter` back to the main queue (see the module
    /// docs). `record` is given the dead letters about to move, before the first one moves, and
    /// returns the id of the audit row it wrote: when it fails, nothing moves (`NotRecorded`).
    /// `NoMatch` when none matches: then nothing moved and nothing was recorded.
    pub async fn redrive<R, F>(
        &self,
        filter: &Filter,
        limit: usize,
        record: R,
    ) -> Result<Redriven, (Redriven, DeadLetterError)>
    where
        R: FnOnce(Vec<Entry>) -> F,
        F: Future<Output = Result<i64, sqlx::Error>>,
    {
        let (conn, ch) = self
            .connect()
            .await
            .map_err(|e| (Redriven::default(), DeadLetterError::Broker(e)))?;
        let mut done = Redriven::default();
        let result = async {
            let publish_ch = conn.create_channel().await?;
            // Confirm mode: the dead letter is acked only once the broker has taken the copy.
            publish_ch
                .confirm_select(ConfirmSelectOptions::default())
                .await?;
            self.declare_redrive(&publish_ch).await?;
            // Only what is in the queue now: a redriven message that dies again comes back to
            // the end of the queue while this loop runs, and must not be taken (and redriven)
            // a second time by the same call.
            let present = self.count(&conn).await?;
            let mut kept = Vec::new();
            let mut chosen = Vec::new();
            let mut matched = 0u64;
            for _ in 0..scan_bound(present) {
                let Some(d) = self.take(&ch).await? else {
                    break;
                };
                let e = entry(&d);
                if !filter.matches(&e) {
                    kept.push(d.delivery_tag);
                    continue;
                }
                matched += 1;
                if chosen.len() >= limit {
                    kept.push(d.delivery_tag);
                    continue;
                }
                chosen.push((d, e));
            }
            done.remaining = matched - chosen.len() as u64;
            if chosen.is_empty() {
                requeue(&ch, &kept).await;
                return Ok(None);
            }
            // Recorded before the first move: a move must never go unrecorded.
            match record(chosen.iter().map(|(_, e)| e.clone()).collect()).await {
                Ok(id) => done.audit_id = Some(id),
                Err(e) => {
                    kept.extend(chosen.iter().map(|(d, _)| d.delivery_tag));
                    requeue(&ch, &kept).await;
                    return Ok(Some(e));
                }
            }
            let mut chosen = chosen.into_iter();
            while let Some((d, e)) = chosen.next() {
                if let Err(err) = self.publish_copy(&publish_ch, &d).await {
                    // Not moved: it and the rest stay dead letters (handed back).
                    kept.push(d.delivery_tag);
                    kept.extend(chosen.map(|(d, _)| d.delivery_tag));
                    requeue(&ch, &kept).await;
                    return Err(err.context(format!("redriving seq {}", e.seq)));
                }
                call(
                    "basic.ack",
                    ch.basic_ack(d.delivery_tag, lapin::options::BasicAckOptions::default()),
                )
                .await?;
                tracing::warn!(
                    "[admin] redriven seq={} order={} to {}",
                    e.seq,
                    e.order_id,
                    self.topology.queue
                );
                done.moved.push(e);
            }
            requeue(&ch, &kept).await;
            Ok::<_, anyhow::Error>(None)
        }
        .await;
        outbox_support::amqp::close(&conn, "done").await;
        match result {
            Err(e) => Err((done, DeadLetterError::Broker(e))),
            Ok(Some(e)) => Err((done, DeadLetterError::NotRecorded(e))),
            Ok(None) if done.moved.is_empty() => {
                Err((done, DeadLetterError::NoMatch(describe(filter))))
            }
            Ok(None) => Ok(done),
        }
    }

    /// `<queue>.redrive`: durable fanout, bound to the main queue only.
    fn redrive_exchange(&self) -> String {
        format!("{}.redrive", self.topology.queue)
    }

    async fn declare_redrive(&self, ch: &Channel) -> anyhow::Result<()> {
        let exchange = self.redrive_exchange();
        // Durable, like every name of the topology (declared idempotently).
        let durable = ExchangeDeclareOptions {
            durable: true,
            ..ExchangeDeclareOptions::default()
        };
        call(
            "exchange.declare",
            ch.exchange_declare(
                exchange.as_str().into(),
                ExchangeKind::Fanout,
                durable,
                FieldTable::default(),
            ),
        )
        .await?;
        call(
            "queue.bind",
            ch.queue_bind(
                self.topology.queue.as_str().into(),
                exchange.as_str().into(),
                "".into(),
                QueueBindOptions::default(),
                FieldTable::default(),
            ),
        )
        .await
        .with_context(|| format!("the main queue {} cannot be bound", self.topology.queue))
    }

    /// Publishes the copy and waits for the broker's confirm; an error unless it was confirmed
    /// and routed.
    async fn publish_copy(&self, ch: &Channel, d: &Delivery) -> anyhow::Result<()> {
        let props = redrive_properties(&d.properties, self.own_user.as_deref());
        let confirm = call(
            "basic.publish",
            ch.basic_publish(
                // Bound to mail-svc's queue only (fanout: the routing key is kept for readers).
                self.redrive_exchange().as_str().into(),
                d.routing_key.as_str().into(),
                // Mandatory: a missing main queue returns the copy instead of dropping it.
                BasicPublishOptions {
                    mandatory: true,
                    ..BasicPublishOptions::default()
                },
                &d.data,
                props,
            ),
        )
        .await?;
        match call("publisher confirm", confirm).await? {
            Confirmation::Ack(None) => Ok(()),
            Confirmation::Ack(Some(_)) => bail!(
                "the main queue {} does not exist (copy returned)",
                self.topology.queue
            ),
            Confirmation::Nack(_) => bail!("the broker refused the copy (nack)"),
            Confirmation::NotRequested => bail!("no publisher confirm (bug)"),
        }
    }
}

/// How many messages one call takes: those present, at most [`MAX_SCAN`].
fn scan_bound(present: u64) -> usize {
    usize::try_from(present).unwrap_or(MAX_SCAN).min(MAX_SCAN)
}

/// Hands the deliveries back to the dead-letter queue (best effort: a failure closes the channel,
/// which hands them back as well).
async fn requeue(ch: &Channel, tags: &[u64]) {
    for &tag in tags {
        let nack = ch.basic_nack(
            tag,
            BasicNackOptions {
                multiple: false,
                requeue: true,
            },
        );
        if call("basic.nack", nack).await.is_err() {
            let _ = ch.close(200, "requeue failed".into()).await;
            return;
        }
    }
}

fn describe(filter: &Filter) -> String {
    match filter {
        Filter::Seqs { shard, seqs } => {
            let list: Vec<String> = seqs.iter().map(i64::to_string).collect();
            let of_shard = match shard {
                0 => String::new(),
                s => format!(" of shard {s}"),
            };
            format!("no dead letter matches seq {}{of_shard}", list.join(", "))
        }
        Filter::Order(o) => format!("no dead letter matches order {o}"),
        Filter::All => "the dead-letter queue is empty".to_owned(),
    }
}

async fn call<T>(
    what: &str,
    f: impl std::future::Future<Output = lapin::Result<T>>,
) -> anyhow::Result<T> {
    match tokio::time::timeout(BROKER_TIMEOUT, f).await {
        Ok(r) => r.with_context(|| format!("{what} failed")),
        Err(_) => Err(anyhow!("{what} got no answer in {BROKER_TIMEOUT:?}")),
    }
}

/// The copy's properties: the original's, with [`REDRIVE_COUNT_HEADER`] one higher, and the
/// `user_id` of the publishing connection (RabbitMQ refuses any other): an original `user_id`
/// moves to the `x-original-user-id` header, as in [`crate::amqp::dead_letter_properties`].
pub fn redrive_properties(original: &BasicProperties, own_user: Option<&str>) -> BasicProperties {
    let mut headers = original.headers().clone().unwrap_or_default();
    let count = redrive_count(original) + 1;
    headers.insert(
        REDRIVE_COUNT_HEADER.into(),
        AMQPValue::LongLongInt(i64::from(count)),
    );
    let had_user =
        original.user_id().is_some() || headers.inner().contains_key("x-original-user-id");
    if let Some(user) = original.user_id()
        && !headers.inner().contains_key("x-original-user-id")
    {
        headers.insert(
            "x-original-user-id".into(),
            AMQPValue::LongString(LongString::from(user.as_str())),
        );
    }
    let p = crate::amqp::with_properties_of(original, headers);
    match (had_user, own_user) {
        (true, Some(u)) => p.with_user_id(ShortString::from(u)),
        _ => p,
    }
}

fn header<'a>(props: &'a BasicProperties, name: &str) -> Option<&'a AMQPValue> {
    props.headers().as_ref()?.inner().get(name)
}

fn text(v: &AMQPValue) -> Option<String> {
    match v {
        AMQPValue::LongString(s) => Some(String::from_utf8_lossy(s.as_bytes()).into_owned()),
        AMQPValue::ShortString(s) => Some(s.as_str().to_owned()),
        _ => None,
    }
}

fn redrive_count(props: &BasicProperties) -> u32 {
    let n = match header(props, REDRIVE_COUNT_HEADER) {
        Some(AMQPValue::LongLongInt(n)) => *n,
        Some(AMQPValue::LongInt(n)) => i64::from(*n),
        Some(AMQPValue::LongUInt(n)) => i64::from(*n),
        Some(AMQPValue::ShortInt(n)) => i64::from(*n),
        Some(AMQPValue::ShortShortInt(n)) => i64::from(*n),
        _ => 0,
    };
    u32::try_from(n).unwrap_or(0)
}

/// What a dead letter is: its event (when the body can be read) and why it died.
pub fn entry(d: &Delivery) -> Entry {
    let props = &d.properties;
    let message_id = props
        .message_id()
        .as_ref()
        .map(|m| m.as_str().to_owned())
        .unwrap_or_default();
    let decoded = event::decode(props.content_type().as_ref().map(|c| c.as_str()), &d.data);
    let (seq, order_id, event_type) = match &decoded {
        Ok(ev) => (ev.seq, ev.order_id, ev.event_type().to_owned()),
        Err(_) => (message_id.parse().unwrap_or(0), 0, String::new()),
    };
    let reason = header(props, crate::amqp::DEATH_REASON_HEADER)
        .and_then(text)
        .or_else(|| death_reason(props))
        .unwrap_or_default();
    let routing_key = header(props, "x-original-routing-key")
        .and_then(text)
        .unwrap_or_else(|| d.routing_key.as_str().to_owned());
    let shard =
        event::shard(header(props, event::SHARD_HEADER).and_then(text).as_deref()).unwrap_or(-1);
    Entry {
        shard,
        seq,
        order_id,
        event_type,
        routing_key,
        reason,
        redrive_count: redrive_count(props),
        message_id,
        body_bytes: d.data.len(),
        timestamp: *props.timestamp(),
    }
}

/// The broker's own reason (`x-death[0].reason`, e.g. `rejected`, `delivery_limit`).
fn death_reason(props: &BasicProperties) -> Option<String> {
    let AMQPValue::FieldArray(deaths) = header(props, "x-death")? else {
        return None;
    };
    let AMQPValue::FieldTable(first) = deaths.as_slice().first()? else {
        return None;
    };
    let reason = first.inner().get("reason").and_then(text)?;
    Some(format!("broker: {reason}"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_redriven_copy_keeps_its_properties_and_counts() {
        let mut h = FieldTable::default();
        h.insert("x-death-reason".into(), AMQPValue::LongString("bad".into()));
        h.insert(
            "x-original-user-id".into(),
            AMQPValue::LongString("relay".into()),
        );
        let original = BasicProperties::default()
            .with_message_id("42".into())
            .with_content_type("application/x-protobuf".into())
            .with_delivery_mode(2)
            .with_headers(h);
        let once = redrive_properties(&original, Some("mail"));
        assert_eq!(redrive_count(&once), 1);
        assert_eq!(once.message_id(), original.message_id());
        assert_eq!(once.content_type(), original.content_type());
        assert_eq!(once.delivery_mode(), &Some(2));
        assert_eq!(once.user_id().as_ref().map(|u| u.as_str()), Some("mail"));
        let twice = redrive_properties(&once, Some("mail"));
        assert_eq!(redrive_count(&twice), 2);
        // The first publisher's name is kept.
        let h = twice.headers().clone().expect("headers");
        assert_eq!(
            h.inner()
                .get("x-original-user-id")
                .and_then(text)
                .as_deref(),
            Some("relay")
        );
        // Without a user on the original, none is added.
        let plain = redrive_properties(&BasicProperties::default(), Some("mail"));
        assert_eq!(plain.user_id(), &None);
    }
}
