//! One macro for the model's named enums: every value has the one spelling users type, in
//! profile files, on the command line and in trace files (`retry-on-timeout`,
//! `request_id_scope`, `2025-11-25`).
//!
//! `named_enum!` declares the enum with its variants and their spellings, and gives it `ALL`
//! (every value, in declaration order), `as_str`, `Display`, `FromStr` and serde as those
//! spellings. `FromStr` fails with `unknown value `x` (expected one of: a, b)` unless the
//! declaration names its own message (`error = |text, names| ...`). Spellings are string
//! literals; a spelling built by a macro (`stringify!(field)`) goes after `expr`, and the enum
//! then serialises (only) through `as_str`.

/// Declare a named enum (see the module documentation).
macro_rules! named_enum {
    (
        $(#[$doc:meta])* $name:ident, error = $err:expr,
        { $($(#[$vdoc:meta])* $variant:ident = $text:literal),+ $(,)? }
    ) => {
        $crate::named::named_enum!(@define
            [$(#[$doc])* #[derive(::serde::Serialize, ::serde::Deserialize)]] $name, $err,
            { $($(#[$vdoc])* #[serde(rename = $text)] $variant = $text),+ }
        );
    };
    (
        $(#[$doc:meta])* $name:ident
        { $($(#[$vdoc:meta])* $variant:ident = $text:literal),+ $(,)? }
    ) => {
        $crate::named::named_enum!(
            $(#[$doc])* $name,
            error = |s, names| format!("unknown value `{s}` (expected one of: {names})"),
            { $($(#[$vdoc])* $variant = $text),+ }
        );
    };
    (
        $(#[$doc:meta])* $name:ident, expr
        { $($(#[$vdoc:meta])* $variant:ident = $text:expr),+ $(,)? }
    ) => {
        $crate::named::named_enum!(@define
            [$(#[$doc])*] $name,
            |s, names| format!("unknown value `{s}` (expected one of: {names})"),
            { $($(#[$vdoc])* $variant = $text),+ }
        );
        impl ::serde::Serialize for $name {
            fn serialize<S: ::serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
                s.serialize_str(self.as_str())
            }
        }
    };
    (@define
        [$($attr:tt)*] $name:ident, $err:expr,
        { $($(#[$vattr:meta])* $variant:ident = $text:expr),+ }
    ) => {
        $($attr)*
        #[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
        pub enum $name {
            $($(#[$vattr])* $variant),+
        }
        impl $name {
            /// Every value, in declaration order.
            pub const ALL: &'static [$name] = &[$($name::$variant),+];
            /// The spelling users type.
            pub fn as_str(self) -> &'static str {
                match self { $($name::$variant => $text),+ }
            }
        }
        impl ::std::fmt::Display for $name {
            fn fmt(&self, f: &mut ::std::fmt::Formatter<'_>) -> ::std::fmt::Result {
                f.write_str(self.as_str())
            }
        }
        impl ::std::str::FromStr for $name {
            type Err = $crate::named::BadValue;
            fn from_str(s: &str) -> Result<Self, $crate::named::BadValue> {
                $name::ALL.iter().copied().find(|v| v.as_str() == s).ok_or_else(|| {
                    let names: Vec<&str> = $name::ALL.iter().map(|v| v.as_str()).collect();
                    let message: fn(&str, &str) -> String = $err;
                    $crate::named::BadValue::new(s, message(s, &names.join(", ")))
                })
            }
        }
    };
}

pub(crate) use named_enum;

/// A text that spells no value of a type parsed from text (a named enum, a window, a trace's
/// property): what was given, and a message saying what is expected.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BadValue {
    /// The text given.
    pub given: String,
    message: String,
}

impl BadValue {
    /// `given` refused, with the message a user reads (it names what is expected).
    pub fn new(given: &str, message: impl Into<String>) -> BadValue {
        BadValue { given: given.to_string(), message: message.into() }
    }
}

impl std::fmt::Display for BadValue {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.message)
    }
}

impl std::error::Error for BadValue {}
