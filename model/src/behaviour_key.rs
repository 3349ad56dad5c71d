//! What makes two models one search: [`BehaviourKey`], everything the transitions, the state
//! view and the properties read, and nothing else.

use crate::config::{Bounds, Cancellation, ClientPolicy, KeyLifetime, KeyScope, ServerImpl, StoreScope, Transport};
use crate::handler::Handler;
use crate::model::{McpModel, Rules};
use crate::profile::{Continuations, InProgress, InputRequired, Instances, KeySemantics};
use crate::state::View;

/// Two models with equal keys have the same reachable states, the same actions in each and the
/// same verdicts, so one search serves both (see [`McpModel::behaviour_key`]).
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct BehaviourKey {
    rules: Rules,
    transport: Transport,
    client: ClientPolicy,
    key: KeyLifetime,
    server: ServerImpl,
    cancel: Option<Cancellation>,
    /// A handler that asks for input, with the profile's MRTR knobs it reads (none for the
    /// default handler, which reads neither).
    handler: Option<(Handler, InputRequired, Continuations)>,
    /// Several instances: how many, where their store is, and the profile's instances knob
    /// (none for one instance, which reads neither).
    deployment: Option<(u8, StoreScope, Instances)>,
    bounds: Bounds,
    /// Two callers: the scope of the key records (none for one caller, which never reads it).
    callers: Option<KeyScope>,
    view: View,
}

impl McpModel {
    /// This model's [`BehaviourKey`]. The profile's name and citations are left out, and so is
    /// the key semantics when no key is sent (the model never reads it then), which is why a
    /// proposal that changes only key knobs shares its base revision's searches for every cell
    /// without a key.
    pub fn behaviour_key(&self) -> BehaviourKey {
        let mut rules = self.rules.clone();
        if self.config.key == KeyLifetime::None {
            rules.semantics = KeySemantics::None;
            rules.in_progress = InProgress::None;
        }
        let c = &self.config;
        let k = &self.profile.knobs;
        let handler = (c.handler != Handler::default()).then_some((
            c.handler,
            k.input_required.value,
            k.idempotency_continuations.value,
        ));
        let deployment =
            (c.deployment.instances > 1).then(|| (c.deployment.instances, c.store(), k.server_instances.value));
        // Under framework-retry with a tool that never asks for input, every attempt after the
        // first is a re-run, so a call's step is its attempt's index (and `sent`, in the view,
        // already says it): a key per step is a key per attempt, value for value, and the two
        // cells are one search.
        let (mut key, mut view) = (c.key, self.view);
        if c.client.reruns_the_step() && !c.handler.asks_input(0) && key == KeyLifetime::PerStep {
            key = KeyLifetime::PerAttempt;
            view.step_matters = false;
        }
        BehaviourKey {
            rules,
            transport: c.transport,
            client: c.client,
            key,
            server: c.server,
            cancel: c.cancel,
            handler,
            deployment,
            bounds: c.bounds,
            callers: (c.callers > 1).then(|| self.key_scope()),
            view,
        }
    }
}
