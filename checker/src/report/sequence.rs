//! A trace as a sequence diagram, typed: client, transport and server, one arrow or note per
//! step. The Markdown reports write it as Mermaid ([`mermaid`]); the HTML report draws it as
//! SVG (`as_html.rs`).

use mcp_once_model::search::Counterexample;
use mcp_once_model::state::ServerSide;
use std::fmt::Write;

/// A participant of the diagram.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Lane {
    /// The MCP client.
    Client,
    /// The transport between them (stdio pipes or HTTP).
    Transport,
    /// The MCP server.
    Server,
}

impl Lane {
    /// Every lane, left to right.
    pub const ALL: [Lane; 3] = [Lane::Client, Lane::Transport, Lane::Server];

    /// Its name in the diagram.
    pub fn title(self) -> &'static str {
        match self {
            Lane::Client => "Client",
            Lane::Transport => "Transport",
            Lane::Server => "Server",
        }
    }

    /// Its Mermaid participant alias.
    fn alias(self) -> char {
        match self {
            Lane::Client => 'C',
            Lane::Transport => 'T',
            Lane::Server => 'S',
        }
    }
}

/// One step of the diagram: a message from one lane to another, or a note over one lane.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SequenceStep {
    /// Where the message starts, or the lane the note is over.
    pub from: Lane,
    /// Where the message ends; `None` for a note.
    pub to: Option<Lane>,
    /// A message that reports a failure or a loss (drawn dashed).
    pub dashed: bool,
    /// What happens, without the step's number.
    pub label: String,
}

fn arrow(from: Lane, to: Lane, label: String) -> SequenceStep {
    SequenceStep { from, to: Some(to), dashed: false, label }
}

fn dashed(from: Lane, to: Lane, label: String) -> SequenceStep {
    SequenceStep { from, to: Some(to), dashed: true, label }
}

fn note(over: Lane, label: String) -> SequenceStep {
    SequenceStep { from: over, to: None, dashed: false, label }
}

/// The steps of `cex`'s diagram, one per action, in order.
pub fn sequence(cex: &Counterexample) -> Vec<SequenceStep> {
    use mcp_once_model::Action as A;
    let mut out = Vec::with_capacity(cex.actions.len());
    for (i, a) in cex.actions.iter().enumerate() {
        let after = &cex.states[i + 1];
        let id = |call: u8, attempt: u8| after.attempts[call as usize][attempt as usize].id;
        // Which server instance, where the run has two.
        let on = |instance: u8| {
            if after.view.instances > 1 {
                format!(" (instance {instance})")
            } else {
                String::new()
            }
        };
        out.push(match *a {
            A::ClientCall { call } => {
                arrow(Lane::Client, Lane::Transport, format!("tools/call (call {call}, id {})", id(call, 0)))
            }
            A::ClientRetry { call, attempt } => arrow(
                Lane::Client,
                Lane::Transport,
                format!("tools/call, retry (call {call}, id {})", id(call, attempt)),
            ),
            A::FrameworkRetry { call, attempt } => arrow(
                Lane::Client,
                Lane::Transport,
                format!("tools/call, step re-run (call {call}, id {})", id(call, attempt)),
            ),
            A::ClientTimeout { call, attempt } => note(Lane::Client, format!("timeout on id {}", id(call, attempt))),
            A::ClientCancel { call, attempt } => {
                arrow(Lane::Client, Lane::Transport, format!("cancel id {}", id(call, attempt)))
            }
            A::ClientReceive { call, attempt } => {
                arrow(Lane::Transport, Lane::Client, format!("result for id {}", id(call, attempt)))
            }
            A::ClientSeesDisconnect { call, attempt } => {
                dashed(Lane::Transport, Lane::Client, format!("connection closed (id {})", id(call, attempt)))
            }
            A::ClientQueryOutcome { call } => arrow(Lane::Client, Lane::Server, format!("outcome of call {call}?")),
            A::StepFails { call } => note(Lane::Client, format!("step around call {call} fails")),
            A::StreamBreak { call, attempt } => {
                dashed(Lane::Transport, Lane::Client, format!("stream of id {} breaks", id(call, attempt)))
            }
            A::ServerReceive { call, attempt, instance } => {
                arrow(Lane::Transport, Lane::Server, format!("deliver id {}{}", id(call, attempt), on(instance)))
            }
            A::ServerReceiveCancel { call, attempt } => {
                arrow(Lane::Transport, Lane::Server, format!("deliver cancel of id {}", id(call, attempt)))
            }
            A::ServerCommit { call, attempt } => note(
                Lane::Server,
                format!("EFFECT id {} (call {call}: {} in ledger)", id(call, attempt), after.ledger[call as usize]),
            ),
            A::ServerStoreKey { call, attempt } => {
                note(Lane::Server, format!("store key record of id {}", id(call, attempt)))
            }
            A::ServerRespond { call, attempt } => {
                let what = match after.attempts[call as usize][attempt as usize].server {
                    ServerSide::RespondedInput => "input-required result",
                    // The single-use handler refusing a consumed requestState.
                    ServerSide::RespondedError => "error (requestState already consumed)",
                    _ => "result",
                };
                arrow(Lane::Server, Lane::Transport, format!("{what} for id {}", id(call, attempt)))
            }
            A::ClientContinue { call, attempt } => arrow(
                Lane::Client,
                Lane::Transport,
                format!("tools/call with inputResponses (call {call}, id {})", id(call, attempt)),
            ),
            A::SessionTerminated {} => {
                note(Lane::Server, "session terminated (404 for the old session; ids start over)".to_string())
            }
            A::ServerCrash { instance } => note(Lane::Server, format!("SIGKILL{}", on(instance))),
            A::ServerRestart { instance } => note(Lane::Server, format!("restart{}", on(instance))),
            A::KeyExpires { call, key } => note(Lane::Server, format!("key record k{call}.{} expires", key - 1)),
        });
    }
    out
}

/// A label made safe for a Mermaid message (`;` and `#` end or escape one there).
fn mermaid_escape(s: &str) -> String {
    s.replace(';', ",").replace('#', "no. ").replace('\n', " ")
}

/// A Mermaid `sequenceDiagram` of a trace: client, transport and server, one arrow or note per step.
pub fn mermaid(cex: &Counterexample) -> String {
    let mut out = String::from("sequenceDiagram\n");
    for lane in Lane::ALL {
        let _ = writeln!(out, "    participant {} as {}", lane.alias(), lane.title());
    }
    for (i, step) in sequence(cex).iter().enumerate() {
        let n = i + 1;
        let line = match (step.to, step.dashed) {
            (None, _) => format!("Note over {}: {n}. {}", step.from.alias(), step.label),
            (Some(to), false) => format!("{}->>{}: {n}. {}", step.from.alias(), to.alias(), step.label),
            (Some(to), true) => format!("{}-->>{}: {n}. {}", step.from.alias(), to.alias(), step.label),
        };
        let _ = writeln!(out, "    {}", mermaid_escape(&line));
    }
    out
}
