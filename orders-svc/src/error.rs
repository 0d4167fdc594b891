//! The service's one error type and its mapping to gRPC status codes.

use tonic::Status as GrpcStatus;

/// Everything an orders-svc call can fail with.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// The request is malformed; the message names the field.
    #[error("{field}: {reason}")]
    InvalidArgument { field: &'static str, reason: String },
    #[error("order {0} not found")]
    NotFound(i64),
    #[error("order {id}: customer_email is required to create an order")]
    EmailRequiredOnCreate { id: i64 },
    #[error("order {id}: status cannot change from {from} to {to}")]
    ForbiddenTransition {
        id: i64,
        from: &'static str,
        to: &'static str,
    },
    /// A row in the database that this version cannot read (e.g. an unknown status).
    #[error("order {id}: corrupt row: {reason}")]
    Corrupt { id: i64, reason: String },
    /// The outbox refused an event (a bug: orders-svc builds every field itself).
    #[error("outbox: {0}")]
    Outbox(outbox::Error),
    /// A batch-wide failure: the batch's creation races did not settle, or an error of the
    /// batch's transaction copied for each call of a batch of several (see `batch::apply`).
    #[error("group commit failed: {0}")]
    Batch(String),
    #[error(transparent)]
    Db(#[from] sqlx::Error),
}

impl From<outbox::Error> for Error {
    fn from(err: outbox::Error) -> Self {
        match err {
            outbox::Error::Db(db) => Error::Db(db),
            other => Error::Outbox(other),
        }
    }
}

impl Error {
    pub(crate) fn invalid(field: &'static str, reason: impl Into<String>) -> Self {
        Error::InvalidArgument {
            field,
            reason: reason.into(),
        }
    }
}

impl From<Error> for GrpcStatus {
    fn from(err: Error) -> Self {
        match &err {
            Error::InvalidArgument { .. } | Error::EmailRequiredOnCreate { .. } => {
                GrpcStatus::invalid_argument(err.to_string())
            }
            Error::NotFound(_) => GrpcStatus::not_found(err.to_string()),
            Error::ForbiddenTransition { .. } => GrpcStatus::failed_precondition(err.to_string()),
            Error::Corrupt { .. } | Error::Outbox(_) | Error::Batch(_) => {
                tracing::error!(error = %err, "call failed on an internal error");
                GrpcStatus::internal("internal error")
            }
            Error::Db(db) => outbox_kit::db::grpc_status(db),
        }
    }
}
