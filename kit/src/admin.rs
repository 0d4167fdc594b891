//! What the admin gRPC services of relay-svc and mail-svc share: the `ADMIN_TOKEN` setting, the
//! token check for mutating calls (constant time), the caller's name (`x-operator`), and the
//! checks of the fields every mutation takes (a reason, limits).
//!
//! Reads are open to anyone who can reach the port (as `GetStatus` is) and, with
//! `AUTH_TOKENS_FILE`, holds a token of it or an admin token. A mutation needs the metadata
//! `authorization: Bearer <token>` with `ADMIN_TOKEN` or a token of `ADMIN_TOKENS_FILE` (see
//! [`crate::auth`]); a service with neither is read-only.

use std::fmt;

use tonic::{Request, Status};

use crate::auth::{Tokens, constant_time_eq};

/// The metadata key that names the person (or script) behind a call, for the audit row.
pub const OPERATOR_HEADER: &str = "x-operator";

/// The longest `reason` accepted (it is stored in `admin_actions`).
pub const MAX_REASON_CHARS: usize = 1000;

/// The longest `x-operator` value kept (longer ones are cut).
pub const MAX_OPERATOR_CHARS: usize = 200;

/// The name the logs give a caller with `ADMIN_TOKEN` (the tokens of `ADMIN_TOKENS_FILE` have
/// their own names).
pub const ADMIN_TOKEN_NAME: &str = "ADMIN_TOKEN";

/// The admin tokens: the `ADMIN_TOKEN` setting and the list of `ADMIN_TOKENS_FILE`; neither
/// makes the admin service read-only. Never printed.
#[derive(Clone, Default)]
pub struct AdminToken(Option<String>, Option<Tokens>);

impl PartialEq for AdminToken {
    fn eq(&self, other: &Self) -> bool {
        self.0 == other.0 && self.1.is_none() && other.1.is_none()
    }
}

impl fmt::Debug for AdminToken {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match (&self.0, &self.1) {
            (None, None) => f.write_str("AdminToken(unset: admin is read-only)"),
            (single, list) => f
                .debug_tuple("AdminToken")
                .field(&single.as_ref().map(|_| "***"))
                .field(list)
                .finish(),
        }
    }
}

impl AdminToken {
    /// A token from the setting's value; empty means unset.
    pub fn new(value: Option<String>) -> Self {
        Self(value.filter(|v| !v.is_empty()), None)
    }

    /// These tokens plus the list of `ADMIN_TOKENS_FILE` at `path` (when set).
    pub fn with_file(mut self, path: Option<&std::path::Path>) -> anyhow::Result<Self> {
        if let Some(path) = path {
            self.1 = Some(Tokens::load("ADMIN_TOKENS_FILE", path)?);
        }
        Ok(self)
    }

    /// The list of `ADMIN_TOKENS_FILE`, to re-read on SIGHUP.
    pub fn list(&self) -> Option<&Tokens> {
        self.1.as_ref()
    }

    /// The name of `token` if it is an admin token.
    pub fn check(&self, token: &str) -> Option<String> {
        let single = self
            .0
            .as_ref()
            .is_some_and(|t| constant_time_eq(t.as_bytes(), token.as_bytes()));
        let listed = self.1.as_ref().and_then(|l| l.check(token));
        listed.or(single.then(|| ADMIN_TOKEN_NAME.to_owned()))
    }

    /// For clap's `value_parser`: never fails (checked by [`AdminToken::validate`]).
    pub fn parse(value: &str) -> Result<Self, std::convert::Infallible> {
        Ok(Self::new(Some(value.to_owned())))
    }

    /// Checks the setting: a token, when set, is at least 16 characters of printable ASCII
    /// without spaces (it travels in an HTTP/2 header).
    pub fn validate(&self) -> anyhow::Result<()> {
        if let Some(t) = &self.0 {
            if t.len() < 16 {
                anyhow::bail!(
                    "ADMIN_TOKEN must be at least 16 characters (or unset: read-only admin)"
                );
            }
            if !t.bytes().all(|b| b.is_ascii_graphic()) {
                anyhow::bail!("ADMIN_TOKEN must be printable ASCII without spaces");
            }
        }
        Ok(())
    }

    /// True when mutations are possible at all.
    pub fn is_set(&self) -> bool {
        self.0.is_some() || self.1.is_some()
    }

