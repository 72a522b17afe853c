//! Policies written as a table tagged by `type` that carries their parameters
//! (`tsu.policy = { type = "flin", epoch_us = 5000 }`), or as the bare name for the policy
//! with its defaults (`tsu.policy = "flin"`). The policy's own enum, internally tagged, is the
//! one list of policies: a name is read as the table `{ type = name }`, so names, defaults and
//! the messages for unknown ones come from that enum alone.

use schemars::gen::SchemaGenerator;
use schemars::schema::{InstanceType, Schema, SchemaObject, SubschemaValidation};
use schemars::JsonSchema;
use serde::de::value::{MapAccessDeserializer, MapDeserializer};
use serde::de::{self, Deserialize, Deserializer, MapAccess, Visitor};
use serde::Serialize;
use std::marker::PhantomData;

/// Keys that hold such a policy: a bare name there reads as `{ type = name }` when an
/// override or a file sets one of its parameters.
/// Each with the key of its tag.
pub(super) const TAGGED_KEYS: [(&str, &str); 3] = [
    ("tsu.policy", "type"),
    ("ftl.gc_policy", "type"),
    ("ftl.mapping", "scheme"),
];

/// `deserialize_with` for a policy field: its name or its tagged table.
pub(super) fn name_or_table<'de, D, T>(d: D) -> Result<T, D::Error>
where
    D: Deserializer<'de>,
    T: Deserialize<'de>,
{
    name_or_tagged(d, "type")
}

/// `deserialize_with` for `ftl.mapping`: its scheme's name or its table tagged by `scheme`.
pub(super) fn name_or_scheme<'de, D, T>(d: D) -> Result<T, D::Error>
where
    D: Deserializer<'de>,
    T: Deserialize<'de>,
{
    name_or_tagged(d, "scheme")
}

fn name_or_tagged<'de, D, T>(d: D, tag: &'static str) -> Result<T, D::Error>
where
    D: Deserializer<'de>,
    T: Deserialize<'de>,
{
    struct V<T>(PhantomData<T>, &'static str);
    impl<'de, T: Deserialize<'de>> Visitor<'de> for V<T> {
        type Value = T;
        fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
            f.write_str("a policy name or a table with its `type` and parameters")
        }
        fn visit_str<E: de::Error>(self, s: &str) -> Result<T, E> {
            T::deserialize(MapDeserializer::new(std::iter::once((self.1, s))))
        }
        fn visit_map<A: MapAccess<'de>>(self, m: A) -> Result<T, A::Error> {
            T::deserialize(MapAccessDeserializer::new(m))
        }
    }
    d.deserialize_any(V(PhantomData, tag))
}

/// The `type` of a tagged policy.
pub(super) fn type_name<T: Serialize>(p: &T) -> String {
    match serde_json::to_value(p) {
        Ok(serde_json::Value::Object(m)) => m
            .get("type")
            .and_then(|t| t.as_str())
            .unwrap_or_default()
            .to_string(),
        _ => String::new(),
    }
}

/// Schema of a policy field: one of the names, or the tagged table.
pub(super) fn schema<T: JsonSchema>(gen: &mut SchemaGenerator) -> Schema {
    schema_tagged::<T>(gen, "type")
}

/// Schema of `ftl.mapping`: one of the scheme names, or the table tagged by `scheme`.
pub(super) fn schema_by<T: JsonSchema>(gen: &mut SchemaGenerator) -> Schema {
    schema_tagged::<T>(gen, "scheme")
}

fn schema_tagged<T: JsonSchema>(gen: &mut SchemaGenerator, tag: &str) -> Schema {
    let table = T::json_schema(gen);
    let mut names = Vec::new();
    collect_type_names(
        &serde_json::to_value(&table).unwrap_or_default(),
        tag,
        &mut names,
    );
    let name = SchemaObject {
        instance_type: Some(InstanceType::String.into()),
        enum_values: Some(names),
        ..Default::default()
    };
    SchemaObject {
        subschemas: Some(Box::new(SubschemaValidation {
            any_of: Some(vec![name.into(), table]),
            ..Default::default()
        })),
        ..Default::default()
    }
    .into()
}

