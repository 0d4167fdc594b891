//! Signing in with a token (in the form body, never the URL) and out.

use axum::{
    body::Bytes,
    extract::State,
    http::{HeaderMap, header},
    response::{Html, Response},
};
use maud::html;

use super::see_other;
use crate::{
    auth, error::Error, extractors::Form, form::Fields, paths::Route, state::AppState,
    views::layout,
};

pub async fn form() -> Html<String> {
    layout::bare(
        "Sign in",
        html! {
            form method="post" action=(Route::SignIn) {
                p {
                    label for="token" { "Token" }
                    br;
                    input #token type="password" name="token" autocomplete="current-password" required autofocus;
                }
                button type="submit" { "Sign in" }
            }
            p { small { "A viewer token reads; an operator token may also act. The token is sent once, in this form; the session lives in a cookie." } }
        },
    )
}

pub async fn sign_in(
    State(state): State<AppState>,
    headers: HeaderMap,
    body: Bytes,
) -> Result<Response, Error> {
    // A sign-in forged by another site would sign the victim in as the attacker.
    auth::same_origin(&headers)?;
    let fields = Fields::parse(&body)?;
    let token = fields.get("token").unwrap_or("");
    let Some((id, session)) = state.sessions.sign_in(token) else {
        tracing::info!("console: a sign-in with an unknown token was refused");
        return Err(Error::Forbidden("this token is not accepted".into()));
    };
    tracing::info!(user = %session.user, role = session.role.label(), "console: signed in");
    let mut r = see_other(Route::Overview.as_str());
    r.headers_mut().insert(
        header::SET_COOKIE,
        state
            .sessions
            .cookie(&id)
            .parse()
            .map_err(|_| Error::Forbidden("cookie".into()))?,
    );
    Ok(r)
}

pub async fn sign_out(State(state): State<AppState>, Form { signed, .. }: Form) -> Response {
    state.sessions.sign_out(&signed.id);
    tracing::info!(user = %signed.session.user, "console: signed out");
    let mut r = see_other(Route::SignIn.as_str());
    if let Ok(v) = state.sessions.cookie_cleared().parse() {
        r.headers_mut().insert(header::SET_COOKIE, v);
    }
    r
}
