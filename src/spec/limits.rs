//! What loading one spec file may cost. A spec (task file or `medin.yaml`) may come from anyone
//! — an imported suite, a pull request — so before serde_yaml_ng builds anything from it, the
//! file is checked against limits that make loading take well under a second and a few tens of
//! megabytes, whatever the file holds:
//!
//! | limit | value | why |
//! |---|---|---|
//! | size | [`MAX_SPEC_BYTES`] = 1 MiB, checked before reading the rest | the YAML library keeps every event of a document in memory |
//! | encoding | UTF-8, first invalid byte located | |
//! | nesting | [`MAX_DEPTH`] = 64 levels of lists and maps | libyaml's scanner costs O(depth) per token, so `[[[[…` is quadratic |
//! | entries | [`MAX_ENTRIES`] = 10,000 per list or map | 100,000 solution steps are a mistake, not a task |
//! | values | [`MAX_VALUES`] = 100,000 after expanding aliases | `*alias` repeats its anchor's whole value: a billion laughs, or merge keys (`<<: *a`) in every entry |
//!
//! Regexes have their own limits ([`super::pattern`]).
//!
//! The structure is checked on the event stream of the same libyaml parser serde_yaml_ng uses
//! (unsafe-libyaml, through its C-style API), so the check sees exactly what the loader would:
//! no second YAML grammar to disagree with. The walk stops at the first event over a limit —
//! the parser is never more than its small lookahead past it — and reports that event's
//! `line:col` (for an alias, the alias). A syntax error ends the walk quietly: serde_yaml_ng
//! then reports it with its own, better, message, having done no more work than the walk did.

use std::collections::HashMap;
use std::io::Read;
use std::mem::MaybeUninit;
use std::path::Path;

use unsafe_libyaml as unsafe_yaml;

use super::load::SpecError;

/// Largest spec file read, in bytes (1 MiB).
pub const MAX_SPEC_BYTES: u64 = 1024 * 1024;
/// Deepest nesting of lists and maps; the top-level map is level 1.
pub const MAX_DEPTH: usize = 64;
/// Most entries in one list, or keys in one map.
pub const MAX_ENTRIES: usize = 10_000;
/// Most values (scalars, lists and maps) in a file, counting every alias as the value it
/// repeats.
pub const MAX_VALUES: usize = 100_000;

/// Reads a spec file: at most [`MAX_SPEC_BYTES`] (a larger file is an error located where the
/// limit is crossed, without reading the rest), as UTF-8 (the first invalid byte is located).
pub(crate) fn read(path: &Path) -> Result<String, SpecError> {
    let io = |source| SpecError::Io {
        path: path.to_path_buf(),
        source,
    };
    let file = std::fs::File::open(path).map_err(io)?;
    let size = file.metadata().map(|m| m.len()).ok();
    let mut bytes = Vec::new();
    file.take(MAX_SPEC_BYTES + 1).read_to_end(&mut bytes).map_err(io)?;
    let limit = usize::try_from(MAX_SPEC_BYTES).unwrap_or(usize::MAX);
    if bytes.len() > limit {
        let size = size
            .filter(|s| *s > MAX_SPEC_BYTES)
            .map(|s| format!("{s} bytes"))
            .unwrap_or_else(|| "more".into());
        return Err(SpecError::invalid(
            path,
            position(&bytes, limit),
            format!("the file is {size}, over the 1 MiB limit for a spec file; it is cut here"),
            Some("a spec holds a prompt and expectations: keep large content in files of the task's `workspace:` fixture and refer to them by path".into()),
        ));
    }
    match String::from_utf8(bytes) {
        Ok(text) => Ok(text),
        Err(e) => {
            let utf8 = e.utf8_error();
            let at = utf8.valid_up_to();
            let bytes = e.into_bytes();
            let message = match utf8.error_len() {
                Some(_) => format!(
                    "the file is not UTF-8: byte 0x{:02X} cannot start or continue a character here",
                    bytes[at]
                ),
                None => "the file is not UTF-8: it ends in the middle of a character".to_string(),
            };
            Err(SpecError::invalid(
                path,
                position(&bytes, at),
                message,
                Some("save the file as UTF-8 (editors call it \"UTF-8\" or \"Unicode\"; Latin-1 and Windows-1252 are not)".into()),
            ))
        }
    }
}

