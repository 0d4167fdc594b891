//! One function per command: the calls it makes and what it prints.

use outbox_proto::{
    mail::{
        admin::v1::{
            self as mail_admin, DeadLetterFilter, ListDeadLettersRequest, ListFailedMailsRequest,
            ListHeldRequest, MailFilter, RedriveDeadLettersRequest, ReleaseHeldRequest,
            RetryMailsRequest, mail_admin_client::MailAdminClient,
        },
        v1::{GetStatusRequest as MailStatusRequest, mail_service_client::MailServiceClient},
    },
    relay::{
        admin::v1::{
            DropQuarantinedRequest, ListBacklogRequest, ListQuarantinedRequest, QuarantineSelector,
            RequeueQuarantinedRequest, UnavailableShard, relay_admin_client::RelayAdminClient,
        },
        v1::{GetStatusRequest as RelayStatusRequest, relay_service_client::RelayServiceClient},
    },
};
use serde_json::{Value, json};
use tonic::{Code, Status, transport::Channel};
use tonic_health::pb::{HealthCheckRequest, health_client::HealthClient};

use crate::{
    Failure, Output, Result, Services,
    cli::{self, Command, DeadLetters, Held, Mails, Quarantine},
    table::{Table, age},
};

/// Runs one command.
pub async fn dispatch(command: &Command, s: &Services) -> Result<Output> {
    match command {
        Command::Status => status(s).await,
        Command::Backlog { limit } => backlog(s, *limit).await,
        Command::Quarantine(q) => quarantine(s, q).await,
        Command::Held(h) => held(s, h).await,
        Command::DeadLetters(d) => dead_letters(s, d).await,
        Command::Mails(m) => mails(s, m).await,
    }
}

fn u(v: u64) -> String {
    v.to_string()
}

fn seq_list(v: &[u64]) -> String {
    if v.is_empty() {
        return "-".into();
    }
    v.iter().map(u64::to_string).collect::<Vec<_>>().join(",")
}

async fn relay_admin(s: &Services) -> Result<(String, RelayAdminClient<Channel>)> {
    let (addr, ch) = s.first("relay-svc", &s.relays).await?;
    Ok((addr, RelayAdminClient::new(ch)))
}

async fn mail_admin(s: &Services) -> Result<(String, MailAdminClient<Channel>)> {
    let (addr, ch) = s.first("mail-svc", &s.mails).await?;
    Ok((addr, MailAdminClient::new(ch)))
}

/// Health of one service: reachable, the status name (or why it cannot be read), the channel.
async fn health(s: &Services, service: &str, addr: &str) -> (bool, String, Option<Channel>) {
    match s.channel(service, addr).await {
        Err(f) => (false, f.message, None),
        Ok(ch) => {
            let mut client = HealthClient::new(ch.clone());
            let request = HealthCheckRequest {
                service: String::new(),
            };
            match client.check(request).await {
                Ok(r) => (
                    true,
                    r.into_inner().status().as_str_name().to_owned(),
                    Some(ch),
                ),
                Err(e) => (true, format!("health unknown: {}", e.message()), Some(ch)),
            }
        }
    }
}

fn short_health(reachable: bool, h: &str) -> String {
    if reachable {
        h.to_owned()
    } else {
        "UNREACHABLE".into()
    }
}

fn step(cond: bool, cmd: &str) -> String {
    if cond { cmd.to_owned() } else { String::new() }
}

/// The kinds of service `status` lists an instance of per address.
#[derive(Debug, Clone, Copy)]
enum Instance {
    Relay,
    Mail,
}

