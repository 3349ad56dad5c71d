//! Serving one scenario: open the record, then serve stdio or HTTP until EOF or a signal.

use std::sync::Arc;

use serde_json::json;

use crate::probe_client::record::Recorder;
use crate::probe_client::scenario::{ServeOptions, Transport};
use crate::probe_client::tool::Shared;
use crate::probe_client::{http, stdio};

/// Serve until stdin reaches EOF (stdio) or SIGTERM/SIGINT arrives. For HTTP the line
/// `listening http://127.0.0.1:PORT/mcp` is printed on stderr once the socket is bound.
pub async fn run(opts: ServeOptions) -> anyhow::Result<()> {
    let record = Recorder::open(&opts.record)?;
    record.write(
        "start",
        json!({"transport": opts.transport.as_str(), "scenario": opts.scenario.as_str(), "hold_ms": opts.hold.as_millis() as u64}),
    );
    let shared = Arc::new(Shared::new(opts.clone(), record));
    let work = async {
        match opts.transport {
            Transport::Stdio => stdio::serve(shared.clone()).await,
            Transport::Http => {
                let (listener, url) = http::bind(opts.port).await?;
                eprintln!("listening {url}");
                http::serve(shared.clone(), listener).await
            }
        }
    };
    tokio::select! {
        result = work => result,
        _ = shutdown_signal() => {
            shared.record.write("end", json!({"why": "signal"}));
            Ok(())
        }
    }
}

/// [`run`] on a fresh Tokio runtime, shut down without waiting for held calls; exit soon after.
pub fn run_blocking(opts: ServeOptions) -> anyhow::Result<()> {
    let runtime = tokio::runtime::Builder::new_multi_thread().enable_all().build()?;
    let result = runtime.block_on(run(opts));
    runtime.shutdown_background();
    result
}

/// An HTTP server for one scenario on its own runtime in this process (what `probe-client`
/// runs): its URL, and a handle that stops it when dropped.
pub struct InProcess {
    /// `http://127.0.0.1:PORT/mcp`.
    pub url: String,
    runtime: Option<tokio::runtime::Runtime>,
}

impl InProcess {
    /// Bind a free port and serve `opts` (its transport is taken as HTTP).
    pub fn start(opts: ServeOptions) -> anyhow::Result<InProcess> {
        let runtime = tokio::runtime::Builder::new_multi_thread().worker_threads(2).enable_all().build()?;
        let record = Recorder::open(&opts.record)?;
        record.write(
            "start",
            json!({"transport": "http", "scenario": opts.scenario.as_str(), "hold_ms": opts.hold.as_millis() as u64}),
        );
        let (listener, url) = runtime.block_on(http::bind(0))?;
        let shared = Arc::new(Shared::new(opts, record));
        runtime.spawn(http::serve(shared, listener));
        Ok(InProcess { url, runtime: Some(runtime) })
    }
}

impl Drop for InProcess {
    fn drop(&mut self) {
        if let Some(rt) = self.runtime.take() {
            rt.shutdown_background();
        }
    }
}

async fn shutdown_signal() -> anyhow::Result<()> {
    use tokio::signal::unix::{signal, SignalKind};
    let mut term = signal(SignalKind::terminate())?;
    let mut int = signal(SignalKind::interrupt())?;
    tokio::select! {
        _ = term.recv() => {}
        _ = int.recv() => {}
    }
    Ok(())
}