/// 1-based line and column (in characters) of byte `offset` of `bytes`.
fn position(bytes: &[u8], offset: usize) -> (usize, usize) {
    let before = &bytes[..offset.min(bytes.len())];
    let line = before.iter().filter(|b| **b == b'\n').count() + 1;
    let start = before.iter().rposition(|b| *b == b'\n').map(|i| i + 1).unwrap_or(0);
    let column = String::from_utf8_lossy(&before[start..]).chars().count() + 1;
    (line, column)
}

/// What the structure walk learned, for the loader's later messages.
#[derive(Debug, Default, Clone, Copy)]
pub(crate) struct Structure {
    /// Where the first alias (`*name`) is, if any.
    pub first_alias: Option<(usize, usize)>,
}

/// One open list or map during the walk.
struct Open {
    anchor: Option<Vec<u8>>,
    /// This node and everything in it, aliases expanded.
    values: usize,
    /// Entries so far (for a map, keys and values both).
    children: usize,
    is_map: bool,
}

/// Checks nesting, entries per collection and values after alias expansion against the limits,
/// on libyaml's events for `text`.
pub(crate) fn check_structure(text: &str, path: &Path) -> Result<Structure, SpecError> {
    let mut structure = Structure::default();
    let Some(mut parser) = Parser::new(text.as_bytes()) else {
        return Ok(structure);
    };
    let mut open: Vec<Open> = Vec::new();
    let mut anchors: HashMap<Vec<u8>, usize> = HashMap::new();
    let mut total = 0usize;
    let too_many_values = |at: (usize, usize), aliased: bool| {
        let (message, help) = if aliased {
            (
                format!("aliases expand this file to more than {MAX_VALUES} values (the limit); this `*alias` goes over it"),
                "an alias (`*name`, also in a merge key `<<: *name`) repeats its anchor's whole value each time it is used: use fewer aliases, or anchors on smaller values",
            )
        } else {
            (
                format!("the file holds more than {MAX_VALUES} values (the limit)"),
                "split the task, or keep large data in files of the `workspace:` fixture",
            )
        };
        SpecError::invalid(path, at, message, Some(help.into()))
    };
    while let Some((event, at)) = parser.next() {
        // A new value inside the innermost open collection.
        let (values, anchor, opens) = match event {
            Event::StreamEnd => break,
            Event::DocumentStart => {
                anchors.clear();
                continue;
            }
            Event::Other => continue,
            Event::Scalar { anchor } => (1, anchor, None),
            Event::Alias { name } => {
                structure.first_alias.get_or_insert(at);
                if open.iter().any(|o| o.anchor.as_deref() == Some(name.as_slice())) {
                    return Err(SpecError::invalid(
                        path,
                        at,
                        format!(
                            "alias `*{}` is inside the value of its own anchor",
                            String::from_utf8_lossy(&name)
                        ),
                        Some(
                            "an alias must name a value that is complete before it: it would repeat itself forever"
                                .into(),
                        ),
                    ));
                }
                (anchors.get(&name).copied().unwrap_or(1), None, None)
            }
            Event::SequenceStart { anchor } => (1, anchor, Some(false)),
            Event::MappingStart { anchor } => (1, anchor, Some(true)),
            Event::End => {
                let Some(done) = open.pop() else { continue };
                if let Some(name) = done.anchor {
                    anchors.insert(name, done.values);
                }
                if let Some(parent) = open.last_mut() {
                    parent.values = parent.values.saturating_add(done.values);
                }
                continue;
            }
        };
        let aliased = values > 1 && opens.is_none();
        if let Some(parent) = open.last_mut() {
            parent.children += 1;
            let entries = if parent.is_map {
                parent.children.div_ceil(2)
            } else {
                parent.children
            };
            if entries > MAX_ENTRIES {
                let what = if parent.is_map { "key" } else { "entry" };
                return Err(SpecError::invalid(
                    path,
                    at,
                    format!("more than {MAX_ENTRIES} entries in one list or map (the limit): this is {what} {entries}"),
                    Some("a task rarely needs more than a few dozen; split it into several tasks, or keep data in files of the `workspace:` fixture".into()),
                ));
            }
            parent.values = parent.values.saturating_add(values);
        }
        total = total.saturating_add(values);
        if total > MAX_VALUES {
            return Err(too_many_values(at, aliased));
        }
        match opens {
            Some(is_map) => {
                if open.len() + 1 > MAX_DEPTH {
                    return Err(SpecError::invalid(
                        path,
                        at,
                        format!("lists and maps are nested more than {MAX_DEPTH} levels deep here (the limit)"),
                        Some("flatten the structure; a task spec needs a handful of levels".into()),
                    ));
                }
                open.push(Open {
                    anchor,
                    values: 1,
                    children: 0,
                    is_map,
                });
            }
            None => {
                if let Some(name) = anchor {
                    anchors.insert(name, 1);
                }
            }
        }
    }
    Ok(structure)
}

