//! `nabla lsp`: a Language Server Protocol server over standard input and
//! output (as `futhark lsp`, which the editors' Futhark modes start).
//!
//! The server keeps the text of every open document. Whenever a document
//! is opened, changed or saved it is type-checked ([`check_reading`], the
//! open buffers taking the place of the files on disk, for the main file
//! and its imports alike) and the errors and warnings are published for
//! each file they are in (an empty list clears a file's old ones). The
//! last successful check of each document answers hover requests (the
//! type of the name or expression under the cursor) and go-to-definition
//! (the binding of a local name, or the definition of a top-level one,
//! in whichever file it is). A panic in the front end is logged (standard
//! error and `window/logMessage`) and the server carries on.

use crate::driver::{check_reading, Checked};
use lsp_server::{Connection, ErrorCode, Message, Notification, Request, RequestId, Response};
use lsp_types::notification::{
    DidChangeTextDocument, DidCloseTextDocument, DidOpenTextDocument, DidSaveTextDocument,
    LogMessage, Notification as _, PublishDiagnostics,
};
use lsp_types::request::{GotoDefinition, HoverRequest, Request as _};
use lsp_types::{
    DiagnosticRelatedInformation, DiagnosticSeverity, GotoDefinitionResponse, Hover, HoverContents,
    HoverProviderCapability, InitializeResult, Location, LogMessageParams, MarkupContent,
    MarkupKind, MessageType, OneOf, Position, PublishDiagnosticsParams, Range, SaveOptions,
    ServerCapabilities, ServerInfo, TextDocumentSyncCapability, TextDocumentSyncKind,
    TextDocumentSyncOptions, TextDocumentSyncSaveOptions, Uri,
};
use nabla_syntax::ast::{self, Dec, Expr, ExprKind, ModExp, Pat, PatKind, Res};
use nabla_syntax::{Diagnostic, DiagnosticKind, FileId, SourceMap, Span};
use std::collections::{BTreeMap, HashMap};
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::path::{Path, PathBuf};
use std::str::FromStr;

/// Runs the server on standard input and output until the client sends
/// `shutdown` and `exit` (or closes the input); an error for an `exit`
/// without `shutdown` or a broken connection.
pub fn serve() -> Result<(), String> {
    let (connection, io_threads) = Connection::stdio();
    let capabilities = ServerCapabilities {
        text_document_sync: Some(TextDocumentSyncCapability::Options(
            TextDocumentSyncOptions {
                open_close: Some(true),
                change: Some(TextDocumentSyncKind::FULL),
                save: Some(TextDocumentSyncSaveOptions::SaveOptions(SaveOptions {
                    include_text: Some(false),
                })),
                ..Default::default()
            },
        )),
        hover_provider: Some(HoverProviderCapability::Simple(true)),
        definition_provider: Some(OneOf::Left(true)),
        ..Default::default()
    };
    let init = InitializeResult {
        capabilities,
        server_info: Some(ServerInfo {
            name: "nabla".to_string(),
            version: Some(env!("CARGO_PKG_VERSION").to_string()),
        }),
    };
    let (id, _params) = connection.initialize_start().map_err(|e| e.to_string())?;
    let init = serde_json::to_value(init).map_err(|e| e.to_string())?;
    connection
        .initialize_finish(id, init)
        .map_err(|e| e.to_string())?;
    let mut server = Server {
        connection: &connection,
        docs: HashMap::new(),
        analyses: HashMap::new(),
        published: HashMap::new(),
    };
    server.main_loop()?;
    drop(connection);
    io_threads.join().map_err(|e| e.to_string())
}

/// An open document.
struct Document {
    /// The URI as the client sent it (publishing under the same spelling).
    uri: Uri,
    text: String,
}

/// The last successful check of a document.
struct Analysis {
    checked: Checked,
    /// Every top-level value declaration by id: its name's span.
    globals: HashMap<ast::NodeId, Span>,
}

struct Server<'a> {
    connection: &'a Connection,
    /// Open documents by (canonical) path.
    docs: HashMap<PathBuf, Document>,
    analyses: HashMap<PathBuf, Analysis>,
    /// For each document, the files its last check published diagnostics
    /// for (to clear those that a later check no longer reports).
    published: HashMap<PathBuf, Vec<PathBuf>>,
}

