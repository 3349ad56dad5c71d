//! `mcp-once bench`: how fast the model checker is, and how much memory it takes (the harness
//! is `crate::benchmark`).

use crate::args::free_bytes;
use crate::benchmark::{bench, growth_calls, measure_here, Part, Plan};
use crate::report::bench::calls_growth;
use crate::report::format::{formats_for, print, Format};
use crate::report::plot::growth_svg;
use crate::report::render::{Kind, Report};
use anyhow::{anyhow, Result};
use clap::Args;
use mcp_once_model::budget::parse_size;
use mcp_once_model::{Budget, Config};
use std::path::{Path, PathBuf};
use std::process::ExitCode;

/// Options of `mcp-once bench`.
#[derive(Args)]
pub struct BenchArgs {
    /// A run of a few seconds: no 3-call cell, a smaller growth table, the matrix at one call
    /// per cell.
    #[arg(long)]
    quick: bool,
    /// Output format: text or json.
    #[arg(long, default_value = "text", value_parser = formats_for(Kind::Bench))]
    format: Format,
    /// Run one part only.
    #[arg(long, value_enum)]
    only: Option<Part>,
    /// Memory budget of each of the largest cells (part `largest`) and of each growth row, e.g.
    /// 2G (default: 4 GiB, or 3/4 of the memory available if that is less). A cell that reaches
    /// it stops and reports how far it got.
    #[arg(long, value_name = "SIZE", value_parser = parse_size)]
    max_memory: Option<u64>,
    /// At that memory budget, the largest cells and the growth rows go on with their search on
    /// disk in DIR instead of stopping, and report the disk they took.
    #[arg(long, value_name = "DIR")]
    spill_dir: Option<PathBuf>,
    /// With --spill-dir: stop each of those searches before its files pass SIZE (default: 3/4
    /// of the space free in DIR).
    #[arg(long, value_name = "SIZE", value_parser = parse_size, requires = "spill_dir")]
    max_disk: Option<u64>,
    /// Write the growth with calls (unique states, wall seconds and peak memory against calls,
    /// log scale) to FILE as SVG. Needs the growth part.
    #[arg(long, value_name = "FILE")]
    plot: Option<PathBuf>,
    /// Internal: search the configuration given as JSON in this process and print its figures.
    #[arg(long, hide = true)]
    one: Option<String>,
}

/// A `--spill-dir` that is a folder, leaked for the search's budget.
fn spill_folder(dir: &Path) -> Result<&'static Path> {
    match dir.is_dir() {
        true => Ok(Box::leak(dir.to_path_buf().into_boxed_path())),
        false => Err(anyhow!("--spill-dir {}: not a folder", dir.display())),
    }
}

/// A `--plot` file whose folder exists (checked before the bench runs, which takes minutes).
fn check_plot_path(file: &Path) -> Result<()> {
    let folder = match file.parent() {
        Some(p) if !p.as_os_str().is_empty() => p,
        _ => Path::new("."),
    };
    match folder.is_dir() {
        true => Ok(()),
        false => Err(anyhow!("--plot {}: the folder {} does not exist", file.display(), folder.display())),
    }
}

/// Run the benchmark and print it.
pub fn run(a: BenchArgs) -> Result<ExitCode> {
    if let Some(json) = &a.one {
        let config: Config = serde_json::from_str(json)?;
        let spill_dir = a.spill_dir.as_deref().map(spill_folder).transpose()?;
        let max_disk = a.max_disk.or_else(|| spill_dir.and_then(|d| free_bytes(d).map(|b| b / 4 * 3)));
        let budget = Budget { max_memory: a.max_memory, spill_dir, max_disk, ..Budget::default() };
        println!("{}", serde_json::to_string(&measure_here(config, budget)?)?);
        return Ok(ExitCode::SUCCESS);
    }
    if let Some(file) = &a.plot {
        check_plot_path(file)?;
        if a.only.is_some_and(|o| o != Part::Growth) {
            return Err(anyhow!("--plot draws the growth part: use it without --only, or with --only growth"));
        }
    }
    if let Some(dir) = &a.spill_dir {
        spill_folder(dir)?;
    }
    let plan =
        Plan { quick: a.quick, only: a.only, max_memory: a.max_memory, spill_dir: a.spill_dir, max_disk: a.max_disk };
    let report = bench(&plan)?;
    print(a.format, &Report::Bench(&report))?;
    if let Some(file) = &a.plot {
        let caption = format!(
            "growth of the safe cell with calls (1 to {}; 2 retries, 1 crash), {} CPUs",
            growth_calls(a.quick),
            report.machine.cpus
        );
        std::fs::write(file, growth_svg(&calls_growth(&report.growth), &caption))
            .map_err(|e| anyhow!("--plot {}: {e}", file.display()))?;
    }
    Ok(ExitCode::SUCCESS)
}
