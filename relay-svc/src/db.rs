//! The relay's SQL, from [`outbox_relay::db`]; relay-svc relays the table `outbox` of the orders
//! database (orders-svc's migrations).

pub use outbox_relay::db::*;
