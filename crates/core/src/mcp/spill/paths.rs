//! Which strings of a message matter to the lexer, by where they are: the
//! paths of result text, of binary payloads and of the message's id.

#[derive(Debug)]
pub enum Frame {
    Object { key: Key, expect_key: bool },
    Array,
}

/// The last key of an object, when it is one the paths below care about.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Key {
    Result,
    Content,
    Contents,
    Messages,
    Resource,
    Text,
    Data,
    Blob,
    Id,
    RequestState,
    Other,
}

impl Key {
    pub fn of(raw: &[u8]) -> Self {
        match raw {
            b"result" => Key::Result,
            b"content" => Key::Content,
            b"contents" => Key::Contents,
            b"messages" => Key::Messages,
            b"resource" => Key::Resource,
            b"text" => Key::Text,
            b"data" => Key::Data,
            b"blob" => Key::Blob,
            b"id" => Key::Id,
            b"requestState" => Key::RequestState,
            _ => Key::Other,
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Role {
    Key,
    Text,
    Binary,
    Id,
    /// An `InputRequiredResult`'s `requestState`: echoed byte for byte, so
    /// never cut short — over its cap the message only says how long it was.
    State,
    Other,
}

/// What a string value is, by where it is (the open objects' keys, outermost first).
pub fn role_at(stack: &[Frame]) -> Role {
    let keys: Vec<Option<Key>> = stack
        .iter()
        .map(|f| match f {
            Frame::Object { key, .. } => Some(*key),
            Frame::Array => None,
        })
        .collect();
    use Key::*;
    // A task's outcome (2026-07-28 `tasks/get`) nests the call result
    // one level deeper: `result.result.content[]…`.
    let keys = match keys.as_slice() {
        [Some(Result), Some(Result), rest @ ..] if !rest.is_empty() => &keys[1..],
        _ => keys.as_slice(),
    };
    match keys {
        [Some(Id)] => Role::Id,
        [Some(Result), Some(RequestState)] => Role::State,
        [Some(Result), Some(Content | Contents), None, Some(Text)]
        | [
            Some(Result),
            Some(Content),
            None,
            Some(Resource),
            Some(Text),
        ]
        | [
            Some(Result),
            Some(Messages),
            None,
            Some(Content),
            Some(Text),
        ] => Role::Text,
        [
            Some(Result),
            Some(Content | Contents),
            None,
            Some(Data | Blob),
        ]
        | [
            Some(Result),
            Some(Content),
            None,
            Some(Resource),
            Some(Blob),
        ]
        | [
            Some(Result),
            Some(Messages),
            None,
            Some(Content),
            Some(Data),
        ] => Role::Binary,
        _ => Role::Other,
    }
}
