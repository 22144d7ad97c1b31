//! msgpack (`rmpv`) ⇄ JSON (`serde_json`) values.

use nvim_rs::Value as Msgpack;
use serde_json::Value as Json;

pub fn to_json(value: &Msgpack) -> Json {
    match value {
        Msgpack::Nil => Json::Null,
        Msgpack::Boolean(b) => Json::Bool(*b),
        Msgpack::Integer(i) => i
            .as_i64()
            .map(Json::from)
            .or_else(|| i.as_u64().map(Json::from))
            .unwrap_or(Json::Null),
        Msgpack::F32(f) => {
            serde_json::Number::from_f64(f64::from(*f)).map_or(Json::Null, Json::Number)
        }
        Msgpack::F64(f) => serde_json::Number::from_f64(*f).map_or(Json::Null, Json::Number),
        Msgpack::String(s) => Json::String(s.as_str().map_or_else(
            || String::from_utf8_lossy(s.as_bytes()).into_owned(),
            str::to_owned,
        )),
        Msgpack::Binary(b) => Json::String(String::from_utf8_lossy(b).into_owned()),
        Msgpack::Array(items) => Json::Array(items.iter().map(to_json).collect()),
        Msgpack::Map(pairs) => Json::Object(
            pairs
                .iter()
                .map(|(k, v)| {
                    let key = match k {
                        Msgpack::String(s) => s.as_str().unwrap_or_default().to_owned(),
                        other => other.to_string(),
                    };
                    (key, to_json(v))
                })
                .collect(),
        ),
        Msgpack::Ext(_, _) => Json::Null,
    }
}

pub fn from_json(value: &Json) -> Msgpack {
    match value {
        Json::Null => Msgpack::Nil,
        Json::Bool(b) => Msgpack::from(*b),
        Json::Number(n) => n
            .as_i64()
            .map(Msgpack::from)
            .or_else(|| n.as_u64().map(Msgpack::from))
            .unwrap_or_else(|| Msgpack::from(n.as_f64().unwrap_or_default())),
        Json::String(s) => Msgpack::from(s.as_str()),
        Json::Array(items) => Msgpack::Array(items.iter().map(from_json).collect()),
        Json::Object(map) => Msgpack::Map(
            map.iter()
                .map(|(k, v)| (Msgpack::from(k.as_str()), from_json(v)))
                .collect(),
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn round_trips_json_shapes() {
        let value =
            json!({"a": [1, -2, 3.5, "x", null, true], "b": {"c": 18446744073709551615u64}});
        assert_eq!(to_json(&from_json(&value)), value);
    }
}