impl Instance {
    fn service(self) -> &'static str {
        match self {
            Instance::Relay => "relay-svc",
            Instance::Mail => "mail-svc",
        }
    }

    /// The instance's STATE column from its GetStatus, its figures added to `j`.
    async fn state(self, s: &Services, ch: Channel, j: &mut Value) -> String {
        match self {
            Instance::Relay => {
                let r = RelayServiceClient::new(ch)
                    .get_status(s.authed(RelayStatusRequest {}))
                    .await;
                match r.map(tonic::Response::into_inner) {
                    Ok(r) => {
                        j["leader"] = json!(r.active);
                        j["published_total"] = json!(r.published_total);
                        j["consecutive_failures"] = json!(r.consecutive_failures);
                        j["last_published_seq"] = json!(r.last_published_seq);
                        let blocked = blocked(&r.broker_blocked_reason, r.broker_blocked_ms, j);
                        format!(
                            "{}, published {}{}{blocked}",
                            if r.active { "LEADER" } else { "standby" },
                            r.published_total,
                            if r.consecutive_failures > 0 {
                                format!(", {} failures in a row", r.consecutive_failures)
                            } else {
                                String::new()
                            }
                        )
                    }
                    Err(e) => format!("status: {}", e.message()),
                }
            }
            Instance::Mail => {
                let r = MailServiceClient::new(ch)
                    .get_status(s.authed(MailStatusRequest {}))
                    .await;
                match r.map(tonic::Response::into_inner) {
                    Ok(r) => {
                        j["processed"] = json!(r.processed);
                        j["unsent_mails"] = json!(r.unsent_mails);
                        j["dead_lettered_total"] = json!(r.dead_lettered);
                        let blocked = blocked(&r.broker_blocked_reason, r.broker_blocked_ms, j);
                        format!(
                            "processed {}, unsent {}{blocked}",
                            r.processed, r.unsent_mails
                        )
                    }
                    Err(e) => format!("status: {}", e.message()),
                }
            }
        }
    }
}

/// `, broker blocked: <reason>, since 14s` while the broker blocks the instance (a RabbitMQ
/// resource alarm), recorded in `j` too; empty otherwise.
fn blocked(reason: &str, ms: u64, j: &mut Value) -> String {
    if reason.is_empty() {
        return String::new();
    }
    j["broker_blocked"] = json!(reason);
    j["broker_blocked_ms"] = json!(ms);
    format!(", {}", blocked_text(reason, ms))
}

/// `broker blocked: low on memory, since 14s`.
fn blocked_text(reason: &str, ms: u64) -> String {
    format!("broker blocked: {reason}, since {}", age(ms))
}

