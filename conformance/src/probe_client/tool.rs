//! The MCP server of `mcp-once serve`: one side-effecting tool whose answer follows the
//! scenario, every attempt, effect and answer written to the record.
//!
//! rmcp parses `tools/call` params without their unknown fields (`params.idempotencyKey`), so
//! the transports keep each call's raw params: over stdio by JSON-RPC id, over HTTP in an
//! [`HttpCall`] extension on the request, which also carries the handles that close its
//! response stream and tell a held call that the client went away.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CallToolResult, ErrorCode, Implementation, ListToolsResult,
    PaginatedRequestParams, ResultType, ServerCapabilities, ServerConfig, Tool,
};
use rmcp::service::RequestContext;
use rmcp::{ErrorData, RoleServer, ServerHandler};
use serde_json::{json, Value};
use tokio::sync::watch;

use crate::probe_client::record::{find_key, now_ms, Recorder};
use crate::probe_client::scenario::{Scenario, ServeOptions, TOOL};

/// The server's `serverInfo.name`.
pub const SERVER_NAME: &str = "mcp-once serve on rmcp";

/// One HTTP request's extension: where it came from and the handles on its response stream.
#[derive(Clone)]
pub(crate) struct HttpCall {
    /// The TCP connection's number in this process.
    pub conn: u64,
    /// Its `Mcp-Session-Id` header, if any.
    pub session: Option<String>,
    /// The raw JSON-RPC params of the POST's `tools/call`.
    pub params: Value,
    /// Set to true to close the response stream (the body then ends with an error).
    pub drop: Arc<watch::Sender<bool>>,
    /// Its sender lives in the response body: `changed()` fails once the body is gone.
    pub gone: watch::Receiver<()>,
}

/// What every session of one serve process shares.
pub(crate) struct Shared {
    pub opts: ServeOptions,
    pub record: Recorder,
    /// Counts the tool calls that arrived: a held call wakes when another one arrives.
    pub arrivals: watch::Sender<u64>,
    /// Set when stdin reaches EOF (the stdio client went away).
    pub stdin_closed: watch::Sender<bool>,
    /// Raw params of stdio `tools/call` requests by JSON-RPC id (compact JSON text).
    pub stdio_params: Mutex<HashMap<String, Value>>,
}

impl Shared {
    pub fn new(opts: ServeOptions, record: Recorder) -> Shared {
        Shared {
            opts,
            record,
            arrivals: watch::channel(0).0,
            stdin_closed: watch::channel(false).0,
            stdio_params: Mutex::new(HashMap::new()),
        }
    }
}

/// The rmcp service: a handle on [`Shared`].
#[derive(Clone)]
pub(crate) struct ProbeServer(pub Arc<Shared>);

fn tool() -> Tool {
    serde_json::from_value(json!({
        "name": TOOL,
        "description": "Charge an amount (a side effect; mcp-once serve records every call and answers as its fault scenario says).",
        "inputSchema": {"type": "object", "properties": {"amount": {"type": "number"}}},
        "annotations": {"readOnlyHint": false, "idempotentHint": false}
    }))
    .expect("static tool definition")
}

fn result(text: &str, is_error: bool) -> CallToolResult {
    let mut r: CallToolResult = serde_json::from_value(json!({
        "content": [{"type": "text", "text": text}],
        "isError": is_error
    }))
    .expect("static result");
    r.result_type = Some(ResultType::COMPLETE);
    r
}

