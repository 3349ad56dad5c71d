//! Other arguments for the SEP-3182 key-conflict check: one given argument changed to another
//! value the tool's input schema allows (another `enum` member, a number moved within its
//! bounds and step, a string kept within its length, a boolean flipped), so that a server that
//! refuses the reused key refuses it for the conflict and not for arguments it would refuse
//! anyway. Arguments the schema constrains in ways the runner cannot satisfy for sure (`const`,
//! `pattern`, `format`) are left alone. The check still proves the changed arguments acceptable
//! with a control call under a fresh key before it counts a refusal as a conflict rejection.

use serde_json::{json, Map, Value};

/// The changed argument's name and the whole argument object with it changed. `schema` is the
/// tool's `inputSchema`; arguments carrying the call tag placeholder are changed last (their
/// value names the call in the ledger).
pub fn other_args(
    args: &Map<String, Value>,
    schema: &Value,
    placeholder: &str,
) -> Result<(String, Map<String, Value>), String> {
    let props = schema.get("properties").and_then(Value::as_object);
    let mut names: Vec<&String> = args.keys().filter(|k| props.is_some_and(|p| p.contains_key(*k))).collect();
    names.sort_by_key(|k| args[*k].to_string().contains(placeholder));
    for name in names {
        let prop = &props.expect("declared")[name];
        if let Some(changed) = other_value(&args[name], prop) {
            let mut out = args.clone();
            out.insert(name.clone(), changed);
            return Ok((name.clone(), out));
        }
    }
    Err("no given argument that the tool's schema declares can take another value the schema allows (an enum with one member, a const, a pattern or format the runner cannot satisfy for sure), so the runner has no other arguments the server would accept".into())
}

/// Another value than `v` that the property schema `prop` allows, if the runner can be sure of
/// one.
pub fn other_value(v: &Value, prop: &Value) -> Option<Value> {
    if prop.get("const").is_some() {
        return None;
    }
    if let Some(members) = prop.get("enum").and_then(Value::as_array) {
        return members.iter().find(|m| *m != v).cloned();
    }
    match v {
        Value::Bool(b) => Some(json!(!b)),
        Value::Number(n) => other_number(n.as_f64()?, n.is_f64(), prop),
        Value::String(s) => other_string(s, prop),
        _ => None,
    }
}

fn other_number(x: f64, float: bool, prop: &Value) -> Option<Value> {
    let bound = |k: &str| prop.get(k).and_then(Value::as_f64);
    let step = bound("multipleOf").filter(|m| *m > 0.0).unwrap_or(1.0);
    let fits = |y: f64| {
        bound("maximum").is_none_or(|m| y <= m)
            && bound("exclusiveMaximum").is_none_or(|m| y < m)
            && bound("minimum").is_none_or(|m| y >= m)
            && bound("exclusiveMinimum").is_none_or(|m| y > m)
    };
    let y = [x + step, x - step].into_iter().find(|y| fits(*y))?;
    let integer = prop.get("type").and_then(Value::as_str) == Some("integer") || !float;
    Some(if integer && y.fract() == 0.0 { json!(y as i64) } else { json!(y) })
}

fn other_string(s: &str, prop: &Value) -> Option<Value> {
    if prop.get("pattern").is_some() || prop.get("format").is_some() {
        return None;
    }
    let max = prop.get("maxLength").and_then(Value::as_u64).map_or(usize::MAX, |m| m as usize);
    let min = prop.get("minLength").and_then(Value::as_u64).unwrap_or(0) as usize;
    let len = s.chars().count();
    let changed = if len < max {
        format!("{s}2")
    } else {
        // At the longest: the last character changed instead.
        let mut c: Vec<char> = s.chars().collect();
        let last = c.pop()?;
        c.push(if last == '2' { '3' } else { '2' });
        c.into_iter().collect()
    };
    (changed.chars().count() >= min && changed != s).then(|| json!(changed))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn another_member_of_an_enum_and_numbers_within_bounds() {
        let cur = json!({"enum": ["EUR", "USD"]});
        assert_eq!(other_value(&json!("EUR"), &cur), Some(json!("USD")), "never a value outside the enum");
        assert_eq!(other_value(&json!("EUR"), &json!({"enum": ["EUR"]})), None);
        assert_eq!(other_value(&json!(5), &json!({"type": "integer", "maximum": 5})), Some(json!(4)));
        assert_eq!(other_value(&json!(5), &json!({"type": "integer", "minimum": 5, "maximum": 5})), None);
        assert_eq!(other_value(&json!(10), &json!({"multipleOf": 5})), Some(json!(15)));
        assert_eq!(other_value(&json!(1.5), &json!({"type": "number"})), Some(json!(2.5)));
        assert_eq!(other_value(&json!(true), &json!({})), Some(json!(false)));
        assert_eq!(other_value(&json!("x"), &json!({"const": "x"})), None);
    }

    #[test]
    fn strings_keep_their_length_bounds_and_leave_patterns_alone() {
        assert_eq!(other_value(&json!("ab"), &json!({"maxLength": 2})), Some(json!("a2")));
        assert_eq!(other_value(&json!("ab"), &json!({})), Some(json!("ab2")));
        assert_eq!(other_value(&json!("a@b"), &json!({"format": "email"})), None);
        assert_eq!(other_value(&json!("12"), &json!({"pattern": "^[0-9]+$"})), None);
    }

    #[test]
    fn the_call_tag_is_changed_last_and_undeclared_arguments_never() {
        let schema = json!({"properties": {"order": {"type": "string"}, "currency": {"enum": ["EUR", "USD"]}}});
        let args = json!({"order": "{{call}}", "currency": "EUR", "note": "x"}).as_object().cloned().unwrap();
        let (name, out) = other_args(&args, &schema, "{{call}}").unwrap();
        assert_eq!(name, "currency");
        assert_eq!(out["currency"], "USD");
        let only_note = json!({"note": "x"}).as_object().cloned().unwrap();
        assert!(other_args(&only_note, &schema, "{{call}}").is_err());
    }
}
