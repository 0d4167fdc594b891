//! One module per page: its handlers (reading input field by field, see [`crate::form`]) and
//! its template.

pub mod audit;
pub mod dead_letters;
pub mod held;
pub mod jobs;
pub mod overview;
pub mod quarantine;
pub mod sign_in;
pub mod where_is;

use axum::{body::Bytes, http::HeaderMap};
use maud::{Markup, html};

use crate::{Signed, auth, error::Result, form::Fields};

/// The fields of a write posted to `action`, after the write checks ([`auth::check_write`]):
/// nothing of the body is used before they pass.
pub fn write_fields(
    signed: &Signed,
    headers: &HeaderMap,
    action: &str,
    body: &Bytes,
) -> Result<Fields> {
    let fields = Fields::parse(body);
    auth::check_write(&signed.session, headers, action, fields.get("csrf"))?;
    Ok(fields)
}

/// The hidden per-form token of the form that posts to `action`.
pub fn csrf(signed: &Signed, action: &str) -> Markup {
    html! { input type="hidden" name="csrf" value=(signed.session.form_token(action)); }
}

/// `4, 7, 9` (or `none`).
pub fn seq_list<T: std::fmt::Display>(v: &[T]) -> String {
    if v.is_empty() {
        return "none".into();
    }
    v.iter().map(T::to_string).collect::<Vec<_>>().join(", ")
}

/// The reason field and the confirm button of an action's preview.
pub fn reason_and_confirm(label: &str) -> Markup {
    html! {
        p {
            label for="reason" { "Reason (kept in admin_actions)" }
            br;
            textarea #reason name="reason" rows="2" cols="60" required {}
        }
        button type="submit" { (label) }
    }
}
