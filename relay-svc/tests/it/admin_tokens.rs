//! The admin service under `AUTH_TOKENS_FILE` and `ADMIN_TOKENS_FILE`: every call needs a token;
//! the admin service's reads take an ordinary or an admin token, its mutations only an admin
//! token (of the file or ADMIN_TOKEN); an admin token opens nothing outside the admin service.

use outbox_kit::admin::AdminToken;
use outbox_proto::relay::{
    admin::v1::{
        ListQuarantinedRequest, QuarantineSelector, RequeueQuarantinedRequest,
        relay_admin_client::RelayAdminClient,
    },
    v1::GetStatusRequest,
};
use tonic::{Code, Request, metadata::MetadataValue};

use crate::common::{Orders, Relay, relay_config};

const READER: &str = "reader-0123456789abcdef";
const OPERATOR: &str = "operator-0123456789abcdef";
const LEGACY: &str = "legacy-admin-token-0123456789";

fn with_token<T>(msg: T, token: Option<&str>) -> Request<T> {
    let mut r = Request::new(msg);
    if let Some(t) = token {
        r.metadata_mut().insert(
            "authorization",
            MetadataValue::try_from(format!("Bearer {t}")).unwrap(),
        );
    }
    r
}

fn code<T>(r: Result<T, tonic::Status>) -> Code {
    r.map(|_| Code::Ok).unwrap_or_else(|s| s.code())
}

#[tokio::test]
async fn admin_tokens_of_the_file_and_admin_token_guard_mutations() {
    let orders = Orders::start().await;
    let dir = std::env::temp_dir().join(outbox_testkit::unique("relay_tokens"));
    std::fs::create_dir_all(&dir).unwrap();
    let auth = dir.join("auth");
    let admin = dir.join("admin");
    std::fs::write(&auth, format!("reader {READER}\n")).unwrap();
    std::fs::write(&admin, format!("# operators\nops {OPERATOR}\n")).unwrap();
    let mut cfg = relay_config(
        &orders.database_url,
        &outbox_testkit::amqp_url(),
        &outbox_testkit::unique("relay_tokens_ex"),
    );
    cfg.server.grpc_security.auth_tokens_file = Some(auth);
    cfg.server.admin.admin_tokens_file = Some(admin);
    cfg.server.admin.admin_token = AdminToken::new(Some(LEGACY.into()));
    let mut relay = Relay::start(cfg).await;
    let mut c = RelayAdminClient::connect(format!("http://{}", relay.grpc_addr))
        .await
        .unwrap();
    let list = || ListQuarantinedRequest {
        limit: 10,
        order_id: 0,
    };
    let requeue = || RequeueQuarantinedRequest {
        select: Some(QuarantineSelector {
            seqs: vec![1],
            order_id: 0,
        }),
        reason: "test".into(),
        shard: 0,
    };

    // Reads: any token of either list.
    assert_eq!(
        code(c.list_quarantined(with_token(list(), None)).await),
        Code::Unauthenticated
    );
    assert_eq!(
        code(c.list_quarantined(with_token(list(), Some(READER))).await),
        Code::Ok
    );
    assert_eq!(
        code(c.list_quarantined(with_token(list(), Some(OPERATOR))).await),
        Code::Ok
    );
    assert_eq!(
        code(c.list_quarantined(with_token(list(), Some(LEGACY))).await),
        Code::Ok
    );

    // Mutations: admin tokens only (the row does not exist: anything but an auth error means
    // the call got through).
    assert_eq!(
        code(
            c.requeue_quarantined(with_token(requeue(), Some(READER)))
                .await
        ),
        Code::Unauthenticated
    );
    for token in [OPERATOR, LEGACY] {
        let got = code(
            c.requeue_quarantined(with_token(requeue(), Some(token)))
                .await,
        );
        assert!(
            !matches!(got, Code::Unauthenticated | Code::PermissionDenied),
            "{token}: {got:?}"
        );
    }

    // An admin token is no token for the relay's own service.
    let mut service = relay.client.clone();
    let got = service
        .get_status(with_token(GetStatusRequest {}, Some(OPERATOR)))
        .await;
    assert_eq!(code(got), Code::Unauthenticated);
    assert_eq!(
        code(
            service
                .get_status(with_token(GetStatusRequest {}, Some(READER)))
                .await
        ),
        Code::Ok
    );
    relay.stop().await.unwrap();
    std::fs::remove_dir_all(&dir).unwrap();
}
