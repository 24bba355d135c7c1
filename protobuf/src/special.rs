//! The types whose protobuf encoding is not a plain mapping of fields,
//! written by hand as the API server encodes them:
//!
//! - `Time`: `{seconds, nanos}`, nanos dropped (Go keeps seconds only);
//!   a zero time is an empty message, read back as absent.
//! - `MicroTime`: the same with nanos truncated to microseconds.
//! - `Quantity`: its string in field 1.
//! - `IntOrString`: `{type, intVal, strVal}`, all three always written.
//! - `RawExtension`, `FieldsV1`, `JSON`: raw JSON bytes in field 1.
//! - the `JSONSchemaPropsOr…` unions: both alternatives as fields, the
//!   one that is set wins as in their JSON encoding.

use clientgo_apimachinery::protobuf_wire::{WireReader, WireValue};
use k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::{
    JSON, JSONSchemaProps, JSONSchemaPropsOrArray, JSONSchemaPropsOrBool,
    JSONSchemaPropsOrStringArray,
};
use k8s_openapi::apimachinery::pkg::api::resource::Quantity;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::{FieldsV1, MicroTime, Time};
use k8s_openapi::apimachinery::pkg::runtime::RawExtension;
use k8s_openapi::apimachinery::pkg::util::intstr::IntOrString;
use k8s_openapi::jiff::Timestamp;

use crate::error::{DecodeError, Problem};
use crate::field;
use crate::message::{Message, for_each_field};
use crate::put;

/// Seconds and nanoseconds of a `Timestamp` message.
fn timestamp_fields(mut reader: WireReader<'_>) -> Result<(i64, i32), DecodeError> {
    let (mut seconds, mut nanos) = (0i64, 0i32);
    while let Some((number, value)) = reader.next_field()? {
        match number {
            1 => field::int64(&mut seconds, value)?,
            2 => field::int32(&mut nanos, value)?,
            _ => {}
        }
    }
    Ok((seconds, nanos))
}

fn timestamp(seconds: i64, nanos: i32) -> Result<Timestamp, DecodeError> {
    Timestamp::new(seconds, nanos)
        .map_err(|_| DecodeError::new(Problem::Timestamp { seconds, nanos }))
}

fn put_timestamp(out: &mut Vec<u8>, at: Timestamp, nanos: i32) {
    put::put_int64(out, 1, &at.as_second());
    put::put_int32(out, 2, &nanos);
}

impl Message for Time {
    const NAME: &'static str = "Time";
    const EMPTY_IS_ABSENT: bool = true;

    fn empty() -> Self {
        Time(Timestamp::UNIX_EPOCH)
    }

    fn merge_field(
        &mut self,
        _: u32,
        _: WireValue<'_>,
        _: &WireReader<'_>,
    ) -> Result<(), DecodeError> {
        Ok(())
    }

    fn merge_from(&mut self, reader: WireReader<'_>) -> Result<(), DecodeError> {
        let (seconds, _nanos) = timestamp_fields(reader).map_err(|e| e.within(Self::NAME, 1))?;
        self.0 = timestamp(seconds, 0)?;
        Ok(())
    }

    fn encode_fields(&self, out: &mut Vec<u8>) {
        put_timestamp(out, self.0, 0);
    }
}

impl Message for MicroTime {
    const NAME: &'static str = "MicroTime";
    const EMPTY_IS_ABSENT: bool = true;

    fn empty() -> Self {
        MicroTime(Timestamp::UNIX_EPOCH)
    }

    fn merge_field(
        &mut self,
        _: u32,
        _: WireValue<'_>,
        _: &WireReader<'_>,
    ) -> Result<(), DecodeError> {
        Ok(())
    }

    fn merge_from(&mut self, reader: WireReader<'_>) -> Result<(), DecodeError> {
        let (seconds, nanos) = timestamp_fields(reader).map_err(|e| e.within(Self::NAME, 1))?;
        self.0 = timestamp(seconds, nanos - nanos % 1000)?;
        Ok(())
    }

    fn encode_fields(&self, out: &mut Vec<u8>) {
        put_timestamp(out, self.0, self.0.subsec_nanosecond());
    }
}

