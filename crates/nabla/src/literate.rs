//! `nabla literate` and `nabla script` (futhark-literate(1),
//! futhark-script(1)): evaluating FutharkScript against a program, through
//! the interpreter or an executable made by the C backend, and turning a
//! program with `-- >` directives into Markdown with the directives'
//! results, images (`:img`) and plots (`:plot2d`, `:gnuplot`) beside it.
//!
//! A literate program is read line by line: top-level comment lines
//! (`-- text`, or `--` alone) become Markdown text, runs of other lines
//! become `futhark` code blocks, and a comment line `-- > directive` is a
//! directive. A directive ending in `;` takes the comment lines after it,
//! up to a line that is not a comment or an empty comment, as parameters
//! (`key: value`).

use crate::cbackend::Executable;
use crate::driver::{one_line, CompileOptions, Compiled};
use crate::script::{self, Evaluator, ScriptValue};
use nabla_prim::{PrimType, PrimValue};
use nabla_values::{ArrayValue, Value};
use std::path::{Path, PathBuf};

/// What evaluates the entry points a script calls.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ScriptBackend {
    /// The reference interpreter.
    Interp,
    /// An executable made by the C backend (programs it does not support
    /// run in the interpreter, with a note on stderr).
    C,
}

/// A compiled program ready to evaluate FutharkScript.
pub struct ScriptRunner {
    compiled: Compiled,
    exe: Option<Executable>,
    /// Entry points the executable left out (run in the interpreter).
    left_out: Vec<String>,
    work_dir: Option<PathBuf>,
    dir: PathBuf,
}

impl Drop for ScriptRunner {
    fn drop(&mut self) {
        if let Some(d) = &self.work_dir {
            let _ = std::fs::remove_dir_all(d);
        }
    }
}

impl ScriptRunner {
    /// Compiles `program` with `opts` and, for [`ScriptBackend::C`], builds
    /// its executable in a fresh temporary directory. `note` receives
    /// remarks for the user (a fallback to the interpreter).
    pub fn new(
        program: &Path,
        opts: &CompileOptions,
        backend: ScriptBackend,
        note: &mut dyn FnMut(&str),
    ) -> Result<ScriptRunner, String> {
        let compiled = crate::driver::compile_with(program, opts).map_err(|e| e.to_string())?;
        let dir = program.parent().map(Path::to_path_buf).unwrap_or_default();
        let mut runner = ScriptRunner {
            compiled,
            exe: None,
            left_out: Vec::new(),
            work_dir: None,
            dir,
        };
        if backend == ScriptBackend::C {
            use std::sync::atomic::{AtomicUsize, Ordering};
            static COUNTER: AtomicUsize = AtomicUsize::new(0);
            let d = std::env::temp_dir().join(format!(
                "nabla-script-{}-{}",
                std::process::id(),
                COUNTER.fetch_add(1, Ordering::SeqCst)
            ));
            std::fs::create_dir_all(&d)
                .map_err(|e| format!("cannot create {}: {e}", d.display()))?;
            runner.work_dir = Some(d.clone());
            let exe = d.join("prog");
            match crate::cbackend::build_executable(&runner.compiled, &exe) {
                Ok(left_out) => {
                    for (name, why) in left_out {
                        note(&format!(
                            "note: the C backend leaves out entry point {name} ({}); the interpreter runs it",
                            one_line(&why.to_string())
                        ));
                        runner.left_out.push(name);
                    }
                    runner.exe = Some(Executable::new(exe));
                }
                Err(e) if e.is_unsupported() => note(&format!(
                    "note: the C backend does not support this program ({}); using the interpreter",
                    one_line(&e.to_string())
                )),
                Err(e) => {
                    return Err(format!(
                        "{}\n(--backend=interp runs the program in the interpreter)",
                        e.to_string().trim_end()
                    ))
                }
            }
        }
        Ok(runner)
    }

    /// The compiled program.
    pub fn compiled(&self) -> &Compiled {
        &self.compiled
    }

    /// Evaluates parsed FutharkScript. Builtins read files relative to the
    /// program's directory.
    pub fn eval(&self, e: &script::Exp) -> Result<ScriptValue, script::ScriptError> {
        let compiled = &self.compiled;
        let exe = self.exe.as_ref();
        let left_out = &self.left_out;
        let mut call = |f: &str, args: Vec<Value>| -> Result<Vec<Value>, String> {
            let r = match exe.filter(|_| !left_out.iter().any(|n| n == f)) {
                None => compiled.run(f, args),
                Some(exe) => {
                    let types = compiled.entry_types(f)?;
                    exe.run(compiled, f, &args, &types.results)
                }
            };
            r.map_err(|e| e.summary)
        };
        let mut ev = Evaluator::new(compiled, &self.dir, &mut call);
        ev.eval(e)
    }