/// `outboxctl status`.
async fn status(s: &Services) -> Result<Output> {
    let mut t = Table::new(&["SERVICE", "ADDRESS", "HEALTH", "STATE"]);
    let mut todo: Vec<String> = Vec::new();
    let mut reachable_any = false;
    let mut unreachable = Vec::new();

    let (up, h, _) = health(s, "orders-svc", &s.orders).await;
    reachable_any |= up;
    if !up {
        unreachable.push(h.clone());
    }
    t.row(vec![
        "orders-svc".into(),
        s.orders.clone(),
        short_health(up, &h),
        String::new(),
    ]);
    let orders_json = json!({ "address": s.orders, "reachable": up, "health": h });

    // Every relay-svc and mail-svc instance: its health and, when it answers, its GetStatus.
    let mut instances = Vec::new();
    for (kind, addrs) in [(Instance::Relay, &s.relays), (Instance::Mail, &s.mails)] {
        let mut rows = Vec::new();
        let mut admin = None;
        for addr in addrs {
            let (up, h, ch) = health(s, kind.service(), addr).await;
            reachable_any |= up;
            if !up {
                unreachable.push(h.clone());
            }
            let mut j = json!({ "address": addr, "reachable": up, "health": h });
            let mut state = String::new();
            if let Some(ch) = ch {
                state = kind.state(s, ch.clone(), &mut j).await;
                admin.get_or_insert(ch);
            }
            t.row(vec![
                kind.service().into(),
                addr.clone(),
                short_health(up, &h),
                state,
            ]);
            rows.push(j);
        }
        instances.push((rows, admin));
    }
    let (mails_json, admin_mail) = instances.pop().unwrap_or_default();
    let (relays_json, admin_relay) = instances.pop().unwrap_or_default();
    for (service, rows) in [("relay-svc", &relays_json), ("mail-svc", &mails_json)] {
        for j in rows {
            if let Some(reason) = j["broker_blocked"].as_str() {
                let ms = j["broker_blocked_ms"].as_u64().unwrap_or(0);
                todo.push(format!(
                    "{service} {}: {}: a RabbitMQ resource alarm (memory or disk) stops \
                     publishing; free the broker's memory or disk (docs/OPERATIONS.md, \
                     runbook OutboxBrokerBlocked)",
                    j["address"].as_str().unwrap_or("?"),
                    blocked_text(reason, ms)
                ));
            }
        }
    }
    let leaders = relays_json.iter().filter(|j| j["leader"] == true).count();
    if !reachable_any {
        return Err(Failure::new(
            Failure::UNREACHABLE,
            format!(
                "no service answers: is the stack running (deploy/local.sh start)?\n  {}",
                unreachable.join("\n  ")
            ),
        ));
    }
    todo.extend(unreachable);
    if !s.relays.is_empty() && admin_relay.is_some() && leaders == 0 {
        todo.push(
            "no relay-svc reports itself LEADER: nothing is being published (see its log)".into(),
        );
    }

    // The figures that say whether something is stuck.
    let mut figures = Table::new(&["WHAT", "NOW", "LOOK WITH"]);
    let mut stuck = json!({});
    if let Some(ch) = admin_relay {
        let mut c = RelayAdminClient::new(ch);
        match c
            .list_backlog(s.authed(ListBacklogRequest { limit: 1 }))
            .await
        {
            Ok(r) => {
                let r = r.into_inner();
                figures.row(vec![
                    "outbox backlog".into(),
                    format!("{} (oldest {})", r.count, age(r.oldest_age_ms)),
                    step(r.count > 0, "outboxctl backlog"),
                ]);
                figures.row(vec![
                    "quarantined rows".into(),
                    format!("{} (holding back {})", r.quarantined, r.held_back),
                    step(r.quarantined > 0, "outboxctl quarantine list"),
                ]);
                if r.oldest_age_ms > 60_000 {
                    todo.push(format!(
                        "the oldest outbox row waits for {}: is a relay LEADER and the broker \
                         up? (`outboxctl backlog` shows the oldest rows)",
                        age(r.oldest_age_ms)
                    ));
                }
                if r.quarantined > 0 {
                    todo.push(format!(
                        "{} outbox row(s) quarantined: `outboxctl quarantine list`, fix the \
                         cause, then `outboxctl quarantine requeue --seq <seq> --reason ...` \
                         (with `--shard N` for a row of shard N)",
                        r.quarantined
                    ));
                }
                stuck["backlog"] = json!(r.count);
                stuck["oldest_unsent_age_ms"] = json!(r.oldest_age_ms);
                stuck["quarantined"] = json!(r.quarantined);
                stuck["held_back_by_quarantine"] = json!(r.held_back);
                stuck["unavailable_shards"] = unavailable_json(&r.unavailable_shards);
                todo.extend(r.unavailable_shards.iter().map(|u| {
                    format!(
                        "shard {}'s database cannot be read ({}): its outbox is left out of \
                         the figures above (relay-svc's log says more)",
                        u.shard, u.error
                    )
                }));
            }
            Err(e) => todo.push(format!("relay admin: {}", e.message())),
        }
    }
    if let Some(ch) = admin_mail {
        let mut c = MailAdminClient::new(ch);
        match c.list_held(s.authed(ListHeldRequest { limit: 100 })).await {
            Ok(r) => {
                let r = r.into_inner();
                figures.row(vec![
                    "held events".into(),
                    format!("{} in {} order(s)", r.held_events, r.orders.len()),
                    step(r.held_events > 0, "outboxctl held list"),
                ]);
                todo.extend(r.orders.iter().map(held_advice));
                stuck["held_events"] = json!(r.held_events);
                stuck["held_orders"] = Value::Array(r.orders.iter().map(held_json).collect());
            }
            Err(e) => todo.push(format!("mail admin: {}", e.message())),
        }
        let request = ListDeadLettersRequest {
            limit: 1,
            order_id: 0,
        };
        match c.list_dead_letters(s.authed(request)).await {
            Ok(r) => {
                let n = r.into_inner().count;
                figures.row(vec![
                    "dead letters".into(),
                    n.to_string(),
                    step(n > 0, "outboxctl dead-letters list"),
                ]);
                if n > 0 {
                    todo.push(format!(
                        "{n} dead letter(s): see why with `outboxctl dead-letters list`, fix the \
                         cause, then `outboxctl dead-letters redrive --seq <seq> --reason ...` \
                         (one whose chain was released is a duplicate now: leave it)"
                    ));
                }
                stuck["dead_letters"] = json!(n);
            }
            Err(e) => figures.row(vec![
                "dead letters".into(),
                "unknown".into(),
                e.message().to_owned(),
            ]),
        }
        let request = ListFailedMailsRequest {
            limit: 1,
            order_id: 0,
        };
        match c.list_failed_mails(s.authed(request)).await {
            Ok(r) => {
                let n = r.into_inner().count;
                figures.row(vec![
                    "failed mails".into(),
                    n.to_string(),
                    step(n > 0, "outboxctl mails failed"),
                ]);
                if n > 0 {
                    todo.push(format!(
                        "{n} mail(s) FAILED: `outboxctl mails failed`, fix the mailbox or \
                         server, then `outboxctl mails retry --seq <seq> --reason ...`"
                    ));
                }
                stuck["failed_mails"] = json!(n);
            }
            Err(e) => todo.push(format!("mail admin: {}", e.message())),
        }
    }

    let mut human = t.render();
    human.push('\n');
    human.push_str(&figures.render());
    human.push('\n');
    if todo.is_empty() {
        human.push_str("Nothing is stuck.\n");
    } else {
        human.push_str("Needs attention:\n");
        for line in &todo {
            human.push_str(&format!("  - {line}\n"));
        }
    }
    Ok(Output {
        human,
        json: json!({
            "orders": orders_json,
            "relay": relays_json,
            "mail": mails_json,
            "figures": stuck,
            "needs_attention": todo,
        }),
    })
}

