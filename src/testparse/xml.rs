//! A small, forgiving XML reader for JUnit reports: elements, attributes, text, CDATA,
//! comments, processing instructions and the predefined/numeric entities. It never fails:
//! malformed or truncated input gives the elements read so far, and [`Doc::complete`] says
//! whether every opened element was closed.

/// One element with its attributes, text (concatenated, entities decoded) and children.
#[derive(Debug, Default, Clone)]
pub struct Element {
    pub name: String,
    pub attrs: Vec<(String, String)>,
    pub text: String,
    pub children: Vec<Element>,
}

impl Element {
    pub fn attr(&self, key: &str) -> Option<&str> {
        self.attrs.iter().find(|(k, _)| k == key).map(|(_, v)| v.as_str())
    }
}

/// A parsed document: the top-level elements and whether it was complete.
#[derive(Debug, Default)]
pub struct Doc {
    pub roots: Vec<Element>,
    pub complete: bool,
}

/// Read `s` as XML.
pub fn parse(s: &str) -> Doc {
    let mut stack: Vec<Element> = Vec::new();
    let mut roots: Vec<Element> = Vec::new();
    let mut rest = s;
    let mut saw_element = false;
    while !rest.is_empty() {
        let Some(lt) = rest.find('<') else {
            if let Some(top) = stack.last_mut() {
                top.text.push_str(&decode(rest));
            }
            break;
        };
        if lt > 0 {
            if let Some(top) = stack.last_mut() {
                top.text.push_str(&decode(&rest[..lt]));
            }
        }
        rest = &rest[lt..];
        if let Some(r) = rest.strip_prefix("<!--") {
            rest = r.find("-->").map(|k| &r[k + 3..]).unwrap_or("");
        } else if let Some(r) = rest.strip_prefix("<![CDATA[") {
            let (body, after) = r.find("]]>").map(|k| (&r[..k], &r[k + 3..])).unwrap_or((r, ""));
            if let Some(top) = stack.last_mut() {
                top.text.push_str(body);
            }
            rest = after;
        } else if rest.starts_with("<?") || rest.starts_with("<!") {
            rest = rest.find('>').map(|k| &rest[k + 1..]).unwrap_or("");
        } else if let Some(r) = rest.strip_prefix("</") {
            let (name, after) = r
                .find('>')
                .map(|k| (r[..k].trim(), &r[k + 1..]))
                .unwrap_or((r.trim(), ""));
            // Close up to the matching element (tolerates mis-nesting).
            if let Some(pos) = stack.iter().rposition(|e| e.name == name) {
                while stack.len() > pos {
                    let Some(done) = stack.pop() else { break };
                    match stack.last_mut() {
                        Some(parent) => parent.children.push(done),
                        None => roots.push(done),
                    }
                }
            }
            rest = after;
        } else {
            let Some((tag_len, el, self_closing)) = read_tag(rest) else {
                break; // truncated inside a tag
            };
            saw_element = true;
            rest = &rest[tag_len..];
            if self_closing {
                match stack.last_mut() {
                    Some(parent) => parent.children.push(el),
                    None => roots.push(el),
                }
            } else {
                stack.push(el);
            }
        }
    }
    let complete = stack.is_empty() && saw_element;
    // Keep what was read of unclosed elements.
    while let Some(done) = stack.pop() {
        match stack.last_mut() {
            Some(parent) => parent.children.push(done),
            None => roots.push(done),
        }
    }
    Doc { roots, complete }
}

/// `<name a="1" b='2'/>` → (bytes consumed, element, self-closing).
fn read_tag(s: &str) -> Option<(usize, Element, bool)> {
    let mut quote: Option<char> = None;
    let mut end = None;
    for (i, c) in s.char_indices().skip(1) {
        match (quote, c) {
            (Some(q), c) if c == q => quote = None,
            (Some(_), _) => {}
            (None, '"') | (None, '\'') => quote = Some(c),
            (None, '>') => {
                end = Some(i);
                break;
            }
            _ => {}
        }
    }
    let end = end?;
    let inner = &s[1..end];
    let self_closing = inner.ends_with('/');
    let inner = inner.trim_end_matches('/');
    let name_end = inner.find(|c: char| c.is_whitespace()).unwrap_or(inner.len());
    let mut el = Element {
        name: inner[..name_end].to_string(),
        ..Element::default()
    };
    let mut a = &inner[name_end..];
    loop {
        a = a.trim_start();
        let Some(eq) = a.find('=') else { break };
        let key = a[..eq].trim().to_string();
        let v = a[eq + 1..].trim_start();
        let Some(q) = v.chars().next().filter(|c| *c == '"' || *c == '\'') else {
            break;
        };
        let Some(close) = v[1..].find(q) else { break };
        el.attrs.push((key, decode(&v[1..1 + close])));
        a = &v[close + 2..];
    }
    Some((end + 1, el, self_closing))
}

/// Decode the predefined and numeric character entities.
pub fn decode(s: &str) -> String {
    if !s.contains('&') {
        return s.to_string();
    }
    let mut out = String::with_capacity(s.len());
    let mut rest = s;
    while let Some(k) = rest.find('&') {
        out.push_str(&rest[..k]);
        rest = &rest[k..];
        let Some(semi) = rest
            .char_indices()
            .take_while(|(i, _)| *i < 12)
            .find(|(_, c)| *c == ';')
            .map(|(i, _)| i)
        else {
            out.push('&');
            rest = &rest[1..];
            continue;
        };
        let ent = &rest[1..semi];
        let decoded = match ent {
            "lt" => Some('<'),
            "gt" => Some('>'),
            "amp" => Some('&'),
            "quot" => Some('"'),
            "apos" => Some('\''),
            _ => ent
                .strip_prefix("#x")
                .or_else(|| ent.strip_prefix("#X"))
                .and_then(|h| u32::from_str_radix(h, 16).ok())
                .or_else(|| ent.strip_prefix('#').and_then(|d| d.parse().ok()))
                .and_then(char::from_u32),
        };
        match decoded {
            Some(c) => {
                out.push(c);
                rest = &rest[semi + 1..];
            }
            None => {
                out.push('&');
                rest = &rest[1..];
            }
        }
    }
    out.push_str(rest);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_nested_elements_attributes_and_entities() {
        let d = parse(r#"<?xml version="1.0"?><a x="1 &amp; 2"><b/><c>t&lt;<![CDATA[<raw>]]></c></a>"#);
        assert!(d.complete);
        let a = &d.roots[0];
        assert_eq!(a.attr("x"), Some("1 & 2"));
        assert_eq!(a.children.len(), 2);
        assert_eq!(a.children[1].text, "t<<raw>");
    }

    #[test]
    fn truncated_input_is_incomplete_not_a_panic() {
        let d = parse("<a><b x=\"1\"");
        assert!(!d.complete);
        assert_eq!(d.roots.len(), 1);
    }
}