    /// Parses and evaluates `text`; an error is rendered with `origin` (and
    /// `line`, where the text is line `line` of the file `origin`) and the
    /// offending part of the text marked.
    pub fn eval_text(
        &self,
        text: &str,
        origin: &str,
        line: Option<usize>,
    ) -> Result<ScriptValue, String> {
        let e = script::parse(text).map_err(|e| e.render_at(text, origin, line))?;
        self.eval(&e).map_err(|e| e.render_at(text, origin, line))
    }
}

/// One piece of a literate program.
#[derive(Clone, Debug, PartialEq)]
pub enum Block {
    /// Top-level comment text, without the `-- ` markers.
    Text(String),
    /// Program text.
    Code(String),
    /// A directive (the text after `-- > `) and its parameter lines.
    Directive {
        /// 1-based line of the directive.
        line: usize,
        /// The directive, e.g. `:img f 3`.
        text: String,
        /// `key: value` lines after a directive ending in `;`.
        params: Vec<String>,
    },
}

/// Splits a program into text, code and directives.
pub fn parse_literate(source: &str) -> Vec<Block> {
    let mut blocks = Vec::new();
    let lines: Vec<&str> = source.lines().collect();
    let mut code: Vec<&str> = Vec::new();
    let mut text: Vec<&str> = Vec::new();
    let flush_code = |code: &mut Vec<&str>, blocks: &mut Vec<Block>| {
        while code.first().is_some_and(|l| l.trim().is_empty()) {
            code.remove(0);
        }
        while code.last().is_some_and(|l| l.trim().is_empty()) {
            code.pop();
        }
        if !code.is_empty() {
            blocks.push(Block::Code(code.join("\n")));
        }
        code.clear();
    };
    let flush_text = |text: &mut Vec<&str>, blocks: &mut Vec<Block>| {
        if !text.is_empty() {
            blocks.push(Block::Text(text.join("\n")));
        }
        text.clear();
    };
    let mut i = 0;
    while i < lines.len() {
        let l = lines[i];
        let comment = if l == "--" {
            Some("")
        } else {
            l.strip_prefix("-- ")
        };
        match comment {
            Some(c) if c.starts_with('>') => {
                flush_code(&mut code, &mut blocks);
                flush_text(&mut text, &mut blocks);
                let d = c[1..].trim().to_string();
                let mut params = Vec::new();
                let line = i + 1;
                if let Some(stripped) = d.strip_suffix(';') {
                    while let Some(p) = lines.get(i + 1).and_then(|l| l.strip_prefix("-- ")) {
                        if p.trim().is_empty() || p.starts_with('>') {
                            break;
                        }
                        params.push(p.trim().to_string());
                        i += 1;
                    }
                    blocks.push(Block::Directive {
                        line,
                        text: stripped.trim().to_string(),
                        params,
                    });
                } else {
                    blocks.push(Block::Directive {
                        line,
                        text: d,
                        params,
                    });
                }
            }
            Some(c) => {
                flush_code(&mut code, &mut blocks);
                text.push(c);
            }
            None => {
                flush_text(&mut text, &mut blocks);
                code.push(l);
            }
        }
        i += 1;
    }
    flush_code(&mut code, &mut blocks);
    flush_text(&mut text, &mut blocks);
    blocks
}

/// Options of [`literate`].
#[derive(Clone, Debug)]
pub struct LiterateOptions {
    /// The Markdown file (default: the program with `.md`); images go to
    /// the directory of that name without its extension and with `-img`.
    pub output: Option<PathBuf>,
    /// Stop at the first failing directive, writing no file.
    pub stop_on_error: bool,
    /// Report each directive on stderr as it runs.
    pub verbose: bool,
}

/// What [`literate`] did.
#[derive(Clone, Debug, Default)]
pub struct LiterateReport {
    /// The Markdown file written (`None` when stopped on an error).
    pub markdown: Option<PathBuf>,
    /// One message per failed directive.
    pub failures: Vec<String>,
}

