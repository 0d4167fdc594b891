//! Test orders as every service's tests write them: customer `customer<id>@example.com`, through
//! orders-svc's gRPC API ([`upsert`]) or as a raw outbox row's payload ([`payload`]).

use outbox_proto::orders::{
    events::v1::OrderPayload,
    v1::{OrderStatus, UpsertOrderRequest, order_service_client::OrderServiceClient},
};
use prost::Message;
use tonic::transport::Channel;

use std::{
    future::Future,
    sync::{
        Arc,
        atomic::{AtomicI64, Ordering},
    },
    time::{Duration, Instant},
};

/// An order's life, one status a call: each step appends exactly one event.
pub const LIFE: [OrderStatus; 4] = [
    OrderStatus::Pending,
    OrderStatus::Paid,
    OrderStatus::Shipped,
    OrderStatus::Delivered,
];

/// The benches' closed-loop writers: `workers` tasks, each walking orders of its own (ids from one
/// counter, from 1) through [`LIFE`] until `secs` have passed, awaiting `op(worker, id, status)`
/// for every step, so that every call appends exactly one event, as a real order's life does.
/// Returns every call's latency and the time the whole run took; the first failed call fails it.
pub async fn walk_lives<F, Fut>(
    workers: usize,
    secs: f64,
    op: F,
) -> anyhow::Result<(Vec<Duration>, Duration)>
where
    F: Fn(usize, i64, OrderStatus) -> Fut + Send + Sync + Clone + 'static,
    Fut: Future<Output = anyhow::Result<()>> + Send,
{
    let next_order = Arc::new(AtomicI64::new(1));
    let started = Instant::now();
    let deadline = started + Duration::from_secs_f64(secs);
    let mut tasks = Vec::new();
    for worker in 0..workers {
        let (op, next_order) = (op.clone(), next_order.clone());
        tasks.push(tokio::spawn(async move {
            let mut latencies = Vec::new();
            while Instant::now() < deadline {
                let id = next_order.fetch_add(1, Ordering::Relaxed);
                for status in LIFE {
                    let t = Instant::now();
                    op(worker, id, status).await?;
                    latencies.push(t.elapsed());
                }
            }
            anyhow::Ok(latencies)
        }));
    }
    let mut all = Vec::new();
    for t in tasks {
        all.extend(t.await??);
    }
    Ok((all, started.elapsed()))
}

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

/// Sets order `id` to `status` for customer `email` through `client`: the benches' writer, whose
/// every worker has a client (an HTTP/2 connection) of its own, as separate callers would.
pub async fn upsert_as(
    mut client: OrderServiceClient<Channel>,
    id: i64,
    status: OrderStatus,
    email: &str,
) -> Result<(), tonic::Status> {
    let request = UpsertOrderRequest {
        id,
        status: status as i32,
        customer_email: email.into(),
    };
    client.upsert(request).await.map(drop)
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