impl Server<'_> {
    fn main_loop(&mut self) -> Result<(), String> {
        for msg in &self.connection.receiver {
            match msg {
                Message::Request(req) => {
                    if self
                        .connection
                        .handle_shutdown(&req)
                        .map_err(|e| e.to_string())?
                    {
                        return Ok(());
                    }
                    let id = req.id.clone();
                    let method = req.method.clone();
                    match catch_unwind(AssertUnwindSafe(|| self.request(req))) {
                        Ok(resp) => self.send(resp.into()),
                        Err(_) => {
                            self.log(&format!("internal error while answering {method}"));
                            self.send(
                                Response::new_err(
                                    id,
                                    ErrorCode::InternalError as i32,
                                    format!("internal error while answering {method}"),
                                )
                                .into(),
                            );
                        }
                    }
                }
                Message::Notification(n) => {
                    if n.method == "exit" {
                        // The protocol's exit status 1: no `shutdown` first.
                        return Err("`exit` without `shutdown`".to_string());
                    }
                    let method = n.method.clone();
                    if catch_unwind(AssertUnwindSafe(|| self.notification(n))).is_err() {
                        self.log(&format!("internal error while handling {method}"));
                    }
                }
                Message::Response(_) => {}
            }
        }
        Ok(())
    }

    fn send(&self, msg: Message) {
        // The client has gone away when this fails; the loop then ends.
        let _ = self.connection.sender.send(msg);
    }

    /// Logs an error: to standard error and to the client.
    fn log(&self, message: &str) {
        eprintln!("nabla lsp: {message}");
        let params = LogMessageParams {
            typ: MessageType::ERROR,
            message: message.to_string(),
        };
        self.send(Notification::new(LogMessage::METHOD.to_string(), params).into());
    }

    fn request(&mut self, req: Request) -> Response {
        let id = req.id.clone();
        match req.method.as_str() {
            HoverRequest::METHOD => match parse::<lsp_types::HoverParams>(&id, req.params) {
                Ok(p) => {
                    let pos = p.text_document_position_params;
                    Response::new_ok(id, self.hover(&pos.text_document.uri, pos.position))
                }
                Err(e) => e,
            },
            GotoDefinition::METHOD => {
                match parse::<lsp_types::GotoDefinitionParams>(&id, req.params) {
                    Ok(p) => {
                        let pos = p.text_document_position_params;
                        let loc = self.definition(&pos.text_document.uri, pos.position);
                        Response::new_ok(id, loc.map(GotoDefinitionResponse::Scalar))
                    }
                    Err(e) => e,
                }
            }
            _ => Response::new_err(
                id,
                ErrorCode::MethodNotFound as i32,
                format!("unsupported request {}", req.method),
            ),
        }
    }

    fn notification(&mut self, n: Notification) {
        match n.method.as_str() {
            DidOpenTextDocument::METHOD => {
                if let Ok(p) =
                    serde_json::from_value::<lsp_types::DidOpenTextDocumentParams>(n.params)
                {
                    let uri = p.text_document.uri;
                    if let Some(path) = uri_to_path(&uri) {
                        let text = p.text_document.text;
                        self.docs.insert(path.clone(), Document { uri, text });
                        self.check_document(&path);
                    }
                }
            }
            DidChangeTextDocument::METHOD => {
                if let Ok(p) =
                    serde_json::from_value::<lsp_types::DidChangeTextDocumentParams>(n.params)
                {
                    let Some(path) = uri_to_path(&p.text_document.uri) else {
                        return;
                    };
                    // Full synchronisation: the last change is the whole text.
                    if let (Some(doc), Some(change)) = (
                        self.docs.get_mut(&path),
                        p.content_changes.into_iter().last(),
                    ) {
                        doc.text = change.text;
                        self.check_document(&path);
                    }
                }
            }
            DidSaveTextDocument::METHOD => {
                // A saved file may be imported by the other open documents.
                let mut paths: Vec<PathBuf> = self.docs.keys().cloned().collect();
                paths.sort();
                for path in paths {
                    self.check_document(&path);
                }
            }
            DidCloseTextDocument::METHOD => {
                if let Ok(p) =
                    serde_json::from_value::<lsp_types::DidCloseTextDocumentParams>(n.params)
                {
                    if let Some(path) = uri_to_path(&p.text_document.uri) {
                        self.docs.remove(&path);
                        self.analyses.remove(&path);
                        // Its diagnostics go, except those of the files
                        // still open (their own checks keep them).
                        for file in self.published.remove(&path).unwrap_or_default() {
                            if self.docs.contains_key(&file) {
                                continue;
                            }
                            let uri = if file == path {
                                Some(p.text_document.uri.clone())
                            } else {
                                path_to_uri(&file)
                            };
                            if let Some(uri) = uri {
                                self.publish(uri, Vec::new());
                            }
                        }
                    }
                }
            }
            _ => {}
        }
    }

    /// Type-checks the open document `path` and publishes its diagnostics.
    fn check_document(&mut self, path: &Path) {
        let Some(doc) = self.docs.get(path) else {
            return;
        };
        let doc_uri = doc.uri.clone();
        let overlay: HashMap<PathBuf, String> = self
            .docs
            .iter()
            .map(|(p, d)| (p.clone(), d.text.clone()))
            .collect();
        let main = path.to_path_buf();
        let outcome = guarded(move || {
            let read = |p: &Path| match overlay.get(&canonical(p)) {
                Some(text) => Ok(text.clone()),
                None => std::fs::read_to_string(p),
            };
            check_reading(&main, &read)
        });
        let (diags, sources) = match outcome {
            Ok(Ok(checked)) => {
                let diags = checked.warnings.clone();
                let sources = checked.sources.clone();
                let globals = globals(&checked);
                self.analyses
                    .insert(path.to_path_buf(), Analysis { checked, globals });
                (diags, sources)
            }
            Ok(Err((e, sources))) => {
                self.analyses.remove(path);
                (e.diagnostics, sources)
            }
            Err(e) => {
                self.analyses.remove(path);
                self.log(&format!("checking {}: {e}", path.display()));
                return;
            }
        };
        // Group by file; every loaded file other than the prelude gets a
        // list, so that fixed errors are cleared.
        let mut by_file: BTreeMap<PathBuf, Vec<lsp_types::Diagnostic>> = BTreeMap::new();
        by_file.insert(path.to_path_buf(), Vec::new());
        for f in sources.files.iter().skip(1) {
            if f.path.is_absolute() {
                by_file.entry(canonical(&f.path)).or_default();
            }
        }
        for d in &diags {
            let file = match file_path(&sources, d.span.file) {
                Some(p) => p,
                None => path.to_path_buf(),
            };
            let converted = self.convert_diagnostic(d, &sources);
            by_file.entry(file).or_default().push(converted);
        }
        let old = self.published.remove(path).unwrap_or_default();
        for p in old {
            by_file.entry(p).or_default();
        }
        self.published
            .insert(path.to_path_buf(), by_file.keys().cloned().collect());
        for (file, diagnostics) in by_file {
            let uri = if file == path {
                doc_uri.clone()
            } else {
                match self.uri_of(&file) {
                    Some(u) => u,
                    None => continue,
                }
            };
            self.publish(uri, diagnostics);
        }
    }

    fn publish(&self, uri: Uri, diagnostics: Vec<lsp_types::Diagnostic>) {
        let params = PublishDiagnosticsParams {
            uri,
            diagnostics,
            version: None,
        };
        self.send(Notification::new(PublishDiagnostics::METHOD.to_string(), params).into());
    }

    fn convert_diagnostic(&self, d: &Diagnostic, sources: &SourceMap) -> lsp_types::Diagnostic {
        let range = span_range(sources, d.span).unwrap_or_default();
        let severity = if d.kind == DiagnosticKind::Warning {
            DiagnosticSeverity::WARNING
        } else {
            DiagnosticSeverity::ERROR
        };
        let mut message = d.message.clone();
        for note in &d.notes {
            message.push('\n');
            message.push_str(note);
        }
        let related: Vec<DiagnosticRelatedInformation> = d
            .labels
            .iter()
            .filter_map(|(span, label)| {
                Some(DiagnosticRelatedInformation {
                    location: self.location(sources, *span)?,
                    message: label.clone(),
                })
            })
            .collect();
        lsp_types::Diagnostic {
            range,
            severity: Some(severity),
            source: Some("nabla".to_string()),
            message,
            related_information: (!related.is_empty()).then_some(related),
            ..Default::default()
        }
    }

    /// The URI of a file: the client's own for an open document.
    fn uri_of(&self, path: &Path) -> Option<Uri> {
        match self.docs.get(path) {
            Some(d) => Some(d.uri.clone()),
            None => path_to_uri(path),
        }
    }

    /// Where `span` is, as an LSP location (none in the prelude).
    fn location(&self, sources: &SourceMap, span: Span) -> Option<Location> {
        let path = file_path(sources, span.file)?;
        Some(Location {
            uri: self.uri_of(&path)?,
            range: span_range(sources, span)?,
        })
    }

    /// The analysis of the document `uri` and the byte offset of `pos` in
    /// its file, with the file's id.
    fn locate(&self, uri: &Uri, pos: Position) -> Option<(&Analysis, FileId, u32)> {
        let path = uri_to_path(uri)?;
        let analysis = self.analyses.get(&path)?;
        let sources = &analysis.checked.sources;
        let idx = sources
            .files
            .iter()
            .enumerate()
            .skip(1)
            .rev()
            .find(|(_, f)| canonical(&f.path) == path)
            .map(|(i, _)| i)?;
        let offset = position_to_offset(&sources.files[idx].text, pos);
        Some((analysis, FileId(idx as u32), offset))
    }

    fn hover(&self, uri: &Uri, pos: Position) -> Option<Hover> {
        let (analysis, file, offset) = self.locate(uri, pos)?;
        let sources = &analysis.checked.sources;
        let hit = find(&analysis.checked, file, offset)?;
        let text = &sources.file(file).text;
        let source = |s: Span| text.get(s.start as usize..s.end as usize).unwrap_or("");
        let (span, shown) = match &hit.node {
            Node::Expr(e) => {
                let ty = shown_type(e.ty.as_ref()?);
                match &e.kind {
                    ExprKind::Var { .. } => (e.span, format!("{} : {ty}", source(e.span))),
                    _ => (e.span, format!("{ty}")),
                }
            }
            Node::Pat(p, name) => {
                let ty = shown_type(p.ty.as_ref()?);
                (name.span, format!("{} : {ty}", source(name.span)))
            }
            Node::Def(vb) => {
                let ty = vb.ty.as_ref()?;
                (vb.name.span, format!("{} : {ty}", source(vb.name.span)))
            }
            Node::LocalFun(_) => return None,
        };
        Some(Hover {
            contents: HoverContents::Markup(MarkupContent {
                kind: MarkupKind::Markdown,
                value: format!("```futhark\n{shown}\n```"),
            }),
            range: span_range(sources, span),
        })
    }

    fn definition(&self, uri: &Uri, pos: Position) -> Option<Location> {
        let (analysis, file, offset) = self.locate(uri, pos)?;
        let hit = find(&analysis.checked, file, offset)?;
        let span = match hit.node {
            Node::Expr(Expr {
                kind: ExprKind::Var { res, .. },
                ..
            }) => match res {
                Some(Res::Global(id)) => *analysis.globals.get(id)?,
                Some(Res::Local) | Some(Res::Size) => hit.binding?,
                _ => return None,
            },
            Node::Pat(_, name) => name.span,
            Node::Def(vb) => vb.name.span,
            Node::LocalFun(name) => name.span,
            Node::Expr(_) => return None,
        };
        self.location(&analysis.checked.sources, span)
    }
}