/// Runs the directives of the program `runner` was made from (whose text
/// is `source`, at `program`) and writes the Markdown file and images.
pub fn literate(
    runner: &ScriptRunner,
    program: &Path,
    source: &str,
    opts: &LiterateOptions,
) -> Result<LiterateReport, String> {
    let md_path = opts
        .output
        .clone()
        .unwrap_or_else(|| program.with_extension("md"));
    let stem = md_path
        .file_stem()
        .map(|s| s.to_string_lossy().to_string())
        .unwrap_or_else(|| "out".into());
    let img_name = format!("{stem}-img");
    let img_dir = md_path.with_file_name(&img_name);
    let mut report = LiterateReport::default();
    let mut md = String::new();
    let mut images = Vec::new();
    let mut img_dir_ready = false;
    for block in parse_literate(source) {
        match block {
            Block::Text(t) => {
                md.push_str(&t);
                md.push_str("\n\n");
            }
            Block::Code(c) => {
                md.push_str("```futhark\n");
                md.push_str(&c);
                md.push_str("\n```\n\n");
            }
            Block::Directive { line, text, params } => {
                if opts.verbose {
                    eprintln!("{}:{line}: > {text}", program.display());
                }
                let (shown, covert, directive) = strip_modifiers(&text, &params);
                if !covert {
                    md.push_str("```\n> ");
                    md.push_str(&shown);
                    md.push_str("\n```\n\n");
                }
                let origin = program.display().to_string();
                let n = images.len();
                let result = run_directive(runner, &directive, &params, (&origin, line), n);
                match result {
                    Ok(Output::Text(t)) => {
                        md.push_str("```\n");
                        md.push_str(t.trim_end());
                        md.push_str("\n```\n\n");
                    }
                    Ok(out @ (Output::Image(..) | Output::Video(..))) => {
                        if !img_dir_ready {
                            if img_dir.is_dir() {
                                std::fs::remove_dir_all(&img_dir).map_err(|e| {
                                    format!("cannot remove {}: {e}", img_dir.display())
                                })?;
                            }
                            std::fs::create_dir_all(&img_dir)
                                .map_err(|e| format!("cannot create {}: {e}", img_dir.display()))?;
                            img_dir_ready = true;
                        }
                        let (name, bytes) = match &out {
                            Output::Image(n, b, _) | Output::Video(n, b, _) => (n, b),
                            Output::Text(_) => unreachable!("matched above"),
                        };
                        let path = img_dir.join(name);
                        std::fs::write(&path, bytes)
                            .map_err(|e| format!("cannot write {}: {e}", path.display()))?;
                        match &out {
                            Output::Video(_, _, repeat) if !name.ends_with(".gif") => {
                                let attrs = if *repeat { " autoplay loop" } else { "" };
                                md.push_str(&format!(
                                    "<video src=\"{img_name}/{name}\" controls{attrs}></video>\n\n"
                                ));
                            }
                            _ => md.push_str(&format!("![]({img_name}/{name})\n\n")),
                        }
                        if let Output::Image(_, _, Some(c)) = &out {
                            md.push_str(&format!("*{c}*\n\n"));
                        }
                        images.push(path);
                    }
                    Err(e) => {
                        let msg = if e.starts_with(&origin) {
                            one_line(&e)
                        } else {
                            format!("{origin}:{line}: {}", one_line(&e))
                        };
                        if opts.stop_on_error {
                            return Err(msg);
                        }
                        md.push_str("**FAILED**\n```\n");
                        md.push_str(e.trim_end());
                        md.push_str("\n```\n\n");
                        report.failures.push(msg);
                    }
                }
            }
        }
    }
    std::fs::write(&md_path, md.trim_end().to_string() + "\n")
        .map_err(|e| format!("cannot write {}: {e}", md_path.display()))?;
    report.markdown = Some(md_path);
    Ok(report)
}

/// `:brief d` and `:covert d`: the text to show (parameters left out for
/// `:brief`), whether to hide the directive, and the directive itself.
fn strip_modifiers(text: &str, params: &[String]) -> (String, bool, String) {
    let mut d = text.trim();
    let mut brief = false;
    let mut covert = false;
    loop {
        if let Some(r) = d.strip_prefix(":brief ") {
            brief = true;
            d = r.trim();
        } else if let Some(r) = d.strip_prefix(":covert ") {
            covert = true;
            d = r.trim();
        } else {
            break;
        }
    }
    let mut shown = d.to_string();
    if !brief && !params.is_empty() {
        shown.push(';');
        for p in params {
            shown.push('\n');
            shown.push_str(p);
        }
    }
    (shown, covert, d.to_string())
}

