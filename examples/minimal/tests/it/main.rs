//! The minimal example's integration tests: one binary, as in every package of the workspace
//! (each test binary links the whole dependency tree), one module per concern.

mod getting_started;
mod readme;
