//! Lua has one empty table for `[]` and `{}`. Neovim sends a plain empty
//! table as a list and one marked `vim.empty_dict()` (or made by Neovim
//! itself) as a map, so what Lua sends says nothing about which an empty
//! value was meant to be. Where a payload's type knows, the seam restores
//! the shape here, once, as Lua's values become JSON.

use serde::Deserialize;
use serde_json::{Map, Value as Json};

/// `value` as a list: an empty map is an empty list.
pub fn list(value: Json) -> Json {
    match value {
        Json::Object(map) if map.is_empty() => Json::Array(vec![]),
        other => other,
    }
}

/// The items of a list in a Lua table: none when it is absent, not a list,
/// or an empty table that arrived as a map.
pub fn items(value: &Json) -> impl Iterator<Item = &Json> {
    value.as_array().into_iter().flatten()
}

/// `value` as an object: an empty list is an empty object.
pub fn object(value: Json) -> Json {
    match value {
        Json::Array(list) if list.is_empty() => Json::Object(Map::new()),
        other => other,
    }
}

/// Keywords of JSON Schema whose value is a schema.
const SCHEMA: &[&str] = &[
    "additionalProperties",
    "unevaluatedProperties",
    "propertyNames",
    "additionalItems",
    "unevaluatedItems",
    "contains",
    "not",
    "if",
    "then",
    "else",
    "contentSchema",
];

/// Keywords whose value maps names to schemas.
const SCHEMA_MAPS: &[&str] = &[
    "properties",
    "patternProperties",
    "$defs",
    "definitions",
    "dependentSchemas",
];

/// Keywords whose value is a list of schemas.
const SCHEMA_LISTS: &[&str] = &["allOf", "anyOf", "oneOf", "prefixItems"];

/// Keywords whose value is a list of values.
const VALUE_LISTS: &[&str] = &["required", "enum", "examples"];

/// A JSON Schema as Lua wrote it, with an object wherever the schema
/// language needs one: the schema itself, `properties` and every other map
/// of schemas, and each schema nested in them.
pub fn schema(value: Json) -> Json {
    match object(value) {
        Json::Object(keywords) => Json::Object(
            keywords
                .into_iter()
                .map(|(name, value)| {
                    let value = keyword(&name, value);
                    (name, value)
                })
                .collect(),
        ),
        // `true`, `false`, or no schema at all: left for the checks.
        other => other,
    }
}

/// The value of schema keyword `name`, shaped as the keyword needs.
fn keyword(name: &str, value: Json) -> Json {
    match name {
        k if SCHEMA.contains(&k) => schema(value),
        k if SCHEMA_MAPS.contains(&k) => match object(value) {
            Json::Object(map) => Json::Object(
                map.into_iter()
                    .map(|(name, nested)| (name, schema(nested)))
                    .collect(),
            ),
            other => other,
        },
        k if SCHEMA_LISTS.contains(&k) => match list(value) {
            Json::Array(all) => Json::Array(all.into_iter().map(schema).collect()),
            other => other,
        },
        // One schema for every item, or (older drafts) one per place.
        "items" => match value {
            Json::Array(all) if !all.is_empty() => {
                Json::Array(all.into_iter().map(schema).collect())
            }
            one => schema(one),
        },
        k if VALUE_LISTS.contains(&k) => list(value),
        _ => value,
    }
}

/// Serde: a list field from Lua.
pub(super) fn lua_list<'de, D, T>(deserializer: D) -> Result<Vec<T>, D::Error>
where
    D: serde::Deserializer<'de>,
    T: serde::de::DeserializeOwned,
{
    serde_json::from_value(list(Json::deserialize(deserializer)?)).map_err(serde::de::Error::custom)
}

/// Serde: a JSON Schema field from Lua.
pub(super) fn lua_schema<'de, D>(deserializer: D) -> Result<Json, D::Error>
where
    D: serde::Deserializer<'de>,
{
    Json::deserialize(deserializer).map(schema)
}

/// Serde: a field holding a Lua table that is an object unless it is a
/// list with items.
pub(super) fn lua_table<'de, D>(deserializer: D) -> Result<Option<Json>, D::Error>
where
    D: serde::Deserializer<'de>,
{
    Option::<Json>::deserialize(deserializer).map(|table| table.map(object))
}

/// A Lua table of strings keyed by name (an environment): `{}` arrives as
/// an empty list.
pub(super) fn lua_string_map<'de, D>(
    deserializer: D,
) -> Result<std::collections::BTreeMap<String, String>, D::Error>
where
    D: serde::Deserializer<'de>,
{
    let table = Option::<Json>::deserialize(deserializer)?.map(object);
    match table {
        None => Ok(Default::default()),
        Some(table) => serde_json::from_value(table).map_err(serde::de::Error::custom),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn empty_tables_take_the_shape_their_place_needs() {
        assert_eq!(list(json!({})), json!([]));
        assert_eq!(list(json!({"a": 1})), json!({"a": 1}));
        assert_eq!(object(json!([])), json!({}));
        assert_eq!(object(json!([1])), json!([1]));
        for none in [json!({}), json!(null), json!("a")] {
            assert_eq!(items(&none).count(), 0, "{none}");
        }
        assert_eq!(
            items(&json!([1, 2])).collect::<Vec<_>>(),
            [&json!(1), &json!(2)]
        );
    }

    #[test]
    fn a_schema_gets_objects_wherever_it_needs_them() {
        let lua = json!({
            "type": "object",
            "properties": {
                "none": [],
                "opts": {"type": "object", "properties": [], "additionalProperties": []},
                "list": {"type": "array", "items": []},
                "pair": {"type": "array", "items": [[], {"type": "string"}]},
                "either": {"anyOf": [[], {"type": "object", "properties": []}]},
                "tags": {"type": "string", "enum": {}},
            },
            "required": {},
            "$defs": [],
            "default": [],
        });
        assert_eq!(
            schema(lua),
            json!({
                "type": "object",
                "properties": {
                    "none": {},
                    "opts": {"type": "object", "properties": {}, "additionalProperties": {}},
                    "list": {"type": "array", "items": {}},
                    "pair": {"type": "array", "items": [{}, {"type": "string"}]},
                    "either": {"anyOf": [{}, {"type": "object", "properties": {}}]},
                    "tags": {"type": "string", "enum": []},
                },
                "required": [],
                "$defs": {},
                "default": [],
            }),
            "a value (default) keeps Lua's list"
        );
        assert_eq!(schema(json!([])), json!({}));
        assert_eq!(
            schema(json!("object")),
            json!("object"),
            "left for the checks"
        );
        assert_eq!(schema(json!(true)), json!(true));
    }
}
