//! Streamable HTTP: rmcp's `StreamableHttpService` behind a small hyper HTTP/1.1 server on
//! 127.0.0.1 (as the fixture serves it). Each POST body is recorded and, for a tool call,
//! handed to the tool with the handles of its response stream ([`HttpCall`]): the stream's
//! frames are recorded as they go out, it ends with an error (hyper closes the connection)
//! when the tool drops it, and the tool learns when it is gone.

use std::convert::Infallible;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

use bytes::Bytes;
use futures::StreamExt;
use http::{Method, Request, Response, StatusCode};
use http_body_util::combinators::BoxBody;
use http_body_util::{BodyExt, BodyStream, Full, Limited, StreamBody};
use hyper::body::{Frame, Incoming};
use hyper_util::rt::TokioIo;
use rmcp::transport::streamable_http_server::session::local::LocalSessionManager;
use rmcp::transport::{StreamableHttpServerConfig, StreamableHttpService};
use serde_json::{json, Value};
use tokio::net::TcpListener;
use tokio::sync::watch;

use crate::probe_client::stdio::note_incoming;
use crate::probe_client::tool::{HttpCall, ProbeServer, Shared};

const MAX_BODY: usize = 4 << 20;

type Service = StreamableHttpService<ProbeServer, LocalSessionManager>;
type HttpResponse = Response<BoxBody<Bytes, std::io::Error>>;

/// Bind `127.0.0.1:port` (0: any free port); the listener and its URL.
pub(crate) async fn bind(port: u16) -> anyhow::Result<(TcpListener, String)> {
    let listener = TcpListener::bind(("127.0.0.1", port))
        .await
        .map_err(|e| anyhow::anyhow!("cannot listen on 127.0.0.1:{port}: {e}"))?;
    let port = listener.local_addr()?.port();
    Ok((listener, format!("http://127.0.0.1:{port}/mcp")))
}

/// Serve Streamable HTTP at `/mcp` on a bound listener, forever.
pub(crate) async fn serve(shared: Arc<Shared>, listener: TcpListener) -> anyhow::Result<()> {
    let port = listener.local_addr()?.port();
    let config = StreamableHttpServerConfig::default()
        .with_allowed_hosts([format!("127.0.0.1:{port}"), format!("localhost:{port}")])
        .with_allowed_origins([format!("http://127.0.0.1:{port}"), format!("http://localhost:{port}")]);
    let server = shared.clone();
    let service: Service = StreamableHttpService::new(
        move || Ok(ProbeServer(server.clone())),
        Arc::new(LocalSessionManager::default()),
        config,
    );
    let connections = Arc::new(AtomicU64::new(0));
    loop {
        let Ok((stream, _)) = listener.accept().await else { continue };
        let conn = connections.fetch_add(1, Ordering::Relaxed) + 1;
        shared.record.write("connection", json!({"conn": format!("http:{conn}")}));
        let (service, shared) = (service.clone(), shared.clone());
        tokio::spawn(async move {
            let handler = hyper::service::service_fn(move |req| handle(service.clone(), shared.clone(), conn, req));
            let _ = hyper::server::conn::http1::Builder::new().serve_connection(TokioIo::new(stream), handler).await;
        });
    }
}

fn plain(status: StatusCode, text: &'static str) -> HttpResponse {
    let body = Full::new(Bytes::from_static(text.as_bytes())).map_err(|never: Infallible| match never {});
    Response::builder().status(status).body(body.boxed()).expect("response")
}

async fn handle(
    service: Service,
    shared: Arc<Shared>,
    conn: u64,
    req: Request<Incoming>,
) -> Result<HttpResponse, Infallible> {
    if req.uri().path() != "/mcp" {
        return Ok(plain(StatusCode::NOT_FOUND, "Not Found"));
    }
    let (mut parts, body) = req.into_parts();
    let bytes = match Limited::new(body, MAX_BODY).collect().await {
        Ok(collected) => collected.to_bytes(),
        Err(_) => return Ok(plain(StatusCode::PAYLOAD_TOO_LARGE, "Payload Too Large")),
    };
    let session = parts.headers.get("mcp-session-id").and_then(|v| v.to_str().ok()).map(str::to_string);
    let label = format!("http:{conn}");
    let mut handles = None;
    if parts.method == Method::POST {
        let message: Value = serde_json::from_slice(&bytes).unwrap_or_else(|_| json!(String::from_utf8_lossy(&bytes)));
        note_incoming(&shared, &message, &label, false);
        shared.record.write("frame", json!({"dir": "in", "conn": label, "session": session, "message": message}));
        if let Some(params) = tool_call_params(&message) {
            let (drop_tx, drop_rx) = watch::channel(false);
            let (gone_tx, gone_rx) = watch::channel(());
            parts.extensions.insert(HttpCall {
                conn,
                session: session.clone(),
                params: params.clone(),
                drop: Arc::new(drop_tx),
                gone: gone_rx,
            });
            handles = Some((drop_rx, gone_tx));
        }
    } else {
        shared
            .record
            .write("frame", json!({"dir": "in", "conn": label, "session": session, "method": parts.method.as_str()}));
    }
    let response = service.handle(Request::from_parts(parts, Full::new(bytes))).await;
    let (parts, body) = response.into_parts();
    let record = shared.clone();
    let frames = BodyStream::new(body).map(move |frame| {
        let frame = match frame {
            Ok(frame) => frame,
            Err(never) => match never {},
        };
        if let Some(data) = frame.data_ref() {
            let text = String::from_utf8_lossy(data).to_string();
            record.record.write("frame", json!({"dir": "out", "conn": format!("http:{conn}"), "text": text}));
        }
        Ok::<Frame<Bytes>, std::io::Error>(frame)
    });
    let body = match handles {
        None => BodyExt::boxed(StreamBody::new(frames)),
        Some((drop_rx, gone_tx)) => {
            let mut wait = drop_rx.clone();
            let dropped = async move {
                // The sender goes with the handler's context: only `true` ends the stream.
                if wait.wait_for(|d| *d).await.is_err() {
                    std::future::pending::<()>().await;
                }
            };
            let ended = futures::stream::once(async move {
                drop(gone_tx);
                let dropped = *drop_rx.borrow();
                dropped.then(|| Err(std::io::Error::other("mcp-once serve: response stream dropped (scenario)")))
            })
            .filter_map(futures::future::ready);
            BodyExt::boxed(StreamBody::new(frames.take_until(Box::pin(dropped)).chain(ended)))
        }
    };
    Ok(Response::from_parts(parts, body))
}

/// The params of a `tools/call` request in one POST body (a single message).
fn tool_call_params(message: &Value) -> Option<&Value> {
    (message.get("method")? == "tools/call" && message.get("id").is_some()).then(|| message.get("params"))?
}
