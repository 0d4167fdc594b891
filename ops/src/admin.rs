//! The services' admin APIs as the operator tools call them: connecting (TLS, timeouts, the first
//! address that answers), the tokens and the operator's name on each call, and the actions
//! (`RequeueQuarantined`, `DropQuarantined`, `ReleaseHeld`, `RedriveDeadLetters`, `Replay`).
//!
//! Each action is one call (or, for a redrive, a loop of calls) to the service that owns the
//! state: the service checks the reason, makes the change and writes its `admin_actions` row in
//! the same transaction, with the caller's name from the `x-operator` metadata. outboxctl and
//! outbox-console make the same calls through this module, so a row written from the console
//! cannot differ from one written by outboxctl.

use std::{fmt, time::Duration};

use outbox_proto::{
    mail::admin::v1::{
        DeadLetterFilter, RedriveDeadLettersRequest, ReleaseHeldRequest, ReleaseHeldResponse,
        mail_admin_client::MailAdminClient,
    },
    relay::admin::v1::{
        DropQuarantinedRequest, DropQuarantinedResponse, QuarantineSelector, ReplayRequest,
        ReplayResponse, RequeueQuarantinedRequest, RequeueQuarantinedResponse,
        relay_admin_client::RelayAdminClient,
    },
};
use tonic::{
    Code, Request, Status,
    metadata::MetadataValue,
    transport::{Channel, Endpoint},
};

/// How long connecting to one service may take.
pub const CONNECT_TIMEOUT: Duration = Duration::from_secs(3);

/// Why a call to a service did not happen or failed. The tools word it for their readers
/// (outboxctl names its flags); `Display` is a neutral sentence.
#[derive(Debug)]
pub enum Error {
    /// The address given for `service` cannot be parsed.
    BadAddress {
        service: String,
        addr: String,
        detail: String,
    },
    /// The client TLS settings cannot be loaded or applied (the whole sentence).
    Tls(String),
    /// Connecting to `service` at `addr` failed (`detail`: the innermost cause).
    Unreachable {
        service: String,
        addr: String,
        detail: String,
    },
    /// No address was given for `service`.
    NoAddress { service: String },
    /// A mutating call without an admin token (nothing was sent).
    NoToken,
    /// An admin token that cannot travel in a header (nothing was sent).
    BadToken,
    /// The service answered with an error.
    Status {
        service: String,
        addr: String,
        status: Status,
    },
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Error::BadAddress {
                service,
                addr,
                detail,
            } => write!(f, "{service} address {addr:?} is not an address: {detail}"),
            Error::Tls(e) => f.write_str(e),
            Error::Unreachable {
                service,
                addr,
                detail,
            } => write!(f, "cannot reach {service} at {addr} ({detail})"),
            Error::NoAddress { service } => write!(f, "no address given for {service}"),
            Error::NoToken => f.write_str("this action needs the services' admin token"),
            Error::BadToken => {
                f.write_str("the admin token must be printable ASCII without spaces")
            }
            Error::Status {
                service, status, ..
            } => write!(f, "{service}: {}", status.message()),
        }
    }
}

impl std::error::Error for Error {}

impl Error {
    /// The gRPC code of a service's answer, if the service answered.
    pub fn code(&self) -> Option<Code> {
        match self {
            Error::Status { status, .. } => Some(status.code()),
            _ => None,
        }
    }
}

/// The result of an admin call.
pub type Result<T> = std::result::Result<T, Error>;

/// Where the services are and the credentials every call carries.
#[derive(Debug, Clone)]
pub struct Admin {
    /// orders-svc's address.
    pub orders: String,
    /// relay-svc's addresses (any instance answers the admin calls).
    pub relays: Vec<String>,
    /// mail-svc's addresses.
    pub mails: Vec<String>,
    /// The services' admin token, sent with the mutating calls.
    pub token: Option<String>,
    /// Sent with the calls that change nothing.
    pub read_token: Option<String>,
    pub tls: outbox_kit::tls::ClientTls,
    /// The caller's name, sent as `x-operator` (kept in `admin_actions`).
    pub operator: Option<String>,
    /// How long one call may take.
    pub timeout: Duration,
}

