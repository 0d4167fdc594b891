//! The relay fleet: the outbox databases the registry in the fleet database lists (each with its
//! owner, lease epoch, backlog, oldest unsent age and last error), and the forms that change it
//! (add, drain, remove), as `outboxctl fleet` does: the actions and their checks are
//! `outbox_ops::fleet`'s, and each writes its `fleet_actions` row, with the signed-in user and
//! the reason, in the transaction of its effect.

use axum::{extract::State, response::Html};
use chrono::Utc;
use maud::{Markup, html};
use outbox_ops::fleet::{self as ops, Entry, NewDatabase, SecretUrl};

use crate::{
    error::{Error, Result},
    extractors::{Signed, WriteForm},
    form::Fields,
    paths::Route,
    state::AppState,
    views::widgets::{age_ms, age_since, post_form, reason_field},
};

/// Where the reasons of the fleet's actions are kept.
const KEPT_IN: &str = "the fleet database's fleet_actions";

/// The longest URL the add form takes (a URL is not a text filter: it may be longer).
const MAX_URL: usize = 2000;

pub async fn list(State(state): State<AppState>, signed: Signed) -> Result<Html<String>> {
    let Some(registry) = state.fleet.registry().await? else {
        let shards: Vec<String> = (0..state.sources.shards.len())
            .map(ops::shard_name)
            .collect();
        return Ok(signed.page(
            "Relay fleet",
            html! {
                p role="status" data-fleet="none" {
                    "The console has no fleet database configured (CONSOLE_FLEET_DATABASE_URL): \
                     the relay reads a fixed list of outbox databases (orders-svc's shards)."
                }
                p { "The lists' database filter (" code { "db=" } ") names those shards: " (shards.join(", ")) "." }
            },
        ));
    };
    let entries = ops::list(registry)
        .await
        .map_err(|e| state.fleet.refused(e))?;
    let act = signed.session.may_write();
    Ok(signed.page(
        "Relay fleet",
        html! {
            p {
                "The outbox databases the relay fleet publishes, from the registry in the fleet \
                 database. Each is published by one instance at a time, its owner, under a lease \
                 whose epoch every claim bumps."
            }
            (table(&entries))
            @if act {
                @if !entries.is_empty() { (drain_form(&signed, &entries)) (remove_form(&signed, &entries)) }
                (add_form(&signed))
            }
        },
    ))
}

fn table(entries: &[Entry]) -> Markup {
    if entries.is_empty() {
        return html! { p data-fleet="empty" { "No database in the fleet yet." } };
    }
    let unowned = entries
        .iter()
        .filter(|e| e.state != ops::State::Drained && e.owner.is_none())
        .count();
    let failing = entries.iter().filter(|e| e.last_error.is_some()).count();
    html! {
        p role="status" { (entries.len()) " database(s), " (unowned) " without an owner, " (failing) " failing." }
        table {
            caption { "The fleet's databases, by name" }
            thead { tr {
                th { "Name" } th { "Source id (shard)" } th { "State" } th { "Owner" } th { "Lease epoch" }
                th { "Backlog" } th { "Oldest unsent" } th { "Reported" } th { "Last error" }
                th { "URL" } th { "Table" } th { "Exchange" } th { "Lists" }
            } }
            tbody {
                @for e in entries {
                    tr data-db=(e.name) data-state=(e.state.as_str()) {
                        td { (e.name) }
                        td { (e.source_id) }
                        td { (e.state.as_str()) }
                        td { (e.owner.as_deref().unwrap_or("-")) }
                        td { (e.epoch) }
                        td { (e.backlog.map_or_else(|| "-".to_owned(), |b| b.to_string())) }
                        td { (e.oldest_unsent_secs.map_or_else(|| "-".to_owned(), |s| age_ms((s.max(0.0) * 1000.0) as u64))) }
                        td { (e.reported_at.map_or_else(|| "never".to_owned(), |at| format!("{} ago", age_since(at)))) }
                        td {
                            @match &e.last_error {
                                Some((text, at)) => span.bad { (e.url.scrub(text)) " (since " (age_since(*at)) " ago)" },
                                None => "-",
                            }
                        }
                        td { code { (e.url) } }
                        td { (e.table) }
                        td { (e.exchange) }
                        td {
                            a href=(Route::Quarantine.with(&[("db", &e.name)])) { "quarantine" } " · "
                            a href=(Route::Audit.with(&[("db", &e.name)])) { "audit" }
                        }
                    }
                }
            }
        }
        p { small { "Read " (Utc::now().format("%H:%M:%S")) "; the owners report every lease renewal." } }
    }
}

