//! Several server instances in one session (a trace of the model's `--instances 2`): each its
//! own process and connection, behind the runner acting as the load balancer. One instance is
//! *selected* at a time and is what every step of [`Session`] acts on (its process, its
//! connection, its stderr); the others are parked here with their own. Connection generations
//! are numbered across instances, so a response is matched to its request whichever instance
//! holds it. (The parked instance's fields, [`Parked`], are declared with the session's.)

use crate::replay::session::{Parked, Session};

impl Session {
    /// How many server instances the session has.
    pub fn instances(&self) -> usize {
        self.parked.len()
    }

    /// The selected instance.
    pub fn active(&self) -> u8 {
        self.active
    }

    /// Select instance `instance`: from now on the session's steps act on its process and
    /// connection.
    pub(crate) fn select(&mut self, instance: u8) -> Result<(), String> {
        if instance == self.active {
            return Ok(());
        }
        let slot = self
            .parked
            .get_mut(usize::from(instance))
            .and_then(Option::take)
            .ok_or_else(|| format!("the runner has no server instance {instance}"))?;
        let out = Parked {
            target: std::mem::replace(&mut self.opts.target, slot.target),
            server: std::mem::replace(&mut self.server, slot.server),
            server_stdin: std::mem::replace(&mut self.server_stdin, slot.server_stdin),
            conn: std::mem::replace(&mut self.conn, slot.conn),
            generation: std::mem::replace(&mut self.generation, slot.generation),
            exited: std::mem::replace(&mut self.exited, slot.exited),
            server_pipes: std::mem::replace(&mut self.server_pipes, slot.server_pipes),
            server_log: std::mem::replace(&mut self.server_log, slot.server_log),
        };
        self.parked[usize::from(self.active)] = Some(out);
        self.active = instance;
        Ok(())
    }

    /// Start every instance after the first (selected, then instance 0 selected again).
    pub(crate) async fn start_others(&mut self) -> Result<(), String> {
        for i in 1..self.instances() as u8 {
            self.select(i)?;
            self.start().await.map_err(|e| format!("instance {i}: {e}"))?;
        }
        self.select(0)
    }

    /// [`Session::shutdown`] every instance; instance 0 is selected afterwards.
    pub async fn shutdown_all(&mut self) {
        for i in (0..self.instances() as u8).rev() {
            if self.select(i).is_ok() {
                self.shutdown().await;
            }
        }
    }
}
