//! A TCP path a test can freeze and thaw (see [`StallProxy`]).

/// A TCP relay that a test can *stall*: connections stay open but no byte is forwarded either
/// way, as a broker applying flow control (it stops reading publishers' sockets) or a stalled
/// network looks to the client, and as a frozen process (SIGSTOP) looks to its peers. Unlike
/// kit's `Proxy`, nothing is closed and a thawed connection carries on.
pub struct StallProxy {
    addr: std::net::SocketAddr,
    stalled: tokio::sync::watch::Sender<bool>,
}

impl StallProxy {
    pub async fn start(target: &str) -> Self {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
            .await
            .expect("bind");
        let addr = listener.local_addr().expect("addr");
        let (stalled, _) = tokio::sync::watch::channel(false);
        let tx = stalled.clone();
        let target = target.to_owned();
        tokio::spawn(async move {
            while let Ok((client, _)) = listener.accept().await {
                let Ok(server) = tokio::net::TcpStream::connect(&target).await else {
                    continue;
                };
                let (cr, cw) = client.into_split();
                let (sr, sw) = server.into_split();
                tokio::spawn(pump(cr, sw, tx.subscribe()));
                tokio::spawn(pump(sr, cw, tx.subscribe()));
            }
        });
        Self { addr, stalled }
    }

    pub fn addr(&self) -> std::net::SocketAddr {
        self.addr
    }

    pub fn stall(&self) {
        self.stalled.send_replace(true);
    }

    pub fn resume(&self) {
        self.stalled.send_replace(false);
    }
}

async fn pump(
    mut from: tokio::net::tcp::OwnedReadHalf,
    mut to: tokio::net::tcp::OwnedWriteHalf,
    mut stalled: tokio::sync::watch::Receiver<bool>,
) {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    let mut buf = vec![0u8; 16 * 1024];
    loop {
        let n = match from.read(&mut buf).await {
            Ok(0) | Err(_) => return,
            Ok(n) => n,
        };
        // While stalled, hold this chunk and read nothing more: the sender's buffers fill up.
        if stalled.wait_for(|s| !*s).await.is_err() {
            return;
        }
        if to.write_all(&buf[..n]).await.is_err() {
            return;
        }
    }
}