fn collect_type_names(v: &serde_json::Value, tag: &str, out: &mut Vec<serde_json::Value>) {
    match v {
        serde_json::Value::Object(m) => {
            if let Some(e) = m
                .get("properties")
                .and_then(|p| p.get(tag))
                .and_then(|t| t.get("enum"))
                .and_then(|e| e.as_array())
            {
                out.extend(e.iter().cloned());
            }
            for (k, x) in m {
                if k != "properties" {
                    collect_type_names(x, tag, out);
                }
            }
        }
        serde_json::Value::Array(a) => a.iter().for_each(|x| collect_type_names(x, tag, out)),
        _ => {}
    }
}

#[cfg(test)]
mod tests {
    use crate::config::{ClassWeights, Config, FlinConfig, GcPolicy, TsuPolicy};

    const FLOW: &str = "\n[[flow]]\nrequests = 1\n";

    fn load(text: &str, overrides: &[&str]) -> Result<Config, String> {
        let o: Vec<String> = overrides.iter().map(|s| s.to_string()).collect();
        Config::load(&format!("{text}{FLOW}"), "t.toml", &o).map_err(|e| e.to_string())
    }

    /// A policy's name is its table with the defaults; the table carries the parameters.
    #[test]
    fn a_name_is_the_table_with_defaults() {
        let by_name = load("[tsu]\npolicy = \"flin\"\n", &[]).unwrap();
        let by_table = load("[tsu.policy]\ntype = \"flin\"\n", &[]).unwrap();
        assert_eq!(by_name.tsu.policy, TsuPolicy::Flin(FlinConfig::default()));
        assert_eq!(by_name, by_table);
        let c = load(
            "[tsu]\npolicy = { type = \"priority_out_of_order\", weight_high = 8 }\n",
            &[],
        )
        .unwrap();
        let w = ClassWeights {
            weight_high: 8,
            ..Default::default()
        };
        assert_eq!(c.tsu.policy, TsuPolicy::PriorityOutOfOrder(w));
        let c = load("[ftl]\ngc_policy = { type = \"d_choices\", d = 4 }\n", &[]).unwrap();
        assert_eq!(c.ftl.gc_policy, GcPolicy::DChoices { d: 4 });
        assert_eq!(c.ftl.gc_policy.name(), "d_choices");
        assert_eq!(load("", &[]).unwrap().tsu.policy.name(), "out_of_order");
    }

    /// A parameter set over a policy given by name, in a file or an override, keeps it; a
    /// parameter of another policy, or an unknown name, is refused with the allowed values.
    #[test]
    fn parameters_over_a_name_and_refusals() {
        let c = load(
            "[tsu]\npolicy = \"priority_out_of_order\"\n",
            &["tsu.policy.weight_low=3"],
        )
        .unwrap();
        assert_eq!(c.tsu.policy.class_weights(), Some([4, 2, 3]));
        let base = Config::load_on(
            Some("mqsim-paper"),
            "[ftl]\ngc_policy = { d = 4 }\n",
            "t.toml",
            &["ftl.gc_policy=d_choices".to_string()],
        );
        // The override replaced the table: the name stands alone, with its default d.
        assert_eq!(base.unwrap().ftl.gc_policy, GcPolicy::DChoices { d: 10 });
        let e = load("[tsu.policy]\ntype = \"fifo\"\nweight_high = 4\n", &[]).unwrap_err();
        assert!(
            e.contains("key `tsu.policy`") && e.contains("unknown field `weight_high`"),
            "{e}"
        );
        let e = load("[tsu]\npolicy = \"lottery\"\n", &[]).unwrap_err();
        assert!(
            e.contains("key `tsu.policy`")
                && e.contains("`lottery`")
                && e.contains("`priority_out_of_order`"),
            "{e}"
        );
        let e = load("[ftl]\ngc_policy = 3\n", &[]).unwrap_err();
        assert!(
            e.contains("ftl.gc_policy") && e.contains("policy name"),
            "{e}"
        );
    }