/// The picker of a registered database.
fn name_select(id: &str, entries: &[Entry]) -> Markup {
    html! {
        label for=(id) { "Database " }
        select id=(id) name="name" required {
            @for e in entries { option value=(e.name) { (e.name) " (" (e.state.as_str()) ")" } }
        }
    }
}

fn drain_form(signed: &Signed, entries: &[Entry]) -> Markup {
    html! {
        section aria-labelledby="drain-h" {
            h2 #drain-h { "Drain" }
            p { "Its owner takes no new rows from it, finishes and confirms what is in flight, then marks it drained." }
            (post_form(signed, Route::FleetDrain, html! {
                p { (name_select("drain-name", entries)) }
                (reason_field("drain-reason", KEPT_IN, "Drain"))
            }))
        }
    }
}

fn remove_form(signed: &Signed, entries: &[Entry]) -> Markup {
    html! {
        section aria-labelledby="remove-h" {
            h2 #remove-h { "Remove" }
            p { "Only a drained database, unless forced. Its outbox database is left as it is: nothing is deleted from it." }
            (post_form(signed, Route::FleetRemove, html! {
                p {
                    (name_select("remove-name", entries))
                    " "
                    label { input type="checkbox" name="force" value="on"; " force (remove it even when it is not drained)" }
                }
                (reason_field("remove-reason", KEPT_IN, "Remove"))
            }))
        }
    }
}

fn add_form(signed: &Signed) -> Markup {
    html! {
        section aria-labelledby="add-h" {
            h2 #add-h { "Add a database" }
            p { "An instance takes it within two lease periods. Its source id is the shard its events carry: a database whose events already carry another shard is refused (orders-svc's shards keep their index in SHARDS)." }
            (post_form(signed, Route::FleetAdd, html! {
                p.inline {
                    label { "Name " input name="name" size="16" required placeholder="tenant-acme"; } " "
                    label { "Source id " input name="source_id" inputmode="numeric" size="5" required; } " "
                    label { "Exchange " input name="exchange" size="16" required placeholder="orders.events"; } " "
                    label { "Table " input name="table" size="12" value="outbox"; }
                }
                p { label { "URL (its password is never shown) " input name="url" type="password" size="60" required autocomplete="off" placeholder="postgres://relay@db-7:5432/acme"; } }
                (reason_field("add-reason", KEPT_IN, "Add"))
            }))
        }
    }
}

/// The name of the database a drain or remove form names.
fn name(f: &Fields) -> Result<&str> {
    f.text("name")?
        .ok_or_else(|| Error::bad("name", "required: the database's name"))
}

/// The registry and who acts, or why not (no fleet database: a 409 that says so).
async fn registry_and_by<'a>(
    state: &'a AppState,
    signed: &Signed,
    f: &Fields,
) -> Result<(&'a ops::Registry, ops::By)> {
    let by = ops::by(
        Some(&signed.session.user),
        f.get("reason").unwrap_or_default(),
    )
    .map_err(|e| state.fleet.refused(e))?;
    let registry = state.fleet.registry().await?.ok_or_else(|| {
        Error::Conflict(
            "the console has no fleet database configured (CONSOLE_FLEET_DATABASE_URL)".into(),
        )
    })?;
    Ok((registry, by))
}