fn held_advice(o: &mail_admin::HeldOrder) -> String {
    let (id, w) = (o.order_id, o.waiting_for);
    let shard = step(o.shard > 0, &format!("--shard {} ", o.shard));
    if o.waiting_for_dead_lettered {
        format!(
            "order {id} waits for seq {w}, which is in the dead-letter queue: see why with \
             `outboxctl dead-letters list --order {id}`, fix that, then \
             `outboxctl dead-letters redrive {shard}--seq {w} --reason ...` \
             (or skip it: `outboxctl held release --order {id} --reason ...`)"
        )
    } else {
        format!(
            "order {id} waits for seq {w} (held {}), which is not a dead letter: still in the \
             outbox or quarantine? (`outboxctl backlog`, `outboxctl quarantine list --order \
             {id}`); to skip it: `outboxctl held release --order {id} --reason ...`",
            age(o.oldest_held_age_ms)
        )
    }
}

fn held_json(o: &mail_admin::HeldOrder) -> Value {
    json!({
        "shard": o.shard,
        "order_id": o.order_id,
        "processed_up_to": o.processed_up_to,
        "waiting_for": o.waiting_for,
        "waiting_for_dead_lettered": o.waiting_for_dead_lettered,
        "held_seqs": o.held_seqs,
        "oldest_held_age_ms": o.oldest_held_age_ms,
    })
}

/// `outboxctl backlog`.
async fn backlog(s: &Services, limit: u32) -> Result<Output> {
    let (addr, mut c) = relay_admin(s).await?;
    let r = c
        .list_backlog(s.request(ListBacklogRequest { limit }, false)?)
        .await
        .map_err(|e| Failure::from_status("relay-svc", &addr, &e))?
        .into_inner();
    let sharded = r.rows.iter().any(|row| row.shard > 0) || !r.unavailable_shards.is_empty();
    let mut t = Table::new(&with_shard(
        sharded,
        &["SEQ", "ORDER", "TYPE", "PREV", "AGE"],
    ));
    for row in &r.rows {
        t.row(shard_cell(
            sharded,
            row.shard,
            vec![
                u(row.seq),
                row.order_id.to_string(),
                row.r#type.clone(),
                row.prev_seq.map_or("-".into(), u),
                age(row.age_ms),
            ],
        ));
    }
    let mut human = format!(
        "outbox backlog: {} row(s), oldest {}; quarantined {} (holding back {} row(s))\n",
        r.count,
        age(r.oldest_age_ms),
        r.quarantined,
        r.held_back
    );
    if !r.rows.is_empty() {
        human.push_str(&t.render());
    }
    human.push_str(&unavailable_note(&r.unavailable_shards));
    Ok(Output {
        human,
        json: json!({
            "count": r.count,
            "oldest_age_ms": r.oldest_age_ms,
            "quarantined": r.quarantined,
            "held_back": r.held_back,
            "unavailable_shards": unavailable_json(&r.unavailable_shards),
            "rows": r.rows.iter().map(|row| json!({
                "shard": row.shard, "seq": row.seq, "order_id": row.order_id,
                "type": row.r#type, "prev_seq": row.prev_seq, "age_ms": row.age_ms,
            })).collect::<Vec<_>>(),
        }),
    })
}