impl ProbeServer {
    async fn call(&self, request: &CallToolRequestParams, ctx: &RequestContext<RoleServer>) -> Option<CallToolResult> {
        let shared = &*self.0;
        let id = serde_json::to_value(&ctx.id).unwrap_or(Value::Null);
        let http = ctx.extensions.get::<http::request::Parts>().and_then(|p| p.extensions.get::<HttpCall>()).cloned();
        let (conn, session, params) = match &http {
            Some(h) => (format!("http:{}", h.conn), h.session.clone(), h.params.clone()),
            None => {
                let raw = shared.stdio_params.lock().unwrap_or_else(|p| p.into_inner()).remove(&id.to_string());
                let params = raw.unwrap_or_else(|| json!({"name": request.name, "arguments": request.arguments}));
                (format!("stdio:{}", std::process::id()), None, params)
            }
        };
        let key = find_key(&params);
        let scenario = shared.opts.scenario;
        shared.arrivals.send_modify(|n| *n += 1);
        shared.record.write(
            "attempt",
            json!({"request_id": id, "conn": conn, "session": session, "scenario": scenario.as_str(),
                   "key": key.as_ref().map(|k| &k.1), "key_at": key.as_ref().map(|k| &k.0),
                   "arguments": params.get("arguments"), "meta": params.get("_meta")}),
        );
        shared.record.write("effect", json!({"request_id": id, "conn": conn}));
        let answer = |how: &str, extra: Value| {
            let mut fields = json!({"request_id": id, "conn": conn, "how": how});
            if let (Value::Object(f), Value::Object(e)) = (&mut fields, extra) {
                f.extend(e);
            }
            shared.record.write("answer", fields);
        };
        match scenario {
            Scenario::Ok => {
                answer("result", json!({}));
                Some(result("charged 42", false))
            }
            Scenario::IsError => {
                answer("is-error", json!({}));
                Some(result("mcp-once serve: the charge was made, then this isError result (scenario is-error)", true))
            }
            Scenario::Error => {
                answer("error", json!({}));
                None
            }
            Scenario::Timeout => {
                let started = now_ms();
                let woke = self.hold(ctx, http.as_ref(), true).await;
                answer("late-result", json!({"woke": woke, "held_ms": now_ms() - started}));
                Some(result("charged 42 (late)", false))
            }
            Scenario::Disconnect => {
                self.drop_connection(http.as_ref(), &answer);
                std::future::pending().await
            }
            Scenario::Never => {
                let started = now_ms();
                let woke = self.hold(ctx, http.as_ref(), false).await;
                if http.is_some() {
                    answer("none-stream-closed", json!({"woke": woke, "held_ms": now_ms() - started}));
                    if let Some(h) = &http {
                        h.drop.send_replace(true);
                    }
                } else {
                    answer("none", json!({"woke": woke, "held_ms": now_ms() - started}));
                }
                std::future::pending().await
            }
        }
    }

    /// HTTP: close this call's response stream; stdio: exit the process.
    fn drop_connection(&self, http: Option<&HttpCall>, answer: &dyn Fn(&str, Value)) {
        match http {
            Some(h) => {
                answer("stream-closed", json!({}));
                h.drop.send_replace(true);
            }
            None => {
                answer("exit", json!({}));
                std::process::exit(0);
            }
        }
    }

    /// Wait until the client cancels (when `on_cancel`), sends another call, goes away, or the
    /// hold limit passes; the reason, in a word.
    async fn hold(&self, ctx: &RequestContext<RoleServer>, http: Option<&HttpCall>, on_cancel: bool) -> &'static str {
        let shared = &*self.0;
        let mut arrivals = shared.arrivals.subscribe();
        arrivals.borrow_and_update();
        let mut stdin = shared.stdin_closed.subscribe();
        let mut gone = http.map(|h| h.gone.clone());
        let gone = async move {
            match gone.as_mut() {
                Some(g) => while g.changed().await.is_ok() {},
                None => std::future::pending::<()>().await,
            }
        };
        let cancelled = async {
            if on_cancel {
                ctx.ct.cancelled().await
            } else {
                std::future::pending::<()>().await
            }
        };
        tokio::select! {
            _ = cancelled => "cancelled",
            _ = arrivals.changed() => "sent-again",
            _ = gone => "disconnected",
            _ = stdin.wait_for(|c| *c) => "disconnected",
            _ = tokio::time::sleep(shared.opts.hold) => "hold-limit",
        }
    }
}

impl ServerHandler for ProbeServer {
    fn get_info(&self) -> ServerConfig {
        ServerConfig::new(ServerCapabilities::builder().enable_tools().build())
            .with_server_info(Implementation::new(SERVER_NAME, crate::fixture::RMCP_VERSION))
    }

    async fn list_tools(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, ErrorData> {
        Ok(ListToolsResult::with_all_items(vec![tool()]))
    }

    fn get_tool(&self, name: &str) -> Option<Tool> {
        (name == TOOL).then(tool)
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, ErrorData> {
        if request.name != TOOL {
            return Err(ErrorData::invalid_params(
                format!("unknown tool {:?} (this server has {TOOL})", request.name),
                None,
            ));
        }
        match self.call(&request, &context).await {
            Some(r) => Ok(CallToolResponse::from(r)),
            None => Err(ErrorData::new(
                ErrorCode(-32603),
                "mcp-once serve: the charge was made, then this error (scenario error)",
                None,
            )),
        }
    }
}
