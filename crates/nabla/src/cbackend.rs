//! The C backend as the driver uses it: IR → C file → executable
//! (`nabla c`), and running such an executable on values (`nabla test
//! --backend=c`).

use crate::driver::{one_line, Compiled, RunError};
use nabla_cgen::{CProgram, CgenError};
use nabla_values::{Value, ValueType};
use std::io::{Read, Write};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::Arc;
use std::time::{Duration, Instant};

/// The C program for a compiled program (run-time errors located in its
/// sources), without the entry points the backend does not support.
pub fn c_source(c: &Compiled) -> Result<CProgram, CgenError> {
    let sources = &c.sources;
    let mut prog =
        nabla_cgen::generate_c_partial_for(&c.program, &|span| sources.describe(span), c.target)?;
    if c.validated {
        prog.source.insert_str(0, nabla_cgen::VERIFY_PROOFS);
    }
    Ok(prog)
}

/// Writes the C program to `exe` with extension `.c` and compiles it into
/// the executable `exe`. Returns the entry points left out (and why).
pub fn build_executable(c: &Compiled, exe: &Path) -> Result<Vec<(String, CgenError)>, CgenError> {
    let prog = c_source(c)?;
    let c_file = exe.with_extension("c");
    std::fs::write(&c_file, prog.source)
        .map_err(|e| CgenError::compiler(format!("cannot write {}: {e}", c_file.display())))?;
    nabla_cgen::compile_c_for(&c_file, exe, c.target)?;
    Ok(prog.unsupported_entries)
}

/// `OUT` with `ext` appended (`prog` → `prog.c`; `v1.2` → `v1.2.c`).
fn with_suffix(out: &Path, ext: &str) -> PathBuf {
    let mut s = out.as_os_str().to_owned();
    s.push(".");
    s.push(ext);
    PathBuf::from(s)
}

/// `nabla c --library`: writes `OUT.c`, `OUT.h` and `OUT.json` (Futhark's
/// C API and manifest). With `server`, writes `OUT.c` with a server's
/// `main` and compiles it into the executable `OUT` (unless `only_c`).
/// Returns the entry points left out (and why).
pub fn build_library(
    c: &Compiled,
    out: &Path,
    server: bool,
    only_c: bool,
) -> Result<Vec<(String, CgenError)>, CgenError> {
    let sources = &c.sources;
    let stem = out
        .file_name()
        .map(|s| s.to_string_lossy().into_owned())
        .unwrap_or_else(|| "nabla".to_string());
    let mut lib = nabla_cgen::generate_library_for(
        &c.program,
        &|span| sources.describe(span),
        &stem,
        server,
        c.target,
    )?;
    if c.validated {
        lib.source.insert_str(0, nabla_cgen::VERIFY_PROOFS);
    }
    let write = |path: PathBuf, text: &str| {
        std::fs::write(&path, text)
            .map_err(|e| CgenError::compiler(format!("cannot write {}: {e}", path.display())))
    };
    let c_file = with_suffix(out, "c");
    write(c_file.clone(), &lib.source)?;
    if server {
        if !only_c {
            nabla_cgen::compile_c_for(&c_file, out, c.target)?;
        }
    } else {
        write(with_suffix(out, "h"), &lib.header)?;
        write(with_suffix(out, "json"), &lib.manifest)?;
    }
    Ok(lib.unsupported_entries)
}

/// A compiled executable, run once per dataset.
#[derive(Clone, Debug)]
pub struct Executable {
    /// The executable's path.
    pub path: PathBuf,
    /// Wall-clock limit per run: a run that takes longer is killed and
    /// reported as an error. `None`: no limit.
    pub timeout: Option<Duration>,
    /// Options given to every run (`--num-threads 2` for multicore C).
    pub args: Vec<String>,
}

impl Executable {
    /// The executable at `path`, with the default limit of ten minutes per run.
    pub fn new(path: PathBuf) -> Executable {
        Executable {
            path,
            timeout: Some(Duration::from_secs(600)),
            args: Vec::new(),
        }
    }

    /// The same executable, given `args` at every run.
    pub fn with_args(&self, args: Vec<String>) -> Executable {
        Executable {
            args,
            ..self.clone()
        }
    }
}

impl Executable {
    /// Runs entry point `entry` on `args` (sent in the binary value format)
    /// and reads its results (binary output), typed by `results`. A failing
    /// run gives a [`RunError`] whose message is the executable's error
    /// message (and whose rendering includes its location line).
    pub fn run(
        &self,
        c: &Compiled,
        entry: &str,
        args: &[Value],
        results: &[ValueType],
    ) -> Result<Vec<Value>, RunError> {
        self.run_input(c, entry, &Arc::new(binary_input(args)), results, None)
            .map(|(values, _)| values)
    }

