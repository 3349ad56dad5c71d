//! The two knobs that are lengths of time: how long a server keeps a key record
//! (`idempotency_retention`) and how long after a call's first request a client may still
//! retry or re-run it (`retry_horizon`). The model has no clock; it only compares the two: a
//! record that outlives the horizon can never be gone when a retry arrives, and one that may
//! not can leave at any moment. Durations are read as `humantime` reads them (`300s`, `1h`,
//! `24h`, `7days`, `1h 30m`) and written in the largest whole unit (`24h`, `90m`, `300s`).

use std::fmt;
use std::str::FromStr;
use std::time::Duration;

/// How long a server keeps what it needs to answer a repeated key.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Retention {
    /// A bounded window whose length the text leaves open; a key presented after it may be
    /// treated as new.
    Bounded,
    /// A bounded window of this length (`"24h"`).
    Window(Duration),
    /// Forever.
    Unbounded,
    /// Not defined (no key semantics).
    None,
}

/// How long after a call's first request a client may still send a retry or a framework
/// re-run of it: what a text asks of clients, or what a client does.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum RetryHorizon {
    /// Nothing bounds it: a retry may come at any later time.
    Unbounded,
    /// Within this long of the first request (`"1h"`).
    Within(Duration),
}

impl Retention {
    /// Whether a record may have left the window by the time a retry arrives, for a client
    /// with this horizon: yes for a window of unknown length, or one shorter than the horizon;
    /// no for a window at least as long as the horizon, or no window at all.
    pub fn may_expire_before(self, horizon: RetryHorizon) -> bool {
        match (self, horizon) {
            (Self::Bounded, _) | (Self::Window(_), RetryHorizon::Unbounded) => true,
            (Self::Window(w), RetryHorizon::Within(h)) => h > w,
            (Self::Unbounded | Self::None, _) => false,
        }
    }
    /// Whether the text lets records leave at all (a `key-expiring` server is within it).
    pub fn is_bounded(self) -> bool {
        matches!(self, Self::Bounded | Self::Window(_))
    }
}

/// `d` in the largest unit that divides it: hours, minutes, seconds, else milliseconds.
fn spell(d: Duration, f: &mut fmt::Formatter<'_>) -> fmt::Result {
    let ms = d.as_millis();
    match [(3_600_000, "h"), (60_000, "m"), (1_000, "s")].into_iter().find(|(unit, _)| ms.is_multiple_of(*unit)) {
        Some((unit, name)) => write!(f, "{}{name}", ms / unit),
        None => write!(f, "{ms}ms"),
    }
}

fn parse_duration(knob: &str, s: &str, words: &str) -> Result<Duration, crate::named::BadValue> {
    match humantime::parse_duration(s) {
        Ok(d) if d > Duration::ZERO => Ok(d),
        Ok(_) => Err(crate::named::BadValue::new(s, format!("`{s}`: a {knob} of zero is not a window"))),
        Err(e) => Err(crate::named::BadValue::new(
            s,
            format!("unknown value `{s}` (expected one of: {words}, or a duration such as `300s`, `1h`, `24h`: {e})"),
        )),
    }
}

impl FromStr for Retention {
    type Err = crate::named::BadValue;
    fn from_str(s: &str) -> Result<Self, crate::named::BadValue> {
        Ok(match s {
            "bounded" => Self::Bounded,
            "unbounded" => Self::Unbounded,
            "none" => Self::None,
            _ => Self::Window(parse_duration("retention", s, "bounded, unbounded, none")?),
        })
    }
}

impl FromStr for RetryHorizon {
    type Err = crate::named::BadValue;
    fn from_str(s: &str) -> Result<Self, crate::named::BadValue> {
        Ok(match s {
            "unbounded" => Self::Unbounded,
            _ => Self::Within(parse_duration("retry horizon", s, "unbounded")?),
        })
    }
}

impl fmt::Display for Retention {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Bounded => f.write_str("bounded"),
            Self::Window(d) => spell(*d, f),
            Self::Unbounded => f.write_str("unbounded"),
            Self::None => f.write_str("none"),
        }
    }
}

impl fmt::Display for RetryHorizon {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Unbounded => f.write_str("unbounded"),
            Self::Within(d) => spell(*d, f),
        }
    }
}

/// Serde as the spelling users type, through `Display` and `FromStr`.
macro_rules! serde_as_text {
    ($($t:ty),+) => {$(
        impl serde::Serialize for $t {
            fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
                s.collect_str(self)
            }
        }
        impl<'de> serde::Deserialize<'de> for $t {
            fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
                let text = String::deserialize(d)?;
                text.parse().map_err(serde::de::Error::custom)
            }
        }
    )+};
}
serde_as_text!(Retention, RetryHorizon);

#[cfg(test)]
mod tests {
    use super::*;

    fn r(s: &str) -> Retention {
        s.parse().unwrap()
    }
    fn h(s: &str) -> RetryHorizon {
        s.parse().unwrap()
    }

    #[test]
    fn a_window_outlives_a_horizon_no_longer_than_itself() {
        assert!(!r("24h").may_expire_before(h("1h")));
        assert!(!r("1h").may_expire_before(h("60m")));
        assert!(r("300s").may_expire_before(h("1h")));
        assert!(r("24h").may_expire_before(h("unbounded")));
        assert!(r("bounded").may_expire_before(h("1s")));
        assert!(!r("unbounded").may_expire_before(h("unbounded")));
    }

    #[test]
    fn durations_keep_their_spelling_and_bad_ones_name_the_words() {
        assert_eq!(r("24h").to_string(), "24h");
        assert_eq!(h("90s").to_string(), "90s");
        assert_eq!(r("1day").to_string(), "24h");
        assert_eq!(r("1h 30m").to_string(), "90m");
        let e = "soon".parse::<Retention>().unwrap_err().to_string();
        assert!(e.starts_with("unknown value `soon` (expected one of: bounded, unbounded, none, or a duration"), "{e}");
        assert!("0s".parse::<RetryHorizon>().unwrap_err().to_string().contains("zero"));
    }
}
