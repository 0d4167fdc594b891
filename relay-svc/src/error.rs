//! How the relay library's [`Error`] answers the admin service's calls (`GetStatus` itself
//! never fails).

use outbox_relay::{Error, lapin};

/// How a relay error answers a gRPC call (the admin service's database and broker work): an
/// outage of either is UNAVAILABLE (retry later), a missing outbox UNAVAILABLE with the reason;
/// a replay with nothing kept NOT_FOUND, to a missing queue (or one the broker refuses)
/// FAILED_PRECONDITION, stopped by a message the broker did not take ABORTED, each with its
/// message; anything else INTERNAL, its detail logged and not sent.
pub fn grpc_status(err: Error) -> tonic::Status {
    match &err {
        Error::NothingToReplay { .. } => tonic::Status::not_found(err.to_string()),
        Error::QueueMissing(_) => tonic::Status::failed_precondition(err.to_string()),
        Error::ReplayRefused { .. } => tonic::Status::aborted(err.to_string()),
        // The broker's own refusal (ACCESS_REFUSED to the queue, ...): its words, no secret.
        Error::Broker(e) if matches!(e.kind(), lapin::ErrorKind::ProtocolError(_)) => {
            tonic::Status::failed_precondition(format!("the broker refused: {e}"))
        }
        Error::Broker(_) | Error::ConnectTimeout(_) | Error::ConfirmTimeout(_) => {
            tracing::warn!(error = %err, "broker unavailable");
            tonic::Status::unavailable("broker unavailable (AMQP_URL), retry later")
        }
        Error::Db(db) if outbox_kit::db::is_unavailable(db) => {
            tracing::warn!(error = %db, "database unavailable");
            tonic::Status::unavailable("database unavailable, retry later")
        }
        Error::OutboxMissing => tonic::Status::unavailable(err.to_string()),
        _ => {
            tracing::error!(error = %err, "internal error");
            tonic::Status::internal("internal error")
        }
    }
}
