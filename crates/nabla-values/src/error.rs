//! Errors of value construction and of the value readers.

use std::fmt;
use std::path::PathBuf;

/// Where in the input an error was found.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Location {
    /// No particular place (e.g. an I/O error, or a shape error in an API call).
    Nowhere,
    /// In textual input: 1-based line and column (columns count characters).
    Text { line: usize, column: usize },
    /// In binary input: byte offset from the start of the input.
    Byte(usize),
    /// At the end of the input.
    End,
}

/// An error from reading or constructing values: a message, where it was
/// found, and (for [`crate::read_values_file`]) which file.
///
/// Displays as `file:line:column: message` (parts that are unknown are left out).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ValueError {
    pub message: String,
    pub location: Location,
    pub file: Option<PathBuf>,
}

impl ValueError {
    /// An error with no location.
    pub fn new(message: impl Into<String>) -> ValueError {
        ValueError {
            message: message.into(),
            location: Location::Nowhere,
            file: None,
        }
    }

    /// An error at byte `offset` of the input `src`; textual positions are
    /// computed as line:column when `text` is true, else kept as a byte offset.
    pub(crate) fn at(src: &[u8], offset: usize, text: bool, message: impl Into<String>) -> Self {
        let location = if offset >= src.len() {
            if text {
                let (line, column) = line_col(src, src.len());
                Location::Text { line, column }
            } else {
                Location::End
            }
        } else if text {
            let (line, column) = line_col(src, offset);
            Location::Text { line, column }
        } else {
            Location::Byte(offset)
        };
        ValueError {
            message: message.into(),
            location,
            file: None,
        }
    }

    /// The same error, attributed to `file`.
    pub fn in_file(mut self, file: impl Into<PathBuf>) -> Self {
        self.file = Some(file.into());
        self
    }
}

/// 1-based line and column (in characters) of byte `offset` in `src`.
fn line_col(src: &[u8], offset: usize) -> (usize, usize) {
    let before = &src[..offset.min(src.len())];
    let line = before.iter().filter(|&&b| b == b'\n').count() + 1;
    let line_start = before
        .iter()
        .rposition(|&b| b == b'\n')
        .map_or(0, |p| p + 1);
    // Count characters, not bytes: skip UTF-8 continuation bytes.
    let column = before[line_start..]
        .iter()
        .filter(|&&b| (b & 0xC0) != 0x80)
        .count()
        + 1;
    (line, column)
}

impl fmt::Display for ValueError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if let Some(file) = &self.file {
            write!(f, "{}:", file.display())?;
        }
        match &self.location {
            Location::Nowhere => {
                if self.file.is_some() {
                    write!(f, " ")?;
                }
            }
            Location::Text { line, column } => write!(f, "{line}:{column}: ")?,
            Location::Byte(b) => write!(f, "byte {b}: ")?,
            Location::End => write!(f, "end of input: ")?,
        }
        f.write_str(&self.message)
    }
}

impl std::error::Error for ValueError {}
