//! The replay plan: each model action becomes a step a runner either drives (the client's and
//! the environment's actions: send, time out, cancel, kill, restart) or awaits with a bound
//! (the server's internal steps: it read the request, it committed the effect, it answered).

use mcp_once_model::{Action, Actor};

/// What a replay runner does for one model step.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ReplayStep {
    /// Perform the action against the real system.
    Drive(Action),
    /// Wait, with a bound, until the action is observed (ledger line, frame, process exit).
    Await(Action),
}

/// The plan for a trace's actions, in order.
pub fn plan(actions: &[Action]) -> Vec<ReplayStep> {
    actions
        .iter()
        .map(|a| match a.actor() {
            Actor::Server => ReplayStep::Await(*a),
            Actor::Client | Actor::Transport | Actor::Environment => ReplayStep::Drive(*a),
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn server_steps_are_awaited_and_faults_are_driven() {
        let steps = plan(&[
            Action::ClientCall { call: 0 },
            Action::ServerCommit { call: 0, attempt: 0 },
            Action::ServerCrash,
        ]);
        assert_eq!(
            steps,
            vec![
                ReplayStep::Drive(Action::ClientCall { call: 0 }),
                ReplayStep::Await(Action::ServerCommit { call: 0, attempt: 0 }),
                ReplayStep::Drive(Action::ServerCrash),
            ]
        );
    }
}
