//! The conformant servers' answer for a cell whose server breaks a MUST of its profile: the
//! same cell with each breach replaced by the choices that keep it
//! ([`conformance::conformant_variants`]), checked for the same properties. A report shows the
//! shortest conformant counterexample first, or says that no conformant server of that kind
//! reaches the violation (so the one shown is a non-conformant server's only).

use crate::cells::{run_cells, threads, Cell, Checked};
use anyhow::Result;
use mcp_once_model::conformance;
use mcp_once_model::search::Counterexample;
use mcp_once_model::{Config, McpModel, Options, PropertyKind, Verdict};
use std::path::Path;

/// The conformant servers of a cell's kind, where its server breaks a MUST, checked.
pub struct Conformant {
    /// The conformant variants of the cell, each checked for the cell's properties.
    pub variants: Vec<Cell>,
    /// The cell itself.
    pub original: Config,
}

/// What the conformant servers say of one property.
pub enum ConformantAnswer<'a> {
    /// A conformant server reaches the violation: the shortest such counterexample, and the
    /// variant it is of.
    Reached(&'a Checked, &'a Counterexample),
    /// Every conformant variant was searched in full and none violates the property.
    NotReached,
    /// No variant violates it, but some search stopped at its budget first.
    Unknown,
}

impl Conformant {
    /// What the conformant variants say of `p`.
    pub fn answer(&self, p: PropertyKind) -> ConformantAnswer<'_> {
        let checked = self.variants.iter().filter_map(|v| v.outcome.as_ref().ok());
        let mut best: Option<(&Checked, &Counterexample)> = None;
        let mut unknown = false;
        for c in checked {
            let Some(r) = c.results.iter().find(|r| r.property == p) else { continue };
            match &r.counterexample {
                Some(cex) if best.is_none_or(|(_, b)| cex.len() < b.len()) => best = Some((c, cex)),
                Some(_) => {}
                None => unknown |= r.verdict == Verdict::Unknown,
            }
        }
        match best {
            Some((c, cex)) => ConformantAnswer::Reached(c, cex),
            None if unknown => ConformantAnswer::Unknown,
            None => ConformantAnswer::NotReached,
        }
    }

    /// Whether the shortest conformant counterexample of `p` takes exactly the steps of `own`
    /// (the cell's own), so that one trace shows both.
    pub fn same_steps(&self, p: PropertyKind, own: &Counterexample) -> bool {
        matches!(self.answer(p), ConformantAnswer::Reached(_, cex) if cex.actions == own.actions)
    }

    /// The variants, each by the flags that make it from the cell, for a sentence:
    /// `` `--cancel before-effect` and `--cancel interrupts` ``.
    pub fn variant_names(&self) -> String {
        let names: Vec<String> = self.variants.iter().map(|v| format!("`{}`", self.change(&v.config))).collect();
        names.join(" and ")
    }

    /// The variants and the verb "hold" agreeing with their number: `` `--store shared` holds ``.
    pub fn variants_hold(&self) -> String {
        let verb = if self.variants.len() == 1 { "holds" } else { "hold" };
        format!("{} {verb}", self.variant_names())
    }

    /// The flags that make `variant` from the cell: `--cancel interrupts --store shared`.
    pub fn change(&self, variant: &Config) -> String {
        let mut flags = Vec::new();
        if variant.server != self.original.server {
            flags.push(format!("--server {}", variant.server));
        }
        if variant.key != self.original.key {
            flags.push(format!("--key {}", variant.key));
        }
        if variant.cancel() != self.original.cancel() {
            flags.push(format!("--cancel {}", variant.cancel()));
        }
        if variant.deployment.instances > 1 && variant.store() != self.original.store() {
            flags.push(format!("--store {}", variant.store()));
        }
        if variant.task_records != self.original.task_records {
            flags.push(format!("--task-records {}", variant.task_records));
        }
        if variant.key_scope != self.original.key_scope {
            if let Some(scope) = variant.key_scope {
                flags.push(format!("--key-scope {scope}"));
            }
        }
        flags.join(" ")
    }
}

/// Check the conformant variants of the cell of `m` for `props` (traces under `out`, if given),
/// where its server breaks a MUST; `None` where it breaks none (or no conformant variant applies).
pub fn check_conformant(
    m: &McpModel,
    props: &[PropertyKind],
    options: Options,
    out: Option<&Path>,
) -> Result<Option<Conformant>> {
    let variants = conformance::conformant_variants(&m.config, &m.profile);
    if variants.is_empty() {
        return Ok(None);
    }
    let configs = variants.into_iter().map(|c| (c, m.profile.clone())).collect();
    // Only the shortest counterexamples matter here, not the worst case.
    let options = Options { worst: false, ..options };
    let variants = run_cells(configs, props, options, out, threads(), &|| {})?;
    Ok(Some(Conformant { variants, original: m.config.clone() }))
}
