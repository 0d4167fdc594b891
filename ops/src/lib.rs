//! `outbox-ops`: the operator's logic, shared by the two tools that put it in front of people:
//! `outboxctl` (a command line) and `outbox-console` (a web console). Each renders; the facts
//! and the actions come from here, once.
//!
//! - [`audit`]: the completeness audit (every event the orders outbox appended must reach
//!   mail-svc's inbox), incremental or full.
//! - [`trace`]: one order's events and where each stopped.
//! - [`replay`]: a replay's dry run, decided by the consumer's own rule.
//! - [`lists`]: keyset-paginated listings of quarantined rows, held chains and dead letters.
//! - [`fleet`]: the relay fleet's registry as operators change it (add, drain, remove, list),
//!   and the databases `--db NAME` and the fleet-wide audit read.
//! - [`settings`]: the settings both tools take (the databases, the audit's grace, the replay's
//!   queue), declared once.
//! - [`tables`]: the tables the reads name, from the outbox and inbox crates' names.
//! - [`admin`]: the services' admin calls (requeue, drop, release, redrive, replay), each of
//!   which the service records in its `admin_actions` table.
//!
//! The reads ([`audit`], [`trace`], [`replay`], [`lists`]) go to the databases over read-only
//! sessions ([`audit::Sources`]); every change goes through a service's admin API, which checks
//! the token and the reason and writes the audit row in the same transaction as the change. The
//! fleet's registry is the exception: its actions write the fleet database directly, each with
//! its audit row (`fleet_actions`) in the transaction of its effect.

pub mod admin;
pub mod audit;
pub mod fleet;
pub mod lists;
pub mod replay;
pub mod settings;
pub mod tables;
pub mod trace;

pub use outbox_proto as proto;