    /// The policies with priority classes declare their weights once: the same keys, ranges,
    /// defaults and descriptions in FLIN's table as in priority_out_of_order's, which still
    /// refuse a mistyped key and check each weight's range under their own table.
    #[test]
    fn class_weights_are_declared_once() {
        let schema: serde_json::Value =
            serde_json::from_str(&crate::config::schema_json()).unwrap();
        // Every object of the schema whose properties hold the weights: each policy's table.
        fn tables(v: &serde_json::Value, out: &mut Vec<serde_json::Value>) {
            match v {
                serde_json::Value::Object(m) => {
                    if let Some(p) = m
                        .get("properties")
                        .filter(|p| p.get("weight_high").is_some())
                    {
                        out.push(p.clone());
                    }
                    m.values().for_each(|x| tables(x, out));
                }
                serde_json::Value::Array(a) => a.iter().for_each(|x| tables(x, out)),
                _ => {}
            }
        }
        let mut found = Vec::new();
        tables(&schema, &mut found);
        let tables = found;
        assert_eq!(tables.len(), 2, "priority_out_of_order and flin");
        for key in ["weight_high", "weight_medium", "weight_low"] {
            assert_eq!(tables[0][key], tables[1][key], "{key}");
        }
        let flin = FlinConfig::default();
        assert_eq!(
            flin.class_weights(),
            ClassWeights::default().class_weights()
        );
        let e = load("[tsu.policy]\ntype = \"flin\"\nweight_hi = 4\n", &[]).unwrap_err();
        assert!(
            e.contains("key `tsu.policy`") && e.contains("unknown field `weight_hi`"),
            "{e}"
        );
        let e = load("[tsu.policy]\ntype = \"flin\"\nweight_low = 0\n", &[]).unwrap_err();
        assert!(
            e.contains("tsu.policy.weight_low") && e.contains("1..=256"),
            "{e}"
        );
    }

    /// The configuration echoed in a result holds each policy as its table, which loads back
    /// to the same configuration.
    #[test]
    fn the_echo_is_the_table_and_loads_back() {
        let c = load(
            "[tsu]\npolicy = \"flin\"\n[ftl]\ngc_policy = \"d_choices\"\n",
            &[],
        )
        .unwrap();
        let v = serde_json::to_value(&c).unwrap();
        assert_eq!(v["tsu"]["policy"]["type"], "flin");
        assert_eq!(v["tsu"]["policy"]["epoch_us"], 10000.0);
        assert_eq!(
            v["ftl"]["gc_policy"],
            serde_json::json!({"type": "d_choices", "d": 10})
        );
        let text = toml::to_string(&c).unwrap();
        assert_eq!(Config::load(&text, "echo", &[]).unwrap(), c);
    }

    /// `ftl.mapping` is tagged by `scheme`: a name, a table, a parameter set over a name by an
    /// override; the echo is the table, which loads back.
    #[test]
    fn the_mapping_is_tagged_by_scheme() {
        use crate::config::{Associativity, Mapping};
        // Block and hybrid mapping build no "fast" steady state (the default).
        let seq = "[precondition]\nmode = \"sequential\"\n";
        let by_name = load(&format!("[ftl]\nmapping = \"hybrid\"\n{seq}"), &[]).unwrap();
        let set = Mapping::Hybrid {
            log_blocks: 8,
            associativity: Associativity::Set,
        };
        assert_eq!(by_name.ftl.mapping, set);
        let c = load(
            &format!("[ftl]\nmapping = \"hybrid\"\n{seq}"),
            &["ftl.mapping.associativity=full", "ftl.mapping.log_blocks=4"],
        )
        .unwrap();
        let full = Mapping::Hybrid {
            log_blocks: 4,
            associativity: Associativity::Full,
        };
        assert_eq!(c.ftl.mapping, full);
        assert_eq!(load("", &[]).unwrap().ftl.mapping, Mapping::Page {});
        let v = serde_json::to_value(&c).unwrap();
        assert_eq!(
            v["ftl"]["mapping"],
            serde_json::json!({"scheme": "hybrid", "log_blocks": 4, "associativity": "full"})
        );
        let text = toml::to_string(&c).unwrap();
        assert_eq!(Config::load(&text, "echo", &[]).unwrap(), c);
        let e = load(
            "[ftl]\nmapping = { scheme = \"block\", log_blocks = 2 }\n",
            &[],
        )
        .unwrap_err();
        assert!(e.contains("ftl.mapping") && e.contains("log_blocks"), "{e}");
    }
}