/// Runs `f` (the front end, which recurses over the syntax tree) on a
/// thread of its own with a deep stack; a panic in it becomes an error.
fn guarded<T: Send + 'static>(f: impl FnOnce() -> T + Send + 'static) -> Result<T, String> {
    std::thread::Builder::new()
        .stack_size(crate::testrunner::runner::STACK_SIZE)
        .spawn(f)
        .map_err(|e| format!("cannot start the type checker's thread: {e}"))?
        .join()
        .map_err(|payload| {
            let what = payload
                .downcast_ref::<&str>()
                .map(|s| s.to_string())
                .or_else(|| payload.downcast_ref::<String>().cloned())
                .unwrap_or_else(|| "unknown panic".to_string());
            format!("internal error in the type checker: {what}")
        })
}

/// A value's type as hover shows it: without the uniqueness markers of
/// its arrays (they say how a value was made, not what it is); those in
/// function types are kept (there they mean something).
fn shown_type(t: &ast::Type) -> ast::Type {
    match t {
        ast::Type::Array { elem, shape, .. } => ast::Type::Array {
            elem: Box::new(shown_type(elem)),
            shape: shape.clone(),
            unique: false,
        },
        ast::Type::Acc { arr, .. } => ast::Type::Acc {
            arr: arr.clone(),
            unique: false,
        },
        ast::Type::Arrow { .. } => t.clone(),
        t => t.map_children(shown_type),
    }
}