/// The events the walk needs.
enum Event {
    StreamEnd,
    DocumentStart,
    Scalar {
        anchor: Option<Vec<u8>>,
    },
    Alias {
        name: Vec<u8>,
    },
    SequenceStart {
        anchor: Option<Vec<u8>>,
    },
    MappingStart {
        anchor: Option<Vec<u8>>,
    },
    /// The end of a list or map.
    End,
    /// Stream start, document end.
    Other,
}

/// A libyaml event parser over borrowed UTF-8 input. The parser lives in a box it never leaves
/// (libyaml keeps pointers into its own buffers) and is deleted on drop.
struct Parser<'input> {
    sys: Box<MaybeUninit<unsafe_yaml::yaml_parser_t>>,
    _input: std::marker::PhantomData<&'input [u8]>,
}

impl<'input> Parser<'input> {
    fn new(input: &'input [u8]) -> Option<Self> {
        let mut sys = Box::new(MaybeUninit::<unsafe_yaml::yaml_parser_t>::uninit());
        // SAFETY: `yaml_parser_initialize` initialises the whole struct (or fails, and then we
        // never touch it again: no `Parser` is built, so no drop runs). The input is borrowed
        // for 'input, as long as the parser lives, and libyaml only reads it.
        unsafe {
            if unsafe_yaml::yaml_parser_initialize(sys.as_mut_ptr()).fail {
                return None;
            }
            unsafe_yaml::yaml_parser_set_encoding(sys.as_mut_ptr(), unsafe_yaml::YAML_UTF8_ENCODING);
            unsafe_yaml::yaml_parser_set_input_string(sys.as_mut_ptr(), input.as_ptr(), input.len() as u64);
        }
        Some(Parser {
            sys,
            _input: std::marker::PhantomData,
        })
    }

