//! The live figures: one sampler task reads the services and the databases every
//! `CONSOLE_REFRESH` and one audit task passes incrementally; each publishes into a `watch`
//! channel, which the pages read and the server-sent events stream forwards. However many
//! browsers watch, the services and the databases are read once per interval.

use std::{collections::BTreeMap, sync::Arc, time::Duration};

use chrono::{DateTime, Utc};
use outbox_ops::{
    admin::Admin,
    audit::{Auditor, Report, Sources, Stage},
    lists,
};
use outbox_proto::{
    mail::v1::{GetStatusRequest as MailStatusRequest, mail_service_client::MailServiceClient},
    relay::{
        admin::v1::ListBacklogRequest,
        v1::{GetStatusRequest as RelayStatusRequest, relay_service_client::RelayServiceClient},
    },
};
use tokio::sync::watch;
use tokio_util::sync::CancellationToken;
use tonic_health::pb::{HealthCheckRequest, health_client::HealthClient};

/// One service instance as the overview shows it.
#[derive(Debug, Clone, Default)]
pub struct Instance {
    pub service: &'static str,
    pub addr: String,
    /// `SERVING`, `NOT_SERVING`, `UNREACHABLE`, ...
    pub health: String,
    pub up: bool,
    /// Why the broker blocks it (a RabbitMQ resource alarm), and for how long (ms).
    pub blocked: Option<(String, u64)>,
    /// What else its status says (leader or standby, ...).
    pub detail: String,
}

/// The overview's figures at one moment.
#[derive(Debug, Clone, Default)]
pub struct Figures {
    pub at: Option<DateTime<Utc>>,
    pub instances: Vec<Instance>,
    /// Rows in the outbox, and the oldest one's age in ms (`None`: relay-svc did not answer).
    pub backlog: Option<(u64, u64)>,
    pub quarantined: Option<i64>,
    pub held: Option<i64>,
    pub dead_letters: Option<i64>,
    /// What could not be read this time.
    pub problems: Vec<String>,
}

/// The last audit pass.
#[derive(Debug, Clone, Default)]
pub struct Audit {
    pub at: Option<DateTime<Utc>>,
    pub report: Option<Arc<Report>>,
    pub error: Option<String>,
}

impl Audit {
    /// Lagging orders by stage (`None` before the first pass).
    pub fn counts(&self) -> Option<BTreeMap<Stage, usize>> {
        self.report.as_ref().map(|r| r.counts())
    }
}

/// The receivers the pages and the event stream read.
#[derive(Debug, Clone)]
pub struct Live {
    pub figures: watch::Receiver<Arc<Figures>>,
    pub audit: watch::Receiver<Arc<Audit>>,
}

/// Starts the sampler and the audit; both stop with `shutdown`.
pub fn start(
    admin: Admin,
    sources: Sources,
    refresh: Duration,
    grace: Duration,
    slice: i64,
    shutdown: CancellationToken,
) -> Live {
    let (ftx, frx) = watch::channel(Arc::new(Figures::default()));
    let (atx, arx) = watch::channel(Arc::new(Audit::default()));
    let stop = shutdown.clone();
    let sampled = sources.clone();
    tokio::spawn(async move {
        loop {
            let figures = sample(&admin, &sampled).await;
            ftx.send_replace(Arc::new(figures));
            tokio::select! {
                _ = stop.cancelled() => break,
                _ = tokio::time::sleep(refresh) => {}
            }
        }
    });
    tokio::spawn(async move {
        let mut auditor = Auditor::new(sources, grace, slice);
        loop {
            let audit = match auditor.pass().await {
                Ok(report) => Audit {
                    at: Some(Utc::now()),
                    report: Some(Arc::new(report)),
                    error: None,
                },
                Err(e) => {
                    tracing::warn!(error = %e, "console: audit pass failed");
                    let last = atx.borrow().clone();
                    Audit {
                        error: Some("the audit could not read its databases".into()),
                        ..(*last).clone()
                    }
                }
            };
            atx.send_replace(Arc::new(audit));
            tokio::select! {
                _ = shutdown.cancelled() => break,
                _ = tokio::time::sleep(refresh) => {}
            }
        }
    });
    Live {
        figures: frx,
        audit: arx,
    }
}

