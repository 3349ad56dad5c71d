//! The observer's readings through a live session (more of [`Session`]'s methods): one reading
//! of the ledger, the command or the tool on the server, and a settled one (two in a row agree).

use crate::replay::evidence::Event;
use crate::replay::observer::{self, Source};
use crate::replay::session::Session;
use serde_json::json;
use tokio::time::Instant;

impl Session {
    /// Read the observer once.
    pub(crate) async fn read_observer(&mut self) -> Result<f64, String> {
        match self.opts.observer.source.clone() {
            Source::Ledger { path, filter } => observer::read_ledger(&path, filter.as_ref()).await,
            Source::Command { argv } => observer::read_command(&argv, self.opts.step_timeout).await,
            Source::Tool { name, args, extract } => {
                if self.at().conn.is_none() || self.at().exited.is_some() {
                    return Err("the tool observer needs the server running".into());
                }
                let params = self.with_meta(json!({"name": name, "arguments": args}));
                let deadline = Instant::now() + self.opts.step_timeout;
                let result = self
                    .request_until("tools/call", params, deadline)
                    .await
                    .map_err(|e| format!("observer tool `{name}`: {e}"))?;
                observer::extract(&result, &extract)
            }
        }
    }

    /// Read the observer until two readings in a row agree (at most eight reads).
    pub(crate) async fn read_stable(&mut self) -> Result<f64, String> {
        let mut last = self.read_observer().await?;
        let mut seen = vec![last];
        for _ in 0..7 {
            let now = self.read_observer().await?;
            if now == last {
                // Log a reading when it changes, not every poll.
                if self.last_logged != Some(now) {
                    self.last_logged = Some(now);
                    self.evidence.record(Event::Observe { reading: now, reads: seen.len() + 1 });
                }
                return Ok(now);
            }
            seen.push(now);
            last = now;
        }
        Err(format!("observer readings did not settle: {seen:?}"))
    }
}
