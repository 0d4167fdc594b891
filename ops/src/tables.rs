//! The tables the reads name, from the crates that own their names: orders-svc's outbox
//! ([`outbox::TableName`] derives its quarantine and published tables) and mail-svc's inbox
//! ([`outbox_inbox::Tables`]), both named by [`outbox_kit::defaults`] as the services name them.
//! Each module builds its statements from these once ([`std::sync::LazyLock`]).

use std::sync::LazyLock;

use outbox::TableName;
use outbox_inbox::Tables;
use outbox_kit::defaults;

/// orders-svc's outbox (`outbox`, `outbox_quarantine`, `outbox_published`, …).
pub fn outbox() -> &'static TableName {
    static OUTBOX: LazyLock<TableName> = LazyLock::new(|| {
        TableName::parse(defaults::ORDERS_OUTBOX).expect("orders-svc's outbox name is valid")
    });
    &OUTBOX
}

/// mail-svc's inbox (`order_progress`, `held_events`, keyed by `order_id`).
pub fn inbox() -> &'static Tables {
    static INBOX: LazyLock<Tables> = LazyLock::new(|| {
        Tables::existing(
            defaults::MAIL_INBOX_PROGRESS,
            defaults::MAIL_INBOX_HELD,
            defaults::MAIL_INBOX_AGGREGATE,
        )
        .expect("mail-svc's inbox names are valid")
    });
    &INBOX
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The names the services' migrations create: the statements read these tables.
    #[test]
    fn the_names_are_the_services_tables() {
        let o = outbox();
        assert_eq!(
            (o.events(), o.quarantine(), o.published()),
            (
                "outbox".to_owned(),
                "outbox_quarantine".to_owned(),
                "outbox_published".to_owned()
            )
        );
        let i = inbox();
        assert_eq!(
            (i.progress(), i.held(), i.aggregate_column()),
            ("order_progress", "held_events", "order_id")
        );
    }
}
