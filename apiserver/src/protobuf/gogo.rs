//! Messages read as the `Unmarshal` methods Go's generated code (gogo-protobuf, in `generated.pb.go`) reads
//! them: fields in wire order, unknown fields skipped, a nested message read where it occurs, and the errors
//! worded as Go words them (`unexpected EOF`, `proto: wrong wireType = 2 for field Kind`, `proto:
//! DeleteOptions: illegal tag 0 (wire type 0)`, ...), which kube-apiserver answers with in a `400`.
//!
//! Used for the messages whose errors a client sees as they are: the envelope (`runtime.Unknown`) and
//! `DeleteOptions` with its `Preconditions`.

/// A message as its Go code reads it: its Go name and its fields.
pub(super) struct GoMessage {
    /// The Go type name, as the errors name it (`DeleteOptions`).
    pub(super) name: &'static str,
    /// The fields Go knows; any other is skipped.
    pub(super) fields: &'static [GoField],
}

/// One field of a [`GoMessage`].
pub(super) struct GoField {
    /// The field number.
    pub(super) number: u32,
    /// The Go field name, as the errors name it (`GracePeriodSeconds`).
    pub(super) name: &'static str,
    /// How it is read.
    pub(super) ty: GoType,
}

/// How a field is read.
pub(super) enum GoType {
    /// A varint (`int64`, `bool`, ...).
    Varint,
    /// Length-delimited bytes (`string`, `[]byte`).
    Bytes,
    /// A nested message, read where it occurs.
    Message(&'static GoMessage),
}

/// One value read.
#[derive(Debug, Clone, PartialEq)]
pub(super) enum GoValue {
    /// A varint's value.
    Varint(u64),
    /// The bytes of a length-delimited field.
    Bytes(Vec<u8>),
    /// The fields of a nested message, in wire order.
    Message(Vec<(u32, GoValue)>),
}

/// An error as Go's generated code words it.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub(super) struct GoError(pub(super) String);

fn eof() -> GoError {
    GoError("unexpected EOF".into())
}

fn overflow() -> GoError {
    GoError("proto: integer overflow".into())
}

fn negative_length() -> GoError {
    GoError("proto: negative length found during unmarshaling".into())
}

/// Reads a varint at `*at`, moving past it: Go's loop, which fails on the eleventh byte's shift.
fn varint(data: &[u8], at: &mut usize) -> Result<u64, GoError> {
    let mut value = 0u64;
    let mut shift = 0u32;
    loop {
        if shift >= 64 {
            return Err(overflow());
        }
        let byte = *data.get(*at).ok_or_else(eof)?;
        *at += 1;
        value |= u64::from(byte & 0x7f) << shift;
        if byte < 0x80 {
            return Ok(value);
        }
        shift += 7;
    }
}

/// The end of a length-delimited field starting at `at`, as Go checks it (an `int` length).
fn end_of(data: &[u8], at: usize, length: u64) -> Result<usize, GoError> {
    let length = length as i64;
    if length < 0 {
        return Err(negative_length());
    }
    let end = (at as i64)
        .checked_add(length)
        .ok_or_else(negative_length)?;
    if end as u64 > data.len() as u64 {
        return Err(eof());
    }
    Ok(end as usize)
}

/// `skipGenerated`: the length of the unknown field at the start of `data`.
fn skip(data: &[u8]) -> Result<usize, GoError> {
    let mut at = 0usize;
    let mut depth = 0u32;
    while at < data.len() {
        let key = varint(data, &mut at)?;
        match key & 7 {
            0 => {
                varint(data, &mut at)?;
            }
            1 => at += 8,
            2 => {
                let length = varint(data, &mut at)? as i64;
                if length < 0 {
                    return Err(negative_length());
                }
                at = at.saturating_add(length as usize);
            }
            3 => depth += 1,
            4 => {
                if depth == 0 {
                    return Err(GoError("proto: unexpected end of group".into()));
                }
                depth -= 1;
            }
            5 => at += 4,
            other => return Err(GoError(format!("proto: illegal wireType {other}"))),
        }
        if depth == 0 {
            return Ok(at);
        }
    }
    Err(eof())
}

/// Reads `data` as `message`: its known fields in wire order.
pub(super) fn read(message: &GoMessage, data: &[u8]) -> Result<Vec<(u32, GoValue)>, GoError> {
    let mut out = Vec::new();
    let mut at = 0usize;
    while at < data.len() {
        let start = at;
        let key = varint(data, &mut at)?;
        let number = (key >> 3) as i32;
        let wire = key & 7;
        if wire == 4 {
            return Err(GoError(format!(
                "proto: {}: wiretype end group for non-group",
                message.name
            )));
        }
        if number <= 0 {
            return Err(GoError(format!(
                "proto: {}: illegal tag {number} (wire type {key})",
                message.name
            )));
        }
        let Some(field) = message.fields.iter().find(|f| f.number as i32 == number) else {
            let skipped = skip(&data[start..])?;
            at = start.checked_add(skipped).ok_or_else(negative_length)?;
            if at > data.len() {
                return Err(eof());
            }
            continue;
        };
        let wanted = match field.ty {
            GoType::Varint => 0,
            GoType::Bytes | GoType::Message(_) => 2,
        };
        if wire != wanted {
            return Err(GoError(format!(
                "proto: wrong wireType = {wire} for field {}",
                field.name
            )));
        }
        let value = match field.ty {
            GoType::Varint => GoValue::Varint(varint(data, &mut at)?),
            GoType::Bytes | GoType::Message(_) => {
                let length = varint(data, &mut at)?;
                let end = end_of(data, at, length)?;
                let bytes = &data[at..end];
                at = end;
                match field.ty {
                    GoType::Message(nested) => GoValue::Message(read(nested, bytes)?),
                    _ => GoValue::Bytes(bytes.to_vec()),
                }
            }
        };
        out.push((field.number, value));
    }
    Ok(out)
}

/// The last value of field `number` (Go keeps the last of a repeated singular field).
pub(super) fn last(fields: &[(u32, GoValue)], number: u32) -> Option<&GoValue> {
    fields
        .iter()
        .rev()
        .find(|(n, _)| *n == number)
        .map(|(_, v)| v)
}

/// Every value of field `number`, in wire order.
pub(super) fn all(fields: &[(u32, GoValue)], number: u32) -> impl Iterator<Item = &GoValue> {
    fields
        .iter()
        .filter(move |(n, _)| *n == number)
        .map(|(_, v)| v)
}

/// A string field's value, as Go converts bytes to a string (invalid UTF-8 replaced when written as JSON).
pub(super) fn text(value: &GoValue) -> Option<String> {
    match value {
        GoValue::Bytes(b) => Some(String::from_utf8_lossy(b).into_owned()),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const INNER: GoMessage = GoMessage {
        name: "Inner",
        fields: &[GoField {
            number: 1,
            name: "UID",
            ty: GoType::Bytes,
        }],
    };
    const OUTER: GoMessage = GoMessage {
        name: "Outer",
        fields: &[
            GoField {
                number: 1,
                name: "Count",
                ty: GoType::Varint,
            },
            GoField {
                number: 2,
                name: "Inner",
                ty: GoType::Message(&INNER),
            },
        ],
    };

    fn error(data: &[u8]) -> String {
        read(&OUTER, data).expect_err("an error").0
    }

    #[test]
    fn fields_are_read_in_wire_order_and_unknown_ones_skipped() {
        let read = read(&OUTER, b"\x08\x05\x12\x03\x0a\x01u\x1a\x02xy\x08\x07").expect("reads");
        assert_eq!(
            read,
            vec![
                (1, GoValue::Varint(5)),
                (
                    2,
                    GoValue::Message(vec![(1, GoValue::Bytes(b"u".to_vec()))])
                ),
                (1, GoValue::Varint(7)),
            ]
        );
        assert_eq!(last(&read, 1), Some(&GoValue::Varint(7)));
    }

    #[test]
    fn errors_are_worded_as_gos_generated_code_words_them() {
        assert_eq!(error(b"\x08"), "unexpected EOF");
        assert_eq!(error(b"\x12\x05ab"), "unexpected EOF");
        assert_eq!(
            error(b"\x0a\x01x"),
            "proto: wrong wireType = 2 for field Count"
        );
        assert_eq!(
            error(b"\x12\x02\x08\x01"),
            "proto: wrong wireType = 0 for field UID"
        );
        assert_eq!(
            error(b"\x00\x01"),
            "proto: Outer: illegal tag 0 (wire type 0)"
        );
        assert_eq!(
            error(b"\x0c"),
            "proto: Outer: wiretype end group for non-group"
        );
        assert_eq!(error(b"\x1e"), "proto: illegal wireType 6");
        assert_eq!(error(b"\x1a\x05ab"), "unexpected EOF");
        assert_eq!(
            error(&[
                0x08, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01
            ]),
            "proto: integer overflow"
        );
        assert_eq!(
            error(&[
                0x12, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01
            ]),
            "proto: negative length found during unmarshaling"
        );
    }
}
