//! The console's one error type and the page each variant answers with. Internal detail (a
//! database error) is logged and never shown.

use axum::{
    http::StatusCode,
    response::{IntoResponse, Response},
};

use crate::views::layout;

/// Why a request got no page of its own.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// Bad input: the field and what is wrong with it (400).
    #[error("{field}: {problem}")]
    BadInput { field: String, problem: String },
    /// Not signed in, a viewer acting, a write from elsewhere or without its form token (403).
    #[error("{0}")]
    Forbidden(String),
    /// Nothing of that name (404).
    #[error("{0}")]
    NotFound(String),
    /// The action conflicts with the state of what it acts on (a fleet database not drained);
    /// what to do instead (409).
    #[error("{0}")]
    Conflict(String),
    /// A service refused or failed an action; its words (502).
    #[error("{0}")]
    Service(String),
    /// A database could not be read (503).
    #[error("a database could not be read")]
    Db(#[from] sqlx::Error),
    /// A source could not be reached (the fleet database); which, free of any password (503).
    #[error("{0}")]
    Unavailable(String),
}

impl Error {
    /// A 400 naming `field`.
    pub fn bad(field: impl Into<String>, problem: impl Into<String>) -> Self {
        Error::BadInput {
            field: field.into(),
            problem: problem.into(),
        }
    }

    fn status(&self) -> StatusCode {
        match self {
            Error::BadInput { .. } => StatusCode::BAD_REQUEST,
            Error::Forbidden(_) => StatusCode::FORBIDDEN,
            Error::NotFound(_) => StatusCode::NOT_FOUND,
            Error::Conflict(_) => StatusCode::CONFLICT,
            Error::Service(_) => StatusCode::BAD_GATEWAY,
            Error::Db(_) | Error::Unavailable(_) => StatusCode::SERVICE_UNAVAILABLE,
        }
    }
}

impl From<outbox_ops::admin::Error> for Error {
    fn from(e: outbox_ops::admin::Error) -> Self {
        match e.code() {
            Some(tonic::Code::NotFound) => Error::NotFound(e.to_string()),
            Some(tonic::Code::InvalidArgument) => Error::bad("request", e.to_string()),
            _ => Error::Service(e.to_string()),
        }
    }
}

impl IntoResponse for Error {
    fn into_response(self) -> Response {
        let status = self.status();
        if let Error::Db(e) = &self {
            tracing::warn!(error = %e, "console: a database read failed");
        }
        if let Error::Unavailable(e) = &self {
            tracing::warn!(error = %e, "console: a source is unavailable");
        }
        let title = match status {
            StatusCode::BAD_REQUEST => "Bad input",
            StatusCode::FORBIDDEN => "Refused",
            StatusCode::NOT_FOUND => "Not found",
            StatusCode::CONFLICT => "Not done",
            _ => "Unavailable",
        };
        let body = layout::message_page(title, &self.to_string());
        (status, body).into_response()
    }
}

/// The result of a handler.
pub type Result<T> = std::result::Result<T, Error>;
