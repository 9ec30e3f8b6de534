//! Diagnostics: an error (or warning) with a message and a source span,
//! rendered with the file, line, column and the source line with the span
//! marked (via `codespan-reporting`).

use crate::span::{SourceMap, Span};

/// Which stage found the problem.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum DiagnosticKind {
    Lexical,
    Syntax,
    /// Import resolution: a missing or unreadable file, an import cycle.
    Import,
    Type,
    /// Elaboration limits (e.g. an unsupported construct).
    Elaboration,
    Runtime,
    /// Not an error: compilation goes on.
    Warning,
}

/// A located message.
#[derive(Clone, Debug)]
pub struct Diagnostic {
    pub kind: DiagnosticKind,
    pub message: String,
    pub span: Span,
    /// Secondary located notes ("defined here", …).
    pub labels: Vec<(Span, String)>,
    /// Unlocated notes appended at the end.
    pub notes: Vec<String>,
}

impl Diagnostic {
    pub fn new(kind: DiagnosticKind, span: Span, message: impl Into<String>) -> Diagnostic {
        Diagnostic {
            kind,
            message: message.into(),
            span,
            labels: vec![],
            notes: vec![],
        }
    }
    pub fn with_label(mut self, span: Span, msg: impl Into<String>) -> Diagnostic {
        self.labels.push((span, msg.into()));
        self
    }
    pub fn with_note(mut self, note: impl Into<String>) -> Diagnostic {
        self.notes.push(note.into());
        self
    }

    /// The stage's name as printed before the message: `"type error"`, …
    pub fn kind_name(&self) -> &'static str {
        match self.kind {
            DiagnosticKind::Lexical => "lexical error",
            DiagnosticKind::Syntax => "syntax error",
            DiagnosticKind::Import => "import error",
            DiagnosticKind::Type => "type error",
            DiagnosticKind::Elaboration => "error",
            DiagnosticKind::Runtime => "run-time error",
            DiagnosticKind::Warning => "warning",
        }
    }

    /// Renders the diagnostic as plain text:
    /// `type error: message` / `--> path:line:col` / the source line with `^^^`.
    pub fn render(&self, sources: &SourceMap) -> String {
        use codespan_reporting::diagnostic::{Diagnostic as CsDiag, Label};
        use codespan_reporting::files::SimpleFiles;
        use codespan_reporting::term::{self, termcolor::NoColor, Config};

        let mut files = SimpleFiles::new();
        for f in &sources.files {
            files.add(f.path.display().to_string(), f.text.as_str());
        }
        let clamp = |span: Span| -> Option<(usize, std::ops::Range<usize>)> {
            let f = sources.files.get(span.file.0 as usize)?;
            let len = f.text.len();
            let mut s = (span.start as usize).min(len);
            let mut e = (span.end as usize).min(len).max(s);
            while s > 0 && !f.text.is_char_boundary(s) {
                s -= 1;
            }
            while e < len && !f.text.is_char_boundary(e) {
                e += 1;
            }
            Some((span.file.0 as usize, s..e))
        };
        let mut labels = Vec::new();
        if let Some((fid, r)) = clamp(self.span) {
            labels.push(Label::primary(fid, r));
        }
        for (sp, msg) in &self.labels {
            if let Some((fid, r)) = clamp(*sp) {
                labels.push(Label::secondary(fid, r).with_message(msg.clone()));
            }
        }
        let d = match self.kind {
            DiagnosticKind::Warning => CsDiag::warning().with_message(self.message.clone()),
            _ => CsDiag::error().with_message(format!("{}: {}", self.kind_name(), self.message)),
        };
        let d = d.with_labels(labels).with_notes(self.notes.clone());
        let mut out = NoColor::new(Vec::<u8>::new());
        if term::emit(&mut out, &Config::default(), &files, &d).is_err() {
            return format!(
                "{}: {}: {}",
                sources.describe(self.span),
                self.kind_name(),
                self.message
            );
        }
        String::from_utf8_lossy(&out.into_inner()).into_owned()
    }
}

/// Renders many diagnostics, one after another.
pub fn render_all(diags: &[Diagnostic], sources: &SourceMap) -> String {
    diags
        .iter()
        .map(|d| d.render(sources))
        .collect::<Vec<_>>()
        .join("\n")
}