enum Output {
    Text(String),
    /// A file name in the image directory, its PNG bytes, and a caption.
    Image(String, Vec<u8>, Option<String>),
    /// A video's file name in the image directory, its bytes, and whether
    /// it repeats.
    Video(String, Vec<u8>, bool),
}

fn param<'p>(params: &'p [String], key: &str) -> Option<&'p str> {
    params.iter().find_map(|p| {
        let (k, v) = p.split_once(':').or_else(|| p.split_once('='))?;
        (k.trim() == key).then(|| v.trim())
    })
}

fn file_param(params: &[String], default: String) -> Result<String, String> {
    match param(params, "file") {
        None => Ok(default),
        Some(f) if f.contains('/') || f.contains(' ') || f.is_empty() => Err(format!(
            "file: `{f}` must be a plain file name (no directory, no spaces)"
        )),
        Some(f) => Ok(f.to_string()),
    }
}

fn run_directive(
    runner: &ScriptRunner,
    d: &str,
    params: &[String],
    (origin, line): (&str, usize),
    n: usize,
) -> Result<Output, String> {
    let (cmd, rest) = match d.strip_prefix(':') {
        Some(r) => {
            let end = r.find(char::is_whitespace).unwrap_or(r.len());
            (Some(&r[..end]), r[end..].trim())
        }
        None => (None, d),
    };
    match cmd {
        None => {
            let v = runner.eval_text(rest, origin, Some(line))?;
            Ok(Output::Text(v.to_text()))
        }
        Some("img") => {
            let v = runner.eval_text(rest, origin, Some(line))?;
            let name = file_param(params, format!("img-{n}.png"))?;
            let png = image_png(&v)?;
            Ok(Output::Image(name, png, None))
        }
        Some("plot2d") => {
            let v = runner.eval_text(rest, origin, Some(line))?;
            let (h, w) = match param(params, "size") {
                None => (480, 640),
                Some(s) => parse_size(s)?,
            };
            let name = file_param(params, format!("plot-{n}.png"))?;
            let series = plot_series(&v)?;
            let (png, caption) = plot_png(&series, w, h)?;
            Ok(Output::Image(name, png, Some(caption)))
        }
        Some("gnuplot") => {
            let v = runner.eval_text(rest, origin, Some(line))?;
            let name = file_param(params, format!("plot-{n}.png"))?;
            gnuplot(&v, params, &name).map(|png| Output::Image(name, png, None))
        }
        Some("video") => {
            let Some(ffmpeg) = find_program("ffmpeg") else {
                return Err("`:video` needs the ffmpeg program, which is not installed (not found on PATH); `:img` shows single frames".into());
            };
            let v = runner.eval_text(rest, origin, Some(line))?;
            let format = param(params, "format").unwrap_or("webm");
            if !matches!(format, "webm" | "gif") {
                return Err(format!("format: `{format}` is not webm or gif"));
            }
            let fps: u32 = match param(params, "fps") {
                None => 30,
                Some(f) => f
                    .parse()
                    .ok()
                    .filter(|f| (1..=1000).contains(f))
                    .ok_or_else(|| format!("fps: `{f}` is not a frame rate"))?,
            };
            let repeat = match param(params, "repeat") {
                None | Some("true") => true,
                Some("false") => false,
                Some(r) => return Err(format!("repeat: `{r}` is not true or false")),
            };
            let name = file_param(params, format!("video-{n}.{format}"))?;
            let bytes = video(&ffmpeg, &v, fps, repeat, &name)?;
            Ok(Output::Video(name, bytes, repeat))
        }
        Some("audio") => Err("`:audio` is not supported by nabla".into()),
        Some(other) => Err(format!(
            "unknown directive `:{other}` (directives: `> e`, `:img`, `:plot2d`, `:gnuplot`, `:video`, `:brief`, `:covert`)"
        )),
    }
}

/// `(height, width)` or `height,width`.
fn parse_size(s: &str) -> Result<(u32, u32), String> {
    let t = s.trim().trim_start_matches('(').trim_end_matches(')');
    let bad = || format!("size: expected `(height,width)`, got `{s}`");
    let (a, b) = t.split_once(',').ok_or_else(bad)?;
    let h: u32 = a.trim().parse().map_err(|_| bad())?;
    let w: u32 = b.trim().parse().map_err(|_| bad())?;
    if !(1..=8192).contains(&h) || !(1..=8192).contains(&w) {
        return Err(format!("size: {h}x{w} is out of range (1 to 8192)"));
    }
    Ok((h, w))
}

