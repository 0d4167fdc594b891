//! The shared contract of the outbox system.
//!
//! - [`orders::v1`]: the orders gRPC service (`Upsert`, `GetOrder`).
//! - [`orders::events::v1`]: [`OrderEvent`](orders::events::v1::OrderEvent), the envelope that travels
//!   through RabbitMQ, protobuf-encoded, one message per outbox row.
//! - [`relay::v1`] and [`mail::v1`]: the operator-facing status services of relay-svc and mail-svc.
//! - [`relay::admin::v1`] and [`mail::admin::v1`]: their admin services (list and release what is
//!   stuck; mutations need the ADMIN_TOKEN), wrapped by the `outboxctl` CLI.
//!
//! [`FILE_DESCRIPTOR_SET`] holds every file (with its imports) for gRPC server reflection.
//! The .proto files under `proto/` are the source of truth; field numbers are never reused.

#![allow(missing_docs, missing_debug_implementations, clippy::all)]

/// The encoded `FileDescriptorSet` of all services and their imports, for server reflection.
pub const FILE_DESCRIPTOR_SET: &[u8] = include_bytes!(concat!(env!("OUT_DIR"), "/descriptor.bin"));

pub mod orders {
    pub mod v1 {
        tonic::include_proto!("orders.v1");

        /// Every status an order can have (all but `Unspecified`).
        pub const STATUSES: [OrderStatus; 5] = [
            OrderStatus::Pending,
            OrderStatus::Paid,
            OrderStatus::Shipped,
            OrderStatus::Delivered,
            OrderStatus::Cancelled,
        ];
    }
    pub mod events {
        pub mod v1 {
            tonic::include_proto!("orders.events.v1");

            /// The `type` of an order's first event.
            pub const ORDER_CREATED: &str = "OrderCreated";
            /// The `type` of every later event of an order.
            pub const ORDER_STATUS_CHANGED: &str = "OrderStatusChanged";
            /// The outbox aggregate type of orders (the key of their chains with the order id).
            pub const AGGREGATE_TYPE: &str = "order";
            /// Routing key of `OrderCreated` events.
            pub const ROUTING_KEY_CREATED: &str = "order.created";
            /// Routing key of `OrderStatusChanged` events.
            pub const ROUTING_KEY_STATUS_CHANGED: &str = "order.status_changed";

            /// The routing key of an order event type, `None` for a type this version does not
            /// know.
            pub fn routing_key(event_type: &str) -> Option<&'static str> {
                match event_type {
                    ORDER_CREATED => Some(ROUTING_KEY_CREATED),
                    ORDER_STATUS_CHANGED => Some(ROUTING_KEY_STATUS_CHANGED),
                    _ => None,
                }
            }
        }
    }
}

pub mod relay {
    pub mod v1 {
        tonic::include_proto!("relay.v1");
    }
    pub mod admin {
        pub mod v1 {
            tonic::include_proto!("relay.admin.v1");
        }
    }
}

pub mod mail {
    pub mod v1 {
        tonic::include_proto!("mail.v1");
    }
    pub mod admin {
        pub mod v1 {
            tonic::include_proto!("mail.admin.v1");
        }
    }
}