    /// The next event and its 1-based `(line, column)`; `None` after a syntax error.
    fn next(&mut self) -> Option<(Event, (usize, usize))> {
        let mut raw = MaybeUninit::<unsafe_yaml::yaml_event_t>::uninit();
        // SAFETY: the parser was initialised in `new`. `yaml_parser_parse` fills the event
        // when it succeeds; we read only the union member that its type names, copy the
        // anchor out of its NUL-terminated C string, and delete the event before returning.
        unsafe {
            if unsafe_yaml::yaml_parser_parse(self.sys.as_mut_ptr(), raw.as_mut_ptr()).fail {
                return None;
            }
            let e = &*raw.as_ptr();
            let at = (e.start_mark.line as usize + 1, e.start_mark.column as usize + 1);
            let event = match e.type_ {
                unsafe_yaml::YAML_STREAM_END_EVENT => Event::StreamEnd,
                unsafe_yaml::YAML_DOCUMENT_START_EVENT => Event::DocumentStart,
                unsafe_yaml::YAML_SCALAR_EVENT => Event::Scalar {
                    anchor: c_bytes(e.data.scalar.anchor),
                },
                unsafe_yaml::YAML_ALIAS_EVENT => Event::Alias {
                    name: c_bytes(e.data.alias.anchor).unwrap_or_default(),
                },
                unsafe_yaml::YAML_SEQUENCE_START_EVENT => Event::SequenceStart {
                    anchor: c_bytes(e.data.sequence_start.anchor),
                },
                unsafe_yaml::YAML_MAPPING_START_EVENT => Event::MappingStart {
                    anchor: c_bytes(e.data.mapping_start.anchor),
                },
                unsafe_yaml::YAML_SEQUENCE_END_EVENT | unsafe_yaml::YAML_MAPPING_END_EVENT => Event::End,
                _ => Event::Other,
            };
            unsafe_yaml::yaml_event_delete(raw.as_mut_ptr());
            Some((event, at))
        }
    }
}

impl Drop for Parser<'_> {
    fn drop(&mut self) {
        // SAFETY: a `Parser` exists only after a successful `yaml_parser_initialize`.
        unsafe { unsafe_yaml::yaml_parser_delete(self.sys.as_mut_ptr()) }
    }
}

/// The bytes of a NUL-terminated C string, `None` for a null pointer.
///
/// # Safety
/// `ptr` is null or points to a NUL-terminated string that lives for this call.
unsafe fn c_bytes(ptr: *const u8) -> Option<Vec<u8>> {
    if ptr.is_null() {
        return None;
    }
    // SAFETY: non-null and NUL-terminated, as the caller promises.
    Some(unsafe { std::ffi::CStr::from_ptr(ptr.cast()) }.to_bytes().to_vec())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn check(text: &str) -> Result<Structure, String> {
        check_structure(text, Path::new("t.yaml")).map_err(|e| e.to_string())
    }

    #[test]
    fn ordinary_specs_pass_and_the_first_alias_is_found() {
        let s = check("a: &x [1, 2]\nb: *x\nc: {d: *x}\n").unwrap();
        assert_eq!(s.first_alias, Some((2, 4)));
        assert!(check("description: x\n").unwrap().first_alias.is_none());
        // A syntax error is left to the loader.
        assert!(check("a: [\n").is_ok());
    }

    #[test]
    fn limits_are_located() {
        let deep = format!("a: {}", "[".repeat(200));
        let e = check(&deep).unwrap_err();
        assert!(e.starts_with(&format!("t.yaml:1:{}:", 3 + MAX_DEPTH)), "{e}");
        let long = format!("a: [{}]", "1, ".repeat(MAX_ENTRIES + 5));
        let e = check(&long).unwrap_err();
        assert!(e.starts_with(&format!("t.yaml:1:{}:", 5 + 3 * MAX_ENTRIES)), "{e}");
        let keys: String = (0..=MAX_ENTRIES).map(|i| format!("k{i}: 1\n")).collect();
        let e = check(&keys).unwrap_err();
        assert!(e.starts_with(&format!("t.yaml:{}:1:", MAX_ENTRIES + 1)), "{e}");
        let mut laughs = String::from("a0: &a0 [x, x, x, x, x, x, x, x, x, x]\n");
        for i in 1..8 {
            laughs.push_str(&format!(
                "a{i}: &a{i} [{}]\n",
                vec![format!("*a{}", i - 1); 10].join(", ")
            ));
        }
        let e = check(&laughs).unwrap_err();
        assert!(e.contains("aliases expand"), "{e}");
        assert!(e.starts_with("t.yaml:5:"), "{e}");
        let e = check("a: &a [1, *a]\n").unwrap_err();
        assert!(e.starts_with("t.yaml:1:11:") && e.contains("its own anchor"), "{e}");
    }
}