impl Message for Quantity {
    const NAME: &'static str = "Quantity";

    fn empty() -> Self {
        Quantity(String::new())
    }

    fn merge_field(
        &mut self,
        number: u32,
        value: WireValue<'_>,
        _: &WireReader<'_>,
    ) -> Result<(), DecodeError> {
        if number == 1 {
            field::string(&mut self.0, value)?;
        }
        Ok(())
    }

    fn encode_fields(&self, out: &mut Vec<u8>) {
        put::put_string(out, 1, &self.0);
    }
}

impl Message for IntOrString {
    const NAME: &'static str = "IntOrString";

    fn empty() -> Self {
        IntOrString::Int(0)
    }

    fn merge_field(
        &mut self,
        _: u32,
        _: WireValue<'_>,
        _: &WireReader<'_>,
    ) -> Result<(), DecodeError> {
        Ok(())
    }

    fn merge_from(&mut self, reader: WireReader<'_>) -> Result<(), DecodeError> {
        let (mut kind, mut int, mut string) = (0i64, 0i32, String::new());
        if let IntOrString::String(s) = self {
            kind = 1;
            string = std::mem::take(s);
        } else if let IntOrString::Int(i) = self {
            int = *i;
        }
        for_each_field(reader, Self::NAME, |number, value, _| match number {
            1 => field::int64(&mut kind, value),
            2 => field::int32(&mut int, value),
            3 => field::string(&mut string, value),
            _ => Ok(()),
        })?;
        *self = match kind {
            0 => IntOrString::Int(int),
            1 => IntOrString::String(string),
            other => return Err(DecodeError::new(Problem::IntOrStringType(other))),
        };
        Ok(())
    }

    fn encode_fields(&self, out: &mut Vec<u8>) {
        let (kind, int, string) = match self {
            IntOrString::Int(i) => (0i64, *i, ""),
            IntOrString::String(s) => (1, 0, s.as_str()),
        };
        put::put_int64(out, 1, &kind);
        put::put_int32(out, 2, &int);
        put::put_string(out, 3, &string.to_owned());
    }
}

/// Raw JSON bytes as a value; empty is JSON `null`.
fn json_value(value: WireValue<'_>) -> Result<serde_json::Value, DecodeError> {
    let bytes = field::length_delimited(value)?;
    if bytes.is_empty() {
        return Ok(serde_json::Value::Null);
    }
    serde_json::from_slice(bytes)
        .map_err(|e| DecodeError::new(Problem::EmbeddedJson(e.to_string())))
}

fn put_json(out: &mut Vec<u8>, value: &serde_json::Value) {
    if value.is_null() {
        return;
    }
    // Serialising a `Value` to a Vec cannot fail.
    let bytes = serde_json::to_vec(value).unwrap_or_default();
    put::put_bytes(out, 1, &k8s_openapi::ByteString(bytes));
}

macro_rules! raw_json_message {
    ($ty:ident) => {
        impl Message for $ty {
            const NAME: &'static str = stringify!($ty);

            fn empty() -> Self {
                $ty(serde_json::Value::Null)
            }

            fn merge_field(
                &mut self,
                number: u32,
                value: WireValue<'_>,
                _: &WireReader<'_>,
            ) -> Result<(), DecodeError> {
                if number == 1 {
                    self.0 = json_value(value)?;
                }
                Ok(())
            }

            fn encode_fields(&self, out: &mut Vec<u8>) {
                put_json(out, &self.0);
            }
        }
    };
}

raw_json_message!(RawExtension);
raw_json_message!(FieldsV1);
raw_json_message!(JSON);

impl Message for JSONSchemaPropsOrArray {
    const NAME: &'static str = "JSONSchemaPropsOrArray";

    fn empty() -> Self {
        JSONSchemaPropsOrArray::Schemas(Vec::new())
    }

    fn merge_field(
        &mut self,
        _: u32,
        _: WireValue<'_>,
        _: &WireReader<'_>,
    ) -> Result<(), DecodeError> {
        Ok(())
    }