    /// Runs entry point `entry` on `input` (its arguments in the binary
    /// value format, see [`binary_input`]) and reads its results, typed by
    /// `results`. With `runs = Some(n)` the executable runs the entry
    /// `n + 1` times (`-r n`: the first run is a warm-up) and the
    /// durations of the last `n` runs are returned in microseconds (`-t`);
    /// with `None` it runs once and no durations are returned. Errors as
    /// [`Executable::run`].
    pub fn run_input(
        &self,
        c: &Compiled,
        entry: &str,
        input: &Arc<Vec<u8>>,
        results: &[ValueType],
        runs: Option<u64>,
    ) -> Result<(Vec<Value>, Vec<u64>), RunError> {
        let mut command = Command::new(&self.path);
        command.args(["-e", entry, "-b"]);
        command.args(&self.args);
        let timings = match runs {
            Some(n) => {
                let t = TimingSink::new()
                    .map_err(|e| c.run_error(format!("cannot collect the run times: {e}"), None))?;
                command.arg("-r").arg(n.to_string()).arg("-t").arg(t.path());
                Some(t)
            }
            None => None,
        };
        let ran = self.run_command(c, command, input, results, timings.as_ref());
        let timings = match timings {
            Some(t) => {
                let text = t.finish();
                match (&ran, text) {
                    (Ok(_), Ok(text)) => parse_runtimes(&text).map_err(|e| {
                        c.run_error(format!("cannot read the run times: {e}"), None)
                    })?,
                    (Ok(_), Err(e)) => {
                        return Err(c.run_error(format!("cannot read the run times: {e}"), None))
                    }
                    (Err(_), _) => Vec::new(),
                }
            }
            None => Vec::new(),
        };
        ran.map(|values| (values, timings))
    }

    /// Runs `command` (this executable with its options) with `input` on
    /// stdin, within [`Executable::timeout`], and reads its binary output.
    /// On Linux the child gets the parent-death signal SIGKILL, so that it
    /// never outlives the tool, whatever ends the tool.
    fn run_command(
        &self,
        c: &Compiled,
        mut command: Command,
        input: &Arc<Vec<u8>>,
        results: &[ValueType],
        timings: Option<&TimingSink>,
    ) -> Result<Vec<Value>, RunError> {
        die_with_parent(&mut command, timings);
        let child = command
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn();
        let mut child = match child {
            Ok(ch) => ch,
            Err(e) => {
                return Err(c.run_error(format!("cannot run {}: {e}", self.path.display()), None))
            }
        };
        if let Some(t) = timings {
            t.spawned();
        }
        let input = Arc::clone(input);
        let writer = child.stdin.take().map(|mut stdin| {
            std::thread::spawn(move || {
                let _ = stdin.write_all(&input);
            })
        });
        let drain = |pipe: Option<Box<dyn Read + Send>>| {
            std::thread::spawn(move || {
                let mut buf = Vec::new();
                if let Some(mut p) = pipe {
                    let _ = p.read_to_end(&mut buf);
                }
                buf
            })
        };
        let out_reader = drain(
            child
                .stdout
                .take()
                .map(|p| Box::new(p) as Box<dyn Read + Send>),
        );
        let err_reader = drain(
            child
                .stderr
                .take()
                .map(|p| Box::new(p) as Box<dyn Read + Send>),
        );
        let start = Instant::now();
        let status = loop {
            match child.try_wait() {
                Ok(Some(st)) => break Ok(st),
                Ok(None) => {
                    if self.timeout.is_some_and(|t| start.elapsed() > t) {
                        let _ = child.kill();
                        let _ = child.wait();
                        break Err(format!(
                            "the executable ran longer than {} s and was stopped",
                            self.timeout.map_or(0, |t| t.as_secs())
                        ));
                    }
                    std::thread::sleep(Duration::from_millis(1));
                }
                Err(e) => break Err(format!("cannot run {}: {e}", self.path.display())),
            }
        };
        if let Some(w) = writer {
            let _ = w.join();
        }
        let stdout = out_reader.join().unwrap_or_default();
        let stderr = err_reader.join().unwrap_or_default();
        let status = status.map_err(|m| c.run_error(m, None))?;
        let output = std::process::Output {
            status,
            stdout,
            stderr,
        };
        if !output.status.success() {
            let err = String::from_utf8_lossy(&output.stderr);
            let mut lines = err.lines();
            let first = lines.next().unwrap_or("");
            let message = first.strip_prefix("Error: ").unwrap_or(first).to_string();
            let message = if message.is_empty() {
                format!("the executable failed ({})", output.status)
            } else {
                message
            };
            let rest: Vec<&str> = lines.collect();
            let rendered = format!("error: {message}\n{}", rest.join("\n"));
            let summary = match rest.first().and_then(|l| l.strip_prefix("at ")) {
                Some(loc) => format!("{loc}: {}", one_line(&message)),
                None => one_line(&message),
            };
            return Err(RunError {
                message,
                span: None,
                rendered,
                summary,
            });
        }
        nabla_values::read_values(&output.stdout, Some(results))
            .map_err(|e| c.run_error(format!("cannot read the executable's output: {e}"), None))
    }
}

/// The arguments of an entry point in the binary value format (what the
/// executable reads on stdin).
pub fn binary_input(args: &[Value]) -> Vec<u8> {
    let mut input = Vec::new();
    for a in args {
        nabla_values::write_value_binary(a, &mut input);
    }
    input
}

