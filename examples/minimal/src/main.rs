//! Runs the getting-started against `DATABASE_URL` (default: the local server's database
//! `minimal_example`, `createdb -h 127.0.0.1 -U postgres minimal_example`) and `AMQP_URL`.

#[tokio::main]
async fn main() -> Result<(), minimal::Error> {
    let env = |name: &str, default: &str| std::env::var(name).unwrap_or_else(|_| default.into());
    let database = "postgres://postgres@127.0.0.1:5432/minimal_example";
    let setup = minimal::Setup {
        database_url: env("DATABASE_URL", database),
        amqp_url: env("AMQP_URL", "amqp://guest:guest@127.0.0.1:5672/%2f"),
        exchange: "shipments".into(),
        queue: "shipment_log".into(),
    };
    for (shipment, seq, event) in minimal::run(&setup).await? {
        println!("applied shipment={shipment} seq={seq} event={event}");
    }
    Ok(())
}
