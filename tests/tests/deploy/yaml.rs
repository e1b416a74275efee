//! Just enough of YAML to read what `kubectl kustomize` prints (block style,
//! sorted keys, one scalar per line) and the block lists of the source files:
//! no YAML crate is a dependency of this package.

/// One document of a multi-document stream.
#[derive(Clone, Debug)]
pub struct Doc {
    pub text: String,
}

pub fn docs(stream: &str) -> Vec<Doc> {
    let mut out = Vec::new();
    let mut current = String::new();
    for line in stream.lines() {
        if line.trim_end() == "---" {
            if !current.trim().is_empty() {
                out.push(Doc {
                    text: std::mem::take(&mut current),
                });
            }
            current.clear();
        } else {
            current.push_str(line);
            current.push('\n');
        }
    }
    if !current.trim().is_empty() {
        out.push(Doc { text: current });
    }
    out
}

pub fn unquote(value: &str) -> String {
    let value = value.trim();
    let stripped = value
        .strip_prefix('"')
        .and_then(|v| v.strip_suffix('"'))
        .or_else(|| value.strip_prefix('\'').and_then(|v| v.strip_suffix('\'')));
    stripped.unwrap_or(value).to_owned()
}

fn indent(line: &str) -> usize {
    line.len() - line.trim_start().len()
}

impl Doc {
    /// The top-level `kind:`.
    pub fn kind(&self) -> String {
        self.text
            .lines()
            .find_map(|l| l.strip_prefix("kind: "))
            .map(unquote)
            .unwrap_or_else(|| panic!("a document without a kind:\n{}", self.text))
    }

    /// `metadata.name`.
    pub fn name(&self) -> String {
        let mut in_metadata = false;
        for line in self.text.lines() {
            if indent(line) == 0 {
                in_metadata = line.trim_end() == "metadata:";
                continue;
            }
            if in_metadata
                && indent(line) == 2
                && let Some(name) = line.trim().strip_prefix("name: ")
            {
                return unquote(name);
            }
        }
        panic!("a document without metadata.name:\n{}", self.text)
    }

    /// Every value of `key: value` lines (any depth; `- key: value` too).
    pub fn values(&self, key: &str) -> Vec<String> {
        let prefix = format!("{key}: ");
        self.text
            .lines()
            .map(|l| l.trim().trim_start_matches("- "))
            .filter_map(|l| l.strip_prefix(&prefix))
            .map(unquote)
            .collect()
    }

    /// Every block list under a `key:` line, as scalar items.
    pub fn lists(&self, key: &str) -> Vec<Vec<String>> {
        lists(&self.text, key)
    }

    /// `(name, port)` pairs of lists of `- name: N` / `containerPort: P` (or
    /// `port: P`) items, in order.
    pub fn named_ports(&self, port_key: &str) -> Vec<(String, String)> {
        let lines: Vec<&str> = self.text.lines().collect();
        let mut out = Vec::new();
        for (i, line) in lines.iter().enumerate() {
            let trimmed = line.trim();
            let Some(rest) = trimmed.strip_prefix("- ") else {
                continue;
            };
            // The item's keys: the `- ` line and the lines indented under it.
            let item_indent = indent(line) + 2;
            let mut keys = vec![rest.to_owned()];
            for next in &lines[i + 1..] {
                let at = indent(next);
                if at <= indent(line) {
                    break;
                }
                if at == item_indent {
                    keys.push(next.trim().to_owned());
                }
            }
            let get = |k: &str| {
                keys.iter()
                    .find_map(|kv| kv.strip_prefix(&format!("{k}: ")))
                    .map(unquote)
            };
            if let (Some(name), Some(port)) = (get("name"), get(port_key)) {
                out.push((name, port));
            }
        }
        out
    }
}

/// Every block list of scalars under a `key:` line in `text`.
pub fn lists(text: &str, key: &str) -> Vec<Vec<String>> {
    let lines: Vec<&str> = text.lines().collect();
    let header = format!("{key}:");
    let mut out = Vec::new();
    for (i, line) in lines.iter().enumerate() {
        let trimmed = line.trim().trim_start_matches("- ");
        if trimmed != header {
            continue;
        }
        let mut items = Vec::new();
        let mut item_indent = None;
        for next in &lines[i + 1..] {
            let t = next.trim();
            if t.is_empty() || t.starts_with('#') {
                continue;
            }
            let Some(item) = t.strip_prefix("- ") else {
                break;
            };
            let at = indent(next);
            match item_indent {
                None if at >= indent(line) => item_indent = Some(at),
                Some(expected) if at == expected => {}
                _ => break,
            }
            items.push(unquote(item));
        }
        if !items.is_empty() {
            out.push(items);
        }
    }
    out
}

/// The port of `host:port`, `http://host:port` or `0.0.0.0:port`.
pub fn port_of(address: &str) -> String {
    address
        .rsplit_once(':')
        .map(|(_, port)| port.trim_end_matches('/').to_owned())
        .unwrap_or_else(|| panic!("{address:?} names no port"))
}

/// The value of `--flag=value` in `args`.
pub fn flag(args: &[String], flag: &str) -> Option<String> {
    let prefix = format!("{flag}=");
    args.iter()
        .find_map(|a| a.strip_prefix(&prefix))
        .map(str::to_owned)
}
