//! The one place an output format is decided. A command builds its [`Report`] (typed data,
//! `render.rs`) and calls [`print`]; each format renders every kind of report in a file of its
//! own (`as_text.rs`, `as_json.rs`, `as_markdown.rs`, `as_junit.rs`). A new format is one such file
//! implementing [`Renderer`] plus one arm of [`Format`]; a command's `--format`
//! ([`formats_for`]) offers exactly the formats whose renderer supports its report.

use crate::report::as_html::AsHtml;
use crate::report::as_json::AsJson;
use crate::report::as_junit::AsJunit;
use crate::report::as_markdown::AsMarkdown;
use crate::report::as_text::AsText;
use crate::report::render::{Kind, Renderer, Report};
use anyhow::{anyhow, Result};
use clap::builder::{PossibleValuesParser, TypedValueParser};

/// An output format.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Format {
    /// For a terminal.
    Text,
    /// One JSON document.
    Json,
    /// For an issue or a pull request.
    Markdown,
    /// JUnit XML, for a CI system's test report.
    Junit,
    /// One self-contained HTML page: the verdict grid, each trace drawn.
    Html,
}

impl Format {
    /// Every format, in the order `--help` lists them.
    pub const ALL: &'static [Format] = &[Format::Text, Format::Json, Format::Markdown, Format::Junit, Format::Html];

    /// The spelling `--format` takes.
    pub fn as_str(self) -> &'static str {
        match self {
            Format::Text => "text",
            Format::Json => "json",
            Format::Markdown => "markdown",
            Format::Junit => "junit",
            Format::Html => "html",
        }
    }

    fn renderer(self) -> &'static dyn Renderer {
        match self {
            Format::Text => &AsText,
            Format::Json => &AsJson,
            Format::Markdown => &AsMarkdown,
            Format::Junit => &AsJunit,
            Format::Html => &AsHtml,
        }
    }
}

/// The `--format` parser of a command whose report is of `kind`: the formats that render it.
pub fn formats_for(kind: Kind) -> impl TypedValueParser<Value = Format> {
    let names: Vec<&'static str> =
        Format::ALL.iter().filter(|f| f.renderer().supports(kind)).map(|f| f.as_str()).collect();
    PossibleValuesParser::new(names)
        .map(|name| *Format::ALL.iter().find(|f| f.as_str() == name).expect("a possible value is a format's spelling"))
}

/// Print `report` in `format` on stdout.
pub fn print(format: Format, report: &Report<'_>) -> Result<()> {
    let renderer = format.renderer();
    if !renderer.supports(report.kind()) {
        return Err(anyhow!("--format {}: not available for this command", format.as_str()));
    }
    emit(&renderer.render(report)?)
}

/// Write `text` on stdout. A reader that closed the pipe early (`mcp-once matrix | head`) has
/// what it wanted: the rest is dropped quietly, as Unix tools do, not a panic.
pub fn emit(text: &str) -> Result<()> {
    use std::io::Write;
    let mut out = std::io::stdout().lock();
    match out.write_all(text.as_bytes()).and_then(|()| out.flush()) {
        Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe => Ok(()),
        other => Ok(other?),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(kind: Kind, value: &str) -> Result<Format, clap::Error> {
        let arg = clap::Arg::new("format").long("format").value_parser(formats_for(kind));
        let matches = clap::Command::new("t").arg(arg).try_get_matches_from(["t", "--format", value])?;
        Ok(*matches.get_one::<Format>("format").expect("given"))
    }

    #[test]
    fn a_command_offers_the_formats_that_render_its_report() {
        assert_eq!(parse(Kind::Check, "markdown").unwrap(), Format::Markdown);
        assert_eq!(parse(Kind::Replay, "json").unwrap(), Format::Json);
        let refused = parse(Kind::Replay, "markdown").unwrap_err().to_string();
        assert!(refused.contains("[possible values: text, json]"), "{refused}");
    }
}
