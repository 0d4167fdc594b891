//! The order domain: statuses, the one transition table, and request validation.

use outbox_proto::orders::v1::OrderStatus;

use crate::error::Error;

/// A defined order status (never UNSPECIFIED).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Status {
    Pending,
    Paid,
    Shipped,
    Delivered,
    Cancelled,
}

impl Status {
    /// The name stored in the database.
    pub fn as_str(self) -> &'static str {
        match self {
            Status::Pending => "pending",
            Status::Paid => "paid",
            Status::Shipped => "shipped",
            Status::Delivered => "delivered",
            Status::Cancelled => "cancelled",
        }
    }

    /// Parses a name stored in the database.
    pub fn from_db(s: &str) -> Option<Self> {
        Some(match s {
            "pending" => Status::Pending,
            "paid" => Status::Paid,
            "shipped" => Status::Shipped,
            "delivered" => Status::Delivered,
            "cancelled" => Status::Cancelled,
            _ => return None,
        })
    }

    /// The wire enum value.
    pub fn to_proto(self) -> OrderStatus {
        match self {
            Status::Pending => OrderStatus::Pending,
            Status::Paid => OrderStatus::Paid,
            Status::Shipped => OrderStatus::Shipped,
            Status::Delivered => OrderStatus::Delivered,
            Status::Cancelled => OrderStatus::Cancelled,
        }
    }

    fn from_proto(value: i32) -> Option<Self> {
        Some(match OrderStatus::try_from(value).ok()? {
            OrderStatus::Unspecified => return None,
            OrderStatus::Pending => Status::Pending,
            OrderStatus::Paid => Status::Paid,
            OrderStatus::Shipped => Status::Shipped,
            OrderStatus::Delivered => Status::Delivered,
            OrderStatus::Cancelled => Status::Cancelled,
        })
    }

    /// The one place the status rules live: forward-only PENDING -> PAID -> SHIPPED -> DELIVERED,
    /// and CANCELLED from PENDING or PAID. Staying in the same status is not a transition.
    pub fn can_change_to(self, next: Status) -> bool {
        use Status::*;
        matches!(
            (self, next),
            (Pending, Paid | Shipped | Delivered | Cancelled)
                | (Paid, Shipped | Delivered | Cancelled)
                | (Shipped, Delivered)
        )
    }
}

/// A validated `Upsert` request.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct UpsertCommand {
    pub id: i64,
    pub status: Status,
    /// Required to create the order; ignored when it exists (the email is not changed by Upsert).
    pub customer_email: Option<String>,
}

impl UpsertCommand {
    /// Validates the raw request fields; the error names the offending field.
    pub fn parse(id: i64, status: i32, customer_email: &str) -> Result<Self, Error> {
        if id <= 0 {
            return Err(Error::invalid("id", "must be a positive integer"));
        }
        let status = Status::from_proto(status).ok_or_else(|| {
            Error::invalid(
                "status",
                format!("{status} is not a defined order status (use PENDING, PAID, SHIPPED, DELIVERED or CANCELLED)"),
            )
        })?;
        let customer_email = if customer_email.is_empty() {
            None
        } else {
            validate_email(customer_email)?;
            Some(customer_email.to_owned())
        };
        Ok(Self {
            id,
            status,
            customer_email,
        })
    }
}

/// The shared address rule (`outbox_kit::email`), the same one mail-svc applies to every event:
/// an address accepted here is one mail-svc will mail, so an order is never created with an address
/// whose events would be dead-lettered.
fn validate_email(email: &str) -> Result<(), Error> {
    outbox_kit::email::validate(email).map_err(|e| Error::invalid("customer_email", e.to_string()))
}

#[cfg(test)]
mod tests {
    use super::*;
    use Status::*;

    #[test]
    fn transition_table() {
        let all = [Pending, Paid, Shipped, Delivered, Cancelled];
        let allowed = [
            (Pending, Paid),
            (Pending, Shipped),
            (Pending, Delivered),
            (Pending, Cancelled),
            (Paid, Shipped),
            (Paid, Delivered),
            (Paid, Cancelled),
            (Shipped, Delivered),
        ];
        for from in all {
            for to in all {
                assert_eq!(
                    from.can_change_to(to),
                    allowed.contains(&(from, to)),
                    "{from:?} -> {to:?}"
                );
            }
        }
    }

    #[test]
    fn emails() {
        for ok in ["a@b.co", "taro.yamada+x@example.jp"] {
            assert!(validate_email(ok).is_ok(), "{ok}");
        }
        let long = format!("{}@example.com", "a".repeat(250));
        for bad in [
            "nobody",
            "@b.co",
            "a@",
            "a@b",
            "a b@c.de",
            "a@b@c.de",
            "a@.de",
            "john..doe@example.com",
            ".a@x.com",
            "a@-x.com",
            "a@x..com",
            long.as_str(),
        ] {
            assert!(validate_email(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn db_names_round_trip() {
        for s in [Pending, Paid, Shipped, Delivered, Cancelled] {
            assert_eq!(Status::from_db(s.as_str()), Some(s));
        }
    }
}
