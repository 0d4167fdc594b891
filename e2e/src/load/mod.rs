//! What the benchmark sections share, below every one of them: the stacks they measure, the
//! events and orders they drive through them, and mail-svc working off a pre-loaded queue.
//! `bench`, `scaling` and `cost` import it; it imports none of them.

pub mod events;
pub mod mail;
pub mod orders;
pub mod outbox;
pub mod stack;

/// A progress line on standard error (the report goes to standard output).
pub fn progress(msg: impl AsRef<str>) {
    eprintln!("bench: {}", msg.as_ref());
}
