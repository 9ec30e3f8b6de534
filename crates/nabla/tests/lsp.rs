//! `nabla lsp` driven as an editor drives it: the built binary is started,
//! and JSON-RPC messages with `Content-Length` framing go to its standard
//! input and come back on its standard output.

use serde_json::{json, Value};
use std::io::{BufRead, BufReader, Read, Write};
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::mpsc::{channel, Receiver};
use std::time::Duration;

/// How long to wait for any one message from the server.
const TIMEOUT: Duration = Duration::from_secs(60);

/// A minimal LSP client over the server's standard input and output.
struct Client {
    child: Child,
    stdin: Option<ChildStdin>,
    incoming: Receiver<Value>,
    next_id: i64,
}

impl Client {
    fn start() -> Client {
        let mut child = Command::new(env!("CARGO_BIN_EXE_nabla"))
            .arg("lsp")
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .spawn()
            .expect("start nabla lsp");
        let stdin = child.stdin.take();
        let stdout = child.stdout.take().unwrap();
        let (tx, incoming) = channel();
        // Reads framed messages until the server closes its output.
        std::thread::spawn(move || {
            let mut r = BufReader::new(stdout);
            loop {
                let mut length = None;
                loop {
                    let mut line = String::new();
                    if r.read_line(&mut line).unwrap_or(0) == 0 {
                        return;
                    }
                    let line = line.trim_end();
                    if line.is_empty() {
                        break;
                    }
                    if let Some((name, value)) = line.split_once(':') {
                        if name.eq_ignore_ascii_case("content-length") {
                            length = value.trim().parse::<usize>().ok();
                        }
                    }
                }
                let mut body = vec![0; length.expect("a Content-Length header")];
                if r.read_exact(&mut body).is_err() {
                    return;
                }
                let msg: Value = serde_json::from_slice(&body).expect("a JSON message");
                if tx.send(msg).is_err() {
                    return;
                }
            }
        });
        Client {
            child,
            stdin,
            incoming,
            next_id: 1,
        }
    }

    fn send(&mut self, msg: Value) {
        let body = serde_json::to_vec(&msg).unwrap();
        let stdin = self.stdin.as_mut().expect("the server's input is open");
        write!(stdin, "Content-Length: {}\r\n\r\n", body.len()).unwrap();
        stdin.write_all(&body).unwrap();
        stdin.flush().unwrap();
    }

    fn notify(&mut self, method: &str, params: Value) {
        self.send(json!({"jsonrpc": "2.0", "method": method, "params": params}));
    }

    /// Sends a request and returns its response (the messages before it,
    /// notifications, are dropped).
    fn request(&mut self, method: &str, params: Value) -> Value {
        let id = self.next_id;
        self.next_id += 1;
        self.send(json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}));
        loop {
            let msg = self.recv();
            if msg["id"] == json!(id) && msg.get("method").is_none() {
                return msg;
            }
        }
    }

    fn recv(&mut self) -> Value {
        self.incoming
            .recv_timeout(TIMEOUT)
            .expect("a message from the server in time")
    }

    /// The next diagnostics published for `uri`.
    fn diagnostics_for(&mut self, uri: &str) -> Vec<Value> {
        loop {
            let msg = self.recv();
            if msg["method"] == "textDocument/publishDiagnostics" && msg["params"]["uri"] == uri {
                return msg["params"]["diagnostics"].as_array().unwrap().clone();
            }
        }
    }

    fn initialize(&mut self) -> Value {
        let resp = self.request(
            "initialize",
            json!({"processId": null, "rootUri": null, "capabilities": {}}),
        );
        self.notify("initialized", json!({}));
        resp
    }

    fn open(&mut self, uri: &str, text: &str) {
        self.notify(
            "textDocument/didOpen",
            json!({"textDocument": {"uri": uri, "languageId": "futhark", "version": 1, "text": text}}),
        );
    }

    fn change(&mut self, uri: &str, version: i64, text: &str) {
        self.notify(
            "textDocument/didChange",
            json!({"textDocument": {"uri": uri, "version": version},
                   "contentChanges": [{"text": text}]}),
        );
    }

    fn at(&mut self, method: &str, uri: &str, line: u32, character: u32) -> Value {
        self.request(
            method,
            json!({"textDocument": {"uri": uri},
                   "position": {"line": line, "character": character}}),
        )
    }

    /// `shutdown` then `exit`: the server must end with status 0.
    fn shut_down(mut self) {
        let resp = self.request("shutdown", Value::Null);
        assert_eq!(resp["result"], Value::Null, "{resp}");
        assert!(resp.get("error").is_none(), "{resp}");
        self.notify("exit", Value::Null);
        drop(self.stdin.take());
        let start = std::time::Instant::now();
        loop {
            if let Some(status) = self.child.try_wait().unwrap() {
                assert!(status.success(), "nabla lsp exited with {status}");
                return;
            }
            if start.elapsed() > TIMEOUT {
                let _ = self.child.kill();
                panic!("nabla lsp did not exit after `exit`");
            }
            std::thread::sleep(Duration::from_millis(20));
        }
    }
}