/// Parses a request's parameters, or answers it with an error.
fn parse<P: serde::de::DeserializeOwned>(
    id: &RequestId,
    params: serde_json::Value,
) -> Result<P, Response> {
    serde_json::from_value(params).map_err(|e| {
        Response::new_err(
            id.clone(),
            ErrorCode::InvalidParams as i32,
            format!("invalid parameters: {e}"),
        )
    })
}

fn canonical(p: &Path) -> PathBuf {
    std::fs::canonicalize(p).unwrap_or_else(|_| p.to_path_buf())
}

/// The (canonical) path of a user's file; none for the prelude, the
/// prompt's sources or an unknown file.
fn file_path(sources: &SourceMap, file: FileId) -> Option<PathBuf> {
    if file.0 == 0 {
        return None;
    }
    let f = sources.files.get(file.0 as usize)?;
    f.path.is_absolute().then(|| canonical(&f.path))
}

/// The LSP range of a span (none for an unknown file).
fn span_range(sources: &SourceMap, span: Span) -> Option<Range> {
    let text = &sources.files.get(span.file.0 as usize)?.text;
    Some(Range {
        start: offset_to_position(text, span.start),
        end: offset_to_position(text, span.end.max(span.start)),
    })
}

/// The LSP position (0-based line, UTF-16 code units into the line) of a
/// byte offset.
pub fn offset_to_position(text: &str, offset: u32) -> Position {
    let mut offset = (offset as usize).min(text.len());
    while !text.is_char_boundary(offset) {
        offset -= 1;
    }
    let before = &text[..offset];
    let line = before.bytes().filter(|&b| b == b'\n').count();
    let line_start = before.rfind('\n').map_or(0, |i| i + 1);
    let character = text[line_start..offset].encode_utf16().count();
    Position {
        line: line as u32,
        character: character as u32,
    }
}

