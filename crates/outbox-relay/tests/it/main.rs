//! The relay crate's integration tests: one binary, as in every package of the workspace (each
//! test binary links the whole dependency tree), one module per concern, the shared harness in
//! [`support`]. One module's tests: `cargo test -p outbox-relay --test it lease::`.

mod any_outbox;
mod fleet;
mod floor;
mod lease;
mod operator;
mod overlap;
mod poison;
mod published;
mod replay;
mod returns;
mod stall;
mod support;
