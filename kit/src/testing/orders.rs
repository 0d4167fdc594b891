//! Test orders as every service's tests write them: customer `customer<id>@example.com`, through
//! orders-svc's gRPC API ([`upsert`]) or as a raw outbox row's payload ([`payload`]).

use outbox_proto::orders::{
    events::v1::OrderPayload,
    v1::{OrderStatus, UpsertOrderRequest, order_service_client::OrderServiceClient},
};
use prost::Message;
use tonic::transport::Channel;

/// The request that sets order `id` to `status`.
pub fn upsert_request(id: i64, status: OrderStatus) -> UpsertOrderRequest {
    UpsertOrderRequest {
        id,
        status: status as i32,
        customer_email: format!("customer{id}@example.com"),
    }
}

/// [`upsert_request`] as a call within the caller's trace `traceparent` (W3C: version, trace id,
/// parent span id, flags).
pub fn traced_upsert_request(
    id: i64,
    status: OrderStatus,
    traceparent: &str,
) -> tonic::Request<UpsertOrderRequest> {
    let mut request = tonic::Request::new(upsert_request(id, status));
    request
        .metadata_mut()
        .insert("traceparent", traceparent.parse().expect("metadata"));
    request
}

/// Sets order `id` to `status` through `client` (cloned: concurrent writers share one); the seq
/// of the event the change appended.
pub async fn upsert(client: &OrderServiceClient<Channel>, id: i64, status: OrderStatus) -> u64 {
    client
        .clone()
        .upsert(upsert_request(id, status))
        .await
        .expect("upsert")
        .into_inner()
        .event_seq
        .expect("a change appends an event")
}

/// The payload of order `id` moving from `previous` to `status`, as orders-svc writes it.
pub fn order_payload(id: i64, status: OrderStatus, previous: OrderStatus) -> OrderPayload {
    OrderPayload {
        id,
        status: status as i32,
        customer_email: format!("customer{id}@example.com"),
        previous_status: previous as i32,
    }
}

/// [`order_payload`] encoded, for outbox rows written by hand.
pub fn payload(id: i64, status: OrderStatus, previous: OrderStatus) -> Vec<u8> {
    order_payload(id, status, previous).encode_to_vec()
}
