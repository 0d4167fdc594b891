//! The service's one error type and its mapping to gRPC status codes.

use tonic::Status as GrpcStatus;

/// Everything a mail-svc call can fail with.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// The request is malformed; the message names the field.
    #[error("{field}: {reason}")]
    InvalidArgument { field: &'static str, reason: String },
    #[error(transparent)]
    Db(#[from] sqlx::Error),
}

impl From<Error> for GrpcStatus {
    fn from(err: Error) -> Self {
        match &err {
            Error::InvalidArgument { .. } => GrpcStatus::invalid_argument(err.to_string()),
            Error::Db(db) => outbox_kit::db::grpc_status(db),
        }
    }
}