/// Encodes 8-bit RGB pixels (`w * h * 3` bytes) as a PNG file.
pub fn encode_png_rgb(w: u32, h: u32, rgb: &[u8]) -> Result<Vec<u8>, String> {
    let mut out = Vec::new();
    {
        let mut enc = png::Encoder::new(&mut out, w, h);
        enc.set_color(png::ColorType::Rgb);
        enc.set_depth(png::BitDepth::Eight);
        let mut wr = enc
            .write_header()
            .map_err(|e| format!("cannot encode the PNG: {e}"))?;
        wr.write_image_data(rgb)
            .map_err(|e| format!("cannot encode the PNG: {e}"))?;
        wr.finish()
            .map_err(|e| format!("cannot encode the PNG: {e}"))?;
    }
    Ok(out)
}

/// The PNG of an `:img` value: a `[h][w]` array of `u32`/`i32` (ARGB; the
/// alpha byte is ignored), `f32`/`f64` (grey, 0 black to 1 white), `u8`
/// (grey, 0 to 255) or `bool` (black and white), or a `[h][w][3]` array of
/// `u8` (RGB).
pub fn image_png(v: &ScriptValue) -> Result<Vec<u8>, String> {
    let Some(Value::Array(a)) = v.as_value() else {
        return Err(format!(
            "`:img` needs a two-dimensional array, got {}",
            v.to_text().chars().take(60).collect::<String>()
        ));
    };
    let shape = a.shape().to_vec();
    let t = a.elem_type();
    let rgb_u8 = shape.len() == 3 && shape[2] == 3 && t == PrimType::U8;
    if shape.len() != 2 && !rgb_u8 {
        return Err(format!(
            "`:img` needs a [height][width] array (or [height][width][3]u8), got {}",
            a.value_type()
        ));
    }
    let (h, w) = (shape[0], shape[1]);
    if h <= 0 || w <= 0 || h > 1 << 15 || w > 1 << 15 || h * w > 1 << 26 {
        return Err(format!("`:img`: cannot make a {h}x{w} image"));
    }
    let mut rgb = Vec::with_capacity((h * w * 3) as usize);
    if rgb_u8 {
        rgb.extend(a.iter_prims().map(|p| p.as_i64() as u8));
    } else {
        for p in a.iter_prims() {
            match p {
                PrimValue::U32(_) | PrimValue::I32(_) => {
                    let x = p.as_i64() as u32;
                    rgb.extend_from_slice(&[(x >> 16) as u8, (x >> 8) as u8, x as u8]);
                }
                PrimValue::F32(_) | PrimValue::F64(_) | PrimValue::F16(_) => {
                    let g = (p.as_f64().clamp(0.0, 1.0) * 255.0).round() as u8;
                    rgb.extend_from_slice(&[g, g, g]);
                }
                PrimValue::U8(g) => rgb.extend_from_slice(&[g, g, g]),
                PrimValue::Bool(b) => {
                    let g = if b { 255 } else { 0 };
                    rgb.extend_from_slice(&[g, g, g]);
                }
                _ => {
                    return Err(format!(
                        "`:img` does not show arrays of {t} (u32, i32, f32, f64, u8, bool)"
                    ))
                }
            }
        }
    }
    encode_png_rgb(w as u32, h as u32, &rgb)
}

/// Makes a video of the frames of `v` (a `[n]` array of images `:img`
/// accepts) with ffmpeg: the frames are written as PNG files, ffmpeg
/// encodes them to `name` (its extension gives the format) at `fps`
/// frames a second; a GIF repeats forever when `repeat`.
fn video(
    ffmpeg: &Path,
    v: &ScriptValue,
    fps: u32,
    repeat: bool,
    name: &str,
) -> Result<Vec<u8>, String> {
    let Some(Value::Array(a)) = v.as_value().filter(|v| v.rank() >= 3) else {
        return Err("`:video` needs an array of frames, each an image `:img` accepts (the state-function form is not supported)".into());
    };
    use std::sync::atomic::{AtomicUsize, Ordering};
    static COUNTER: AtomicUsize = AtomicUsize::new(0);
    let dir = std::env::temp_dir().join(format!(
        "nabla-video-{}-{}",
        std::process::id(),
        COUNTER.fetch_add(1, Ordering::SeqCst)
    ));
    std::fs::create_dir_all(&dir).map_err(|e| format!("cannot create {}: {e}", dir.display()))?;
    let result = (|| {
        for (i, frame) in a.rows().enumerate() {
            let png = image_png(&ScriptValue::Value(frame))?;
            let f = dir.join(format!("frame-{i:06}.png"));
            std::fs::write(&f, png).map_err(|e| format!("cannot write {}: {e}", f.display()))?;
        }
        let out = dir.join(name);
        let mut cmd = std::process::Command::new(ffmpeg);
        cmd.args(["-y", "-loglevel", "error", "-framerate"])
            .arg(fps.to_string())
            .arg("-i")
            .arg(dir.join("frame-%06d.png"));
        if name.ends_with(".gif") {
            cmd.args(["-loop", if repeat { "0" } else { "-1" }]);
        }
        let res = cmd
            .arg(&out)
            .stdin(std::process::Stdio::null())
            .output()
            .map_err(|e| format!("cannot run ffmpeg: {e}"))?;
        if !res.status.success() {
            return Err(format!(
                "ffmpeg failed: {}",
                String::from_utf8_lossy(&res.stderr).trim()
            ));
        }
        std::fs::read(&out).map_err(|e| format!("ffmpeg wrote no video: {e}"))
    })();
    let _ = std::fs::remove_dir_all(&dir);
    result
}

