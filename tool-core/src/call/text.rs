//! Text actions: `name(key=literal, ...)`, literals only, read by a small recursive-descent parser.
//!
//! Nothing is evaluated. The grammar is a strict subset of a Python call with keyword literal
//! arguments; see the module documentation of `call` for what is accepted and refused. Recursion
//! is bounded by the depth limit, which is checked before descending.

use serde_json::{Map, Number, Value};

use super::types::{quoted, ParseError, ParseLimits, ToolCall};

/// Keywords that start a Python statement: text starting with one is Python code.
const STATEMENT_KEYWORDS: &[&str] = &[
    "import", "from", "def", "class", "return", "raise", "del", "global", "nonlocal", "assert",
    "pass", "yield", "async", "await", "try", "except", "finally", "while", "with",
];

/// Python keywords: never a tool name or an argument name.
const RESERVED: &[&str] = &[
    "False", "None", "True", "and", "as", "assert", "async", "await", "break", "class", "continue",
    "def", "del", "elif", "else", "except", "finally", "for", "from", "global", "if", "import",
    "in", "is", "lambda", "nonlocal", "not", "or", "pass", "raise", "return", "try", "while",
    "with", "yield",
];

/// Parse one text action.
pub(super) fn parse(input: &str, limits: &ParseLimits) -> Result<ToolCall, ParseError> {
    let mut p = Parser {
        src: input,
        pos: 0,
        // The call itself is one level, as the object around `args` is in `{"tool", "args"}`.
        depth: 1,
        max_depth: limits.depth(),
        max_string_len: limits.max_string_len,
    };
    p.skip_ws();
    if p.rest().starts_with("Action:") {
        p.pos += "Action:".len();
        p.skip_ws();
    }
    let call = p.call()?;
    let end = p.pos;
    p.skip_ws();
    match p.peek() {
        None => Ok(call),
        Some(';') => Err(p.err("several statements are not accepted (found `;`)")),
        Some(_) if p.src[end..p.pos].contains(['\n', '\r']) => {
            Err(p.err("several statements are not accepted (found a second line)"))
        }
        Some(c) => Err(p.err(&format!("unexpected {c:?} after the call"))),
    }
}

struct Parser<'a> {
    src: &'a str,
    pos: usize,
    depth: usize,
    max_depth: usize,
    max_string_len: usize,
}

