//! What every handler reads: the settings, the services, the read-only pools, the sessions,
//! the fleet, the live figures and the jobs.

use std::sync::Arc;

use outbox_ops::{admin::Admin, audit::Sources};

use crate::{auth::Sessions, config::Config, fleet::Fleet, jobs::Jobs, live::Live};

/// What every handler reads; clones share it.
#[derive(Debug, Clone)]
pub struct AppState(pub(crate) Arc<Inner>);

#[derive(Debug)]
pub struct Inner {
    pub cfg: Config,
    /// The services, called as the console (each action adds the signed-in user).
    pub admin: Admin,
    pub sources: Sources,
    /// The fleet database's registry (if configured) and pools of the fleet's databases.
    pub fleet: Fleet,
    pub sessions: Sessions,
    pub live: Live,
    pub jobs: Jobs,
}

impl std::ops::Deref for AppState {
    type Target = Inner;
    fn deref(&self) -> &Inner {
        &self.0
    }
}
