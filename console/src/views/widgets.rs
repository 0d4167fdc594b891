//! The pieces every page is made of: a form that posts (with its token, to a [`Route`]), the
//! list filters with their form, hidden copies and next-page link, the reason and confirm of
//! an action, lists of seqs and ages.

use std::fmt::Display;

use chrono::{DateTime, Utc};
use maud::{Markup, html};
use outbox_ops::lists::Filter;

use crate::{error::Result, extractors::Signed, form::Fields, paths::Route};

/// A form that posts to `route`, carrying the session's token of that route.
pub fn post_form(signed: &Signed, route: Route, content: Markup) -> Markup {
    html! {
        form method="post" action=(route) {
            input type="hidden" name="csrf" value=(signed.session.form_token(route.as_str()));
            (content)
        }
    }
}

/// `4, 7, 9` (or `none`).
pub fn seq_list<T: Display>(v: &[T]) -> String {
    if v.is_empty() {
        return "none".into();
    }
    v.iter().map(T::to_string).collect::<Vec<_>>().join(", ")
}

/// `3s`, `4m 12s`, `2h 5m`.
pub fn age_ms(ms: u64) -> String {
    let s = ms / 1000;
    match s {
        0..60 => format!("{s}s"),
        60..3600 => format!("{}m {}s", s / 60, s % 60),
        _ => format!("{}h {}m", s / 3600, (s % 3600) / 60),
    }
}

/// How long ago `at` was, as [`age_ms`] writes it.
pub fn age_since(at: DateTime<Utc>) -> String {
    age_ms((Utc::now() - at).num_milliseconds().max(0) as u64)
}

/// A link to order `order`'s timeline ("where is this event").
pub fn order_link(shard: i32, order: i64) -> Markup {
    let href = Route::Where.with(&[("shard", shard.to_string()), ("order", order.to_string())]);
    html! { a href=(href) { (order) } }
}