impl Drop for Client {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// A fresh directory for a test's files.
fn temp_dir(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("nabla-lsp-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir.canonicalize().unwrap()
}

fn uri(path: &Path) -> String {
    format!("file://{}", path.display())
}

#[test]
fn initialize_announces_capabilities_and_shutdown_exits_cleanly() {
    let mut c = Client::start();
    let resp = c.initialize();
    let caps = &resp["result"]["capabilities"];
    assert_eq!(caps["hoverProvider"], json!(true), "{resp}");
    assert_eq!(caps["definitionProvider"], json!(true), "{resp}");
    // Full text synchronisation, with open and close notifications.
    assert_eq!(caps["textDocumentSync"]["change"], json!(1), "{resp}");
    assert_eq!(caps["textDocumentSync"]["openClose"], json!(true), "{resp}");
    assert_eq!(resp["result"]["serverInfo"]["name"], json!("nabla"));
    // An unknown request is answered with an error, not a crash.
    let resp = c.request("textDocument/completion", json!({}));
    assert_eq!(resp["error"]["code"], json!(-32601), "{resp}");
    c.shut_down();
}

#[test]
fn type_errors_are_published_and_cleared_when_fixed() {
    let dir = temp_dir("diagnostics");
    let path = dir.join("prog.fut");
    // On disk a valid program; the editor's buffer has the error.
    std::fs::write(&path, "def main (x: i32) : i32 = x + 1\n").unwrap();
    let uri = uri(&path);
    let mut c = Client::start();
    c.initialize();
    let bad = "-- é and 😀 before the error\ndef main (x: i32) : bool =\n  x + 1\n";
    c.open(&uri, bad);
    let diags = c.diagnostics_for(&uri);
    assert_eq!(diags.len(), 1, "{diags:?}");
    let d = &diags[0];
    assert_eq!(d["severity"], json!(1), "{d}");
    let message = d["message"].as_str().unwrap();
    assert!(
        message.contains("bool") && message.contains("i32"),
        "{message}"
    );
    // The body `x + 1` on the third line (0-based line 2), columns 2 to 7.
    assert_eq!(
        d["range"],
        json!({"start": {"line": 2, "character": 2}, "end": {"line": 2, "character": 7}}),
        "{d}"
    );
    // The error moved by a change: found again, at the new place (after a
    // character that takes two UTF-16 units).
    c.change(&uri, 2, "def main (x: i32) : bool = (😀 x + 1)\n");
    let diags = c.diagnostics_for(&uri);
    assert!(!diags.is_empty());
    c.change(&uri, 3, "def main (x: i32) : bool =\n  x + 1 > 0\n");
    let diags = c.diagnostics_for(&uri);
    assert!(diags.is_empty(), "{diags:?}");
    c.shut_down();
}

#[test]
fn error_ranges_count_utf16_units() {
    let dir = temp_dir("utf16");
    let path = dir.join("prog.fut");
    let uri = uri(&path);
    let mut c = Client::start();
    c.initialize();
    // Before `true`: 46 characters, `é` (two bytes, one UTF-16 unit) and
    // `😀` (four bytes, two UTF-16 units) among them.
    let text = "def main (x: i32) : i32 = let s = \"é😀\" in x + true\n";
    c.open(&uri, text);
    let diags = c.diagnostics_for(&uri);
    assert_eq!(diags.len(), 1, "{diags:?}");
    assert_eq!(
        diags[0]["range"],
        json!({"start": {"line": 0, "character": 47}, "end": {"line": 0, "character": 51}}),
        "{diags:?}"
    );
    // Hover at a UTF-16 position past the emoji finds `x`.
    c.change(
        &uri,
        2,
        "def main (x: i32) : i32 = let s = \"é😀\" in x + 1\n",
    );
    assert!(c.diagnostics_for(&uri).is_empty());
    let resp = c.at("textDocument/hover", &uri, 0, 43);
    let value = resp["result"]["contents"]["value"].as_str().unwrap_or("");
    assert!(value.contains("x : i32"), "{resp}");
    c.shut_down();
}

#[test]
fn hover_shows_the_type_of_a_variable_and_of_a_definition() {
    let dir = temp_dir("hover");
    let path = dir.join("prog.fut");
    let text = "def twice (x: f64) : f64 = x * 2\n\
                \n\
                def main (xs: []f64) : []f64 =\n  let ys = map twice xs\n  in ys\n";
    std::fs::write(&path, text).unwrap();
    let uri = uri(&path);
    let mut c = Client::start();
    c.initialize();
    c.open(&uri, text);
    assert!(c.diagnostics_for(&uri).is_empty());
    // `ys` in `in ys` (line 4, column 5).
    let resp = c.at("textDocument/hover", &uri, 4, 5);
    let value = resp["result"]["contents"]["value"].as_str().unwrap_or("");
    assert!(value.starts_with("```futhark\n"), "{resp}");
    assert!(value.contains("ys : [") && value.contains("]f64"), "{resp}");
    assert_eq!(
        resp["result"]["range"],
        json!({"start": {"line": 4, "character": 5}, "end": {"line": 4, "character": 7}}),
        "{resp}"
    );
    // `twice` where it is used: a function from f64 to f64.
    let resp = c.at("textDocument/hover", &uri, 3, 16);
    let value = resp["result"]["contents"]["value"].as_str().unwrap_or("");
    assert!(
        value.contains("twice : ") && value.contains("f64) -> f64"),
        "{resp}"
    );
    // `twice` where it is defined.
    let resp = c.at("textDocument/hover", &uri, 0, 6);
    let value = resp["result"]["contents"]["value"].as_str().unwrap_or("");
    assert!(value.contains("twice : "), "{resp}");
    // A parameter: `x` in `(x: f64)`.
    let resp = c.at("textDocument/hover", &uri, 0, 11);
    let value = resp["result"]["contents"]["value"].as_str().unwrap_or("");
    assert!(value.contains("x : f64"), "{resp}");
    // Nothing under the cursor on the empty line.
    let resp = c.at("textDocument/hover", &uri, 1, 0);
    assert_eq!(resp["result"], Value::Null, "{resp}");
    c.shut_down();
}

#[test]
fn definition_of_an_imported_function_is_in_the_other_file() {
    let dir = temp_dir("definition");
    std::fs::create_dir_all(dir.join("lib")).unwrap();
    let lib = dir.join("lib").join("util.fut");
    std::fs::write(&lib, "-- Utilities.\n\ndef square (x: f64) : f64 = x * x\n").unwrap();
    let main = dir.join("main.fut");
    let text = "import \"lib/util\"\n\n\
                def main (xs: []f64) : f64 =\n  let ys = map square xs\n  in reduce (+) 0 ys\n";
    std::fs::write(&main, text).unwrap();
    let main_uri = uri(&main);
    let mut c = Client::start();
    c.initialize();
    c.open(&main_uri, text);
    assert!(c.diagnostics_for(&main_uri).is_empty());
    // `square` (line 3, columns 15..21): defined in lib/util.fut, line 2.
    let resp = c.at("textDocument/definition", &main_uri, 3, 17);
    assert_eq!(resp["result"]["uri"], json!(uri(&lib)), "{resp}");
    assert_eq!(
        resp["result"]["range"],
        json!({"start": {"line": 2, "character": 4}, "end": {"line": 2, "character": 10}}),
        "{resp}"
    );
    // A local: `ys` in `reduce (+) 0 ys` is bound on line 3.
    let resp = c.at("textDocument/definition", &main_uri, 4, 18);
    assert_eq!(resp["result"]["uri"], json!(main_uri), "{resp}");
    assert_eq!(
        resp["result"]["range"],
        json!({"start": {"line": 3, "character": 6}, "end": {"line": 3, "character": 8}}),
        "{resp}"
    );
    // A prelude function (`map`) has no location to go to.
    let resp = c.at("textDocument/definition", &main_uri, 3, 12);
    assert_eq!(resp["result"], Value::Null, "{resp}");
    c.shut_down();
}

#[test]
fn an_open_buffer_of_an_import_takes_the_place_of_the_file() {
    let dir = temp_dir("overlay");
    let lib = dir.join("lib.fut");
    std::fs::write(&lib, "def inc (x: i32) : i32 = x + 1\n").unwrap();
    let main = dir.join("main.fut");
    let text = "import \"lib\"\n\ndef main (x: i32) : i32 = inc x\n";
    std::fs::write(&main, text).unwrap();
    let (lib_uri, main_uri) = (uri(&lib), uri(&main));
    let mut c = Client::start();
    c.initialize();
    // The editor renamed `inc` in its (unsaved) buffer of lib.fut.
    c.open(&lib_uri, "def incr (x: i32) : i32 = x + 1\n");
    assert!(c.diagnostics_for(&lib_uri).is_empty());
    c.open(&main_uri, text);
    let diags = c.diagnostics_for(&main_uri);
    assert_eq!(diags.len(), 1, "{diags:?}");
    assert!(
        diags[0]["message"].as_str().unwrap().contains("inc"),
        "{diags:?}"
    );
    c.shut_down();
}

#[test]
fn exit_without_shutdown_ends_with_status_1() {
    let mut c = Client::start();
    c.initialize();
    c.notify("exit", Value::Null);
    drop(c.stdin.take());
    let status = c.child.wait().unwrap();
    assert_eq!(status.code(), Some(1), "{status}");
}

#[test]
fn requests_about_unknown_documents_answer_null() {
    let mut c = Client::start();
    c.initialize();
    let resp = c.at("textDocument/hover", "file:///nonexistent/x.fut", 0, 0);
    assert_eq!(resp["result"], Value::Null, "{resp}");
    let resp = c.at("textDocument/definition", "untitled:Untitled-1", 3, 3);
    assert_eq!(resp["result"], Value::Null, "{resp}");
    // A document that is not on disk is checked from its buffer alone.
    let dir = temp_dir("unsaved");
    let uri = uri(&dir.join("new.fut"));
    c.open(&uri, "def main : i32 = 1 + 1\n");
    assert!(c.diagnostics_for(&uri).is_empty());
    c.change(&uri, 2, "def main : i32 = 1 +\n");
    let diags = c.diagnostics_for(&uri);
    assert_eq!(diags.len(), 1, "{diags:?}");
    c.shut_down();
}

#[test]
fn saving_rechecks_the_documents_that_import_the_file() {
    let dir = temp_dir("save");
    let lib = dir.join("lib.fut");
    let lib_text = "def inc (x: i32) : i32 = x + 1\n";
    std::fs::write(&lib, lib_text).unwrap();
    let main = dir.join("main.fut");
    let text = "import \"lib\"\n\ndef main (x: i32) : i32 = inc x\n";
    std::fs::write(&main, text).unwrap();
    let (lib_uri, main_uri) = (uri(&lib), uri(&main));
    let mut c = Client::start();
    c.initialize();
    c.open(&main_uri, text);
    assert!(c.diagnostics_for(&main_uri).is_empty());
    c.open(&lib_uri, lib_text);
    assert!(c.diagnostics_for(&lib_uri).is_empty());
    // `inc` now returns a bool: lib.fut checks, main.fut no longer does,
    // which shows once lib.fut is saved.
    let changed = "def inc (x: i32) : bool = x > 1\n";
    c.change(&lib_uri, 2, changed);
    assert!(c.diagnostics_for(&lib_uri).is_empty());
    std::fs::write(&lib, changed).unwrap();
    c.notify(
        "textDocument/didSave",
        json!({"textDocument": {"uri": lib_uri}}),
    );
    let diags = c.diagnostics_for(&main_uri);
    assert_eq!(diags.len(), 1, "{diags:?}");
    assert_eq!(diags[0]["range"]["start"]["line"], json!(2), "{diags:?}");
    // Closing main.fut clears its diagnostics.
    c.notify(
        "textDocument/didClose",
        json!({"textDocument": {"uri": main_uri}}),
    );
    assert!(c.diagnostics_for(&main_uri).is_empty());
    c.shut_down();
}
