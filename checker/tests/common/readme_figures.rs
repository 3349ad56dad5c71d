//! The figures the README gives about its examples, read from its words, and what each must be
//! in an example's output: the shortest counterexample of a `check` (its property's line), the
//! replays a `confirm` confirmed and the effects of a call in each at-most-once replay, and the
//! variants of an example the same words name (`8 with --client X`, `--store shared holds`).

/// One figure of the README.
#[derive(Clone, Debug, PartialEq)]
pub enum Figure {
    /// "N steps", "N-step": the example's shortest counterexample of its property.
    Steps(usize),
    /// "N of M": of M counterexamples replayed, N confirmed.
    Confirmed(usize, usize),
    /// "N lines", "N ledger lines": the call's effects in each at-most-once replay.
    Lines(usize),
    /// "N with --FLAG VALUE": the example with that flag has an N-step counterexample.
    StepsWith(usize, String, String),
    /// "--FLAG VALUE holds": the example with that flag has none.
    HoldsWith(String, String),
    /// Any other count of the kinds above ("the same N ..."), which no example gives.
    Other(String),
}

/// Every figure in `words`, in order.
pub fn figures(words: &str) -> Vec<Figure> {
    let tokens: Vec<&str> = words
        .split_whitespace()
        .map(|t| t.trim_matches(|c: char| "(),;:`".contains(c)))
        .filter(|t| !t.is_empty())
        .collect();
    let at = |i: usize| tokens.get(i).copied().unwrap_or("");
    let number = |t: &str| t.parse::<usize>().ok();
    let mut out = Vec::new();
    for (i, t) in tokens.iter().enumerate() {
        if let Some(n) = t.strip_suffix("-step").and_then(number) {
            out.push(Figure::Steps(n));
        } else if t.starts_with("--") && at(i + 2) == "holds" {
            out.push(Figure::HoldsWith(t.to_string(), at(i + 1).to_string()));
        }
        let Some(n) = number(t) else { continue };
        if i > 0 && at(i - 1) == "same" {
            out.push(Figure::Other(format!("the same {n} {}", at(i + 1))));
        } else if at(i + 1) == "steps" {
            out.push(Figure::Steps(n));
        } else if let (Some(m), "of") = (number(at(i + 2)), at(i + 1)) {
            out.push(Figure::Confirmed(n, m));
        } else if at(i + 1) == "lines" || (at(i + 1), at(i + 2)) == ("ledger", "lines") {
            out.push(Figure::Lines(n));
        } else if at(i + 1) == "with" && at(i + 2).starts_with("--") {
            out.push(Figure::StepsWith(n, at(i + 2).to_string(), at(i + 3).to_string()));
        } else if at(i + 1) == "with" {
            out.push(Figure::Other(format!("{n} with {}", at(i + 2))));
        }
    }
    out
}

/// The property a `check` example's figures are about: the one it names, at-most-once if none.
pub fn property(args: &[String]) -> String {
    args.iter().position(|a| a == "--property").map_or("at-most-once".into(), |i| args[i + 1].clone())
}

/// `args` with `flag` set to `value` (replaced where given, else added).
pub fn with_flag(args: &[String], flag: &str, value: &str) -> Vec<String> {
    let mut out = args.to_vec();
    match out.iter().position(|a| a == flag) {
        Some(i) => out[i + 1] = value.to_string(),
        None => out.extend([flag.to_string(), value.to_string()]),
    }
    out
}

/// What `check`'s report says of `property`: `Some(n)` for violated with an n-step shortest
/// counterexample, `None` for holds; an error naming the line otherwise.
pub fn check_verdict(stdout: &str, property: &str) -> Result<Option<usize>, String> {
    let line = stdout
        .lines()
        .find(|l| l.split_whitespace().next() == Some(property))
        .ok_or_else(|| format!("no line for {property}"))?;
    match line.split_whitespace().nth(1) {
        Some("holds") => Ok(None),
        Some("VIOLATED") => line
            .split("shortest counterexample: ")
            .nth(1)
            .and_then(|rest| rest.split(' ').next())
            .and_then(|n| n.parse().ok())
            .map(Some)
            .ok_or_else(|| format!("no length in `{line}`")),
        _ => Err(format!("no verdict in `{line}`")),
    }
}

/// What `confirm`'s report says: the counterexamples replayed and confirmed (its last line,
/// "M counterexamples replayed: N confirmed...").
pub fn confirm_counts(stdout: &str) -> Result<(usize, usize), String> {
    let line = stdout
        .lines()
        .find(|l| l.contains(" counterexamples replayed: "))
        .ok_or_else(|| "no `counterexamples replayed` line".to_string())?;
    let (all, rest) = line.split_once(" counterexamples replayed: ").unwrap();
    let confirmed = rest.split(' ').next().and_then(|n| n.parse().ok());
    match (all.trim().parse().ok(), confirmed, rest.split(' ').nth(1)) {
        (Some(m), Some(n), Some(w)) if w.starts_with("confirmed") => Ok((n, m)),
        _ => Err(format!("cannot read `{line}`")),
    }
}

/// The effects of the call in each at-most-once replay of `confirm`'s report ("took effect N
/// times").
pub fn confirm_effects(stdout: &str) -> Vec<usize> {
    stdout
        .lines()
        .filter(|l| l.split_whitespace().next() == Some("at-most-once"))
        .filter_map(|l| l.split("took effect ").nth(1)?.split(' ').next()?.parse().ok())
        .collect()
}