/// Listings name each row's shard only when some row is on a shard other than 0 (relay-svc with
/// RELAY_SHARDS): the unsharded tables stay as they were.
fn with_shard<'a>(sharded: bool, header: &[&'a str]) -> Vec<&'a str> {
    let shard = sharded.then_some("SHARD");
    shard.into_iter().chain(header.iter().copied()).collect()
}

fn shard_cell(sharded: bool, shard: u32, cells: Vec<String>) -> Vec<String> {
    let shard = sharded.then(|| shard.to_string());
    shard.into_iter().chain(cells).collect()
}

/// What a listing left out: one line per shard whose database could not be read (nothing when
/// every shard answered), so that a partial answer never reads as the whole.
fn unavailable_note(shards: &[UnavailableShard]) -> String {
    shards
        .iter()
        .map(|u| {
            format!(
                "shard {} left out (its database cannot be read: {}): the figures above are \
                 the other shards'\n",
                u.shard, u.error
            )
        })
        .collect()
}

fn unavailable_json(shards: &[UnavailableShard]) -> Value {
    shards
        .iter()
        .map(|u| json!({"shard": u.shard, "error": u.error}))
        .collect()
}

/// `shard 1: ` before an answer about shard 1's rows; nothing for shard 0.
fn shard_prefix(shard: u32) -> String {
    step(shard > 0, &format!("shard {shard}: "))
}

fn quarantine_selector(sel: &cli::QuarantineSelect) -> QuarantineSelector {
    QuarantineSelector {
        seqs: sel.seq.clone(),
        order_id: sel.order.unwrap_or_default(),
    }
}

/// `outboxctl quarantine ...`.
async fn quarantine(s: &Services, q: &Quarantine) -> Result<Output> {
    let (addr, mut c) = relay_admin(s).await?;
    let fail = |e: Status| Failure::from_status("relay-svc", &addr, &e);
    match q {
        Quarantine::List { order, limit } => {
            let request = ListQuarantinedRequest {
                limit: *limit,
                order_id: order.unwrap_or_default(),
            };
            let r = c
                .list_quarantined(s.request(request, false)?)
                .await
                .map_err(fail)?
                .into_inner();
            let sharded =
                r.rows.iter().any(|row| row.shard > 0) || !r.unavailable_shards.is_empty();
            let mut t = Table::new(&with_shard(
                sharded,
                &[
                    "SEQ",
                    "ORDER",
                    "TYPE",
                    "QUARANTINED",
                    "HOLDS BACK",
                    "REASON",
                ],
            ));
            for row in &r.rows {
                t.row(shard_cell(
                    sharded,
                    row.shard,
                    vec![
                        u(row.seq),
                        row.order_id.to_string(),
                        row.r#type.clone(),
                        format!("{} ago", age(row.quarantined_age_ms)),
                        row.held_back.to_string(),
                        row.reason.clone(),
                    ],
                ));
            }
            let mut human = if r.rows.is_empty() {
                "no row in quarantine\n".to_owned()
            } else {
                format!("{} row(s) in quarantine\n{}", r.count, t.render())
            };
            human.push_str(&unavailable_note(&r.unavailable_shards));
            Ok(Output {
                human,
                json: json!({
                    "count": r.count,
                    "unavailable_shards": unavailable_json(&r.unavailable_shards),
                    "rows": r.rows.iter().map(|row| json!({
                        "shard": row.shard, "seq": row.seq, "order_id": row.order_id,
                        "type": row.r#type,
                        "prev_seq": row.prev_seq, "reason": row.reason, "age_ms": row.age_ms,
                        "quarantined_age_ms": row.quarantined_age_ms,
                        "held_back": row.held_back,
                    })).collect::<Vec<_>>(),
                }),
            })
        }
        Quarantine::Requeue {
            select,
            shard,
            reason,
        } => {
            let request = RequeueQuarantinedRequest {
                select: Some(quarantine_selector(select)),
                reason: reason.reason.clone(),
                shard: shard.shard,
            };
            let r = c
                .requeue_quarantined(s.request(request, true)?)
                .await
                .map_err(fail)?
                .into_inner();
            Ok(Output {
                human: format!(
                    "{}requeued: {}\nalready requeued before: {}\n\
                     The relay publishes them, then their orders' later events (`outboxctl \
                     backlog` shows the progress).\n",
                    shard_prefix(shard.shard),
                    seq_list(&r.requeued),
                    seq_list(&r.already_requeued)
                ),
                json: json!({ "requeued": r.requeued, "already_requeued": r.already_requeued }),
            })
        }
        Quarantine::Drop {
            select,
            shard,
            reason,
        } => {
            let request = DropQuarantinedRequest {
                select: Some(quarantine_selector(select)),
                reason: reason.reason.clone(),
                shard: shard.shard,
            };
            let r = c
                .drop_quarantined(s.request(request, true)?)
                .await
                .map_err(fail)?
                .into_inner();
            Ok(Output {
                human: format!(
                    "{}dropped: {}\nalready dropped before: {}\n\
                     Their orders' later events now flow; mail-svc holds them until \
                     `outboxctl held release --order <order> --reason ...`.\n",
                    shard_prefix(shard.shard),
                    seq_list(&r.dropped),
                    seq_list(&r.already_dropped)
                ),
                json: json!({ "dropped": r.dropped, "already_dropped": r.already_dropped }),
            })
        }
    }
}

