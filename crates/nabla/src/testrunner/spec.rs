//! Parsing the test blocks of a `.fut` file, following the `futhark test`
//! manual (futhark-test(1)):
//!
//! A *test block* is a run of comment lines that start at the beginning of a
//! line with `--` and that contains a line consisting of just `==`. The text
//! before `==` is a free description; after it come, in any number:
//!
//! ```text
//! tags { name… }                       -- `disable`/`notest` skip the file
//! entry: name…                         -- entry points for the following datasets
//! ["name"] [compiled|nobench|random|script|tag]… input { values… } | input @ file
//! output { values… } | output @ file | auto output | error: regex   -- optional
//! error: regex                          -- without an input: compilation must fail
//! warning: regex                        -- compilation must succeed with a matching warning
//! structure [BACKEND] { Construct N… }  -- expected IR structure (recorded, not checked)
//! property: name…                       -- property tests (not supported; ignored)
//! ```
//!
//! Values in braces may span several comment lines. Datasets that a backend
//! does not run are *skipped* (counted apart, with a reason; see
//! [`Dataset::skip_reason`]): `compiled` datasets and `auto output` by the
//! interpreter. A `script input { e }` dataset's arguments are the value
//! of the FutharkScript expression `e` (see [`crate::script`]). Like `futhark test -i`, nabla does
//! not check `structure` blocks: they describe the IR of Futhark's own
//! compiler.

use std::path::{Path, PathBuf};

/// Largest value block (in bytes) read between braces.
const MAX_LINE_LEN_FOR_SCAN: usize = 1 << 24;

/// Where a dataset's input comes from.
#[derive(Clone, Debug, PartialEq)]
pub enum InputSpec {
    /// `input { values }` — the text between the braces.
    Values(String),
    /// `input @ file` — the path relative to the test file's directory (resolved).
    File(PathBuf),
    /// `random input { types }` — the text between the braces (types and constants).
    Random(String),
}

/// What a dataset expects.
#[derive(Clone, Debug, PartialEq)]
pub enum Expected {
    /// `output { values }`
    Values(String),
    /// `output @ file` (resolved path)
    File(PathBuf),
    /// `error: regex` — the run must fail with a message matching it.
    Error(String),
    /// No `output`/`error`: the run must succeed.
    Success,
    /// `auto output`: the expected values are those of a reference run
    /// (Futhark's: compiled code; nabla's: the interpreter, the oracle of
    /// the C backend).
    Auto,
}

/// One input/output pair.
#[derive(Clone, Debug, PartialEq)]
pub struct Dataset {
    /// The entry points to run it on (from the last `entry:` line; `main` by default).
    pub entries: Vec<String>,
    /// The quoted name, if any.
    pub name: Option<String>,
    /// Where the arguments come from.
    pub input: InputSpec,
    /// What the run must produce.
    pub expected: Expected,
    /// Words before `input` other than `random` (e.g. `compiled`, `nobench`, tags).
    pub tags: Vec<String>,
    /// 1-based line of the `input` keyword in the file.
    pub line: usize,
}

impl Dataset {
    /// Whether the interpreter skips this dataset (see [`Dataset::skip_reason`]).
    pub fn skipped(&self) -> bool {
        self.skip_reason(false).is_some()
    }

    /// Why a backend does not run this dataset, or `None` if it does.
    /// `compiled_backend`: the datasets run through compiled code (`nabla
    /// test --backend=c`). Skipped: datasets tagged `notest`/`disable`;
    /// and, for the interpreter, `compiled` datasets and `auto output` (whose expected
    /// values come from a reference run: with `--backend=c` the interpreter
    /// provides them).
    pub fn skip_reason(&self, compiled_backend: bool) -> Option<String> {
        if let Some(t) = self.tags.iter().find(|t| excluded_tag(t)) {
            return Some(format!("dataset tagged `{t}`"));
        }
        if !compiled_backend {
            if self.tags.iter().any(|t| t == "compiled") {
                return Some("`compiled` dataset (run it with --backend=c)".into());
            }
            if self.expected == Expected::Auto {
                return Some(
                    "`auto output` needs a reference run (with --backend=c the interpreter gives it)"
                        .into(),
                );
            }
        }
        None
    }