/// Query fields (the database a page chose, `db=` or `shard=`) as hidden fields of a form that
/// carries them on.
pub fn hidden_fields(pairs: &[(&'static str, String)]) -> Markup {
    html! { @for (k, v) in pairs { input type="hidden" name=(k) value=(v); } }
}

/// A link to order `order`'s timeline in the database `scope` chose (`db=` or `shard=`).
pub fn scoped_order_link(scope: &[(&'static str, String)], order: i64) -> Markup {
    let mut pairs = scope.to_vec();
    pairs.push(("order", order.to_string()));
    html! { a href=(Route::Where.with(&pairs)) { (order) } }
}

/// The submit buttons of a selection (`action` = value), shown to those who may act.
pub fn action_buttons(act: bool, buttons: &[(&str, &str)]) -> Markup {
    html! {
        @if act {
            @for (i, (value, label)) in buttons.iter().enumerate() {
                @if i > 0 { " " }
                button type="submit" name="action" value=(value) { (label) }
            }
        }
    }
}

/// The shard picker of a form, `selected` chosen.
pub fn shard_select(shards: usize, selected: i32) -> Markup {
    html! {
        label { "Shard " select name="shard" { @for s in 0..shards { option value=(s) selected[s as i32 == selected] { (s) } } } }
    }
}

/// The database field of a form: a fleet database's name, or `shard-N`; given, it chooses the
/// database instead of the shard picker.
pub fn db_input(value: Option<&str>) -> Markup {
    html! {
        label title="a fleet database's name (the fleet page lists them), or shard-N; instead of the shard" {
            "or database " input name="db" size="14" placeholder="shard-N or a fleet name" value=[value];
        }
    }
}

/// The order id field of a form.
pub fn order_input(value: Option<impl maud::Render>, required: bool) -> Markup {
    html! {
        label { "Order id " input name="order" inputmode="numeric" size="10" required[required] value=[value]; }
    }
}

/// A seq field of a form, labelled `label`.
pub fn seq_input(name: &str, label: &str, value: Option<impl maud::Render>) -> Markup {
    html! { label { (label) " " input name=(name) inputmode="numeric" size="8" value=[value]; } }
}

/// The reason field and the confirm button of an action's preview.
pub fn reason_and_confirm(label: &str) -> Markup {
    reason_field("reason", "admin_actions", label)
}

/// The reason field (element id `id`, its audit table named `kept_in`) and the confirm button
/// of a form, for a page with several forms that act.
pub fn reason_field(id: &str, kept_in: &str, label: &str) -> Markup {
    html! {
        p {
            label for=(id) { "Reason (kept in " (kept_in) ")" }
            br;
            textarea id=(id) name="reason" rows="2" cols="60" required {}
        }
        button type="submit" { (label) }
    }
}

/// The filters of a list page: which it offers and where it lives.
#[derive(Debug, Clone, Copy)]
pub struct ListFilters {
    pub route: Route,
    /// The quarantine filters by event type too (mail-svc's tables do not keep it).
    pub event_type: bool,
    /// The quarantine lists one shard at a time: how many there are.
    pub shards: Option<usize>,
    /// The quarantine lists one outbox database, also by name (`db=`: a fleet database's, or
    /// `shard-N`): see [`crate::scope::Scope`].
    pub db: bool,
}

impl ListFilters {
    /// The dead letters' and the held chains' filters.
    pub const fn mail(route: Route) -> Self {
        Self {
            route,
            event_type: false,
            shards: None,
            db: false,
        }
    }

    /// The field names, in the order the form shows them.
    fn keys(self) -> impl Iterator<Item = &'static str> {
        let shard = self.shards.map(|_| "shard");
        let db = self.db.then_some("db");
        let event_type = self.event_type.then_some("type");
        shard
            .into_iter()
            .chain(db)
            .chain(["order"])
            .chain(event_type)
            .chain(["reason", "min_age"])
    }

    /// The filters `f` asks for (each bad one a 400 naming it).
    pub fn read(self, f: &Fields) -> Result<Filter> {
        Ok(Filter {
            order_id: f.positive("order")?,
            event_type: if self.event_type {
                f.text("type")?.map(str::to_owned)
            } else {
                None
            },
            reason: f.text("reason")?.map(str::to_owned),
            min_age_secs: f.age("min_age")?,
        })
    }

    /// The filter form, with the current values (`shard`: the one shown).
    pub fn form(self, f: &Fields, shard: i32) -> Markup {
        html! {
            form.filters method="get" action=(self.route) role="search" aria-label="Filters" {
                @if let Some(n) = self.shards { (shard_select(n, shard)) }
                @if self.db { (db_input(f.get("db"))) }
                (order_input(f.get("order"), false))
                @if self.event_type { label { "Event type " input name="type" size="14" value=[f.get("type")]; } }
                label { "Reason contains " input name="reason" size="14" value=[f.get("reason")]; }
                label { "At least this old " input name="min_age" size="5" placeholder="5m" value=[f.get("min_age")]; }
                button type="submit" { "Filter" }
            }
        }
    }

    /// The filters as hidden fields of a form that carries them on (a preview).
    pub fn hidden(self, f: &Fields) -> Markup {
        html! {
            @for k in self.keys() {
                @if let Some(v) = f.get(k) { input type="hidden" name=(k) value=(v); }
            }
        }
    }

    /// The link to the page after key `after`, with the same filters.
    pub fn next_page(self, f: &Fields, after: Option<impl Display>) -> Markup {
        let Some(after) = after else {
            return html! {};
        };
        let mut pairs: Vec<(&str, String)> = self
            .keys()
            .filter_map(|k| f.get(k).map(|v| (k, v.to_owned())))
            .collect();
        pairs.push(("after", after.to_string()));
        html! { p { a rel="next" href=(self.route.with(&pairs)) { "Next page" } } }
    }
}