/// `outboxctl held ...`.
async fn held(s: &Services, h: &Held) -> Result<Output> {
    let (addr, mut c) = mail_admin(s).await?;
    let fail = |e: Status| Failure::from_status("mail-svc", &addr, &e);
    match h {
        Held::List { limit } => {
            let r = c
                .list_held(s.request(ListHeldRequest { limit: *limit }, false)?)
                .await
                .map_err(fail)?
                .into_inner();
            let unknown = !r.dead_letters_unavailable.is_empty();
            let sharded = r.orders.iter().any(|o| o.shard > 0);
            let mut t = Table::new(&with_shard(
                sharded,
                &[
                    "ORDER",
                    "PROCESSED UP TO",
                    "WAITS FOR",
                    "DEAD-LETTERED",
                    "HELD",
                    "OLDEST",
                ],
            ));
            for o in &r.orders {
                t.row(shard_cell(
                    sharded,
                    o.shard,
                    vec![
                        o.order_id.to_string(),
                        o.processed_up_to.map_or("-".into(), u),
                        u(o.waiting_for),
                        match (unknown, o.waiting_for_dead_lettered) {
                            (true, _) => "unknown".into(),
                            (false, true) => "yes".into(),
                            (false, false) => "no".into(),
                        },
                        seq_list(&o.held_seqs),
                        age(o.oldest_held_age_ms),
                    ],
                ));
            }
            let mut human = if r.orders.is_empty() {
                "no held events\n".to_owned()
            } else {
                format!(
                    "{} held event(s) in {} order(s)\n{}",
                    r.held_events,
                    r.orders.len(),
                    t.render()
                )
            };
            if unknown {
                human.push_str(&format!(
                    "(the dead-letter queue could not be read: {})\n",
                    r.dead_letters_unavailable
                ));
            }
            for o in &r.orders {
                human.push_str(&format!("  - {}\n", held_advice(o)));
            }
            Ok(Output {
                human,
                json: json!({
                    "held_events": r.held_events,
                    "orders": r.orders.iter().map(held_json).collect::<Vec<_>>(),
                    "dead_letters_unavailable": r.dead_letters_unavailable,
                }),
            })
        }
        Held::Release { order, reason } => {
            let request = ReleaseHeldRequest {
                order_id: *order,
                reason: reason.reason.clone(),
            };
            let r = c
                .release_held(s.request(request, true)?)
                .await
                .map_err(fail)?
                .into_inner();
            let human = if r.already_released {
                format!("order {order}: released before, nothing held now (nothing changed)\n")
            } else {
                format!(
                    "order {order}: skipped seq {}, released {} (their mails are queued, in \
                     chain order)\n",
                    seq_list(&r.skipped),
                    seq_list(&r.released)
                )
            };
            Ok(Output {
                human,
                json: json!({
                    "order_id": order, "skipped": r.skipped, "released": r.released,
                    "already_released": r.already_released,
                }),
            })
        }
    }
}

