//! deploy/compose.yaml checked statically (no Docker engine needed): it parses, every environment
//! variable it sets is a setting the binary reads and accepts, and ports, addresses, health checks
//! and dependencies agree with each other. Secure by default: no password in it or in a file it
//! mounts, every variable it uses listed in deploy/.env.example (the secrets required with
//! `${VAR:?…}`), every gRPC port behind TLS with tokens and every health check trusting the CA.
//!
//! Layout: [`file`] reads what is checked; one module a concern checks it.

mod binaries;
mod file;
mod fleet;
mod image;
mod observability;
mod ports;
mod secrets;