/// The executable's `-t` file: one run time in microseconds per line.
fn parse_runtimes(text: &str) -> Result<Vec<u64>, String> {
    text.lines()
        .filter(|l| !l.trim().is_empty())
        .map(|l| {
            l.trim()
                .parse::<u64>()
                .map_err(|_| format!("not a run time: {l:?}"))
        })
        .collect()
}

/// Where an executable writes its run times (`-t`). On Linux a pipe that
/// the child inherits (`-t /dev/fd/N`), read by a thread while it runs, so
/// that no file is ever left behind (not even when the tool is killed);
/// elsewhere a file in the temporary folder, removed after the run.
struct TimingSink {
    #[cfg(target_os = "linux")]
    pipe: std::sync::Mutex<Option<std::os::fd::OwnedFd>>,
    #[cfg(target_os = "linux")]
    reader: std::sync::Mutex<Option<std::thread::JoinHandle<std::io::Result<String>>>>,
    #[cfg(target_os = "linux")]
    write_fd: i32,
    #[cfg(not(target_os = "linux"))]
    file: PathBuf,
}

impl TimingSink {
    #[cfg(target_os = "linux")]
    fn new() -> std::io::Result<TimingSink> {
        use std::os::fd::{FromRawFd, OwnedFd};
        let mut fds = [0i32; 2];
        // SAFETY: pipe2 writes two new descriptors into `fds`.
        if unsafe { libc::pipe2(fds.as_mut_ptr(), libc::O_CLOEXEC) } != 0 {
            return Err(std::io::Error::last_os_error());
        }
        // SAFETY: both descriptors are new and owned here.
        let (r, w) = unsafe { (OwnedFd::from_raw_fd(fds[0]), OwnedFd::from_raw_fd(fds[1])) };
        let reader = std::thread::spawn(move || {
            let mut text = String::new();
            std::fs::File::from(r).read_to_string(&mut text)?;
            Ok(text)
        });
        Ok(TimingSink {
            write_fd: fds[1],
            pipe: std::sync::Mutex::new(Some(w)),
            reader: std::sync::Mutex::new(Some(reader)),
        })
    }

    #[cfg(not(target_os = "linux"))]
    fn new() -> std::io::Result<TimingSink> {
        Ok(TimingSink {
            file: std::env::temp_dir().join(format!(
                "nabla-runtimes-{}-{}.txt",
                std::process::id(),
                unique()
            )),
        })
    }

    /// The path to pass to `-t`.
    fn path(&self) -> PathBuf {
        #[cfg(target_os = "linux")]
        return PathBuf::from(format!("/dev/fd/{}", self.write_fd));
        #[cfg(not(target_os = "linux"))]
        return self.file.clone();
    }

    /// After the child started: the parent's copy of the pipe's write end
    /// is closed, so that the reader sees the end when the child ends.
    fn spawned(&self) {
        #[cfg(target_os = "linux")]
        if let Ok(mut p) = self.pipe.lock() {
            p.take();
        }
    }

    /// The run times written (after the child ended).
    fn finish(self) -> std::io::Result<String> {
        #[cfg(target_os = "linux")]
        {
            self.spawned();
            let reader = self.reader.lock().ok().and_then(|mut r| r.take());
            match reader.map(|r| r.join()) {
                Some(Ok(text)) => text,
                _ => Err(std::io::Error::other("the reader of the run times failed")),
            }
        }
        #[cfg(not(target_os = "linux"))]
        {
            let text = std::fs::read_to_string(&self.file);
            let _ = std::fs::remove_file(&self.file);
            text
        }
    }
}

/// Makes the child of `command` die with this process (Linux: the
/// parent-death signal SIGKILL, checked against a parent that ended before
/// it was set) and inherit the write end of the timing pipe.
#[cfg(target_os = "linux")]
fn die_with_parent(command: &mut Command, timings: Option<&TimingSink>) {
    use std::os::unix::process::CommandExt;
    let parent = std::process::id() as libc::pid_t;
    let keep_fd = timings.map(|t| t.write_fd);
    // SAFETY: the closure calls only async-signal-safe functions (prctl,
    // getppid, fcntl) between fork and exec.
    unsafe {
        command.pre_exec(move || {
            if libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL as libc::c_ulong) != 0
                || libc::getppid() != parent
            {
                return Err(std::io::Error::other("the parent process ended"));
            }
            if let Some(fd) = keep_fd {
                if libc::fcntl(fd, libc::F_SETFD, 0) != 0 {
                    return Err(std::io::Error::last_os_error());
                }
            }
            Ok(())
        });
    }
}

#[cfg(not(target_os = "linux"))]
fn die_with_parent(_command: &mut Command, _timings: Option<&TimingSink>) {}

/// A per-process counter, so that two runs never share a timing file.
#[cfg(not(target_os = "linux"))]
fn unique() -> usize {
    use std::sync::atomic::{AtomicUsize, Ordering};
    static N: AtomicUsize = AtomicUsize::new(0);
    N.fetch_add(1, Ordering::Relaxed)
}