/// `outboxctl dead-letters ...`.
async fn dead_letters(s: &Services, d: &DeadLetters) -> Result<Output> {
    let (addr, mut c) = mail_admin(s).await?;
    let fail = |e: Status| Failure::from_status("mail-svc", &addr, &e);
    match d {
        DeadLetters::List { order, limit } => {
            let request = ListDeadLettersRequest {
                limit: *limit,
                order_id: order.unwrap_or_default(),
            };
            let r = c
                .list_dead_letters(s.request(request, false)?)
                .await
                .map_err(fail)?
                .into_inner();
            let sharded = r.messages.iter().any(|m| m.shard > 0);
            let mut t = Table::new(&with_shard(
                sharded,
                &["SEQ", "ORDER", "TYPE", "REDRIVEN", "REASON"],
            ));
            for m in &r.messages {
                t.row(shard_cell(
                    sharded,
                    m.shard,
                    vec![
                        if m.seq == 0 { "?".into() } else { u(m.seq) },
                        if m.order_id == 0 {
                            "?".into()
                        } else {
                            m.order_id.to_string()
                        },
                        if m.r#type.is_empty() {
                            format!("({} bytes)", m.body_bytes)
                        } else {
                            m.r#type.clone()
                        },
                        m.redrive_count.to_string(),
                        m.reason.clone(),
                    ],
                ));
            }
            let human = if r.messages.is_empty() {
                format!(
                    "no dead letter{} ({} in the queue)\n",
                    order.map_or(String::new(), |o| format!(" of order {o}")),
                    r.count
                )
            } else {
                format!("{} dead letter(s) in the queue\n{}", r.count, t.render())
            };
            Ok(Output {
                human,
                json: json!({
                    "count": r.count,
                    "messages": r.messages.iter().map(|m| json!({
                        "shard": m.shard, "seq": m.seq, "order_id": m.order_id, "type": m.r#type,
                        "routing_key": m.routing_key, "reason": m.reason,
                        "redrive_count": m.redrive_count, "message_id": m.message_id,
                        "body_bytes": m.body_bytes,
                        "published_at_unix": m.published_at.as_ref().map(|t| t.seconds),
                    })).collect::<Vec<_>>(),
                }),
            })
        }
        DeadLetters::Redrive {
            select,
            shard,
            reason,
            batch,
        } => {
            let filter = DeadLetterFilter {
                seqs: select.seq.clone(),
                order_id: select.order.unwrap_or_default(),
                all: select.all,
                shard: shard.shard,
            };
            let mut moved: Vec<u64> = Vec::new();
            // What matched at the first call: a message that dies again while we go on comes
            // back to the queue and matches again; it is not redriven twice by one command.
            let mut target: Option<usize> = None;
            loop {
                let request = RedriveDeadLettersRequest {
                    filter: Some(filter.clone()),
                    reason: reason.reason.clone(),
                    limit: *batch,
                };
                let r = match c.redrive_dead_letters(s.request(request, true)?).await {
                    Ok(r) => r.into_inner(),
                    // Someone else took the rest meanwhile: what we moved is the answer.
                    Err(e) if e.code() == Code::NotFound && !moved.is_empty() => break,
                    Err(e) => {
                        let mut f = fail(e);
                        if !moved.is_empty() {
                            f.message = format!(
                                "{} (redriven before the failure: {})",
                                f.message,
                                seq_list(&moved)
                            );
                        }
                        return Err(f);
                    }
                };
                let target = *target.get_or_insert(r.redriven.len() + r.remaining as usize);
                moved.extend(&r.redriven);
                let left = target.saturating_sub(moved.len());
                if !s.json && (left > 0 || moved.len() > r.redriven.len()) {
                    eprintln!("redriven {} of {target}, {left} left", moved.len());
                }
                if left == 0 || r.remaining == 0 || r.redriven.is_empty() {
                    break;
                }
            }
            Ok(Output {
                human: format!(
                    "redriven {} message(s) to the main queue: {}\n",
                    moved.len(),
                    seq_list(&moved)
                ),
                json: json!({ "redriven": moved }),
            })
        }
    }
}

