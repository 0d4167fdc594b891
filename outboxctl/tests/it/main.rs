//! outboxctl's integration tests: one binary (every test binary links the whole dependency
//! tree), one module per concern, the real stack and the binary's runner in [`common`]. One
//! module's tests: `cargo test -p outboxctl --test it story:: -- --nocapture`.

mod audit;
mod bad_input;
mod common;
mod fleet;
mod json_shape;
mod story;