    /// Whether the input is FutharkScript (`script input`).
    pub fn is_script(&self) -> bool {
        self.tags.iter().any(|t| t == "script")
    }

    /// A short description of the input for failure messages.
    pub fn describe(&self) -> String {
        if let Some(n) = &self.name {
            return format!("\"{n}\"");
        }
        match &self.input {
            InputSpec::Values(t) => format!("input {{{}}}", abbreviate(t, 40)),
            InputSpec::File(p) => format!("input @ {}", p.display()),
            InputSpec::Random(t) => format!("random input {{{}}}", abbreviate(t, 40)),
        }
    }
}

/// Collapses whitespace and cuts `s` to about `max` characters.
pub fn abbreviate(s: &str, max: usize) -> String {
    let flat = s.split_whitespace().collect::<Vec<_>>().join(" ");
    if flat.chars().count() <= max {
        format!(" {flat} ")
    } else {
        format!(" {}… ", flat.chars().take(max).collect::<String>())
    }
}

/// Tags that exclude a program or dataset from `nabla test`: `disable` and
/// `notest` always, and `no_X` for our own backend names (`no_nabla`,
/// `no_interpreter`, `no_interp`); `no_opencl` and the like concern other
/// backends and are ignored.
pub fn excluded_tag(t: &str) -> bool {
    matches!(
        t,
        "disable" | "notest" | "no_nabla" | "no_interpreter" | "no_interp"
    )
}

/// One test block.
#[derive(Clone, Debug, PartialEq, Default)]
pub struct TestBlock {
    /// 1-based line of the block's first comment line.
    pub line: usize,
    /// The words of `tags { … }`.
    pub tags: Vec<String>,
    /// The input/output pairs, in order.
    pub datasets: Vec<Dataset>,
    /// `error: regex` with no input: compilation must fail with a matching message.
    pub compile_error: Option<String>,
    /// `property:` names (not supported; recorded only).
    pub properties: Vec<String>,
    /// `warning: regex` lines: compilation must succeed and give a warning
    /// matching each.
    pub warnings: Vec<String>,
    /// `structure [BACKEND] { … }` blocks, recorded but not checked.
    pub structures: Vec<Structure>,
}

/// A `structure { … }` block: how many of each construct Futhark's
/// compiler should leave in its IR (e.g. `Screma 1 Hist 0`), for one
/// backend or for all.
#[derive(Clone, Debug, PartialEq)]
pub struct Structure {
    /// `structure gpu { … }` names the backend (`gpu`, `mc`, `seq-mem`, …);
    /// `None` for a plain `structure { … }`.
    pub backend: Option<String>,
    /// `(construct path, count)` pairs, e.g. `("Screma", 1)` or
    /// `("/Loop/Screma", 2)`.
    pub counts: Vec<(String, u64)>,
    /// 1-based line of the `structure` keyword.
    pub line: usize,
}

impl TestBlock {
    /// Whether the block has nothing to run: the program must then still
    /// type-check (one dataset in the count).
    pub fn compile_only(&self) -> bool {
        self.datasets.is_empty() && self.compile_error.is_none() && self.warnings.is_empty()
    }
}

/// All test blocks of a file.
#[derive(Clone, Debug, PartialEq, Default)]
pub struct TestSpec {
    /// The blocks in file order.
    pub blocks: Vec<TestBlock>,
}

impl TestSpec {
    /// The whole file is excluded (a `disable`/`notest` tag in any block).
    pub fn disabled(&self) -> bool {
        self.blocks
            .iter()
            .any(|b| b.tags.iter().any(|t| excluded_tag(t)))
    }
}

/// A malformed test block.
#[derive(Clone, Debug, PartialEq)]
pub struct SpecError {
    /// 1-based line in the file.
    pub line: usize,
    /// What is wrong.
    pub message: String,
}

impl std::fmt::Display for SpecError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "line {}: {}", self.line, self.message)
    }
}

