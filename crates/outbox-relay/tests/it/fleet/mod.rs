//! The relay fleet: the registry's statements ([`registry`]), the fence in the outbox database
//! ([`fence`]), and instances publishing many databases ([`instances`]): add, drain, remove,
//! join, kill, a database going down.

mod fence;
mod instances;
mod registry;

use std::time::Duration;

use outbox_relay::fleet::registry::{By, NewDatabase, Registry};
use outbox_support::secret::SecretUrl;

/// A fresh fleet database with the registry's tables; dropped with the value, passing or failing
/// (the suite's check for leftovers counts a failed test's too).
pub struct FleetDb {
    pub url: String,
    pub registry: Registry,
}

impl FleetDb {
    pub async fn fresh() -> Self {
        outbox_testkit::init_tracing();
        let url = outbox_testkit::fresh_database_url("relay_fleet_registry");
        let pool = outbox_kit::db::connect(&url, 8)
            .await
            .expect("fleet database");
        let registry = Registry::new(pool);
        registry.migrate().await.expect("migrate");
        Self { url, registry }
    }
}

impl Drop for FleetDb {
    fn drop(&mut self) {
        outbox_testkit::drop_database_blocking(outbox_testkit::database_name(&self.url).to_owned());
    }
}

/// The operator of the tests' actions.
pub fn by() -> By {
    By {
        who: "test".into(),
        reason: "a test".into(),
    }
}

/// A database entry named `name` with source id `source_id`.
pub fn new_database(
    name: &str,
    source_id: i32,
    url: &str,
    table: &str,
    exchange: &str,
) -> NewDatabase {
    NewDatabase {
        name: name.into(),
        source_id,
        url: SecretUrl::new(url),
        table: table.into(),
        exchange: exchange.into(),
    }
}

/// Short, so the tests wait seconds.
pub const LEASE: Duration = Duration::from_secs(2);