impl Admin {
    /// A channel to `service` at `addr` (plaintext or TLS as [`Admin::tls`] says).
    pub async fn channel(&self, service: &str, addr: &str) -> Result<Channel> {
        let uri = if addr.contains("://") {
            addr.to_owned()
        } else {
            format!("{}://{addr}", self.tls.scheme())
        };
        let mut endpoint = Endpoint::from_shared(uri).map_err(|e| Error::BadAddress {
            service: service.to_owned(),
            addr: addr.to_owned(),
            detail: e.to_string(),
        })?;
        let tls = self.tls.load().map_err(|e| Error::Tls(format!("{e:#}")))?;
        if let Some(config) = tls {
            endpoint = endpoint
                .tls_config(config)
                .map_err(|e| Error::Tls(format!("TLS: {e}")))?;
        }
        endpoint
            .connect_timeout(CONNECT_TIMEOUT)
            .timeout(self.timeout)
            .connect()
            .await
            .map_err(|e| {
                // The innermost cause says it best ("Connection refused (os error 111)").
                let mut cause: &dyn std::error::Error = &e;
                while let Some(next) = cause.source() {
                    cause = next;
                }
                Error::Unreachable {
                    service: service.to_owned(),
                    addr: addr.to_owned(),
                    detail: cause.to_string(),
                }
            })
    }

    /// The first address of `addrs` that accepts a connection.
    pub async fn first(&self, service: &str, addrs: &[String]) -> Result<(String, Channel)> {
        let mut last = None;
        for addr in addrs {
            match self.channel(service, addr).await {
                Ok(ch) => return Ok((addr.clone(), ch)),
                Err(e) => last = Some(e),
            }
        }
        Err(last.unwrap_or_else(|| Error::NoAddress {
            service: service.to_owned(),
        }))
    }

    /// A request that carries the operator's name, and the token when `mutating` (an error
    /// before anything is sent when there is none).
    pub fn request<T>(&self, msg: T, mutating: bool) -> Result<Request<T>> {
        let mut r = if mutating {
            Request::new(msg)
        } else {
            self.authed(msg)
        };
        if let Some(op) = &self.operator
            && let Ok(v) = MetadataValue::try_from(op.as_str())
        {
            r.metadata_mut().insert("x-operator", v);
        }
        if mutating {
            let Some(token) = &self.token else {
                return Err(Error::NoToken);
            };
            let v =
                MetadataValue::try_from(format!("Bearer {token}")).map_err(|_| Error::BadToken)?;
            r.metadata_mut().insert("authorization", v);
        }
        Ok(r)
    }

    /// A request that changes nothing, with the read token when there is one.
    pub fn authed<T>(&self, msg: T) -> Request<T> {
        let mut r = Request::new(msg);
        if let Some(v) = self
            .read_token
            .as_ref()
            .and_then(|t| MetadataValue::try_from(format!("Bearer {t}")).ok())
        {
            r.metadata_mut().insert("authorization", v);
        }
        r
    }

    /// The same services and credentials, calling as `operator` (the console's signed-in user).
    pub fn as_operator(&self, operator: &str) -> Self {
        Self {
            operator: Some(operator.to_owned()),
            ..self.clone()
        }
    }

    /// A relay-svc admin client (the first instance that answers) and its address.
    pub async fn relay_admin(&self) -> Result<(String, RelayAdminClient<Channel>)> {
        let (addr, ch) = self.first("relay-svc", &self.relays).await?;
        Ok((addr, RelayAdminClient::new(ch)))
    }

    /// A mail-svc admin client (the first instance that answers) and its address.
    pub async fn mail_admin(&self) -> Result<(String, MailAdminClient<Channel>)> {
        let (addr, ch) = self.first("mail-svc", &self.mails).await?;
        Ok((addr, MailAdminClient::new(ch)))
    }

    /// Moves quarantined rows of `shard` back into the outbox.
    pub async fn requeue_quarantined(
        &self,
        select: QuarantineSelector,
        shard: u32,
        reason: &str,
    ) -> Result<RequeueQuarantinedResponse> {
        let (addr, mut c) = self.relay_admin().await?;
        let request = RequeueQuarantinedRequest {
            select: Some(select),
            reason: reason.to_owned(),
            shard,
        };
        let r = c.requeue_quarantined(self.request(request, true)?).await;
        answer("relay-svc", &addr, r)
    }