/// Parses every test block in `source`. `dir` resolves `@ file` paths (the
/// test file's directory).
pub fn parse_test_spec(source: &str, dir: &Path) -> Result<TestSpec, SpecError> {
    let mut blocks = Vec::new();
    let lines: Vec<&str> = source.lines().collect();
    let mut i = 0;
    while i < lines.len() {
        if !lines[i].starts_with("--") {
            i += 1;
            continue;
        }
        let start = i;
        while i < lines.len() && lines[i].starts_with("--") {
            i += 1;
        }
        // The comment run is lines[start..i]; find its `==` line.
        let body: Vec<&str> = lines[start..i].iter().map(|l| &l[2..]).collect();
        if let Some(k) = body.iter().position(|l| l.trim() == "==") {
            let first = start + k + 1; // index of the line after `==`
            let text: Vec<(usize, &str)> = body[k + 1..]
                .iter()
                .enumerate()
                .map(|(j, l)| (first + j + 1, *l))
                .collect();
            let mut block = parse_block(&text, dir)?;
            block.line = start + 1;
            blocks.push(block);
        }
    }
    Ok(TestSpec { blocks })
}

/// A cursor over the block's text: `(line number, line content)` pairs.
struct Cursor<'a> {
    lines: &'a [(usize, &'a str)],
    li: usize,
    col: usize,
}

impl<'a> Cursor<'a> {
    fn line_no(&self) -> usize {
        self.lines
            .get(self.li)
            .map(|l| l.0)
            .unwrap_or_else(|| self.lines.last().map(|l| l.0).unwrap_or(0))
    }

    fn rest_of_line(&self) -> &'a str {
        match self.lines.get(self.li) {
            Some((_, l)) => l.get(self.col..).unwrap_or(""),
            None => "",
        }
    }

    /// Skips whitespace, across lines. Returns false at the end.
    fn skip_ws(&mut self) -> bool {
        loop {
            let Some((_, l)) = self.lines.get(self.li) else {
                return false;
            };
            let rest = l.get(self.col..).unwrap_or("");
            let trimmed = rest.trim_start();
            if trimmed.is_empty() {
                self.li += 1;
                self.col = 0;
                continue;
            }
            self.col += rest.len() - trimmed.len();
            return true;
        }
    }

    fn advance(&mut self, n: usize) {
        self.col += n;
    }

    /// The next word: letters, digits, `_`, `-`, `'`, ending with an
    /// optional `:` (as in `entry:`).
    fn peek_word(&self) -> &'a str {
        let rest = self.rest_of_line();
        let end = rest
            .char_indices()
            .find(|&(_, c)| !(c.is_alphanumeric() || c == '_' || c == '-' || c == '\''))
            .map(|(i, _)| i)
            .unwrap_or(rest.len());
        if rest[end..].starts_with(':') {
            &rest[..end + 1]
        } else {
            &rest[..end]
        }
    }

    /// Reads `{ … }` (possibly across lines) and returns the inside; inner
    /// braces (FutharkScript records) nest, and braces in string literals
    /// do not count.
    fn braces(&mut self) -> Result<String, SpecError> {
        let line = self.line_no();
        if !self.skip_ws() || !self.rest_of_line().starts_with('{') {
            return Err(SpecError {
                line,
                message: "expected `{`".into(),
            });
        }
        self.advance(1);
        let mut out = String::new();
        let mut depth = 0usize;
        let mut in_string = false;
        loop {
            let Some((_, l)) = self.lines.get(self.li) else {
                return Err(SpecError {
                    line,
                    message: "unterminated `{`".into(),
                });
            };
            let rest = l.get(self.col..).unwrap_or("");
            let mut close = None;
            let mut escaped = false;
            for (p, c) in rest.char_indices() {
                if in_string {
                    match c {
                        _ if escaped => escaped = false,
                        '\\' => escaped = true,
                        '"' => in_string = false,
                        _ => {}
                    }
                    continue;
                }
                match c {
                    '"' => in_string = true,
                    '{' => depth += 1,
                    '}' if depth == 0 => {
                        close = Some(p);
                        break;
                    }
                    '}' => depth -= 1,
                    _ => {}
                }
            }
            if let Some(p) = close {
                out.push_str(&rest[..p]);
                self.advance(p + 1);
                return Ok(out);
            }
            if out.len() > MAX_LINE_LEN_FOR_SCAN {
                return Err(SpecError {
                    line,
                    message: "value block too large".into(),
                });
            }
            out.push_str(rest);
            out.push('\n');
            self.li += 1;
            self.col = 0;
        }
    }

    /// `@ file` — the next whitespace-free token after `@`.
    fn at_file(&mut self, dir: &Path) -> Result<PathBuf, SpecError> {
        let line = self.line_no();
        self.skip_ws();
        if !self.rest_of_line().starts_with('@') {
            return Err(SpecError {
                line,
                message: "expected `{` or `@ file`".into(),
            });
        }
        self.advance(1);
        self.skip_ws();
        let rest = self.rest_of_line();
        let tok = rest.split_whitespace().next().unwrap_or("");
        if tok.is_empty() {
            return Err(SpecError {
                line,
                message: "expected a file name after `@`".into(),
            });
        }
        self.advance(tok.len());
        Ok(dir.join(tok))
    }

    /// The rest of the current line (trimmed); moves to the next line.
    fn take_line(&mut self) -> &'a str {
        let r = self.rest_of_line().trim();
        self.li += 1;
        self.col = 0;
        r
    }
}

