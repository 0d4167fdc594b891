//! Every path of the console, once: the router mounts them, the navigation links them, every
//! form posts to them and every write's form token is derived from them. A path written as a
//! string anywhere else is a path the router may not serve.

use std::fmt;

/// A page, a write, an asset or a probe of the console.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Route {
    Overview,
    Live,
    SignIn,
    SignOut,
    Where,
    Quarantine,
    QuarantinePreview,
    QuarantineRequeue,
    QuarantineDrop,
    Held,
    HeldPreview,
    HeldRelease,
    DeadLetters,
    DeadLettersPreview,
    DeadLettersRedrive,
    Audit,
    /// The relay fleet's registry: its databases, and the forms that change it.
    Fleet,
    FleetAdd,
    FleetDrain,
    FleetRemove,
    /// The replay: its dry run (GET) and the replay itself (POST).
    Replay,
    /// A job's progress; the router's pattern (see [`Route::job`] for one job's path).
    Job,
    Htmx,
    ConsoleJs,
    Health,
}

impl Route {
    /// The path, as the router mounts it.
    pub const fn as_str(self) -> &'static str {
        match self {
            Route::Overview => "/",
            Route::Live => "/live",
            Route::SignIn => "/sign-in",
            Route::SignOut => "/sign-out",
            Route::Where => "/where",
            Route::Quarantine => "/quarantine",
            Route::QuarantinePreview => "/quarantine/preview",
            Route::QuarantineRequeue => "/quarantine/requeue",
            Route::QuarantineDrop => "/quarantine/drop",
            Route::Held => "/held",
            Route::HeldPreview => "/held/preview",
            Route::HeldRelease => "/held/release",
            Route::DeadLetters => "/dead-letters",
            Route::DeadLettersPreview => "/dead-letters/preview",
            Route::DeadLettersRedrive => "/dead-letters/redrive",
            Route::Audit => "/audit",
            Route::Fleet => "/fleet",
            Route::FleetAdd => "/fleet/add",
            Route::FleetDrain => "/fleet/drain",
            Route::FleetRemove => "/fleet/remove",
            Route::Replay => "/replay",
            Route::Job => "/jobs/{id}",
            Route::Htmx => "/assets/htmx.min.js",
            Route::ConsoleJs => "/assets/console.js",
            Route::Health => "/healthz",
        }
    }

    /// The path of job `id`.
    pub fn job(id: u64) -> String {
        format!("/jobs/{id}")
    }

    /// The path with a query string built from `pairs` (values encoded).
    pub fn with<K: AsRef<str>, V: AsRef<str>>(self, pairs: &[(K, V)]) -> String {
        let mut q = url::form_urlencoded::Serializer::new(String::new());
        for (k, v) in pairs {
            q.append_pair(k.as_ref(), v.as_ref());
        }
        format!("{}?{}", self.as_str(), q.finish())
    }
}

impl AsRef<str> for Route {
    fn as_ref(&self) -> &str {
        self.as_str()
    }
}

impl fmt::Display for Route {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl maud::Render for Route {
    fn render_to(&self, buffer: &mut String) {
        buffer.push_str(self.as_str());
    }
}

/// The navigation: the pages a signed-in user moves between, with their labels.
pub const NAV: &[(Route, &str)] = &[
    (Route::Overview, "Overview"),
    (Route::Where, "Where is this event"),
    (Route::Quarantine, "Quarantine"),
    (Route::Held, "Held chains"),
    (Route::DeadLetters, "Dead letters"),
    (Route::Audit, "Audit and replay"),
    (Route::Fleet, "Relay fleet"),
];
