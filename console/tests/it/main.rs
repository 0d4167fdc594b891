//! The console over HTTP, against the real stack: every page, every action, and every refusal
//! (with a check that a refused request changed nothing). One binary (see STYLE.md).

mod actions;
mod common;
mod fleet;
mod hostile;
mod hostile_reason;
mod overview;
mod refusals;
mod sessions;