/// Reads every figure once; what cannot be read is `None` and named in `problems`.
async fn sample(admin: &Admin, sources: &Sources) -> Figures {
    let mut f = Figures {
        at: Some(Utc::now()),
        ..Figures::default()
    };
    f.instances
        .push(instance(admin, "orders-svc", &admin.orders).await);
    for addr in &admin.relays {
        f.instances.push(instance(admin, "relay-svc", addr).await);
    }
    for addr in &admin.mails {
        f.instances.push(instance(admin, "mail-svc", addr).await);
    }
    match admin.relay_admin().await {
        Ok((_, mut c)) => match c
            .list_backlog(admin.authed(ListBacklogRequest { limit: 1 }))
            .await
        {
            Ok(r) => {
                let r = r.into_inner();
                f.backlog = Some((r.count, r.oldest_age_ms));
            }
            Err(e) => f
                .problems
                .push(format!("relay-svc backlog: {}", e.message())),
        },
        Err(e) => f.problems.push(format!("relay-svc backlog: {e}")),
    }
    let mut quarantined = Some(0);
    for (i, pool) in sources.shards.iter().enumerate() {
        match lists::quarantined_count(pool).await {
            Ok(n) => quarantined = quarantined.map(|q| q + n),
            Err(e) => {
                tracing::warn!(error = %e, shard = i, "console: quarantine count failed");
                f.problems
                    .push(format!("the orders database of shard {i} cannot be read"));
                quarantined = None;
            }
        }
    }
    f.quarantined = quarantined;
    let mail_down = |f: &mut Figures, e: sqlx::Error| {
        tracing::warn!(error = %e, "console: mail database read failed");
        f.problems
            .push("mail-svc's database cannot be read".to_owned());
    };
    match lists::held_count(&sources.mail).await {
        Ok(n) => f.held = Some(n),
        Err(e) => mail_down(&mut f, e),
    }
    match lists::dead_letter_count(&sources.mail).await {
        Ok(n) => f.dead_letters = Some(n),
        Err(e) => mail_down(&mut f, e),
    }
    f.problems.dedup();
    f
}

/// One instance's health and status.
async fn instance(admin: &Admin, service: &'static str, addr: &str) -> Instance {
    let mut i = Instance {
        service,
        addr: addr.to_owned(),
        ..Instance::default()
    };
    let ch = match admin.channel(service, addr).await {
        Ok(ch) => ch,
        Err(e) => {
            i.health = "UNREACHABLE".into();
            i.detail = e.to_string();
            return i;
        }
    };
    i.up = true;
    i.health = match HealthClient::new(ch.clone())
        .check(HealthCheckRequest {
            service: String::new(),
        })
        .await
    {
        Ok(r) => r.into_inner().status().as_str_name().to_owned(),
        Err(e) => format!("health unknown: {}", e.message()),
    };
    match service {
        "relay-svc" => {
            if let Ok(r) = RelayServiceClient::new(ch)
                .get_status(admin.authed(RelayStatusRequest {}))
                .await
            {
                let r = r.into_inner();
                i.detail = if r.active { "leader" } else { "standby" }.into();
                if !r.broker_blocked_reason.is_empty() {
                    i.blocked = Some((r.broker_blocked_reason, r.broker_blocked_ms));
                }
            }
        }
        "mail-svc" => {
            if let Ok(r) = MailServiceClient::new(ch)
                .get_status(admin.authed(MailStatusRequest {}))
                .await
            {
                let r = r.into_inner();
                i.detail = format!("{} unsent mail(s)", r.unsent_mails);
                if !r.broker_blocked_reason.is_empty() {
                    i.blocked = Some((r.broker_blocked_reason, r.broker_blocked_ms));
                }
            }
        }
        _ => {}
    }
    i
}
