//! The stricter mode, `tools: medin`: the CLI's own tools are turned off and medin's tools
//! are offered to it through an MCP server, so every action takes medin's own path — medin
//! runs it (guard → sandbox → validate → log), not the CLI.
//!
//! The MCP server is medin's, on the host side ([`McpServer`], the official Rust SDK, `rmcp`):
//! the CLI starts a relay as its stdio MCP server, a bash script that pipes its stdin and
//! stdout to `127.0.0.1:PORT` (inside the attempt's network namespace under `strict`, bound
//! there but served by the harness like the hook channel). Each `tools/call` becomes a tool
//! call of the episode ([`McpCall`] → `AgentEvent::Call`), and its answer is the receipt, as
//! JSON text (an error result when the receipt is one). The tools offered are the task's, as
//! its policy allows them (the brief's list), under their own names (`bash`, `write_file`, …;
//! Claude Code shows them as `mcp__medin__bash`).

use std::net::TcpListener;
use std::sync::mpsc::Sender;
use std::sync::Arc;
use std::thread::JoinHandle;

use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CallToolResult, ContentBlock, ListToolsResult, PaginatedRequestParams,
    ServerCapabilities, ServerConfig, Tool,
};
use rmcp::service::{RequestContext, RoleServer};
use rmcp::{ErrorData, ServerHandler, ServiceExt};
use serde_json::Value;
use tokio::sync::oneshot;

/// The name of medin's MCP server, as the CLIs show its tools (`mcp__medin__bash`).
pub const SERVER_NAME: &str = "medin";

/// One `tools/call`, waiting for medin's answer.
#[derive(Debug)]
pub struct McpCall {
    pub tool: String,
    pub input: Value,
    pub answer: oneshot::Sender<McpAnswer>,
}

/// What a call answers: the receipt as text, and whether it is an error.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct McpAnswer {
    pub error: bool,
    pub text: String,
}

/// medin's tools as an MCP server's.
#[derive(Clone)]
struct MedinTools {
    tools: Arc<Vec<Tool>>,
    calls: Sender<McpCall>,
}

impl ServerHandler for MedinTools {
    fn get_info(&self) -> ServerConfig {
        ServerConfig::new(ServerCapabilities::builder().enable_tools().build())
    }

    async fn list_tools(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, ErrorData> {
        Ok(ListToolsResult::with_all_items(self.tools.as_ref().clone()))
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, ErrorData> {
        let (tx, rx) = oneshot::channel();
        let call = McpCall {
            tool: request.name.to_string(),
            input: Value::Object(request.arguments.unwrap_or_default()),
            answer: tx,
        };
        let answer = if self.calls.send(call).is_err() {
            None
        } else {
            rx.await.ok()
        };
        let answer = answer.unwrap_or(McpAnswer {
            error: true,
            text: "medin: the attempt is over; the call did not run".into(),
        });
        let content = vec![ContentBlock::text(answer.text)];
        Ok(if answer.error {
            CallToolResult::error(content)
        } else {
            CallToolResult::success(content)
        }
        .into())
    }
}

/// The MCP server of one attempt: serves every connection of the relay until dropped.
pub struct McpServer {
    port: u16,
    stop: Option<oneshot::Sender<()>>,
    thread: Option<JoinHandle<()>>,
}

impl std::fmt::Debug for McpServer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("McpServer")
            .field("port", &self.port)
            .finish_non_exhaustive()
    }
}

/// The MCP tool of one entry of a brief's tool list (`{name, description, input_schema}`).
fn tool_of(entry: &Value) -> Option<Tool> {
    let name = entry.get("name")?.as_str()?.to_string();
    let description = entry
        .get("description")
        .and_then(Value::as_str)
        .unwrap_or_default()
        .to_string();
    let schema = match entry.get("input_schema") {
        Some(Value::Object(schema)) => schema.clone(),
        _ => serde_json::Map::new(),
    };
    Some(Tool::new(name, description, Arc::new(schema)))
}

impl McpServer {
    /// Serves `tools` (the brief's list) on `listener`, sending every call to `calls`.
    pub fn start(listener: TcpListener, tools: &[Value], calls: Sender<McpCall>) -> std::io::Result<McpServer> {
        let port = listener.local_addr()?.port();
        listener.set_nonblocking(true)?;
        let handler = MedinTools {
            tools: Arc::new(tools.iter().filter_map(tool_of).collect()),
            calls,
        };
        let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build()?;
        let (stop_tx, mut stop_rx) = oneshot::channel::<()>();
        let thread = std::thread::Builder::new().name("medin-mcp".into()).spawn(move || {
            runtime.block_on(async move {
                let Ok(listener) = tokio::net::TcpListener::from_std(listener) else {
                    return;
                };
                loop {
                    tokio::select! {
                        _ = &mut stop_rx => break,
                        accepted = listener.accept() => {
                            let Ok((stream, _)) = accepted else { continue };
                            let handler = handler.clone();
                            tokio::spawn(async move {
                                if let Ok(running) = handler.serve(stream).await {
                                    let _ = running.waiting().await;
                                }
                            });
                        }
                    }
                }
            });
            // Dropping the runtime ends every session it still serves.
            drop(runtime);
        })?;
        Ok(McpServer {
            port,
            stop: Some(stop_tx),
            thread: Some(thread),
        })
    }

    pub fn port(&self) -> u16 {
        self.port
    }
}

impl Drop for McpServer {
    fn drop(&mut self) {
        if let Some(stop) = self.stop.take() {
            let _ = stop.send(());
        }
        if let Some(thread) = self.thread.take() {
            let _ = thread.join();
        }
    }
}

/// The relay the CLI starts as its stdio MCP server: its stdin and stdout, piped to medin.
pub fn relay_script(port: u16) -> String {
    format!(
        r#"#!/bin/bash
# medin's MCP relay: the CLI's MCP server is medin's, reached through this pipe.
exec 3<>/dev/tcp/127.0.0.1/{port} || {{ echo "medin mcp: cannot reach medin" >&2; exit 1; }}
cat <&3 &
exec cat >&3
"#
    )
}