/// Reads a PNG file as a `[h][w]u32` array of ARGB pixels (`$loadimg`).
pub fn load_png(path: &Path) -> Result<Value, String> {
    let file = std::fs::File::open(path).map_err(|e| format!("{}: {e}", path.display()))?;
    let mut dec = png::Decoder::new(std::io::BufReader::new(file));
    dec.set_transformations(png::Transformations::EXPAND | png::Transformations::STRIP_16);
    let mut reader = dec
        .read_info()
        .map_err(|e| format!("{}: not a PNG file ({e})", path.display()))?;
    let mut buf = vec![0; reader.output_buffer_size()];
    let info = reader
        .next_frame(&mut buf)
        .map_err(|e| format!("{}: {e}", path.display()))?;
    let (w, h) = (info.width as usize, info.height as usize);
    let channels = info.color_type.samples();
    let data = &buf[..info.buffer_size()];
    let mut px = Vec::with_capacity(w * h);
    for c in data.chunks(channels) {
        let (r, g, b, a) = match c {
            [y] => (*y, *y, *y, 255),
            [y, a] => (*y, *y, *y, *a),
            [r, g, b] => (*r, *g, *b, 255),
            [r, g, b, a] => (*r, *g, *b, *a),
            _ => return Err(format!("{}: unsupported PNG layout", path.display())),
        };
        px.push(u32::from_be_bytes([a, r, g, b]));
    }
    Ok(Value::Array(ArrayValue::from_vec(
        &[h as i64, w as i64],
        px,
    )))
}

/// One line of a plot: its name (a record field, or empty) and points.
type Series = (String, Vec<(f64, f64)>);

fn numbers(v: &ScriptValue) -> Option<Vec<f64>> {
    match v.as_value()? {
        Value::Array(a) if a.rank() == 1 && a.elem_type() != PrimType::Bool => {
            Some(a.iter_prims().map(|p| p.as_f64()).collect())
        }
        _ => None,
    }
}

fn xy(v: &ScriptValue) -> Option<Vec<(f64, f64)>> {
    let ScriptValue::Tuple(parts) = v else {
        return None;
    };
    let [xs, ys] = &parts[..] else { return None };
    let (xs, ys) = (numbers(xs)?, numbers(ys)?);
    (xs.len() == ys.len()).then(|| xs.into_iter().zip(ys).collect())
}

/// The series of a `:plot2d` value: a pair `([]t, []t)` of equally long
/// numeric arrays, or a record of such pairs.
fn plot_series(v: &ScriptValue) -> Result<Vec<Series>, String> {
    let bad = "`:plot2d` needs a pair ([]t, []t) of numeric arrays of the same length, or a record of such pairs";
    match v {
        ScriptValue::Record(fs) => fs
            .iter()
            .map(|(n, v)| {
                xy(v)
                    .map(|pts| (n.clone(), pts))
                    .ok_or_else(|| format!("{bad} (field {n})"))
            })
            .collect(),
        other => xy(other)
            .map(|pts| vec![(String::new(), pts)])
            .ok_or_else(|| bad.to_string()),
    }
}

/// Colours of successive plot series.
const SERIES_COLOURS: [(u8, u8, u8); 6] = [
    (0x1f, 0x77, 0xb4),
    (0xd6, 0x27, 0x28),
    (0x2c, 0xa0, 0x2c),
    (0xff, 0x7f, 0x0e),
    (0x94, 0x67, 0xbd),
    (0x8c, 0x56, 0x4b),
];