    fn merge_from(&mut self, reader: WireReader<'_>) -> Result<(), DecodeError> {
        let mut schema: Option<JSONSchemaProps> = None;
        let mut schemas: Vec<JSONSchemaProps> = Vec::new();
        for_each_field(reader, Self::NAME, |number, value, reader| match number {
            1 => field::message::<JSONSchemaProps, _>(&mut schema, value, reader),
            2 => field::message::<JSONSchemaProps, _>(&mut schemas, value, reader),
            _ => Ok(()),
        })?;
        *self = match schema {
            Some(schema) if schemas.is_empty() => JSONSchemaPropsOrArray::Schema(Box::new(schema)),
            _ => JSONSchemaPropsOrArray::Schemas(schemas),
        };
        Ok(())
    }

    fn encode_fields(&self, out: &mut Vec<u8>) {
        match self {
            JSONSchemaPropsOrArray::Schema(schema) => {
                put::put_message::<JSONSchemaProps, _>(out, 1, schema)
            }
            JSONSchemaPropsOrArray::Schemas(schemas) => {
                put::put_message::<JSONSchemaProps, _>(out, 2, schemas)
            }
        }
    }
}

impl Message for JSONSchemaPropsOrBool {
    const NAME: &'static str = "JSONSchemaPropsOrBool";

    fn empty() -> Self {
        JSONSchemaPropsOrBool::Bool(false)
    }

    fn merge_field(
        &mut self,
        _: u32,
        _: WireValue<'_>,
        _: &WireReader<'_>,
    ) -> Result<(), DecodeError> {
        Ok(())
    }

    fn merge_from(&mut self, reader: WireReader<'_>) -> Result<(), DecodeError> {
        let mut allows = false;
        let mut schema: Option<JSONSchemaProps> = None;
        for_each_field(reader, Self::NAME, |number, value, reader| match number {
            1 => field::boolean(&mut allows, value),
            2 => field::message::<JSONSchemaProps, _>(&mut schema, value, reader),
            _ => Ok(()),
        })?;
        *self = match schema {
            Some(schema) => JSONSchemaPropsOrBool::Schema(Box::new(schema)),
            None => JSONSchemaPropsOrBool::Bool(allows),
        };
        Ok(())
    }

    fn encode_fields(&self, out: &mut Vec<u8>) {
        match self {
            JSONSchemaPropsOrBool::Bool(allows) => put::put_boolean(out, 1, allows),
            JSONSchemaPropsOrBool::Schema(schema) => {
                // Go sets Allows along with a schema.
                put::put_boolean(out, 1, &true);
                put::put_message::<JSONSchemaProps, _>(out, 2, schema);
            }
        }
    }
}

impl Message for JSONSchemaPropsOrStringArray {
    const NAME: &'static str = "JSONSchemaPropsOrStringArray";

    fn empty() -> Self {
        JSONSchemaPropsOrStringArray::Strings(Vec::new())
    }

    fn merge_field(
        &mut self,
        _: u32,
        _: WireValue<'_>,
        _: &WireReader<'_>,
    ) -> Result<(), DecodeError> {
        Ok(())
    }

    fn merge_from(&mut self, reader: WireReader<'_>) -> Result<(), DecodeError> {
        let mut schema: Option<JSONSchemaProps> = None;
        let mut strings: Vec<String> = Vec::new();
        for_each_field(reader, Self::NAME, |number, value, reader| match number {
            1 => field::message::<JSONSchemaProps, _>(&mut schema, value, reader),
            2 => field::string(&mut strings, value),
            _ => Ok(()),
        })?;
        *self = match schema {
            Some(schema) if strings.is_empty() => {
                JSONSchemaPropsOrStringArray::Schema(Box::new(schema))
            }
            _ => JSONSchemaPropsOrStringArray::Strings(strings),
        };
        Ok(())
    }

    fn encode_fields(&self, out: &mut Vec<u8>) {
        match self {
            JSONSchemaPropsOrStringArray::Schema(schema) => {
                put::put_message::<JSONSchemaProps, _>(out, 1, schema)
            }
            JSONSchemaPropsOrStringArray::Strings(strings) => put::put_string(out, 2, strings),
        }
    }
}
