//! Command-line usage errors as one line, for the binaries of this workspace.

/// clap's error text (several lines and a usage block) folded into one line, without the
/// leading `error: `.
pub fn one_line(err: &clap::Error) -> String {
    let text = err.to_string();
    let message: Vec<&str> = text
        .lines()
        .map(str::trim)
        .take_while(|l| !l.starts_with("Usage:") && !l.starts_with("For more information"))
        .filter(|l| !l.is_empty())
        .collect();
    message.join(" ").trim_start_matches("error: ").to_string()
}
