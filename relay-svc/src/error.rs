//! How the relay library's [`Error`] answers the admin service's calls (`GetStatus` itself
//! never fails).

use outbox_relay::error::Error;

/// How a relay error answers a gRPC call (the admin service's database work): an outage is
/// UNAVAILABLE (retry later), a missing outbox UNAVAILABLE with the reason, anything else
/// INTERNAL, its detail logged and not sent.
pub fn grpc_status(err: Error) -> tonic::Status {
    match &err {
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