/// The byte offset of an LSP position (clamped to its line and the text).
pub fn position_to_offset(text: &str, pos: Position) -> u32 {
    let mut line_start = 0;
    for _ in 0..pos.line {
        match text[line_start..].find('\n') {
            Some(i) => line_start += i + 1,
            None => return text.len() as u32,
        }
    }
    let mut units = 0u32;
    for (i, c) in text[line_start..].char_indices() {
        if c == '\n' || units >= pos.character {
            return (line_start + i) as u32;
        }
        units += c.len_utf16() as u32;
    }
    text.len() as u32
}

/// The path of a `file:` URI.
pub fn uri_to_path(uri: &Uri) -> Option<PathBuf> {
    let s = uri.as_str();
    let rest = s.strip_prefix("file://")?;
    // `file:///p` or `file://localhost/p`.
    let path = if rest.starts_with('/') {
        rest
    } else {
        rest.strip_prefix("localhost")?
    };
    let path = path.split(['?', '#']).next().unwrap_or("");
    let bytes = path.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] == b'%' && i + 2 < bytes.len() {
            let hex = std::str::from_utf8(&bytes[i + 1..i + 3]).ok();
            if let Some(b) = hex.and_then(|h| u8::from_str_radix(h, 16).ok()) {
                out.push(b);
                i += 3;
                continue;
            }
        }
        out.push(bytes[i]);
        i += 1;
    }
    let path = PathBuf::from(String::from_utf8(out).ok()?);
    Some(canonical(&path))
}

