//! The orders the load walks through their lifecycle: each operation appends exactly one event.

use outbox_proto::orders::v1::{OrderStatus, UpsertOrderRequest};

/// An order's life: each step appends one event.
pub const WRITE_STEPS: [OrderStatus; 4] = outbox_testkit::orders::LIFE;

/// Every bench order's customer address.
pub const EMAIL: &str = "bench@example.com";

/// Event `i` of a load: lanes of orders walked through their four statuses, so requests for one
/// order are `LANES` requests apart and never race each other.
const LANES: i64 = 1000;

/// Request `i` of a load whose orders start at `base`.
pub fn request_for(base: i64, i: i64) -> UpsertOrderRequest {
    let lane = i % LANES;
    let step = i / LANES;
    UpsertOrderRequest {
        id: base + lane + LANES * (step / 4),
        status: WRITE_STEPS[(step % 4) as usize] as i32,
        customer_email: EMAIL.into(),
    }
}