/// Colour names of [`SERIES_COLOURS`], for captions.
const SERIES_COLOUR_NAMES: [&str; 6] = ["blue", "red", "green", "orange", "purple", "brown"];

/// Draws line plots of `series` on a `w`×`h` white PNG: a frame, a grid
/// of tenths of the axes' ranges and one coloured line per series. The
/// image has no text (so that no fonts are needed); the caption returned
/// with it gives the ranges and, for several series, their colours.
pub fn plot_png(series: &[Series], w: u32, h: u32) -> Result<(Vec<u8>, String), String> {
    use plotters::prelude::*;
    let finite = |x: &f64| x.is_finite();
    let xs = series
        .iter()
        .flat_map(|s| s.1.iter().map(|p| p.0))
        .filter(finite);
    let ys = series
        .iter()
        .flat_map(|s| s.1.iter().map(|p| p.1))
        .filter(finite);
    // The data's ranges, then the axes': 5% wider on each side.
    let range = |it: &mut dyn Iterator<Item = f64>| {
        let (lo, hi) = it.fold((f64::INFINITY, f64::NEG_INFINITY), |(l, h), x| {
            (l.min(x), h.max(x))
        });
        if lo > hi {
            (0.0, 1.0)
        } else {
            (lo, hi)
        }
    };
    let pad = |(lo, hi): (f64, f64)| {
        if lo == hi {
            (lo - 1.0, hi + 1.0)
        } else {
            let p = (hi - lo) * 0.05;
            (lo - p, hi + p)
        }
    };
    let (dx, dy) = (range(&mut { xs }), range(&mut { ys }));
    let ((x0, x1), (y0, y1)) = (pad(dx), pad(dy));
    let mut buf = vec![255u8; (w as usize) * (h as usize) * 3];
    let err = |e: &dyn std::fmt::Display| format!("cannot draw the plot: {e}");
    {
        let root = BitMapBackend::with_buffer(&mut buf, (w, h)).into_drawing_area();
        root.fill(&WHITE).map_err(|e| err(&e))?;
        let mut chart = ChartBuilder::on(&root)
            .margin(12)
            .build_cartesian_2d(x0..x1, y0..y1)
            .map_err(|e| err(&e))?;
        let grey = RGBColor(0xdd, 0xdd, 0xdd);
        for k in 1..10 {
            let gx = x0 + (x1 - x0) * k as f64 / 10.0;
            let gy = y0 + (y1 - y0) * k as f64 / 10.0;
            chart
                .draw_series(std::iter::once(PathElement::new(
                    vec![(gx, y0), (gx, y1)],
                    grey,
                )))
                .map_err(|e| err(&e))?;
            chart
                .draw_series(std::iter::once(PathElement::new(
                    vec![(x0, gy), (x1, gy)],
                    grey,
                )))
                .map_err(|e| err(&e))?;
        }
        chart
            .draw_series(std::iter::once(Rectangle::new(
                [(x0, y0), (x1, y1)],
                BLACK.stroke_width(1),
            )))
            .map_err(|e| err(&e))?;
        for (k, (_, pts)) in series.iter().enumerate() {
            let (r, g, b) = SERIES_COLOURS[k % SERIES_COLOURS.len()];
            let pts: Vec<(f64, f64)> = pts
                .iter()
                .copied()
                .filter(|(x, y)| x.is_finite() && y.is_finite())
                .collect();
            chart
                .draw_series(LineSeries::new(pts, RGBColor(r, g, b).stroke_width(2)))
                .map_err(|e| err(&e))?;
        }
        root.present().map_err(|e| err(&e))?;
    }
    let mut caption = format!(
        "x from {} to {}, y from {} to {}",
        short(dx.0),
        short(dx.1),
        short(dy.0),
        short(dy.1)
    );
    if series.len() > 1 || series.iter().any(|s| !s.0.is_empty()) {
        let names: Vec<String> = series
            .iter()
            .enumerate()
            .map(|(k, s)| {
                format!(
                    "{}: {}",
                    s.0,
                    SERIES_COLOUR_NAMES[k % SERIES_COLOUR_NAMES.len()]
                )
            })
            .collect();
        caption.push_str(&format!("; {}", names.join(", ")));
    }
    Ok((encode_png_rgb(w, h, &buf)?, caption))
}