    /// Deletes quarantined rows of `shard` for good (the row is kept in `admin_actions`).
    pub async fn drop_quarantined(
        &self,
        select: QuarantineSelector,
        shard: u32,
        reason: &str,
    ) -> Result<DropQuarantinedResponse> {
        let (addr, mut c) = self.relay_admin().await?;
        let request = DropQuarantinedRequest {
            select: Some(select),
            reason: reason.to_owned(),
            shard,
        };
        let r = c.drop_quarantined(self.request(request, true)?).await;
        answer("relay-svc", &addr, r)
    }

    /// Releases an order's held chain in mail-svc (skips its missing predecessors).
    pub async fn release_held(&self, order_id: i64, reason: &str) -> Result<ReleaseHeldResponse> {
        let (addr, mut c) = self.mail_admin().await?;
        let request = ReleaseHeldRequest {
            order_id,
            reason: reason.to_owned(),
        };
        let r = c.release_held(self.request(request, true)?).await;
        answer("mail-svc", &addr, r)
    }

    /// Sends an order's published events again to one queue.
    pub async fn replay(&self, request: ReplayRequest) -> Result<ReplayResponse> {
        let (addr, mut c) = self.relay_admin().await?;
        let r = c.replay(self.request(request, true)?).await;
        answer("relay-svc", &addr, r)
    }

    /// Redrives the dead letters `filter` matches, `batch` per call, waiting `pause` between
    /// calls (a bulk redrive's rate limit), and reports `(moved so far, moved by this call, target)`
    /// after each call.
    /// The target is what matched at the first call: a message that dies again meanwhile comes
    /// back to the queue and matches again; it is not redriven twice by one redrive.
    pub async fn redrive(
        &self,
        filter: DeadLetterFilter,
        reason: &str,
        batch: u32,
        pause: Duration,
        mut progress: impl FnMut(&[u64], usize, usize),
    ) -> std::result::Result<Vec<u64>, Redrive> {
        let fail = |error, moved: &[u64]| Redrive {
            error,
            moved: moved.to_vec(),
        };
        let (addr, mut c) = self.mail_admin().await.map_err(|e| fail(e, &[]))?;
        let mut moved: Vec<u64> = Vec::new();
        let mut target: Option<usize> = None;
        loop {
            let request = RedriveDeadLettersRequest {
                filter: Some(filter.clone()),
                reason: reason.to_owned(),
                limit: batch,
            };
            let request = self.request(request, true).map_err(|e| fail(e, &moved))?;
            let r = match c.redrive_dead_letters(request).await {
                Ok(r) => r.into_inner(),
                // Someone else took the rest meanwhile: what we moved is the answer.
                Err(e) if e.code() == Code::NotFound && !moved.is_empty() => break,
                Err(status) => {
                    let error = Error::Status {
                        service: "mail-svc".into(),
                        addr: addr.clone(),
                        status,
                    };
                    return Err(fail(error, &moved));
                }
            };
            let target = *target.get_or_insert(r.redriven.len() + r.remaining as usize);
            moved.extend(&r.redriven);
            progress(&moved, r.redriven.len(), target);
            let left = target.saturating_sub(moved.len());
            if left == 0 || r.remaining == 0 || r.redriven.is_empty() {
                break;
            }
            if !pause.is_zero() {
                tokio::time::sleep(pause).await;
            }
        }
        Ok(moved)
    }
}

/// A redrive that failed, and what it moved before.
#[derive(Debug)]
pub struct Redrive {
    pub error: Error,
    /// The seqs redriven before the failure.
    pub moved: Vec<u64>,
}

fn answer<T>(
    service: &str,
    addr: &str,
    r: std::result::Result<tonic::Response<T>, Status>,
) -> Result<T> {
    r.map(tonic::Response::into_inner)
        .map_err(|status| Error::Status {
            service: service.to_owned(),
            addr: addr.to_owned(),
            status,
        })
}