impl Parser<'_> {
    fn rest(&self) -> &str {
        &self.src[self.pos..]
    }

    fn peek(&self) -> Option<char> {
        self.rest().chars().next()
    }

    fn peek2(&self) -> Option<char> {
        self.rest().chars().nth(1)
    }

    fn bump(&mut self) -> Option<char> {
        let c = self.peek()?;
        self.pos += c.len_utf8();
        Some(c)
    }

    fn skip_ws(&mut self) {
        while let Some(c) = self.peek() {
            if !matches!(c, ' ' | '\t' | '\n' | '\r') {
                break;
            }
            self.pos += 1;
        }
    }

    /// Skip whitespace, then see `want` (or fail, saying what was expected instead).
    fn expect(&mut self, want: char, context: &str) -> Result<(), ParseError> {
        self.skip_ws();
        match self.peek() {
            Some(c) if c == want => {
                self.pos += 1;
                Ok(())
            }
            Some(c) => Err(self.err(&format!("expected `{want}` {context}, found {c:?}"))),
            None => Err(self.err(&format!("expected `{want}` {context}, found the end"))),
        }
    }

    fn err(&self, msg: &str) -> ParseError {
        self.err_at(self.pos, msg)
    }

    fn err_at(&self, pos: usize, msg: &str) -> ParseError {
        let before = &self.src[..pos];
        let line = before.matches('\n').count() + 1;
        let column = before.rsplit('\n').next().map_or(0, |l| l.chars().count()) + 1;
        ParseError::new(format!(
            "{msg} at byte {pos} (line {line}, column {column})"
        ))
    }

    /// An ASCII identifier, or `None` (position unchanged) if there is none here.
    fn ident(&mut self) -> Option<&str> {
        let start = self.pos;
        let bytes = self.src.as_bytes();
        let mut end = start;
        while end < bytes.len()
            && (bytes[end].is_ascii_alphanumeric() || bytes[end] == b'_')
            && !(end == start && bytes[end].is_ascii_digit())
        {
            end += 1;
        }
        if end == start {
            return None;
        }
        self.pos = end;
        Some(&self.src[start..end])
    }

    fn call(&mut self) -> Result<ToolCall, ParseError> {
        let start = self.pos;
        let Some(name) = self.ident().map(str::to_owned) else {
            return Err(match self.peek() {
                None => self.err("expected a tool name, found the end"),
                Some(c) => self.err(&format!("expected a tool name, found {c:?}")),
            });
        };
        if name == "lambda" {
            return Err(self.err_at(start, "lambdas are not accepted"));
        }
        if RESERVED.contains(&name.as_str()) {
            // `not json at all` is text, not a call to a keyword: only a keyword that is called,
            // or that starts a Python statement, is reported as one.
            let called = self.rest().trim_start().starts_with('(');
            if !called && !STATEMENT_KEYWORDS.contains(&name.as_str()) {
                return Err(self.err_at(
                    start,
                    "expected a tool call (a JSON object, or `name(key=value, ...)`), found text",
                ));
            }
            return Err(self.err_at(
                start,
                &format!("`{name}` is a Python keyword, not a tool name"),
            ));
        }
        if self.peek() == Some('.') {
            return Err(self.err("attribute calls (`a.b(...)`) are not accepted"));
        }
        self.skip_ws();
        if matches!(self.peek(), Some('\'' | '"')) {
            return Err(self.err_at(start, "expected a tool call, found a prefixed string"));
        }
        self.expect('(', "after the tool name")?;
        self.enter()?;
        let mut arguments = Map::new();
        loop {
            self.skip_ws();
            if self.peek() == Some(')') {
                self.pos += 1;
                break;
            }
            let (key, key_at) = self.keyword()?;
            let value = self.literal()?;
            if arguments.contains_key(&key) {
                return Err(self.err_at(key_at, &format!("duplicate keyword argument `{key}`")));
            }
            arguments.insert(key, value);
            self.skip_ws();
            match self.bump() {
                Some(',') => {}
                Some(')') => break,
                Some(c) => {
                    self.pos -= c.len_utf8();
                    return Err(self.err(&format!(
                        "expected `,` or `)` after an argument, found {c:?}{}",
                        operator_hint(c)
                    )));
                }
                None => {
                    return Err(self.err("expected `,` or `)` after an argument, found the end"))
                }
            }
        }
        self.depth -= 1;
        Ok(ToolCall::new(name, arguments))
    }

    /// `key =`, with the refusals for everything that is not a keyword argument.
    fn keyword(&mut self) -> Result<(String, usize), ParseError> {
        let at = self.pos;
        if self.rest().starts_with("**") {
            return Err(self.err("`**kwargs` is not accepted"));
        }
        if self.peek() == Some('*') {
            return Err(self.err("`*args` is not accepted"));
        }
        let Some(key) = self.ident().map(str::to_owned) else {
            return Err(self.err("positional arguments are not accepted; write `key=value`"));
        };
        if RESERVED.contains(&key.as_str()) {
            return Err(self.err_at(
                at,
                &format!("`{key}` is a Python keyword, not an argument name"),
            ));
        }
        self.skip_ws();
        if self.peek() != Some('=') || self.peek2() == Some('=') {
            self.pos = at;
            return Err(self.err("positional arguments are not accepted; write `key=value`"));
        }
        self.pos += 1;
        Ok((key, at))
    }

    fn enter(&mut self) -> Result<(), ParseError> {
        self.depth += 1;
        if self.depth > self.max_depth {
            return Err(self.err(&format!("nesting deeper than {} levels", self.max_depth)));
        }
        Ok(())
    }

    fn literal(&mut self) -> Result<Value, ParseError> {
        self.skip_ws();
        let start = self.pos;
        match self.peek() {
            None => Err(self.err("expected a value, found the end")),
            Some('"' | '\'') => Ok(Value::String(self.string()?)),
            Some('-' | '.' | '0'..='9') => self.number(),
            Some('[') => self.list(),
            Some('{') => self.dict(),
            Some('(') => Err(self
                .err("tuples and parenthesised expressions are not accepted; use a list `[...]`")),
            Some('+') => Err(self.err("unary `+` is not accepted; write the number alone")),
            Some('*') => Err(self.err("`*` unpacking is not accepted")),
            Some(c) if c.is_ascii_alphabetic() || c == '_' => {
                let word = self.ident().map(str::to_owned).unwrap_or_default();
                let value = match word.as_str() {
                    "true" | "True" => Some(Value::Bool(true)),
                    "false" | "False" => Some(Value::Bool(false)),
                    "null" | "None" => Some(Value::Null),
                    _ => None,
                };
                let next = self.peek();
                if let Some(v) = value {
                    if !matches!(next, Some('(' | '.' | '[')) {
                        return Ok(v);
                    }
                }
                let msg = match next {
                    Some('"' | '\'') => {
                        format!("string prefixes are not accepted (`{word}` before a quote)")
                    }
                    _ if word == "lambda" => "lambdas are not accepted".to_owned(),
                    Some('(') => "nested calls are not accepted as values".to_owned(),
                    Some('.') => "attribute access is not accepted as a value".to_owned(),
                    Some('[') => "indexing is not accepted".to_owned(),
                    _ => format!("`{word}` is a name, not a literal; quote strings"),
                };
                Err(self.err_at(start, &msg))
            }
            Some(c) => Err(self.err(&format!("expected a literal value, found {c:?}"))),
        }
    }

    fn list(&mut self) -> Result<Value, ParseError> {
        self.enter()?;
        self.pos += 1;
        let mut items = Vec::new();
        loop {
            self.skip_ws();
            if self.peek() == Some(']') {
                self.pos += 1;
                break;
            }
            items.push(self.literal()?);
            self.skip_ws();
            match self.peek() {
                Some(',') => self.pos += 1,
                Some(']') => {
                    self.pos += 1;
                    break;
                }
                Some(c) => {
                    return Err(self.err(&format!(
                        "expected `,` or `]` in a list, found {c:?}{}",
                        operator_hint(c)
                    )))
                }
                None => return Err(self.err("expected `,` or `]` in a list, found the end")),
            }
        }
        self.depth -= 1;
        Ok(Value::Array(items))
    }

    fn dict(&mut self) -> Result<Value, ParseError> {
        self.enter()?;
        self.pos += 1;
        let mut obj = Map::new();
        loop {
            self.skip_ws();
            if self.peek() == Some('}') {
                self.pos += 1;
                break;
            }
            let key_at = self.pos;
            if !matches!(self.peek(), Some('"' | '\'')) {
                if self.rest().starts_with("**") {
                    return Err(self.err("`**` unpacking is not accepted"));
                }
                return Err(self.err("dict keys must be quoted strings"));
            }
            let key = self.string()?;
            self.skip_ws();
            match self.peek() {
                Some(':') => self.pos += 1,
                Some(',' | '}') => {
                    return Err(self.err("sets are not accepted; use a list `[...]`"))
                }
                _ => {
                    self.expect(':', "after a dict key")?;
                }
            }
            let value = self.literal()?;
            if obj.contains_key(&key) {
                return Err(self.err_at(key_at, &format!("duplicate dict key {}", quoted(&key))));
            }
            obj.insert(key, value);
            self.skip_ws();
            match self.peek() {
                Some(',') => self.pos += 1,
                Some('}') => {
                    self.pos += 1;
                    break;
                }
                Some(c) => {
                    return Err(self.err(&format!(
                        "expected `,` or `}}` in a dict, found {c:?}{}",
                        operator_hint(c)
                    )))
                }
                None => return Err(self.err("expected `,` or `}` in a dict, found the end")),
            }
        }
        self.depth -= 1;
        Ok(Value::Object(obj))
    }

    fn string(&mut self) -> Result<String, ParseError> {
        let start = self.pos;
        let Some(quote) = self.bump() else {
            return Err(self.err("expected a string"));
        };
        if self.peek() == Some(quote) && self.peek2() == Some(quote) {
            return Err(self.err_at(start, "triple-quoted strings are not accepted"));
        }
        let mut out = String::new();
        loop {
            let at = self.pos;
            let Some(c) = self.bump() else {
                return Err(self.err_at(start, "unterminated string"));
            };
            match c {
                c if c == quote => break,
                '\\' => self.escape(&mut out, at)?,
                '\t' => out.push(c),
                c if c.is_control() && (c as u32) < 0x20 => {
                    return Err(self.err_at(
                        at,
                        &format!("raw control character {c:?} in a string; escape it"),
                    ))
                }
                c => out.push(c),
            }
            if out.len() > self.max_string_len {
                return Err(self.err_at(
                    start,
                    &format!("string longer than {} bytes", self.max_string_len),
                ));
            }
        }
        Ok(out)
    }

    fn escape(&mut self, out: &mut String, at: usize) -> Result<(), ParseError> {
        let c = match self.bump() {
            Some('\\') => '\\',
            Some('\'') => '\'',
            Some('"') => '"',
            Some('n') => '\n',
            Some('r') => '\r',
            Some('t') => '\t',
            Some('0') if !matches!(self.peek(), Some('0'..='9')) => '\0',
            Some('x') => self.hex_escape(2, at)?,
            Some('u') => self.hex_escape(4, at)?,
            Some('U') => self.hex_escape(8, at)?,
            Some(c) => return Err(self.err_at(at, &format!("unknown escape `\\{c}` in a string"))),
            None => return Err(self.err_at(at, "unterminated string")),
        };
        out.push(c);
        Ok(())
    }

    fn hex_escape(&mut self, digits: usize, at: usize) -> Result<char, ParseError> {
        let src = self.src;
        let hex = src[self.pos..].get(..digits).unwrap_or("");
        if hex.len() != digits || !hex.bytes().all(|b| b.is_ascii_hexdigit()) {
            return Err(self.err_at(
                at,
                &format!("a `\\x`, `\\u` or `\\U` escape needs {digits} hex digits"),
            ));
        }
        self.pos += digits;
        let code = u32::from_str_radix(hex, 16).map_err(|_| self.err_at(at, "bad hex escape"))?;
        char::from_u32(code).ok_or_else(|| {
            self.err_at(
                at,
                &format!(
                    "escape `U+{code:04X}` is not a Unicode scalar value (surrogate or too large)"
                ),
            )
        })
    }

    /// A decimal integer (in `i64`/`u64`) or a finite float, with an optional adjacent `-`.
    fn number(&mut self) -> Result<Value, ParseError> {
        let start = self.pos;
        let bytes = self.src.as_bytes();
        let mut i = start;
        let negative = bytes[i] == b'-';
        if negative {
            i += 1;
            if !matches!(bytes.get(i), Some(b'0'..=b'9' | b'.')) {
                self.pos = i;
                return Err(
                    self.err_at(start, "unary `-` is only accepted directly before a number")
                );
            }
        }
        let int_start = i;
        while matches!(bytes.get(i), Some(b'0'..=b'9')) {
            i += 1;
        }
        let int_digits = i - int_start;
        let mut is_float = false;
        let mut frac_digits = 0;
        if bytes.get(i) == Some(&b'.') {
            is_float = true;
            i += 1;
            let frac_start = i;
            while matches!(bytes.get(i), Some(b'0'..=b'9')) {
                i += 1;
            }
            frac_digits = i - frac_start;
        }
        if int_digits + frac_digits == 0 {
            return Err(self.err_at(start, "expected a number"));
        }
        if matches!(bytes.get(i), Some(b'e' | b'E')) {
            is_float = true;
            i += 1;
            if matches!(bytes.get(i), Some(b'+' | b'-')) {
                i += 1;
            }
            let exp_start = i;
            while matches!(bytes.get(i), Some(b'0'..=b'9')) {
                i += 1;
            }
            if i == exp_start {
                return Err(self.err_at(start, "a float exponent needs digits"));
            }
        }
        if let Some(&b) = bytes.get(i) {
            if b.is_ascii_alphanumeric() || b == b'_' || b == b'.' {
                let msg = match b {
                    b'_' => "digit separators `_` are not accepted",
                    b'x' | b'X' | b'o' | b'O' | b'b' | b'B' => {
                        "only decimal numbers are accepted (no 0x, 0o, 0b)"
                    }
                    b'j' | b'J' => "complex numbers are not accepted",
                    _ => "malformed number",
                };
                return Err(self.err_at(start, msg));
            }
        }
        let token = &self.src[start..i];
        self.pos = i;
        if !is_float {
            if int_digits > 1 && bytes[int_start] == b'0' {
                return Err(self.err_at(start, "integers with leading zeros are not accepted"));
            }
            let number = if negative {
                token.parse::<i64>().ok().map(Number::from)
            } else {
                token.parse::<u64>().ok().map(Number::from)
            };
            return number.map(Value::Number).ok_or_else(|| {
                self.err_at(
                    start,
                    &format!("integer {} does not fit in 64 bits", quoted(token)),
                )
            });
        }
        token
            .parse::<f64>()
            .ok()
            .and_then(Number::from_f64)
            .map(Value::Number)
            .ok_or_else(|| self.err_at(start, &format!("float {} is out of range", quoted(token))))
    }
}

/// A hint when the character after a value looks like an operator.
fn operator_hint(c: char) -> &'static str {
    if "+-*/%@&|^<>=!~".contains(c) {
        " (expressions are not accepted, only literals)"
    } else if c == '(' {
        " (calls are not accepted as values)"
    } else if c == '.' {
        " (attribute access is not accepted)"
    } else {
        ""
    }
}
