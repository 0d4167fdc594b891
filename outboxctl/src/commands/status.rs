//! `outboxctl status`: every instance's health and state, the figures that say something is
//! stuck, and what to do about it.

use outbox_proto::{
    mail::{
        admin::v1::{
            ListDeadLettersRequest, ListFailedMailsRequest, ListHeldRequest,
            mail_admin_client::MailAdminClient,
        },
        v1::{GetStatusRequest as MailStatusRequest, mail_service_client::MailServiceClient},
    },
    relay::{
        admin::v1::{ListBacklogRequest, relay_admin_client::RelayAdminClient},
        v1::{GetStatusRequest as RelayStatusRequest, relay_service_client::RelayServiceClient},
    },
};
use serde_json::{Value, json};
use tonic::transport::Channel;
use tonic_health::pb::{HealthCheckRequest, health_client::HealthClient};

use super::{
    held::{held_advice, held_json},
    listing::unavailable_json,
    step,
};
use crate::{
    Failure, Output, Result, Services,
    table::{Table, age},
};

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
pub(super) async fn status(s: &Services) -> Result<Output> {
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
        exit: 0,
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

#[cfg(test)]
mod tests {
    use super::*;

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
}
