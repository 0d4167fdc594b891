//! Bulk work that runs after the request: a redrive of many dead letters and a replay, both
//! rate-limited, each a job whose progress its page shows (`/jobs/<id>`, refreshed by htmx).

use std::{
    collections::HashMap,
    sync::{
        Mutex,
        atomic::{AtomicU64, Ordering},
    },
};

use chrono::{DateTime, Utc};

/// One job's state.
#[derive(Debug, Clone)]
pub struct Job {
    pub id: u64,
    /// What it does, in words ("redrive 120 dead letters of shard 0").
    pub what: String,
    /// Who started it.
    pub user: String,
    pub started: DateTime<Utc>,
    /// How many it will handle (as previewed).
    pub target: usize,
    /// What it handled so far, `shard:seq`.
    pub done: Vec<String>,
    pub finished: Option<DateTime<Utc>>,
    /// Why it stopped early.
    pub error: Option<String>,
}

/// The jobs since start-up.
#[derive(Debug, Default)]
pub struct Jobs {
    next: AtomicU64,
    by_id: Mutex<HashMap<u64, Job>>,
}

impl Jobs {
    /// Registers a job and returns its id.
    pub fn start(&self, what: String, user: &str, target: usize) -> u64 {
        let id = self.next.fetch_add(1, Ordering::Relaxed) + 1;
        let job = Job {
            id,
            what,
            user: user.to_owned(),
            started: Utc::now(),
            target,
            done: Vec::new(),
            finished: None,
            error: None,
        };
        self.lock().insert(id, job);
        id
    }

    /// Changes job `id`.
    pub fn update(&self, id: u64, f: impl FnOnce(&mut Job)) {
        if let Some(job) = self.lock().get_mut(&id) {
            f(job);
        }
    }

    /// Job `id` as it is now.
    pub fn get(&self, id: u64) -> Option<Job> {
        self.lock().get(&id).cloned()
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, HashMap<u64, Job>> {
        self.by_id.lock().unwrap_or_else(|e| e.into_inner())
    }
}