fn done(signed: &Signed, title: &str, status: Markup) -> Html<String> {
    signed.page(
        title,
        html! {
            (status)
            p { "Recorded in the fleet database's fleet_actions with your reason, as " (signed.session.user) "." }
            p { a href=(Route::Fleet) { "Back to the fleet" } }
        },
    )
}

pub async fn add(
    State(state): State<AppState>,
    WriteForm { signed, fields: f }: WriteForm,
) -> Result<Html<String>> {
    let name = f.text("name")?.unwrap_or_default().to_owned();
    let source_id = f
        .i64("source_id")?
        .ok_or_else(|| Error::bad("source_id", "required: the shard its events carry"))?;
    let source_id = i32::try_from(source_id)
        .map_err(|_| Error::bad("source_id", format!("{source_id} is out of range")))?;
    let url = f.get("url").unwrap_or_default();
    // Never quoted back: it may carry a password.
    if url.chars().any(char::is_control) {
        return Err(Error::bad("url", "control characters are not allowed"));
    }
    if url.len() > MAX_URL {
        return Err(Error::bad("url", format!("at most {MAX_URL} bytes")));
    }
    let new = NewDatabase {
        name,
        source_id,
        url: SecretUrl::new(url),
        table: f.text("table")?.unwrap_or("outbox").to_owned(),
        exchange: f.text("exchange")?.unwrap_or_default().to_owned(),
    };
    new.validate()
        .map_err(|e| state.fleet.refused(ops::Error::Registry(e)))?;
    let (registry, by) = registry_and_by(&state, &signed, &f).await?;
    ops::add(registry, &new, &by)
        .await
        .map_err(|e| state.fleet.refused(e))?;
    tracing::info!(user = %signed.session.user, db = %new.name, url = %new.url, "console: fleet add");
    Ok(done(
        &signed,
        "Relay fleet: added",
        html! {
            p role="status" data-done=(new.name) {
                "Added " strong { (new.name) } " (source id " (new.source_id) ", " code { (new.url) } ", table "
                (new.table) ", exchange " (new.exchange) "): active. A relay instance takes it within two lease periods."
            }
        },
    ))
}

pub async fn drain(
    State(state): State<AppState>,
    WriteForm { signed, fields: f }: WriteForm,
) -> Result<Html<String>> {
    let name = name(&f)?;
    let (registry, by) = registry_and_by(&state, &signed, &f).await?;
    let was = ops::drain(registry, name, &by)
        .await
        .map_err(|e| state.fleet.refused(e))?;
    tracing::info!(user = %signed.session.user, db = name, was = %was, "console: fleet drain");
    let status = match was {
        ops::State::Active => html! {
            p role="status" data-done=(name) {
                strong { (name) } ": draining. Its owner finishes and confirms what is in flight, then marks it drained; then remove it."
            }
        },
        other => html! {
            p role="status" data-done=(name) { strong { (name) } ": " (other.as_str()) " already, nothing changed." }
        },
    };
    Ok(done(&signed, "Relay fleet: drain", status))
}

pub async fn remove(
    State(state): State<AppState>,
    WriteForm { signed, fields: f }: WriteForm,
) -> Result<Html<String>> {
    let name = name(&f)?;
    let force = match f.get("force") {
        None => false,
        Some("on" | "true" | "1") => true,
        Some(_) => return Err(Error::bad("force", "on, or absent")),
    };
    let (registry, by) = registry_and_by(&state, &signed, &f).await?;
    let was = ops::remove(registry, name, force, &by)
        .await
        .map_err(|e| state.fleet.refused(e))?;
    tracing::info!(user = %signed.session.user, db = name, was = %was, force, "console: fleet remove");
    Ok(done(
        &signed,
        "Relay fleet: removed",
        html! {
            p role="status" data-done=(name) {
                strong { (name) } ": removed from the fleet, was " (was.as_str())
                @if was != ops::State::Drained {
                    " (it was not drained: its owner stops at its next lease renewal; rows still in its outbox stay there unpublished)"
                }
                ". Its outbox database is left as it is."
            }
        },
    ))
}
