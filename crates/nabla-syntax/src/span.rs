//! Source files and byte spans.

use std::path::PathBuf;

/// Index of a file in a [`SourceMap`].
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Default)]
pub struct FileId(pub u32);

/// A half-open byte range `start..end` in one source file.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Default)]
pub struct Span {
    pub file: FileId,
    pub start: u32,
    pub end: u32,
}

impl Span {
    pub fn new(file: FileId, start: u32, end: u32) -> Span {
        Span { file, start, end }
    }
    /// The smallest span covering both (they must be in the same file; if not, `self`).
    pub fn to(self, other: Span) -> Span {
        if self.file != other.file {
            return self;
        }
        Span {
            file: self.file,
            start: self.start.min(other.start),
            end: self.end.max(other.end),
        }
    }
}

/// One loaded source file.
#[derive(Clone, Debug)]
pub struct SourceFile {
    /// The path as given or resolved (used in diagnostics).
    pub path: PathBuf,
    pub text: String,
    /// Byte offsets of line starts.
    line_starts: Vec<u32>,
}

/// All source files of a program (the main file and its imports).
#[derive(Clone, Debug, Default)]
pub struct SourceMap {
    pub files: Vec<SourceFile>,
}

impl SourceMap {
    pub fn new() -> SourceMap {
        SourceMap::default()
    }

    /// Adds a file and returns its id.
    pub fn add(&mut self, path: PathBuf, text: String) -> FileId {
        let mut line_starts = vec![0u32];
        for (i, b) in text.bytes().enumerate() {
            if b == b'\n' {
                line_starts.push(i as u32 + 1);
            }
        }
        self.files.push(SourceFile {
            path,
            text,
            line_starts,
        });
        FileId(self.files.len() as u32 - 1)
    }

    pub fn file(&self, id: FileId) -> &SourceFile {
        &self.files[id.0 as usize]
    }

    /// 1-based line and column (in characters) of a byte offset.
    pub fn line_col(&self, file: FileId, offset: u32) -> (usize, usize) {
        let f = match self.files.get(file.0 as usize) {
            Some(f) => f,
            None => return (0, 0),
        };
        let line = match f.line_starts.binary_search(&offset) {
            Ok(l) => l,
            Err(l) => l - 1,
        };
        let start = f.line_starts[line] as usize;
        let end = (offset as usize).min(f.text.len());
        let col = f
            .text
            .get(start..end)
            .map(|s| s.chars().count())
            .unwrap_or(0)
            + 1;
        (line + 1, col)
    }

    /// `path:line:col` of the start of a span, for run-time error messages.
    pub fn describe(&self, span: Span) -> String {
        match self.files.get(span.file.0 as usize) {
            Some(f) => {
                let (l, c) = self.line_col(span.file, span.start);
                format!("{}:{}:{}", f.path.display(), l, c)
            }
            None => "<unknown location>".to_string(),
        }
    }

    /// `path:line:col-endcol` (or `path:line:col-endline:endcol` when the
    /// span ends on a later line), 1-based, the end column just past the
    /// span's last character: the form Futhark's messages give a location.
    pub fn describe_range(&self, span: Span) -> String {
        match self.files.get(span.file.0 as usize) {
            Some(f) if span.end > span.start => {
                let (l, c) = self.line_col(span.file, span.start);
                let (l2, c2) = self.line_col(span.file, span.end);
                if l2 == l {
                    format!("{}:{}:{}-{}", f.path.display(), l, c, c2)
                } else {
                    format!("{}:{}:{}-{}:{}", f.path.display(), l, c, l2, c2)
                }
            }
            _ => self.describe(span),
        }
    }
}
