//! The differential comparison catches a broken transition of the main model too, not only of
//! the reference (`differential.rs` breaks the reference's): the main model's own search engine
//! is run on the main model with one transition taken away (a server process is never killed),
//! and its shortest lengths are compared with the reference's on every one-call cell of the
//! default matrix, as `differential.rs` compares them. The unbroken main model agrees on every
//! cell; the broken one must disagree wherever a crash is on the shortest way to a violation.

use mcp_once_model::action::Action;
use mcp_once_model::catalogue::{builtin_profiles, matrix};
use mcp_once_model::search::explore::{search, Options};
use mcp_once_model::search::{DiskCodec, SearchModel};
use mcp_once_model::{McpModel, PropertyKind};
use mcp_once_reference::{check, Answer};

/// The main model with its crash transition taken away: a server process is never killed.
struct NeverCrashes<'a>(&'a McpModel);

impl SearchModel for NeverCrashes<'_> {
    type State = <McpModel as SearchModel>::State;
    type Action = Action;
    type Property = PropertyKind;

    fn init_states(&self) -> Vec<Self::State> {
        self.0.init_states()
    }
    fn actions(&self, s: &Self::State, out: &mut Vec<Action>) {
        self.0.actions(s, out);
        out.retain(|a| !matches!(a, Action::ServerCrash { .. }));
    }
    fn apply(&self, s: &mut Self::State, action: Action) -> bool {
        self.0.apply(s, action)
    }
    fn holds(&self, property: PropertyKind, s: &Self::State) -> bool {
        self.0.holds(property, s)
    }
    fn measure(&self, s: &Self::State) -> u8 {
        self.0.measure(s)
    }
}

impl DiskCodec for NeverCrashes<'_> {
    const STATE_BYTES: usize = <McpModel as DiskCodec>::STATE_BYTES;
    const ACTION_BYTES: usize = <McpModel as DiskCodec>::ACTION_BYTES;
    fn encode_state(&self, s: &Self::State, out: &mut [u8]) {
        self.0.encode_state(s, out)
    }
    fn decode_state(&self, bytes: &[u8]) -> Option<Self::State> {
        self.0.decode_state(bytes)
    }
    fn encode_action(&self, a: Action, out: &mut [u8]) {
        self.0.encode_action(a, out)
    }
    fn decode_action(&self, bytes: &[u8]) -> Option<Action> {
        self.0.decode_action(bytes)
    }
}

/// A search's answers as the differential test compares them: each property's shortest
/// violation length (`None`: holds), and the worst case's effects and length.
type Lengths = (Vec<Option<usize>>, u8, Option<usize>);

/// The main engine's answers on `model`, for `properties`.
fn main_lengths<M>(model: &M, properties: &[PropertyKind]) -> Lengths
where
    M: DiskCodec<Property = PropertyKind> + Sync,
    M::State: Send + Sync,
    M::Action: Send + Sync,
{
    let found = search(model, properties, Options { worst: true, ..Options::default() });
    let violations = found.violations.iter().map(|v| v.as_ref().map(Vec::len)).collect();
    (violations, found.worst, found.worst_path.as_ref().map(Vec::len))
}

#[test]
fn a_broken_main_model_transition_is_caught() {
    let profiles = builtin_profiles();
    let (mut cells, mut agree, mut caught) = (0, 0, Vec::new());
    for mut config in matrix(&profiles) {
        config.bounds.calls = 1;
        let profile = profiles.iter().find(|p| p.name == config.profile).unwrap().clone();
        let Ok(main) = McpModel::new(config.clone(), profile.clone()) else { continue };
        // The properties the cell checks, as the reference answers them.
        let properties = PropertyKind::checked(&config);
        let report = check(&config, &profile, usize::MAX, None).expect("no limit");
        let violations = report
            .answers
            .iter()
            .map(|(_, a)| match a {
                Answer::Violated(path) => Some(path.len()),
                _ => None,
            })
            .collect();
        let reference: Lengths = (violations, report.worst.0, report.worst.1.as_ref().map(Vec::len));
        cells += 1;
        assert_eq!(main_lengths(&main, &properties), reference, "{config}: the unbroken main model disagrees");
        agree += 1;
        if main_lengths(&NeverCrashes(&main), &properties) != reference {
            caught.push(config.to_string());
        }
    }
    println!("{cells} one-call cells: {agree} agree unbroken, {} disagree with crashes taken away", caught.len());
    assert!(cells > 100, "{cells} cells");
    // Every cell whose server can be killed (crashes 1 in the matrix) where a crash is on some
    // shortest way: at least the cells where a crash is the only way to a second effect.
    assert!(caught.len() * 4 > cells, "only {} of {cells} cells disagree: {caught:?}", caught.len());
}