/// The `file:` URI of an absolute path.
pub fn path_to_uri(path: &Path) -> Option<Uri> {
    let s = path.to_str()?;
    let mut uri = String::from("file://");
    for b in s.bytes() {
        if b.is_ascii_alphanumeric() || b"-._~/".contains(&b) {
            uri.push(b as char);
        } else {
            uri.push_str(&format!("%{b:02X}"));
        }
    }
    Uri::from_str(&uri).ok()
}

/// The top-level value declarations of a checked program: id → the span
/// of the name.
fn globals(checked: &Checked) -> HashMap<ast::NodeId, Span> {
    fn decs(ds: &[Dec], out: &mut HashMap<ast::NodeId, Span>) {
        for d in ds {
            match d {
                Dec::Val(vb) => {
                    out.insert(vb.id, vb.name.span);
                }
                Dec::Local(d, _) => decs(std::slice::from_ref(d.as_ref()), out),
                Dec::Module(mb) => mod_exp(&mb.body, out),
                Dec::OpenModule(m, _) | Dec::Include(m, _) => mod_exp(m, out),
                _ => {}
            }
        }
    }
    fn mod_exp(m: &ModExp, out: &mut HashMap<ast::NodeId, Span>) {
        match m {
            ModExp::Struct(ds, _) => decs(ds, out),
            ModExp::Apply(f, a, _) => {
                mod_exp(f, out);
                mod_exp(a, out);
            }
            ModExp::Ascribe(m, _, _) | ModExp::Lambda(_, _, m, _) => mod_exp(m, out),
            ModExp::Var(_) | ModExp::Import(..) => {}
        }
    }
    let mut out = HashMap::new();
    for f in &checked.files {
        decs(&f.decs, &mut out);
    }
    out
}

/// What is under the cursor.
enum Node<'a> {
    Expr(&'a Expr),
    /// A variable bound by a pattern (the pattern, its name).
    Pat(&'a Pat, &'a ast::Ident),
    /// The name of a top-level definition.
    Def(&'a ast::ValBind),
    /// The name of a local function where it is defined.
    LocalFun(&'a ast::Ident),
}

struct Hit<'a> {
    node: Node<'a>,
    span: Span,
    /// For a local variable: where the innermost binding of its name is.
    binding: Option<Span>,
}

/// The smallest node of `file` whose span holds `offset` (a name rather
/// than an expression around it).
fn find(checked: &Checked, file: FileId, offset: u32) -> Option<Hit<'_>> {
    let mut f = Finder {
        file,
        offset,
        scope: Vec::new(),
        best: None,
    };
    for p in &checked.files {
        f.decs(&p.decs);
    }
    f.best
}

struct Finder<'a> {
    file: FileId,
    offset: u32,
    /// The names in scope, innermost last, with their binding's span.
    scope: Vec<(&'a str, Span)>,
    best: Option<Hit<'a>>,
}

impl<'a> Finder<'a> {
    fn holds(&self, span: Span) -> bool {
        span.file == self.file && span.start <= self.offset && self.offset <= span.end
    }

    /// Records `node` when it is under the cursor and no larger than the
    /// best so far (the later, inner one wins a tie).
    fn offer(&mut self, node: Node<'a>, span: Span, binding: Option<Span>) {
        if !self.holds(span) {
            return;
        }
        let better = match &self.best {
            None => true,
            Some(b) => {
                let (len, best_len) = (span.end - span.start, b.span.end - b.span.start);
                len < best_len
                    || (len == best_len
                        && !matches!(
                            b.node,
                            Node::Expr(Expr {
                                kind: ExprKind::Var { .. },
                                ..
                            })
                        ))
            }
        };
        if better {
            self.best = Some(Hit {
                node,
                span,
                binding,
            });
        }
    }