/// A number to four significant digits, without trailing zeros.
fn short(x: f64) -> String {
    if x == 0.0 || !x.is_finite() {
        return format!("{x}");
    }
    let mag = x.abs().log10().floor() as i32;
    if !(-3..6).contains(&mag) {
        return format!("{x:.3e}");
    }
    let decimals = (3 - mag).max(0) as usize;
    let t = format!("{x:.decimals$}");
    if t.contains('.') {
        t.trim_end_matches('0').trim_end_matches('.').to_string()
    } else {
        t
    }
}

/// Where `name` is found on `PATH`.
fn find_program(name: &str) -> Option<PathBuf> {
    let path = std::env::var_os("PATH")?;
    std::env::split_paths(&path)
        .map(|d| d.join(name))
        .find(|p| p.is_file())
}

/// `:gnuplot e; script`: each record field's tuple of arrays goes to a data
/// file (one column per array) whose name is in a gnuplot variable named
/// after the field; the script draws to a PNG.
fn gnuplot(v: &ScriptValue, params: &[String], _name: &str) -> Result<Vec<u8>, String> {
    let Some(gp) = find_program("gnuplot") else {
        return Err("`:gnuplot` needs the gnuplot program, which is not installed (not found on PATH); `:plot2d` draws plots without it".into());
    };
    let ScriptValue::Record(fields) = v else {
        return Err("`:gnuplot` needs a record whose fields are tuples of arrays".into());
    };
    let dir = std::env::temp_dir().join(format!("nabla-gnuplot-{}", std::process::id()));
    std::fs::create_dir_all(&dir).map_err(|e| format!("cannot create {}: {e}", dir.display()))?;
    let out = dir.join("plot.png");
    let mut script = format!(
        "set term png size 640,480\nset output '{}'\n",
        out.display()
    );
    for (name, fv) in fields {
        let cols: Vec<Vec<f64>> = match fv {
            ScriptValue::Tuple(parts) => parts.iter().map(numbers).collect::<Option<_>>(),
            other => numbers(other).map(|c| vec![c]),
        }
        .ok_or_else(|| format!("`:gnuplot`: field {name} is not a tuple of numeric arrays"))?;
        let rows = cols.iter().map(Vec::len).min().unwrap_or(0);
        let mut data = String::new();
        for r in 0..rows {
            let line: Vec<String> = cols.iter().map(|c| c[r].to_string()).collect();
            data.push_str(&line.join(" "));
            data.push('\n');
        }
        let f = dir.join(format!("{name}.dat"));
        std::fs::write(&f, data).map_err(|e| format!("cannot write {}: {e}", f.display()))?;
        script.push_str(&format!("{name}='{}'\n", f.display()));
    }
    for p in params {
        script.push_str(p);
        script.push('\n');
    }
    let sf = dir.join("plot.gnuplot");
    std::fs::write(&sf, &script).map_err(|e| format!("cannot write {}: {e}", sf.display()))?;
    let res = std::process::Command::new(gp)
        .arg(&sf)
        .output()
        .map_err(|e| format!("cannot run gnuplot: {e}"))?;
    let png = if res.status.success() {
        std::fs::read(&out).map_err(|e| format!("gnuplot wrote no image: {e}"))
    } else {
        Err(format!(
            "gnuplot failed: {}",
            String::from_utf8_lossy(&res.stderr).trim()
        ))
    };
    let _ = std::fs::remove_dir_all(&dir);
    png
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn splits_text_code_and_directives() {
        let src = "-- # Title\n-- Some text.\n\ndef f x = x + 1\n\n-- > f 2\n\n-- > :img g;\n-- file: a.png\n--\n-- More.\n";
        let b = parse_literate(src);
        assert_eq!(b[0], Block::Text("# Title\nSome text.".into()));
        assert_eq!(b[1], Block::Code("def f x = x + 1".into()));
        assert_eq!(
            b[2],
            Block::Directive {
                line: 6,
                text: "f 2".into(),
                params: vec![]
            }
        );
        assert_eq!(
            b[3],
            Block::Directive {
                line: 8,
                text: ":img g".into(),
                params: vec!["file: a.png".into()]
            }
        );
        assert_eq!(b[4], Block::Text("\nMore.".into()));
    }

    #[test]
    fn sizes_and_modifiers() {
        assert_eq!(parse_size("(100,200)"), Ok((100, 200)));
        assert!(parse_size("(0,2)").is_err());
        let (shown, covert, d) = strip_modifiers(":covert :brief :img x", &["file: a.png".into()]);
        assert_eq!(
            (shown.as_str(), covert, d.as_str()),
            (":img x", true, ":img x")
        );
    }
}