/// `outboxctl mails ...`.
async fn mails(s: &Services, m: &Mails) -> Result<Output> {
    let (addr, mut c) = mail_admin(s).await?;
    let fail = |e: Status| Failure::from_status("mail-svc", &addr, &e);
    match m {
        Mails::Failed { order, limit } => {
            let request = ListFailedMailsRequest {
                limit: *limit,
                order_id: order.unwrap_or_default(),
            };
            let r = c
                .list_failed_mails(s.request(request, false)?)
                .await
                .map_err(fail)?
                .into_inner();
            let sharded = r.mails.iter().any(|f| f.shard > 0);
            let mut t = Table::new(&with_shard(
                sharded,
                &["SEQ", "ORDER", "TYPE", "RECIPIENT", "ATTEMPTS", "ERROR"],
            ));
            for f in &r.mails {
                t.row(shard_cell(
                    sharded,
                    f.shard,
                    vec![
                        u(f.seq),
                        f.order_id.to_string(),
                        f.r#type.clone(),
                        f.recipient.clone(),
                        f.attempts.to_string(),
                        f.last_error.clone(),
                    ],
                ));
            }
            let human = if r.mails.is_empty() {
                "no failed mail\n".to_owned()
            } else {
                format!("{} failed mail(s)\n{}", r.count, t.render())
            };
            Ok(Output {
                human,
                json: json!({
                    "count": r.count,
                    "mails": r.mails.iter().map(|f| json!({
                        "shard": f.shard, "seq": f.seq, "order_id": f.order_id, "type": f.r#type,
                        "recipient": f.recipient, "last_error": f.last_error,
                        "attempts": f.attempts,
                        "failed_at_unix": f.failed_at.as_ref().map(|t| t.seconds),
                    })).collect::<Vec<_>>(),
                }),
            })
        }
        Mails::Retry {
            select,
            shard,
            reason,
        } => {
            let request = RetryMailsRequest {
                filter: Some(MailFilter {
                    seqs: select.seq.clone(),
                    order_id: select.order.unwrap_or_default(),
                    all_failed: select.all_failed,
                    shard: shard.shard,
                }),
                reason: reason.reason.clone(),
            };
            let r = c
                .retry_mails(s.request(request, true)?)
                .await
                .map_err(fail)?
                .into_inner();
            Ok(Output {
                human: format!(
                    "retried: {}\nnot failed (queued or sent already, nothing done): {}\n",
                    seq_list(&r.retried),
                    seq_list(&r.not_failed)
                ),
                json: json!({ "retried": r.retried, "not_failed": r.not_failed }),
            })
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn listing(shards: &[u32]) -> String {
        let sharded = shards.iter().any(|s| *s > 0);
        let mut t = Table::new(&with_shard(sharded, &["SEQ", "ORDER"]));
        for (i, shard) in shards.iter().enumerate() {
            t.row(shard_cell(
                sharded,
                *shard,
                vec![i.to_string(), "42".into()],
            ));
        }
        t.render()
    }

    #[test]
    fn a_blocked_broker_is_named_with_its_reason_and_age() {
        let mut j = json!({});
        assert_eq!(blocked("", 0, &mut j), "");
        assert_eq!(j, json!({}));
        assert_eq!(
            blocked("low on memory", 14_200, &mut j),
            ", broker blocked: low on memory, since 14s"
        );
        assert_eq!(
            j,
            json!({ "broker_blocked": "low on memory", "broker_blocked_ms": 14_200 })
        );
    }

    #[test]
    fn listings_name_the_shard_only_when_a_row_is_beyond_shard_0() {
        assert_eq!(listing(&[0, 0]), "SEQ  ORDER\n0    42\n1    42\n");
        assert_eq!(
            listing(&[0, 1]),
            "SHARD  SEQ  ORDER\n0      0    42\n1      1    42\n"
        );
        assert_eq!(shard_prefix(0), "");
        assert_eq!(shard_prefix(2), "shard 2: ");
    }

    #[test]
    fn a_partial_listing_says_which_shard_it_left_out() {
        assert_eq!(unavailable_note(&[]), "");
        assert_eq!(unavailable_json(&[]), json!([]));
        let down = [UnavailableShard {
            shard: 1,
            error: "database unavailable, retry later".into(),
        }];
        assert_eq!(
            unavailable_note(&down),
            "shard 1 left out (its database cannot be read: database unavailable, retry later): \
             the figures above are the other shards'\n"
        );
        assert_eq!(
            unavailable_json(&down),
            json!([{"shard": 1, "error": "database unavailable, retry later"}])
        );
    }
}