fn parse_block(lines: &[(usize, &str)], dir: &Path) -> Result<TestBlock, SpecError> {
    let mut block = TestBlock::default();
    let mut entries = vec!["main".to_string()];
    let mut cur = Cursor {
        lines,
        li: 0,
        col: 0,
    };
    let mut pending_name: Option<String> = None;
    let mut pending_tags: Vec<String> = Vec::new();
    while cur.skip_ws() {
        let line = cur.line_no();
        let err = |m: String| SpecError { line, message: m };
        let rest = cur.rest_of_line();
        if let Some(stripped) = rest.strip_prefix('"') {
            let Some(end) = stripped.find('"') else {
                return Err(err("unterminated dataset name".into()));
            };
            pending_name = Some(stripped[..end].to_string());
            cur.advance(end + 2);
            continue;
        }
        let word = cur.peek_word();
        match word {
            "" => {
                return Err(err(format!(
                    "unexpected text in test block: {}",
                    rest.trim()
                )))
            }
            "tags" => {
                cur.advance(word.len());
                let inner = cur.braces()?;
                block
                    .tags
                    .extend(inner.split_whitespace().map(str::to_string));
            }
            "entry:" => {
                cur.advance(word.len());
                let names: Vec<String> = cur
                    .take_line()
                    .split_whitespace()
                    .map(str::to_string)
                    .collect();
                if names.is_empty() {
                    return Err(err("`entry:` without names".into()));
                }
                entries = names;
            }
            "structure" => {
                cur.advance(word.len());
                cur.skip_ws();
                let backend = match cur.peek_word() {
                    "" => None,
                    w => {
                        cur.advance(w.len());
                        Some(w.to_string())
                    }
                };
                let inner = cur.braces()?;
                block.structures.push(Structure {
                    backend,
                    counts: parse_structure_counts(&inner).map_err(err)?,
                    line,
                });
            }
            "warning:" => {
                cur.advance(word.len());
                let re = cur.take_line().to_string();
                if re.is_empty() {
                    return Err(err("`warning:` without a regex".into()));
                }
                block.warnings.push(re);
            }
            "property:" => {
                cur.advance(word.len());
                block
                    .properties
                    .extend(cur.take_line().split_whitespace().map(str::to_string));
            }
            "error:" => {
                cur.advance(word.len());
                let re = cur.take_line().to_string();
                if !pending_tags.is_empty() || pending_name.is_some() {
                    return Err(err(
                        "`error:` after dataset modifiers without `input`".into()
                    ));
                }
                block.compile_error = Some(re);
            }
            "input" => {
                cur.advance(word.len());
                let random = pending_tags.iter().any(|t| t == "random");
                let script = pending_tags.iter().any(|t| t == "script");
                cur.skip_ws();
                let input = if cur.rest_of_line().starts_with('{') {
                    let inner = cur.braces()?;
                    if random {
                        InputSpec::Random(inner)
                    } else {
                        InputSpec::Values(inner)
                    }
                } else {
                    if random {
                        return Err(err("`random input` needs `{ types }`".into()));
                    }
                    InputSpec::File(cur.at_file(dir)?)
                };
                let expected = parse_expected(&mut cur, dir)?;
                let mut tags: Vec<String> = std::mem::take(&mut pending_tags)
                    .into_iter()
                    .filter(|t| t != "random")
                    .collect();
                if script && !tags.iter().any(|t| t == "script") {
                    tags.push("script".into());
                }
                block.datasets.push(Dataset {
                    entries: entries.clone(),
                    name: pending_name.take(),
                    input,
                    expected,
                    tags,
                    line,
                });
            }
            "output" | "auto" => {
                return Err(err(format!("`{word}` without a preceding `input`")));
            }
            w if w.ends_with(':') => return Err(err(format!("unknown directive `{w}`"))),
            w => {
                // A dataset modifier: compiled, nobench, random, script, or a tag.
                pending_tags.push(w.to_string());
                cur.advance(w.len());
            }
        }
    }
    if !pending_tags.is_empty() || pending_name.is_some() {
        return Err(SpecError {
            line: cur.line_no(),
            message: format!(
                "dataset modifiers `{}` without `input`",
                pending_tags.join(" ")
            ),
        });
    }
    Ok(block)
}

