//! What the search engine asks of a model: the shape of stateright's `Model` (initial states,
//! the actions a state offers, the state an action leads to), cut down to what a breadth-first
//! pass calls, with properties as predicates and one measure the pass maximises (the worst
//! case). [`DiskCodec`] adds the fixed-size bytes the search on disk writes states and actions
//! as. The engine is generic over these traits (monomorphised: no dynamic call in its loops);
//! `McpModel` implements them in `search_model.rs`.

use std::hash::Hash;

/// A model the engine can search.
pub trait SearchModel {
    /// A state. States are told apart by their hash alone (a 64-bit fingerprint), so the hash
    /// decides which states are one.
    type State: Clone + Hash;
    /// A step from one state to the next.
    type Action: Copy;
    /// Something that must hold in every reachable state.
    type Property: Copy;

    /// The states a path starts from.
    fn init_states(&self) -> Vec<Self::State>;

    /// Every action `s` offers, in a fixed order, appended to `out`.
    fn actions(&self, s: &Self::State, out: &mut Vec<Self::Action>);

    /// Take `action` in `s`, in place. `false` when it leads nowhere: then `s` is dropped and
    /// may have been changed.
    fn apply(&self, s: &mut Self::State, action: Self::Action) -> bool;

    /// The state `action` leads to from `last`, if any.
    fn next_state(&self, last: &Self::State, action: Self::Action) -> Option<Self::State> {
        let mut next = last.clone();
        self.apply(&mut next, action).then_some(next)
    }

    /// Whether `property` holds in `s`.
    fn holds(&self, property: Self::Property, s: &Self::State) -> bool;

    /// The measure of `s` the search maximises (the worst case): the first state reaching the
    /// largest value is the one reported.
    fn measure(&self, s: &Self::State) -> u8;
}

/// States and actions as fixed-size bytes, for the search on disk: every state of a model
/// takes [`DiskCodec::STATE_BYTES`], every action [`DiskCodec::ACTION_BYTES`].
pub trait DiskCodec: SearchModel {
    /// Bytes of one encoded state.
    const STATE_BYTES: usize;
    /// Bytes of one encoded action (at least 1).
    const ACTION_BYTES: usize;

    /// Write `s` into `out` (`STATE_BYTES` long, every byte written), so that
    /// [`DiskCodec::decode_state`] gives back a state equal to it in every field.
    fn encode_state(&self, s: &Self::State, out: &mut [u8]);

    /// Read back a state [`DiskCodec::encode_state`] wrote; `None` if the bytes are not one.
    fn decode_state(&self, bytes: &[u8]) -> Option<Self::State>;

    /// Write `a` into `out` (`ACTION_BYTES` long, every byte written). Its first byte is never
    /// `u8::MAX`: the engine writes that where there is no action (an initial state).
    fn encode_action(&self, a: Self::Action, out: &mut [u8]);

    /// Read back an action [`DiskCodec::encode_action`] wrote; `None` if the bytes are not one.
    fn decode_action(&self, bytes: &[u8]) -> Option<Self::Action>;
}
