//! `outboxctl fleet`: the relay fleet's registry (add, drain, remove, list). The actions and
//! their checks are `outbox_ops::fleet`'s; each writes its `fleet_actions` row with its effect.

use chrono::{DateTime, Utc};
use outbox_ops::fleet::{self as ops, Entry, NewDatabase, SecretUrl, State};
use serde_json::json;

use crate::{
    Output, Result, Services,
    cli::Fleet,
    fleet::{failure, required},
    table::{Table, age},
};

/// `outboxctl fleet ...`.
pub(super) async fn fleet(s: &Services, f: &Fleet) -> Result<Output> {
    let operator = s.admin().operator.as_deref();
    match f {
        Fleet::Add {
            name,
            source_id,
            url,
            exchange,
            table,
            reason,
        } => {
            let by = ops::by(operator, &reason.reason).map_err(failure)?;
            let new = NewDatabase {
                name: name.trim().to_owned(),
                source_id: *source_id,
                url: SecretUrl::new(url.trim()),
                table: table.trim().to_owned(),
                exchange: exchange.trim().to_owned(),
            };
            let reg = required(s.fleet.as_ref()).await?;
            ops::add(&reg, &new, &by).await.map_err(failure)?;
            Ok(Output {
                exit: 0,
                human: format!(
                    "added {} (source id {}, {}, table {}, exchange {}): active; a relay \
                     instance takes it within two lease periods (`outboxctl fleet list` shows \
                     its owner)\n",
                    new.name, new.source_id, new.url, new.table, new.exchange
                ),
                json: json!({
                    "name": new.name,
                    "source_id": new.source_id,
                    "url": new.url.redacted(),
                    "table": new.table,
                    "exchange": new.exchange,
                    "state": State::Active.as_str(),
                }),
            })
        }
        Fleet::Drain { name, reason } => {
            let by = ops::by(operator, &reason.reason).map_err(failure)?;
            let reg = required(s.fleet.as_ref()).await?;
            let was = ops::drain(&reg, name.trim(), &by).await.map_err(failure)?;
            let (state, human) = match was {
                State::Active => (
                    State::Draining,
                    format!(
                        "{name}: draining. Its owner finishes and confirms what is in flight, \
                         then marks it drained (`outboxctl fleet list`); then `outboxctl fleet \
                         remove {name} --reason ...`\n"
                    ),
                ),
                other => (other, format!("{name}: {other} already, nothing changed\n")),
            };
            Ok(Output {
                exit: 0,
                human,
                json: json!({ "name": name, "was": was.as_str(), "state": state.as_str() }),
            })
        }
        Fleet::Remove {
            name,
            force,
            reason,
        } => {
            let by = ops::by(operator, &reason.reason).map_err(failure)?;
            let reg = required(s.fleet.as_ref()).await?;
            let was = ops::remove(&reg, name.trim(), *force, &by)
                .await
                .map_err(failure)?;
            let note = if was == State::Drained {
                String::new()
            } else {
                " (it was not drained: its owner stops at its next lease renewal; rows still \
                 in its outbox stay there unpublished)"
                    .to_owned()
            };
            Ok(Output {
                exit: 0,
                human: format!(
                    "{name}: removed from the fleet, was {was}{note}. Its outbox database is \
                     left as it is.\n"
                ),
                json: json!({ "name": name, "was": was.as_str(), "forced": force }),
            })
        }
        Fleet::List => {
            let reg = required(s.fleet.as_ref()).await?;
            let entries = ops::list(&reg).await.map_err(failure)?;
            Ok(list(&entries, Utc::now()))
        }
    }
}

fn list(entries: &[Entry], now: DateTime<Utc>) -> Output {
    let mut t = Table::new(&[
        "NAME",
        "SOURCE",
        "STATE",
        "OWNER",
        "EPOCH",
        "BACKLOG",
        "OLDEST UNSENT",
        "REPORTED",
        "LAST ERROR",
    ]);
    for e in entries {
        let ago = |at: DateTime<Utc>| format!("{} ago", age(ms_between(at, now)));
        t.row(vec![
            e.name.clone(),
            e.source_id.to_string(),
            e.state.to_string(),
            e.owner.clone().unwrap_or_else(|| "-".to_owned()),
            e.epoch.to_string(),
            e.backlog.map_or_else(|| "-".to_owned(), |b| b.to_string()),
            e.oldest_unsent_secs
                .map_or_else(|| "-".to_owned(), |s| age((s * 1000.0) as u64)),
            e.reported_at.map_or_else(|| "never".to_owned(), ago),
            e.last_error.as_ref().map_or_else(
                || "-".to_owned(),
                |(text, at)| format!("{} (since {})", one_line(&e.url, text), ago(*at)),
            ),
        ]);
    }
    let human = if entries.is_empty() {
        "no database in the fleet (`outboxctl fleet add`)\n".to_owned()
    } else {
        let unowned = entries
            .iter()
            .filter(|e| e.state != State::Drained && e.owner.is_none())
            .count();
        let failing = entries.iter().filter(|e| e.last_error.is_some()).count();
        format!(
            "{} database(s), {unowned} without an owner, {failing} failing\n{}",
            entries.len(),
            t.render()
        )
    };
    Output {
        exit: 0,
        human,
        json: json!({
            "databases": entries.iter().map(|e| json!({
                "name": e.name,
                "source_id": e.source_id,
                "url": e.url.redacted(),
                "table": e.table,
                "exchange": e.exchange,
                "state": e.state.as_str(),
                "owner": e.owner,
                "epoch": e.epoch,
                "lease_until": e.lease_until.map(|t| t.to_rfc3339()),
                "backlog": e.backlog,
                "oldest_unsent_age_ms": e.oldest_unsent_secs.map(|s| (s * 1000.0) as u64),
                "last_error": e.last_error.as_ref().map(|(text, _)| e.url.scrub(text)),
                "last_error_at": e.last_error.as_ref().map(|(_, at)| at.to_rfc3339()),
                "reported_at": e.reported_at.map(|t| t.to_rfc3339()),
                "added_at": e.added_at.to_rfc3339(),
            })).collect::<Vec<_>>(),
        }),
    }
}

fn ms_between(from: DateTime<Utc>, to: DateTime<Utc>) -> u64 {
    u64::try_from((to - from).num_milliseconds()).unwrap_or(0)
}

/// An error for a table cell: on one line, free of the database's password.
fn one_line(url: &SecretUrl, text: &str) -> String {
    url.scrub(text)
        .split_whitespace()
        .collect::<Vec<_>>()
        .join(" ")
}