    fn decs(&mut self, ds: &'a [Dec]) {
        for d in ds {
            match d {
                Dec::Val(vb) => {
                    self.offer(Node::Def(vb), vb.name.span, None);
                    let mark = self.scope.len();
                    self.type_params(&vb.type_params);
                    for p in &vb.params {
                        self.pat(p);
                    }
                    self.expr(&vb.body);
                    self.scope.truncate(mark);
                }
                Dec::Local(d, _) => self.decs(std::slice::from_ref(d.as_ref())),
                Dec::Module(mb) => self.mod_exp(&mb.body),
                Dec::OpenModule(m, _) | Dec::Include(m, _) => self.mod_exp(m),
                _ => {}
            }
        }
    }

    fn mod_exp(&mut self, m: &'a ModExp) {
        match m {
            ModExp::Struct(ds, _) => self.decs(ds),
            ModExp::Apply(f, a, _) => {
                self.mod_exp(f);
                self.mod_exp(a);
            }
            ModExp::Ascribe(m, _, _) | ModExp::Lambda(_, _, m, _) => self.mod_exp(m),
            ModExp::Var(_) | ModExp::Import(..) => {}
        }
    }

    fn type_params(&mut self, tps: &'a [ast::TypeParam]) {
        for tp in tps {
            if let ast::TypeParam::Size(id) = tp {
                self.scope.push((id.name.as_ref(), id.span));
            }
        }
    }

    fn bind(&mut self, id: &'a ast::Ident) {
        self.scope.push((id.name.as_ref(), id.span));
    }

    /// Offers the pattern's variables and brings them into scope.
    fn pat(&mut self, p: &'a Pat) {
        match &p.kind {
            PatKind::Id(id) => {
                self.offer(Node::Pat(p, id), id.span, Some(id.span));
                self.bind(id);
            }
            PatKind::Tuple(ps) | PatKind::Constr(_, ps) => {
                for p in ps {
                    self.pat(p);
                }
            }
            PatKind::Record(fs) => {
                for (_, p) in fs {
                    self.pat(p);
                }
            }
            PatKind::Ascribe(p, _) => self.pat(p),
            PatKind::Wildcard | PatKind::Lit(_) => {}
        }
    }

    fn lookup(&self, name: &str) -> Option<Span> {
        self.scope
            .iter()
            .rev()
            .find(|(n, _)| *n == name)
            .map(|(_, s)| *s)
    }

    fn dim_indices(&mut self, idx: &'a [ast::DimIndex]) {
        for i in idx {
            match i {
                ast::DimIndex::Fix(e) => self.expr(e),
                ast::DimIndex::Slice { start, end, stride } => {
                    for e in [start, end, stride].into_iter().flatten() {
                        self.expr(e);
                    }
                }
            }
        }
    }

