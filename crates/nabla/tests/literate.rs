//! `nabla literate`, `nabla script` and `script input` datasets, driven as
//! a user would: through the binary, checking the files it writes (the
//! PNGs are decoded with the `png` crate).

use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

/// A fresh scratch directory for one test.
fn scratch(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("nabla-lit-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

fn write(dir: &Path, name: &str, text: &str) -> PathBuf {
    let p = dir.join(name);
    std::fs::write(&p, text).unwrap();
    p
}

fn nabla_env(args: &[&str], env: &[(&str, &str)]) -> Output {
    let mut c = Command::new(env!("CARGO_BIN_EXE_nabla"));
    c.args(args)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    for (k, v) in env {
        c.env(k, v);
    }
    let o = c.output().expect("start nabla");
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(
        !err.contains("panicked") && !err.contains("internal compiler error"),
        "panic: {err}"
    );
    o
}

fn nabla(args: &[&str]) -> Output {
    nabla_env(args, &[])
}

fn stdout(o: &Output) -> String {
    String::from_utf8_lossy(&o.stdout).into_owned()
}

fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

/// Decodes a PNG: width, height and 8-bit RGB pixels (row-major).
fn decode_png(path: &Path) -> (u32, u32, Vec<[u8; 3]>) {
    let file = std::fs::File::open(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    let mut reader = png::Decoder::new(std::io::BufReader::new(file))
        .read_info()
        .unwrap();
    let mut buf = vec![0; reader.output_buffer_size()];
    let info = reader.next_frame(&mut buf).unwrap();
    assert_eq!(info.color_type, png::ColorType::Rgb);
    assert_eq!(info.bit_depth, png::BitDepth::Eight);
    let px = buf[..info.buffer_size()]
        .chunks(3)
        .map(|c| [c[0], c[1], c[2]])
        .collect();
    (info.width, info.height, px)
}

const IMAGES: &str = "\
-- # Images
-- Text in *Markdown*.

entry colours (h: i64) (w: i64) : [h][w]u32 =
  tabulate_2d h w (\\i j -> if i == 0 then 0xFF0000 else if j == 0 then 0x00FF00 else 0x0000FF)

entry grey (n: i64) : [n][n]f32 =
  tabulate_2d n n (\\i j -> if i == j then 1 else 0.5)

entry bools : [2][3]bool = [[true, false, true], [false, true, false]]

entry inc (x: i32) : i32 = x + 1

-- > inc 41

-- > :img colours 3 5

-- > :img grey 4;
-- file: grey.png

-- > :covert :img bools
";

#[test]
fn literate_writes_markdown_and_pngs() {
    let d = scratch("images");
    let prog = write(&d, "pics.fut", IMAGES);
    let o = nabla(&["literate", "--backend=interp", prog.to_str().unwrap()]);
    assert!(o.status.success(), "{}", stderr(&o));
    let md = std::fs::read_to_string(d.join("pics.md")).unwrap();
    assert!(md.starts_with("# Images\nText in *Markdown*.\n"), "{md}");
    assert!(md.contains("```futhark\nentry colours"), "{md}");
    assert!(md.contains("```\n> inc 41\n```\n\n```\n42i32\n```"), "{md}");
    assert!(md.contains("![](pics-img/img-0.png)"), "{md}");
    assert!(md.contains("> :img grey 4;\nfile: grey.png"), "{md}");
    assert!(md.contains("![](pics-img/grey.png)"), "{md}");
    // `:covert` shows the image but not the directive.
    assert!(
        !md.contains("> :covert") && !md.contains("> :img bools"),
        "{md}"
    );
    assert!(md.contains("![](pics-img/img-2.png)"), "{md}");

    let (w, h, px) = decode_png(&d.join("pics-img/img-0.png"));
    assert_eq!((w, h), (5, 3));
    assert_eq!(px[0], [255, 0, 0]); // row 0
    assert_eq!(px[5], [0, 255, 0]); // row 1, column 0
    assert_eq!(px[5 + 1], [0, 0, 255]);
    let (w, h, px) = decode_png(&d.join("pics-img/grey.png"));
    assert_eq!((w, h), (4, 4));
    assert_eq!(px[0], [255, 255, 255]);
    assert_eq!(px[1], [128, 128, 128]);
    let (w, h, px) = decode_png(&d.join("pics-img/img-2.png"));
    assert_eq!((w, h), (3, 2));
    assert_eq!(&px[..3], &[[255; 3], [0; 3], [255; 3]]);

    // `-o` moves the Markdown and the image directory.
    let out = d.join("elsewhere.md");
    let o = nabla(&[
        "literate",
        "--backend=interp",
        prog.to_str().unwrap(),
        "-o",
        out.to_str().unwrap(),
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    let md = std::fs::read_to_string(&out).unwrap();
    assert!(md.contains("![](elsewhere-img/grey.png)"), "{md}");
    assert_eq!(decode_png(&d.join("elsewhere-img/grey.png")).0, 4);
}

const PLOTS: &str = "\
entry line (n: i64) : ([]f64, []f64) = (map f64.i64 (iota n), map (\\i -> f64.i64 (i * i)) (iota n))

-- > :plot2d line 10;
-- size: (120,200)

-- > :plot2d {a = line 5, b = ([0, 1, 2, 3, 4], [0, 1.5, 3, 4.5, 6])}
";

#[test]
fn plot2d_draws_pngs() {
    let d = scratch("plots");
    let prog = write(&d, "plots.fut", PLOTS);
    // The default backend: an executable made by the C backend.
    let o = nabla(&["literate", prog.to_str().unwrap()]);
    assert!(o.status.success(), "{}", stderr(&o));
    let md = std::fs::read_to_string(d.join("plots.md")).unwrap();
    assert!(md.contains("![](plots-img/plot-0.png)"), "{md}");
    assert!(md.contains("*x from 0 to 9, y from 0 to 81*"), "{md}");
    assert!(md.contains("a: blue, b: red"), "{md}");
    let (w, h, px) = decode_png(&d.join("plots-img/plot-0.png"));
    assert_eq!((w, h), (200, 120));
    // A white background with the (blue) line drawn on it.
    assert_eq!(px[0], [255, 255, 255]);
    assert!(px.contains(&[0x1f, 0x77, 0xb4]));
    let (w, h, px) = decode_png(&d.join("plots-img/plot-1.png"));
    assert_eq!((w, h), (640, 480));
    assert!(px.contains(&[0xd6, 0x27, 0x28]), "no red series");
}

#[test]
fn literate_failures_are_reported() {
    let d = scratch("failures");
    let prog = write(
        &d,
        "bad.fut",
        "entry f (x: i32) : i32 = x\n\n-- > f 1\n\n-- > g 2\n\n-- > :img f 3\n\n-- > :gnuplot {a = (f 1, f 2)};\n-- plot a\n\n-- > :video f 1\n",
    );
    // Without gnuplot on PATH, `:gnuplot` fails with a clear message.
    let empty = d.join("empty-path");
    std::fs::create_dir_all(&empty).unwrap();
    let env = [("PATH", empty.to_str().unwrap())];
    let o = nabla_env(
        &["literate", "--backend=interp", prog.to_str().unwrap()],
        &env,
    );
    assert!(!o.status.success());
    let md = std::fs::read_to_string(d.join("bad.md")).unwrap();
    assert!(md.contains("```\n1i32\n```"), "{md}");
    assert!(md.contains("**FAILED**"), "{md}");
    assert!(md.contains("no entry point named g"), "{md}");
    assert!(md.contains("`:img` needs a two-dimensional array"), "{md}");
    assert!(md.contains("needs the gnuplot program"), "{md}");
    assert!(md.contains("`:video` needs the ffmpeg program"), "{md}");
    let err = stderr(&o);
    assert!(err.contains("bad.fut:5: no entry point named g"), "{err}");

    // --stop-on-error: no file, and the first failure.
    std::fs::remove_file(d.join("bad.md")).unwrap();
    let o = nabla_env(
        &[
            "literate",
            "--backend=interp",
            "--stop-on-error",
            prog.to_str().unwrap(),
        ],
        &env,
    );
    assert!(!o.status.success());
    assert!(!d.join("bad.md").exists());
    assert!(
        stderr(&o).contains("no entry point named g"),
        "{}",
        stderr(&o)
    );
}

const SCRIPTED: &str = "\
entry mk (n: i64) : (i64, []f32) = (n, map f32.i64 (iota n))
entry total (n: i64) (xs: []f32) : f32 = f32.sum xs + f32.i64 n
entry point (x: f64) : {x: f64, y: f64} = {x, y = x * 2}
entry norm1 (p: {x: f64, y: f64}) : f64 = f64.abs p.x + f64.abs p.y
entry scale (k: f32) (xs: []f32) : []f32 = map (* k) xs
entry width (img: [][]u32) : i64 = length (transpose img)
entry red (img: [][]u32) : u32 = (img[0, 0] >> 16) & 0xFF
";

#[test]
fn script_prints_values() {
    let d = scratch("script");
    let prog = write(&d, "s.fut", SCRIPTED);
    let p = prog.to_str().unwrap();
    for backend in ["--backend=interp", "--backend=c"] {
        // Uncurrying: mk's pair spreads over total's two parameters.
        let o = nabla(&["script", backend, p, "total (mk 4)"]);
        assert!(o.status.success(), "{backend}: {}", stderr(&o));
        assert_eq!(stdout(&o), "10.0f32\n", "{backend}");
        // Opaque records pass from one entry point to another.
        let o = nabla(&["script", backend, p, "norm1 (point (-1.5))"]);
        assert_eq!(stdout(&o), "4.5f64\n", "{backend}: {}", stderr(&o));
    }
    let o = nabla(&[
        "script",
        "--backend=interp",
        p,
        "let (n, xs) = mk 3 in (n, scale 2 xs, {a = true})",
    ]);
    assert_eq!(
        stdout(&o),
        "(3i64, [0.0f32, 2.0f32, 4.0f32], {a = true})\n",
        "{}",
        stderr(&o)
    );
    let o = nabla(&["script", "--backend=interp", p, "point 2"]);
    assert_eq!(stdout(&o), "{x = 2.0f64, y = 4.0f64}\n", "{}", stderr(&o));
    let o = nabla(&["script", "--backend=interp", p, "scale 1 empty([0]f32)"]);
    assert_eq!(stdout(&o), "empty([0]f32)\n", "{}", stderr(&o));
    // -b: the binary value format.
    let o = nabla(&["script", "--backend=interp", "-b", p, "scale 0.5 [2, 4]"]);
    let mut want = b"b\x02\x01 f32".to_vec();
    want.extend(2u64.to_le_bytes());
    want.extend(1f32.to_le_bytes());
    want.extend(2f32.to_le_bytes());
    assert_eq!(o.stdout, want, "{}", stderr(&o));
    let o = nabla(&["script", "--backend=interp", "-b", p, "point 1"]);
    assert!(!o.status.success());
    assert!(stderr(&o).contains("binary output needs a primitive"));
    // $loaddata and $loadbytes read files beside the program; -f reads the expression.
    write(&d, "data.in", "3i64 [1f32, 2f32, 3f32]");
    write(&d, "expr.futharkscript", "total ($loaddata \"data.in\")");
    let o = nabla(&[
        "script",
        "--backend=interp",
        p,
        "-f",
        d.join("expr.futharkscript").to_str().unwrap(),
    ]);
    assert_eq!(stdout(&o), "9.0f32\n", "{}", stderr(&o));
}

#[test]
fn loadimg_reads_what_img_writes() {
    let d = scratch("loadimg");
    let prog = write(
        &d,
        "s.fut",
        &format!("{SCRIPTED}\nentry pic : [2][7]u32 = replicate 2 (replicate 7 0xAB1234)\n\n-- > :img pic;\n-- file: pic.png\n"),
    );
    let p = prog.to_str().unwrap();
    let o = nabla(&["literate", "--backend=interp", p]);
    assert!(o.status.success(), "{}", stderr(&o));
    let o = nabla(&[
        "script",
        "--backend=interp",
        p,
        "(width ($loadimg \"s-img/pic.png\"), red ($loadimg \"s-img/pic.png\"))",
    ]);
    assert_eq!(stdout(&o), "(7i64, 171u32)\n", "{}", stderr(&o));
}

/// `$loadaudio` reads `tests/data/audio/stereo16.wav`, made for this test
/// with Python's `wave` module: 2 channels, 16-bit PCM, 8000 Hz, 4 frames,
/// left 0, 16384, -16384, 32767 and right -32768, 8192, 0, -8192.
#[test]
fn loadaudio_reads_a_wav_file_as_one_row_per_channel() {
    let d = scratch("loadaudio");
    let wav = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/audio/stereo16.wav");
    std::fs::copy(&wav, d.join("stereo16.wav")).unwrap();
    let prog = write(
        &d,
        "a.fut",
        "entry channels (x: [][]f64) = length x\nentry right (x: [][]f64) = x[1]\n",
    );
    let p = prog.to_str().unwrap();
    let o = nabla(&[
        "script",
        "--backend=interp",
        p,
        "$loadaudio \"stereo16.wav\"",
    ]);
    assert_eq!(
        stdout(&o),
        "[[0.0f64, 0.5f64, -0.5f64, 0.999969482421875f64], [-1.0f64, 0.25f64, 0.0f64, -0.25f64]]\n",
        "{}",
        stderr(&o)
    );
    let o = nabla(&[
        "script",
        "--backend=interp",
        p,
        "(channels ($loadaudio \"stereo16.wav\"), right ($loadaudio \"stereo16.wav\"))",
    ]);
    assert_eq!(
        stdout(&o),
        "(2i64, [-1.0f64, 0.25f64, 0.0f64, -0.25f64])\n",
        "{}",
        stderr(&o)
    );
    // A file that is no WAV file is an error at the call.
    let o = nabla(&["script", "--backend=interp", p, "$loadaudio \"a.fut\""]);
    assert!(!o.status.success());
    let err = stderr(&o);
    assert!(
        err.contains("<expression>:1:1: $loadaudio: ")
            && err.contains("a.fut: Ill-formed WAVE file"),
        "{err}"
    );
}

#[test]
fn script_errors_are_spanned() {
    let d = scratch("script-errors");
    let prog = write(&d, "s.fut", SCRIPTED);
    let p = prog.to_str().unwrap();
    let o = nabla(&["script", "--backend=interp", p, "total (mk 4"]);
    assert!(!o.status.success());
    let err = stderr(&o);
    assert!(
        err.contains("<expression>:1:12: expected `)`, found the end of the expression"),
        "{err}"
    );
    assert!(err.contains("  total (mk 4\n             ^"), "{err}");
    let o = nabla(&["script", "--backend=interp", p, "mk 2 ; 3"]);
    assert!(!o.status.success());
    assert!(
        stderr(&o).contains("<expression>:1:6: unexpected character `;`"),
        "{}",
        stderr(&o)
    );
    // Evaluation errors point at the call.
    let o = nabla(&["script", "--backend=interp", p, "total (nope 1)"]);
    assert!(!o.status.success());
    let err = stderr(&o);
    assert!(
        err.contains("<expression>:1:8: no entry point named nope"),
        "{err}"
    );
    assert!(err.contains("^^^^^^"), "{err}");
    let o = nabla(&["script", "--backend=interp", p, "total 1"]);
    assert!(!o.status.success());
    assert!(
        stderr(&o).contains("expected 2 flat values"),
        "{}",
        stderr(&o)
    );
}

#[test]
fn script_input_datasets_in_nabla_test() {
    let d = scratch("script-input");
    write(&d, "numbers.in", "[1f32, 2f32]");
    write(&d, "input.futharkscript", "let n = 4 in mk n");
    write(
        &d,
        "t.fut",
        &format!(
            "-- ==\n-- entry: total\n\
             -- script input {{ mk 4 }} output {{ 10f32 }}\n\
             -- \"wrong\" script input {{ mk 3 }} output {{ 7f32 }}\n\
             -- script input {{ (1i64, $loaddata \"numbers.in\") }} output {{ 4f32 }}\n\
             -- script input @ input.futharkscript output {{ 10f32 }}\n\
             -- script input {{ {{n = 1, xs = [1, 2]}} }} output {{ 4f32 }}\n\
             -- script input {{ mk 2 )) }} output {{ 1f32 }}\n\n\
             -- ==\n-- entry: norm1\n-- script input {{ point 3 }} output {{ 9.0 }}\n\
             -- script input {{ point 3 }} error: flat values\n\
             {SCRIPTED}"
        ),
    );
    for backend in ["--backend=interp", "--backend=c"] {
        let o = nabla(&["test", backend, d.to_str().unwrap()]);
        let out = stdout(&o);
        assert!(!o.status.success());
        assert_eq!(
            out.lines().last(),
            Some("5 passed, 3 failed"),
            "{backend}: {out}"
        );
        assert!(
            out.contains("(\"wrong\"): wrong result"),
            "{backend}: {out}"
        );
        assert!(
            out.contains("bad script input: script input:1:7: unexpected `)` after the expression"),
            "{backend}: {out}"
        );
        // `error:` expects the run to fail; a script that succeeds does not.
        assert!(
            out.contains("expected an error matching /flat values/"),
            "{backend}: {out}"
        );
    }
}

/// `:video` writes the frames as PNGs and runs ffmpeg on them (here a
/// stand-in script that records its arguments and the frames it was given).
#[cfg(unix)]
#[test]
fn video_runs_ffmpeg_on_the_frames() {
    use std::os::unix::fs::PermissionsExt;
    let d = scratch("video");
    let bin = d.join("bin");
    std::fs::create_dir_all(&bin).unwrap();
    let fake = write(
        &bin,
        "ffmpeg",
        "#!/bin/sh\nfor a; do out=$a; done\ndir=$(dirname \"$out\")\n\
         { echo \"$@\"; ls \"$dir\" | grep -c '^frame-.*png$'; } > \"$out\"\n",
    );
    std::fs::set_permissions(&fake, std::fs::Permissions::from_mode(0o755)).unwrap();
    let prog = write(
        &d,
        "v.fut",
        "entry frames (n: i64) : [n][2][3]u8 = tabulate_3d n 2 3 (\\i _ _ -> u8.i64 i)\n\n\
         -- > :video frames 3;\n-- fps: 5\n-- format: gif\n\n-- > :video frames 2\n",
    );
    let path = format!("{}:/usr/bin:/bin", bin.display());
    let o = nabla_env(
        &["literate", "--backend=interp", prog.to_str().unwrap()],
        &[("PATH", &path)],
    );
    assert!(o.status.success(), "{}", stderr(&o));
    let md = std::fs::read_to_string(d.join("v.md")).unwrap();
    assert!(md.contains("![](v-img/video-0.gif)"), "{md}");
    assert!(
        md.contains("<video src=\"v-img/video-1.webm\" controls autoplay loop></video>"),
        "{md}"
    );
    let gif = std::fs::read_to_string(d.join("v-img/video-0.gif")).unwrap();
    assert!(gif.contains("-framerate 5 -i"), "{gif}");
    assert!(gif.contains("-loop 0"), "{gif}");
    assert_eq!(gif.lines().nth(1), Some("3"), "three frames: {gif}");
    let webm = std::fs::read_to_string(d.join("v-img/video-1.webm")).unwrap();
    assert!(webm.contains("-framerate 30 -i"), "{webm}");
    assert_eq!(webm.lines().nth(1), Some("2"), "two frames: {webm}");
}

/// `:gnuplot` writes each record field's arrays as columns of a data file
/// named by a gnuplot variable and runs the script (here a stand-in
/// gnuplot that writes the script and the data to the image file).
#[cfg(unix)]
#[test]
fn gnuplot_gets_the_data_and_the_script() {
    use std::os::unix::fs::PermissionsExt;
    let d = scratch("gnuplot");
    let bin = d.join("bin");
    std::fs::create_dir_all(&bin).unwrap();
    let fake = write(
        &bin,
        "gnuplot",
        "#!/bin/sh\nout=$(sed -n \"s/^set output '\\(.*\\)'$/\\1/p\" \"$1\")\n\
         data=$(sed -n \"s/^pts='\\(.*\\)'$/\\1/p\" \"$1\")\n\
         { cat \"$1\"; echo DATA; cat \"$data\"; } > \"$out\"\n",
    );
    std::fs::set_permissions(&fake, std::fs::Permissions::from_mode(0o755)).unwrap();
    let prog = write(
        &d,
        "g.fut",
        "entry sq (n: i64) : ([]i64, []i64) = (iota n, map (\\i -> i * i) (iota n))\n\n\
         -- > :gnuplot {pts = sq 3};\n-- plot pts with lines\n",
    );
    let path = format!("{}:/usr/bin:/bin", bin.display());
    let o = nabla_env(
        &["literate", "--backend=interp", prog.to_str().unwrap()],
        &[("PATH", &path)],
    );
    assert!(o.status.success(), "{}", stderr(&o));
    let md = std::fs::read_to_string(d.join("g.md")).unwrap();
    assert!(md.contains("![](g-img/plot-0.png)"), "{md}");
    let out = std::fs::read_to_string(d.join("g-img/plot-0.png")).unwrap();
    assert!(out.contains("set term png"), "{out}");
    assert!(
        out.contains("plot pts with lines\nDATA\n0 0\n1 1\n2 4\n"),
        "{out}"
    );
}

/// The example's Markdown is what `nabla literate` makes of it now.
#[test]
fn example_markdown_is_up_to_date() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../examples/literate");
    let d = scratch("example");
    let out = d.join("descent.md");
    let o = nabla(&[
        "literate",
        "--backend=interp",
        root.join("descent.fut").to_str().unwrap(),
        "-o",
        out.to_str().unwrap(),
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    let fresh = std::fs::read_to_string(&out).unwrap();
    let committed = std::fs::read_to_string(root.join("descent.md")).unwrap();
    assert_eq!(
        fresh, committed,
        "examples/literate/descent.md is stale: run `nabla literate --backend=interp examples/literate/descent.fut`"
    );
    for img in ["plot-0.png", "plot-1.png"] {
        let (w, h, _) = decode_png(&d.join("descent-img").join(img));
        assert_eq!((w, h), (640, 480));
        let (cw, ch, _) = decode_png(&root.join("descent-img").join(img));
        assert_eq!((cw, ch), (640, 480));
    }
    // The loss falls: the fit is near (3, 1).
    assert!(fresh.contains("(2.90749"), "{fresh}");
}