    /// Lets a mutating call through, or answers why not: PERMISSION_DENIED when the service has
    /// no token (read-only), UNAUTHENTICATED when the call carries none or a wrong one.
    pub fn authorize<T>(&self, request: &Request<T>) -> Result<(), Status> {
        if !self.is_set() {
            return Err(Status::permission_denied(
                "this admin service is read-only: ADMIN_TOKEN is not set on the service (nor \
                 ADMIN_TOKENS_FILE)",
            ));
        }
        let given = request
            .metadata()
            .get("authorization")
            .and_then(|v| v.to_str().ok())
            .and_then(|v| v.strip_prefix("Bearer "));
        match given.map(|t| self.check(t)) {
            None => Err(Status::unauthenticated(
                "missing admin token: send `authorization: Bearer <admin token>`",
            )),
            Some(Some(caller)) => {
                // The name, never the token: who changed something, for the log.
                tracing::info!(caller = %caller, "admin token accepted caller={caller}");
                Ok(())
            }
            Some(None) => Err(Status::unauthenticated("wrong admin token")),
        }
    }
}

/// Writes one row of a service's `admin_actions` audit table (every service's has the same
/// columns), in the caller's transaction: the call's `action`, the `ids` it acted on, the
/// operator's `reason` and name, and what else the row must say (`detail`, a JSON object).
/// Returns the row's id (for [`audit_outcome`]).
pub async fn audit(
    tx: &mut sqlx::PgConnection,
    action: &str,
    ids: &[i64],
    reason: &str,
    operator: Option<&str>,
    detail: sqlx::types::JsonValue,
) -> Result<i64, sqlx::Error> {
    sqlx::query_scalar(
        "insert into admin_actions (action, ids, reason, operator, detail)
         values ($1, $2, $3, $4, $5) returning id",
    )
    .bind(action)
    .bind(ids)
    .bind(reason)
    .bind(operator)
    .bind(detail)
    .fetch_one(tx)
    .await
}

/// Completes the audit row `id` of an action recorded before it acted outside the database (a
/// publish): `ids` become those it did act on, and `outcome`'s keys are merged into `detail`.
pub async fn audit_outcome(
    conn: &mut sqlx::PgConnection,
    id: i64,
    ids: &[i64],
    outcome: sqlx::types::JsonValue,
) -> Result<(), sqlx::Error> {
    sqlx::query("update admin_actions set ids = $2, detail = detail || $3 where id = $1")
        .bind(id)
        .bind(ids)
        .bind(outcome)
        .execute(conn)
        .await?;
    Ok(())
}

/// The caller's name from `x-operator` without control characters, cut to
/// [`MAX_OPERATOR_CHARS`]; `None` when absent.
pub fn operator<T>(request: &Request<T>) -> Option<String> {
    let v = request
        .metadata()
        .get(OPERATOR_HEADER)?
        .to_str()
        .ok()?
        .trim();
    // Metadata may carry a tab; the audit row keeps plain text only.
    let v: String = v
        .chars()
        .filter(|c| !c.is_control())
        .take(MAX_OPERATOR_CHARS)
        .collect();
    (!v.is_empty()).then_some(v)
}

/// Why a `reason` was refused; it displays as `reason: <problem>`, naming the field.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum BadReason {
    Missing,
    TooLong,
    /// A control character (NUL included) and its position (from 1): PostgreSQL refuses a NUL
    /// in text, and the others would hide or forge part of the reason for whoever reads the
    /// audit row or the log.
    ControlCharacter(char, usize),
}

impl BadReason {
    /// What is wrong, without the field's name.
    pub fn problem(&self) -> String {
        match self {
            BadReason::Missing => {
                "required (why you are doing this; it is kept in admin_actions)".to_owned()
            }
            BadReason::TooLong => format!("at most {MAX_REASON_CHARS} characters"),
            BadReason::ControlCharacter(c, at) => format!(
                "control character {c:?} at character {at} (write the reason as one line of \
                 plain text)"
            ),
        }
    }
}

impl fmt::Display for BadReason {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "reason: {}", self.problem())
    }
}

impl std::error::Error for BadReason {}

/// The one check of an operator's `reason`, used by every admin API, the console and outboxctl:
/// required, at most [`MAX_REASON_CHARS`], no control character. Returns it trimmed.
pub fn check_reason(value: &str) -> Result<String, BadReason> {
    let r = value.trim();
    if r.is_empty() {
        return Err(BadReason::Missing);
    }
    if r.chars().count() > MAX_REASON_CHARS {
        return Err(BadReason::TooLong);
    }
    if let Some((at, c)) = r.chars().enumerate().find(|(_, c)| c.is_control()) {
        return Err(BadReason::ControlCharacter(c, at + 1));
    }
    Ok(r.to_owned())
}