    fn expr(&mut self, e: &'a Expr) {
        let binding = match &e.kind {
            ExprKind::Var { name, .. } if name.quals.is_empty() => self.lookup(&name.name),
            _ => None,
        };
        self.offer(Node::Expr(e), e.span, binding);
        let mark = self.scope.len();
        match &e.kind {
            ExprKind::Lit(_)
            | ExprKind::Var { .. }
            | ExprKind::OpSection { .. }
            | ExprKind::ProjSection(_) => {}
            ExprKind::Parens(x)
            | ExprKind::Project(x, _)
            | ExprKind::Negate(x)
            | ExprKind::Not(x)
            | ExprKind::OpSectionLeft { lhs: x, .. }
            | ExprKind::OpSectionRight { rhs: x, .. }
            | ExprKind::Ascribe(x, _)
            | ExprKind::Coerce(x, _)
            | ExprKind::LocalOpen(_, x)
            | ExprKind::Attr(_, x) => self.expr(x),
            ExprKind::Tuple(xs) | ExprKind::ArrayLit(xs) | ExprKind::Constr(_, xs) => {
                for x in xs {
                    self.expr(x);
                }
            }
            ExprKind::Record(fs) => {
                for f in fs {
                    if let ast::RecordField::Named(_, x) = f {
                        self.expr(x);
                    }
                }
            }
            ExprKind::Range {
                start, second, end, ..
            } => {
                self.expr(start);
                if let Some(s) = second {
                    self.expr(s);
                }
                self.expr(end);
            }
            ExprKind::Index(x, idx) => {
                self.expr(x);
                self.dim_indices(idx);
            }
            ExprKind::Apply(f, args) => {
                self.expr(f);
                for a in args {
                    self.expr(a);
                }
            }
            ExprKind::BinOp { lhs, rhs, .. } => {
                self.expr(lhs);
                self.expr(rhs);
            }
            ExprKind::Lambda { params, body, .. } => {
                for p in params {
                    self.pat(p);
                }
                self.expr(body);
            }
            ExprKind::LetPat {
                sizes,
                pat,
                value,
                body,
            } => {
                self.expr(value);
                for s in sizes {
                    self.bind(s);
                }
                self.pat(pat);
                self.expr(body);
            }
            ExprKind::LetFun {
                name,
                type_params,
                params,
                value,
                body,
                ..
            } => {
                self.type_params(type_params);
                for p in params {
                    self.pat(p);
                }
                self.expr(value);
                self.scope.truncate(mark);
                self.offer(Node::LocalFun(name), name.span, Some(name.span));
                self.bind(name);
                self.expr(body);
            }
            ExprKind::LetWith {
                dest,
                indices,
                value,
                body,
            } => {
                self.dim_indices(indices);
                self.expr(value);
                self.bind(dest);
                self.expr(body);
            }
            ExprKind::If { cond, then_, else_ } => {
                self.expr(cond);
                self.expr(then_);
                self.expr(else_);
            }
            ExprKind::Match { scrutinee, cases } => {
                self.expr(scrutinee);
                for c in cases {
                    let inner = self.scope.len();
                    self.pat(&c.pat);
                    self.expr(&c.body);
                    self.scope.truncate(inner);
                }
            }
            ExprKind::Loop {
                sizes,
                pat,
                init,
                form,
                body,
                ..
            } => {
                if let Some(init) = init {
                    self.expr(init);
                }
                for s in sizes {
                    self.bind(s);
                }
                self.pat(pat);
                match form {
                    ast::LoopForm::For(i, bound) => {
                        self.expr(bound);
                        self.bind(i);
                    }
                    ast::LoopForm::ForIn(p, xs) => {
                        self.expr(xs);
                        self.pat(p);
                    }
                    ast::LoopForm::While(cond) => self.expr(cond),
                }
                self.expr(body);
            }
            ExprKind::Update {
                src,
                indices,
                value,
                ..
            } => {
                self.expr(src);
                self.dim_indices(indices);
                self.expr(value);
            }
            ExprKind::RecordUpdate { src, value, .. } => {
                self.expr(src);
                self.expr(value);
            }
        }
        self.scope.truncate(mark);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn positions_count_utf16_units() {
        let text = "ab\n\u{e9}x\u{1F600}y\nz";
        // `y` is byte 3 + 2 + 1 + 4 = 10 and UTF-16 unit 1 + 1 + 2 = 4.
        assert_eq!(
            offset_to_position(text, 10),
            Position {
                line: 1,
                character: 4
            }
        );
        assert_eq!(
            position_to_offset(
                text,
                Position {
                    line: 1,
                    character: 4
                }
            ),
            10
        );
        assert_eq!(offset_to_position(text, 0), Position::new(0, 0));
        assert_eq!(position_to_offset(text, Position::new(2, 0)), 12);
        // Past the end of a line: its end.
        assert_eq!(position_to_offset(text, Position::new(0, 9)), 2);
        assert_eq!(position_to_offset(text, Position::new(7, 0)), 13);
    }

    #[test]
    fn a_panic_in_the_checker_is_an_error() {
        assert_eq!(guarded(|| 7), Ok(7));
        let e = guarded(|| -> i32 { panic!("boom") }).unwrap_err();
        assert!(e.contains("boom"), "{e}");
    }

    #[test]
    fn file_uris_round_trip() {
        let p = Path::new("/tmp/a dir/\u{e9}.fut");
        let uri = path_to_uri(p).unwrap();
        assert_eq!(uri.as_str(), "file:///tmp/a%20dir/%C3%A9.fut");
        assert_eq!(uri_to_path(&uri).unwrap(), p);
    }
}
