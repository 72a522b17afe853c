//! The result document is the typed `RunResult`: a real run's JSON reads back into the type
//! and writes out byte for byte, figures first and the configuration last.
use ssdkit_core::api::{load, run, Source};
use ssdkit_core::result::RunResult;

#[test]
fn a_run_reads_back_into_the_type_and_ends_with_the_configuration() {
    let c = load(
        Source::Preset("mqsim-paper"),
        &[
            "flash.blocks_per_plane=128".into(),
            "flow.0.requests=3000".into(),
            "flow.0.read_fraction=0.7".into(),
            "flow.0.trim_fraction=0.05".into(),
        ],
    )
    .unwrap();
    let out = run(&c, false, false).unwrap();
    let text = serde_json::to_string(&out.result).unwrap();
    let typed: RunResult = serde_json::from_str(&text).expect("the document is a RunResult");
    let again = serde_json::to_string(&typed).unwrap();
    if again != text {
        let at = again
            .bytes()
            .zip(text.bytes())
            .take_while(|(a, b)| a == b)
            .count();
        panic!(
            "round trip differs at byte {at}: {:?} vs {:?}",
            &text[at.saturating_sub(80)..(at + 80).min(text.len())],
            &again[at.saturating_sub(80)..(at + 80).min(again.len())]
        );
    }
    let keys: Vec<&String> = out.result.as_object().unwrap().keys().collect();
    assert_eq!(keys.first().map(|k| k.as_str()), Some("schema_version"));
    assert_eq!(keys.last().map(|k| k.as_str()), Some("config"));
    // Every op's histogram holds exactly its requests.
    let s = &typed.device.stats;
    for op in [&s.read, &s.write, &s.trim, &s.all] {
        assert_eq!(op.latency_histogram.count.iter().sum::<u64>(), op.count);
    }
    assert!(s.read.count > 0 && s.write.count > 0 && s.trim.count > 0);
    assert_eq!(s.all.count, s.read.count + s.write.count);
}

/// The definition a property's schema names (`$ref`, or wrapped in `allOf`/`anyOf` as
/// schemars writes a described or optional field).
fn definition<'a>(
    schema: &'a serde_json::Value,
    prop: &serde_json::Value,
) -> &'a serde_json::Value {
    let r = prop["$ref"]
        .as_str()
        .or_else(|| prop["allOf"][0]["$ref"].as_str())
        .or_else(|| prop["anyOf"][0]["$ref"].as_str())
        .unwrap_or_else(|| panic!("no $ref in {prop}"));
    &schema["definitions"][r.trim_start_matches("#/definitions/")]
}

/// The preconditioning record and the random streams are typed: every key a run writes is a
/// property of docs/result.schema.json with its description, in every mode.
#[test]
fn the_schema_names_every_key_of_the_precondition_record_and_the_random_streams() {
    let schema: serde_json::Value =
        serde_json::from_str(&ssdkit_core::result::schema_json()).unwrap();
    let device = &schema["definitions"]["DeviceResult"]["properties"];
    let record = definition(&schema, &device["precondition"]);
    let streams = definition(&schema, &device["random_streams"]);
    let described = |def: &serde_json::Value, doc: &serde_json::Value, what: &str| {
        for (key, _) in doc.as_object().unwrap() {
            let p = &def["properties"][key];
            assert!(
                p["description"].as_str().is_some_and(|d| !d.is_empty()),
                "{what}: key `{key}` is not described by docs/result.schema.json"
            );
        }
    };
    for mode in ["fast", "write", "sequential", "empty"] {
        let c = load(
            Source::Preset("mqsim-paper"),
            &[
                "flash.blocks_per_plane=128".into(),
                "flow.0.requests=200".into(),
                "ftl.cmt.mode=shared".into(),
                format!("precondition.mode={mode}"),
            ],
        )
        .unwrap();
        let out = run(&c, false, false).unwrap();
        let rec = &out.result["device"]["precondition"];
        assert_eq!(rec["mode"], mode);
        described(record, rec, mode);
        if mode != "empty" {
            let cmt = definition(&schema, &record["properties"]["cmt"]);
            described(cmt, &rec["cmt"], "cmt");
        }
        described(
            streams,
            &out.result["device"]["random_streams"],
            "random_streams",
        );
    }
}