/// The `reason` of a mutation ([`check_reason`]), INVALID_ARGUMENT naming the field.
pub fn reason(value: &str) -> Result<String, Status> {
    check_reason(value).map_err(|e| Status::invalid_argument(e.to_string()))
}

/// A list `limit`: 0 means `default`; above `max` is INVALID_ARGUMENT.
pub fn limit(value: u32, default: u32, max: u32) -> Result<i64, Status> {
    match value {
        0 => Ok(i64::from(default)),
        n if n <= max => Ok(i64::from(n)),
        n => Err(Status::invalid_argument(format!(
            "limit: {n} is more than {max}"
        ))),
    }
}

/// A seq from the wire: 1 ..= i64::MAX.
pub fn seq(field: &'static str, value: u64) -> Result<i64, Status> {
    i64::try_from(value)
        .ok()
        .filter(|v| *v > 0)
        .ok_or_else(|| Status::invalid_argument(format!("{field}: {value} is not a valid seq")))
}

/// An order id filter: 0 (none) or positive.
pub fn order_id(value: i64) -> Result<Option<i64>, Status> {
    match value {
        0 => Ok(None),
        v if v > 0 => Ok(Some(v)),
        v => Err(Status::invalid_argument(format!(
            "order_id: {v} is not a positive integer"
        ))),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn with(auth: Option<&str>) -> Request<()> {
        let mut r = Request::new(());
        if let Some(a) = auth {
            r.metadata_mut()
                .insert("authorization", a.parse().expect("ascii"));
        }
        r
    }

    #[test]
    fn tokens_are_checked() {
        let token = AdminToken::new(Some("0123456789abcdef".into()));
        assert!(
            token
                .authorize(&with(Some("Bearer 0123456789abcdef")))
                .is_ok()
        );
        for bad in [
            None,
            Some("Bearer nope"),
            Some("0123456789abcdef"),
            Some("Bearer "),
        ] {
            let e = token.authorize(&with(bad)).unwrap_err();
            assert_eq!(e.code(), tonic::Code::Unauthenticated, "{bad:?}");
        }
        let read_only = AdminToken::new(Some(String::new()));
        let e = read_only
            .authorize(&with(Some("Bearer 0123456789abcdef")))
            .unwrap_err();
        assert_eq!(e.code(), tonic::Code::PermissionDenied);
        assert!(e.message().contains("ADMIN_TOKEN is not set"));
        assert!(AdminToken::new(Some("short".into())).validate().is_err());
        assert!(
            AdminToken::new(Some("with a space in it!".into()))
                .validate()
                .is_err()
        );
        assert!(!format!("{token:?}").contains("0123"));
    }

    #[test]
    fn fields_are_checked_by_name() {
        assert_eq!(
            reason("  ").unwrap_err().code(),
            tonic::Code::InvalidArgument
        );
        assert!(
            reason(&"x".repeat(1001))
                .unwrap_err()
                .message()
                .starts_with("reason:")
        );
        assert_eq!(reason(" fixed ").unwrap(), "fixed");
        for hostile in [
            "a\0b",
            "\0",
            "x\u{1b}[31m",
            "line\nbreak",
            "tab\there",
            "del\u{7f}",
            "c1\u{85}inside",
        ] {
            let e = reason(hostile).unwrap_err();
            assert_eq!(e.code(), tonic::Code::InvalidArgument, "{hostile:?}");
            assert!(
                e.message().starts_with("reason: control character"),
                "{hostile:?}: {}",
                e.message()
            );
        }
        assert_eq!(
            check_reason("ok\0").unwrap_err(),
            BadReason::ControlCharacter('\0', 3)
        );
        assert_eq!(reason("naïve, INC-4401 ✓").unwrap(), "naïve, INC-4401 ✓");
        assert_eq!(limit(0, 20, 100).unwrap(), 20);
        assert!(
            limit(101, 20, 100)
                .unwrap_err()
                .message()
                .starts_with("limit:")
        );
        assert!(seq("seqs", 0).is_err());
        assert!(
            seq("seqs", u64::MAX)
                .unwrap_err()
                .message()
                .starts_with("seqs:")
        );
        assert_eq!(order_id(0).unwrap(), None);
        assert!(order_id(-1).unwrap_err().message().starts_with("order_id:"));
    }
}