/// The inside of a `structure { … }` block: construct names (optionally
/// `/`-separated paths) each followed by a count.
fn parse_structure_counts(inner: &str) -> Result<Vec<(String, u64)>, String> {
    let words: Vec<&str> = inner.split_whitespace().collect();
    if !words.len().is_multiple_of(2) {
        return Err(format!(
            "`structure` block: expected construct/count pairs, got `{}`",
            words.join(" ")
        ));
    }
    words
        .chunks(2)
        .map(|pair| {
            let n = pair[1].parse::<u64>().map_err(|_| {
                format!(
                    "`structure` block: `{}` is not a count (after `{}`)",
                    pair[1], pair[0]
                )
            })?;
            Ok((pair[0].to_string(), n))
        })
        .collect()
}

/// After an input: `output {…}`, `output @ f`, `auto output`, `error: re`, or nothing.
fn parse_expected(cur: &mut Cursor, dir: &Path) -> Result<Expected, SpecError> {
    if !cur.skip_ws() {
        return Ok(Expected::Success);
    }
    let word = cur.peek_word();
    match word {
        "output" => {
            cur.advance(word.len());
            cur.skip_ws();
            if cur.rest_of_line().starts_with('{') {
                Ok(Expected::Values(cur.braces()?))
            } else {
                Ok(Expected::File(cur.at_file(dir)?))
            }
        }
        "auto" => {
            cur.advance(word.len());
            cur.skip_ws();
            if cur.peek_word() != "output" {
                return Err(SpecError {
                    line: cur.line_no(),
                    message: "expected `output` after `auto`".into(),
                });
            }
            cur.advance("output".len());
            Ok(Expected::Auto)
        }
        "error:" => {
            cur.advance(word.len());
            Ok(Expected::Error(cur.take_line().to_string()))
        }
        _ => Ok(Expected::Success),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(s: &str) -> TestSpec {
        parse_test_spec(s, Path::new("/t")).unwrap()
    }

    #[test]
    fn simple_block() {
        let s = parse("-- Adds one.\n-- ==\n-- input { 1 } output { 2 }\n-- input { [1,2]\n--   } output {\n-- 3 }\ndef main x = x\n");
        assert_eq!(s.blocks.len(), 1);
        let d = &s.blocks[0].datasets;
        assert_eq!(d.len(), 2);
        assert_eq!(d[0].input, InputSpec::Values(" 1 ".into()));
        assert_eq!(d[0].expected, Expected::Values(" 2 ".into()));
        assert_eq!(d[0].entries, vec!["main"]);
        assert_eq!(d[0].line, 3);
        assert_eq!(d[1].input, InputSpec::Values(" [1,2]\n   ".into()));
        assert_eq!(d[1].expected, Expected::Values("\n 3 ".into()));
    }

    #[test]
    fn comments_without_eq_are_not_blocks() {
        let s = parse("-- just a comment\n-- input { 1 }\ndef main = 1\n  -- ==\n");
        assert!(s.blocks.is_empty());
    }
}
