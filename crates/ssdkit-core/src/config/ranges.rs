//! The allowed values of each numeric configuration key, declared once next to its field with
//! `#[range(...)]` under `#[ranges]` (crate ssdkit-macros, where the syntax is listed). The
//! declaration gives the load-time check and its message (here), and the bounds of
//! docs/config.schema.json (`schema`). Rules that relate several keys stay in `validate/`.

use schemars::schema::{InstanceType, Schema, SchemaObject, SingleOrVec};

/// Whole milliseconds in u64 picoseconds (18446744073 ms, about 213 days): bounds every time
/// setting so that it converts to picoseconds without overflow.
pub const END_OF_TIME_MS: u64 = u64::MAX / crate::engine::PS_PER_MS;

/// Requests the flows may keep in flight together: 2^24, far below the event queue's 2^28.
pub const MAX_IN_FLIGHT: u64 = 1 << 24;

/// A type whose fields declare their ranges: `check_ranges` checks them in declaration order
/// (nested sections in place) and returns the first key out of range. `path` is the key path
/// of `self` ("" for the whole configuration).
pub trait Ranged {
    fn check_ranges(&self, path: &str) -> Result<(), String>;
}

impl<T: Ranged> Ranged for Vec<T> {
    fn check_ranges(&self, path: &str) -> Result<(), String> {
        for (i, v) in self.iter().enumerate() {
            v.check_ranges(&format!("{path}.{i}"))?;
        }
        Ok(())
    }
}

impl<T: Ranged> Ranged for Option<T> {
    fn check_ranges(&self, path: &str) -> Result<(), String> {
        match self {
            Some(v) => v.check_ranges(path),
            None => Ok(()),
        }
    }
}

/// `path.name`, or `name` at the top.
pub fn key(path: &str, name: &str) -> String {
    if path.is_empty() {
        name.to_string()
    } else {
        format!("{path}.{name}")
    }
}

/// A bound as written: integers stay exact (u64 bounds beyond 2^53 included).
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Limit {
    Int(i128),
    Float(f64),
}

impl Limit {
    fn f(self) -> f64 {
        match self {
            Limit::Int(v) => v as f64,
            Limit::Float(v) => v,
        }
    }
    fn json(self) -> serde_json::Value {
        match self {
            Limit::Int(v) => i64::try_from(v)
                .map(Into::into)
                .unwrap_or_else(|_| (v as u64).into()),
            Limit::Float(v) => v.into(),
        }
    }
}

impl std::fmt::Display for Limit {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Limit::Int(v) => write!(f, "{v}"),
            Limit::Float(v) => write!(f, "{v}"),
        }
    }
}

macro_rules! int_limit {
    ($($t:ty),*) => {$(
        impl From<$t> for Limit {
            fn from(v: $t) -> Self {
                Limit::Int(v as i128)
            }
        }
    )*};
}
int_limit!(i32, i64, u32, u64);
impl From<f64> for Limit {
    fn from(v: f64) -> Self {
        Limit::Float(v)
    }
}

/// One key's allowed values (built by the code `#[range]` generates).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Range {
    /// Lower bound, and whether it is excluded (`gt`).
    pub lo: Option<(Limit, bool)>,
    /// Upper bound, and whether it is excluded (`lt`).
    pub hi: Option<(Limit, bool)>,
    pub pow2: bool,
    /// 0 is accepted besides the range (an unset key).
    pub or_zero: bool,
    /// The only values allowed, if listed.
    pub one_of: Vec<Limit>,
    /// What a listed value is ("a PCIe link width"), for the message.
    pub what: Option<&'static str>,
    /// Said in parentheses after the allowed values.
    pub note: Option<&'static str>,
}

