//! The checks every request passes before its handler runs, as extractors: a handler that takes
//! [`Signed`] cannot serve a page without a live session, one that takes [`WriteForm`] cannot
//! act without the operator's role, a same-origin request and the form token of its own path,
//! and [`Query`] and the forms hand over fields decoded strictly (see [`crate::form`]).

use axum::{
    extract::{FromRequest, FromRequestParts, Request},
    http::{Method, request::Parts},
    response::{Html, IntoResponse, Redirect, Response},
};

use crate::{
    auth::{self, Session},
    error::Error,
    form::Fields,
    paths::Route,
    state::AppState,
    views::layout,
};

/// The signed-in user of a request. Without a live session a page redirects to the sign-in
/// and a write is refused (403).
#[derive(Debug, Clone)]
pub struct Signed {
    pub id: String,
    pub session: Session,
}

impl Signed {
    /// A full page for this user: the frame shows who is signed in and the sign-out.
    pub fn page(&self, title: &str, content: maud::Markup) -> Html<String> {
        let s = &self.session;
        let frame = layout::Frame {
            user: &s.user,
            role: s.role.label(),
            sign_out_token: &s.form_token(Route::SignOut.as_str()),
        };
        layout::page(title, frame, content)
    }
}

impl FromRequestParts<AppState> for Signed {
    type Rejection = Response;

    async fn from_request_parts(parts: &mut Parts, state: &AppState) -> Result<Self, Response> {
        match state.sessions.current(&parts.headers) {
            Some((id, session)) => Ok(Signed { id, session }),
            None if parts.method == Method::GET => {
                Err(Redirect::to(Route::SignIn.as_str()).into_response())
            }
            None => {
                Err(Error::Forbidden("not signed in (or the session ended)".into()).into_response())
            }
        }
    }
}

/// The query string's fields (a value that is not UTF-8 is a 400 naming its field).
#[derive(Debug, Clone)]
pub struct Query(pub Fields);

impl<S: Send + Sync> FromRequestParts<S> for Query {
    type Rejection = Error;

    async fn from_request_parts(parts: &mut Parts, _: &S) -> Result<Self, Error> {
        Ok(Query(Fields::parse(
            parts.uri.query().unwrap_or_default().as_bytes(),
        )?))
    }
}

/// A form posted by a signed-in user from the console's own page, with the form token of the
/// path it is posted to (a viewer's sign-out is such a form). Nothing of the body is read
/// before the checks pass.
#[derive(Debug)]
pub struct Form {
    pub signed: Signed,
    pub fields: Fields,
}

/// A [`Form`] that acts: posted by an operator.
#[derive(Debug)]
pub struct WriteForm {
    pub signed: Signed,
    pub fields: Fields,
}

/// The largest form body read.
const MAX_FORM: usize = 1 << 20;

/// The session, the origin and the form token of a post to the request's own path; then the
/// fields.
async fn checked(
    req: Request,
    state: &AppState,
    write: bool,
) -> Result<(Signed, Fields), Response> {
    let (mut parts, body) = req.into_parts();
    let signed = Signed::from_request_parts(&mut parts, state).await?;
    let body = axum::body::to_bytes(body, MAX_FORM)
        .await
        .map_err(|_| Error::bad("form", "larger than 1 MiB").into_response())?;
    // The token alone, read leniently: a field that is not UTF-8 is a 400 naming it, after.
    let token = url::form_urlencoded::parse(&body)
        .find(|(k, _)| k == "csrf")
        .map(|(_, v)| v.trim().to_owned());
    let path = parts.uri.path();
    let check = if write {
        auth::check_write(&signed.session, &parts.headers, path, token.as_deref())
    } else {
        auth::check_form(&signed.session, &parts.headers, path, token.as_deref())
    };
    check.map_err(IntoResponse::into_response)?;
    let fields = Fields::parse(&body).map_err(IntoResponse::into_response)?;
    Ok((signed, fields))
}

impl FromRequest<AppState> for Form {
    type Rejection = Response;

    async fn from_request(req: Request, state: &AppState) -> Result<Self, Response> {
        let (signed, fields) = checked(req, state, false).await?;
        Ok(Form { signed, fields })
    }
}

impl FromRequest<AppState> for WriteForm {
    type Rejection = Response;

    async fn from_request(req: Request, state: &AppState) -> Result<Self, Response> {
        let (signed, fields) = checked(req, state, true).await?;
        Ok(WriteForm { signed, fields })
    }
}
