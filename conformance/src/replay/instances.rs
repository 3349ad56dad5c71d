//! Several server instances in one session (a trace of the model's `--instances 2`): each its
//! own process and connection ([`crate::replay::instance`]), behind the runner acting as the
//! load balancer. One instance is *selected* at a time and is what every step of [`Session`]
//! acts on (its process, its connection, its stderr). Connection generations are numbered
//! across instances, so a response is matched to its request whichever instance holds it.

use crate::replay::session::Session;

impl Session {
    /// How many server instances the session has.
    pub fn instances(&self) -> usize {
        self.instances.len()
    }

    /// The selected instance.
    pub fn active(&self) -> u8 {
        self.active
    }

    /// Select instance `instance`: from now on the session's steps act on its process and
    /// connection.
    pub(crate) fn select(&mut self, instance: u8) -> Result<(), String> {
        if usize::from(instance) >= self.instances.len() {
            return Err(format!("the runner has no server instance {instance}"));
        }
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