impl Range {
    pub fn new() -> Self {
        Self::default()
    }
    pub fn min(mut self, v: impl Into<Limit>) -> Self {
        self.lo = Some((v.into(), false));
        self
    }
    pub fn gt(mut self, v: impl Into<Limit>) -> Self {
        self.lo = Some((v.into(), true));
        self
    }
    pub fn max(mut self, v: impl Into<Limit>) -> Self {
        self.hi = Some((v.into(), false));
        self
    }
    pub fn lt(mut self, v: impl Into<Limit>) -> Self {
        self.hi = Some((v.into(), true));
        self
    }
    pub fn pow2(mut self) -> Self {
        self.pow2 = true;
        self
    }
    pub fn or_zero(mut self) -> Self {
        self.or_zero = true;
        self
    }
    pub fn one_of<T: Into<Limit>>(mut self, v: impl IntoIterator<Item = T>) -> Self {
        self.one_of = v.into_iter().map(Into::into).collect();
        self
    }
    pub fn what(mut self, s: &'static str) -> Self {
        self.what = Some(s);
        self
    }
    pub fn note(mut self, s: &'static str) -> Self {
        self.note = Some(s);
        self
    }

    fn note_text(&self) -> String {
        self.note.map(|n| format!(" ({n})")).unwrap_or_default()
    }

    /// Whether `v` is allowed; `int` compares integers exactly.
    fn allows(&self, v: f64, int: Option<i128>) -> bool {
        if self.or_zero && v == 0.0 {
            return true;
        }
        if !v.is_finite() {
            return false;
        }
        let cmp = |l: Limit| -> std::cmp::Ordering {
            match (l, int) {
                (Limit::Int(b), Some(x)) => x.cmp(&b),
                _ => v.partial_cmp(&l.f()).unwrap_or(std::cmp::Ordering::Less),
            }
        };
        if !self.one_of.is_empty() {
            return self.one_of.iter().any(|&l| cmp(l).is_eq());
        }
        if self.pow2 && !int.is_some_and(|i| i > 0 && (i as u128).is_power_of_two()) {
            return false;
        }
        let lo_ok = self.lo.is_none_or(|(l, open)| {
            let c = cmp(l);
            c.is_gt() || (!open && c.is_eq())
        });
        let hi_ok = self.hi.is_none_or(|(h, open)| {
            let c = cmp(h);
            c.is_lt() || (!open && c.is_eq())
        });
        lo_ok && hi_ok
    }

    /// The message for `key` = `shown` out of range; `int`: the key is an integer whose type
    /// holds at most this (a bound there goes unsaid: "allowed >= 1").
    fn refuse(&self, key: &str, shown: &str, int: Option<i128>) -> String {
        let note = self.note_text();
        if !self.one_of.is_empty() {
            let list: Vec<String> = self.one_of.iter().map(|l| l.to_string()).collect();
            let (last, rest) = list.split_last().expect("a listed range has values");
            let allowed = if rest.is_empty() {
                last.clone()
            } else {
                format!("{} or {last}", rest.join(", "))
            };
            return match self.what {
                Some(what) => {
                    format!("key `{key}` = {shown} is not {what}; allowed {allowed}{note}")
                }
                None => format!("key `{key}` = {shown} is not allowed; allowed {allowed}{note}"),
            };
        }
        let (lo, hi) = (self.lo, self.hi);
        if self.pow2 {
            let (l, h) = (lo.map(|b| b.0), hi.map(|b| b.0));
            let span = match (l, h) {
                (Some(l), Some(h)) => format!("{l}..={h}"),
                (Some(l), None) => format!(">= {l}"),
                (None, Some(h)) => format!("<= {h}"),
                (None, None) => String::new(),
            };
            return format!("key `{key}` = {shown} must be a power of two in {span}{note}");
        }
        let closed = |b: Option<(Limit, bool)>| b.is_none_or(|(_, open)| !open);
        let hi = hi.filter(|&(h, _)| int.is_none_or(|top| h != Limit::Int(top)));
        let span = if int.is_some() && closed(lo) && closed(hi) {
            match (lo, hi) {
                (Some((l, _)), Some((h, _))) => format!("{l}..={h}"),
                (Some((l, _)), None) => format!(">= {l}"),
                (None, Some((h, _))) => format!("<= {h}"),
                (None, None) => "any value".to_string(),
            }
        } else {
            let l = match lo {
                Some((l, open)) => format!("{}{l}", if open { "(" } else { "[" }),
                None => "(-inf".to_string(),
            };
            let h = match hi {
                Some((h, open)) => format!("{h}{}", if open { ")" } else { "]" }),
                None => "inf)".to_string(),
            };
            format!("{l}, {h}")
        };
        format!("key `{key}` = {shown} is out of range; allowed {span}{note}")
    }
}

/// A value a range applies to: numbers, and options and lists of them (a list's values are
/// named `key[i]`).
pub trait Value {
    fn check(&self, key: &str, r: &Range) -> Result<(), String>;
}

macro_rules! int_value {
    ($($t:ty),*) => {$(
        impl Value for $t {
            fn check(&self, key: &str, r: &Range) -> Result<(), String> {
                let v = *self as i128;
                if r.allows(v as f64, Some(v)) {
                    Ok(())
                } else {
                    Err(r.refuse(key, &v.to_string(), Some(<$t>::MAX as i128)))
                }
            }
        }
    )*};
}
int_value!(u8, u16, u32, u64, usize, i32, i64);

impl Value for f64 {
    fn check(&self, key: &str, r: &Range) -> Result<(), String> {
        if r.allows(*self, None) {
            Ok(())
        } else {
            Err(r.refuse(key, &self.to_string(), None))
        }
    }
}

impl<T: Value> Value for Option<T> {
    fn check(&self, key: &str, r: &Range) -> Result<(), String> {
        match self {
            Some(v) => v.check(key, r),
            None => Ok(()),
        }
    }
}

impl<T: Value> Value for Vec<T> {
    fn check(&self, key: &str, r: &Range) -> Result<(), String> {
        for (i, v) in self.iter().enumerate() {
            v.check(&format!("{key}[{i}]"), r)?;
        }
        Ok(())
    }
}

/// `s` (the field type's own schema) with the range's bounds; for a list, on its items.
pub fn schema(mut s: Schema, r: &Range) -> Schema {
    if let Schema::Object(o) = &mut s {
        let is_array =
            matches!(&o.instance_type, Some(SingleOrVec::Single(t)) if **t == InstanceType::Array);
        match o.array.as_mut().and_then(|a| a.items.as_mut()) {
            Some(SingleOrVec::Single(item)) if is_array => {
                if let Schema::Object(io) = item.as_mut() {
                    bound(io, r);
                }
            }
            _ => bound(o, r),
        }
    }
    s
}

fn bound(o: &mut SchemaObject, r: &Range) {
    let mut target = SchemaObject::default();
    let n = target.number();
    for (b, incl, excl) in [
        (r.lo, &mut n.minimum, &mut n.exclusive_minimum),
        (r.hi, &mut n.maximum, &mut n.exclusive_maximum),
    ] {
        *incl = None;
        *excl = None;
        if let Some((l, open)) = b {
            *(if open { excl } else { incl }) = Some(l.f());
        }
    }
    if !r.one_of.is_empty() {
        let f = r.one_of.iter().map(|l| l.f());
        n.minimum = f.clone().reduce(f64::min);
        n.maximum = f.reduce(f64::max);
        target.enum_values = Some(r.one_of.iter().map(|l| l.json()).collect());
    } else if r.pow2 {
        let lo = r.lo.map_or(1, |(l, _)| l.f() as u64).max(1);
        // Powers of two between the bounds: an editor offers them.
        let hi = r.hi.map_or(u64::MAX, |(h, _)| h.f() as u64);
        let powers = (0..64).map(|k| 1u64 << k).filter(|p| (lo..=hi).contains(p));
        target.enum_values = Some(powers.map(Into::into).collect());
    }
    if r.or_zero {
        // 0 (unset), or a value in the range.
        let zero = SchemaObject {
            const_value: Some(0.into()),
            ..Default::default()
        };
        o.number = None;
        o.subschemas().any_of = Some(vec![zero.into(), target.into()]);
    } else {
        o.number = target.number;
        if target.enum_values.is_some() {
            o.enum_values = target.enum_values;
        }
    }
}

#[cfg(test)]
mod tests;
