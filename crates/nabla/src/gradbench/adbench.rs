//! ADBench's text input files (`shared/data/README.md` §2) read into the
//! same JSON inputs that GradBench's evals send, so that `nabla adbench`
//! runs them through the same conversion and programs as `nabla gradbench`.
//!
//! Supported: `gmm` (§2.1), `lstm` (§2.2), `ba` (§2.3) and `hand` (§2.4,
//! simple and complicated, with the model in the file's `model/` folder).

use serde_json::{json, Value as Json};
use std::path::Path;

/// A whitespace-separated number reader with readable errors.
struct Tokens<'a> {
    what: String,
    it: std::iter::Peekable<std::str::SplitAsciiWhitespace<'a>>,
    count: usize,
}

impl<'a> Tokens<'a> {
    fn new(text: &'a str, what: &str) -> Tokens<'a> {
        Tokens {
            what: what.to_string(),
            it: text.split_ascii_whitespace().peekable(),
            count: 0,
        }
    }

    fn next_str(&mut self) -> Result<&'a str, String> {
        self.count += 1;
        self.it
            .next()
            .ok_or_else(|| format!("{}: the file ends early (value {})", self.what, self.count))
    }

    fn f64(&mut self) -> Result<f64, String> {
        let s = self.next_str()?;
        s.parse::<f64>().map_err(|_| {
            format!(
                "{}: value {} ({s:?}) is not a number",
                self.what, self.count
            )
        })
    }

    fn i64(&mut self) -> Result<i64, String> {
        let s = self.next_str()?;
        s.parse::<i64>().map_err(|_| {
            format!(
                "{}: value {} ({s:?}) is not an integer",
                self.what, self.count
            )
        })
    }

    fn size(&mut self, max: i64) -> Result<usize, String> {
        let v = self.i64()?;
        if v < 0 || v > max {
            return Err(format!("{}: size {v} is out of range 0..={max}", self.what));
        }
        Ok(v as usize)
    }

    fn f64s(&mut self, n: usize) -> Result<Vec<f64>, String> {
        (0..n).map(|_| self.f64()).collect()
    }

    fn rows(&mut self, rows: usize, cols: usize) -> Result<Vec<Vec<f64>>, String> {
        (0..rows).map(|_| self.f64s(cols)).collect()
    }

    fn remaining(&mut self) -> Vec<&'a str> {
        self.it.by_ref().collect()
    }
}

fn read(path: &Path) -> Result<String, String> {
    std::fs::read_to_string(path).map_err(|e| format!("cannot read {}: {e}", path.display()))
}

/// The run settings added to every input: evaluate once.
fn once(mut input: Json) -> Json {
    input["min_runs"] = json!(1);
    input["min_seconds"] = json!(0.0);
    input
}

/// A GMM file (§2.1) as the gmm eval's input. The x block may hold n points
/// or a single point that is repeated n times.
pub fn gmm_input(path: &Path) -> Result<Json, String> {
    let text = read(path)?;
    let mut t = Tokens::new(&text, &path.display().to_string());
    let d = t.size(1 << 12)?;
    let k = t.size(1 << 16)?;
    let n = t.size(1 << 26)?;
    let alpha = t.f64s(k)?;
    let mu = t.rows(k, d)?;
    let mut q = Vec::with_capacity(k);
    let mut l = Vec::with_capacity(k);
    for _ in 0..k {
        q.push(t.f64s(d)?);
        l.push(t.f64s(d * (d.saturating_sub(1)) / 2)?);
    }
    let rest = t.remaining();
    let nums: Result<Vec<f64>, String> = rest
        .iter()
        .map(|s| {
            s.parse::<f64>()
                .map_err(|_| format!("gmm: {s:?} is not a number"))
        })
        .collect();
    let nums = nums?;
    if nums.len() < 2 || d == 0 {
        return Err("gmm: the file ends early".to_string());
    }
    let (xs, tail) = nums.split_at(nums.len() - 2);
    let x: Vec<Vec<f64>> = if xs.len() == n * d {
        xs.chunks(d).map(<[f64]>::to_vec).collect()
    } else if xs.len() == d {
        vec![xs.to_vec(); n]
    } else {
        return Err(format!(
            "gmm: {} point coordinates, expected {} (n points) or {d} (one point)",
            xs.len(),
            n * d
        ));
    };
    let (gamma, m) = (tail[0], tail[1]);
    if m.fract() != 0.0 || m < 0.0 {
        return Err(format!("gmm: m must be a non-negative integer, got {m}"));
    }
    Ok(once(json!({
        "d": d, "k": k, "n": n, "m": m as i64, "gamma": gamma,
        "x": x, "alpha": alpha, "mu": mu, "q": q, "l": l,
    })))
}

/// An LSTM file (§2.2) as the lstm eval's input.
pub fn lstm_input(path: &Path) -> Result<Json, String> {
    let text = read(path)?;
    let mut t = Tokens::new(&text, &path.display().to_string());
    let l = t.size(1 << 10)?;
    let c = t.size(1 << 24)?;
    let b = t.size(1 << 12)?;
    let main_params = t.rows(2 * l, 4 * b)?;
    let extra_params = t.rows(3, b)?;
    let state = t.rows(2 * l, b)?;
    let sequence = t.rows(c, b)?;
    Ok(once(json!({
        "main_params": main_params, "extra_params": extra_params,
        "state": state, "sequence": sequence,
    })))
}

/// A BA file (§2.3) as the ba eval's (compressed) input.
pub fn ba_input(path: &Path) -> Result<Json, String> {
    let text = read(path)?;
    let mut t = Tokens::new(&text, &path.display().to_string());
    let n = t.size(1 << 26)?;
    let m = t.size(1 << 26)?;
    let p = t.size(1 << 26)?;
    let cam = t.f64s(11)?;
    let x = t.f64s(3)?;
    let w = t.f64()?;
    let feat = t.f64s(2)?;
    Ok(once(
        json!({"n": n, "m": m, "p": p, "cam": cam, "x": x, "w": w, "feat": feat}),
    ))
}

/// The numbers of one `:`-separated model line.
fn colon_fields(line: &str) -> Vec<&str> {
    line.trim().split(':').collect()
}

fn num(s: &str, what: &str) -> Result<f64, String> {
    s.trim()
        .parse::<f64>()
        .map_err(|_| format!("{what}: {s:?} is not a number"))
}

fn int(s: &str, what: &str) -> Result<i64, String> {
    s.trim()
        .parse::<i64>()
        .map_err(|_| format!("{what}: {s:?} is not an integer"))
}

/// A 4×4 row-major matrix from 16 fields.
fn mat4(fields: &[&str], what: &str) -> Result<Vec<Vec<f64>>, String> {
    let v: Result<Vec<f64>, String> = fields.iter().map(|s| num(s, what)).collect();
    Ok(v?.chunks(4).map(<[f64]>::to_vec).collect())
}

/// A hand data file (§2.4) and the model in `model/` beside it, as the ht
/// eval's input. A file with barycentric coordinates is the complicated
/// variant.
pub fn hand_input(path: &Path) -> Result<Json, String> {
    let dir = path.parent().unwrap_or(Path::new("."));
    let model_dir = dir.join("model");
    // Bones.
    let bones_text = read(&model_dir.join("bones.txt"))?;
    let (mut names, mut parents, mut rel, mut inv) = (vec![], vec![], vec![], vec![]);
    for line in bones_text.lines().filter(|l| !l.trim().is_empty()) {
        let f = colon_fields(line);
        if f.len() != 34 {
            return Err(format!(
                "bones.txt: a line has {} fields, expected 34",
                f.len()
            ));
        }
        names.push(f[0].to_string());
        let parent = int(f[1], "bones.txt")?;
        if parent >= parents.len() as i64 || parent < -1 {
            return Err(format!(
                "bones.txt: bone {} has a bad parent {parent}",
                parents.len()
            ));
        }
        parents.push(parent);
        rel.push(mat4(&f[2..18], "bones.txt")?);
        inv.push(mat4(&f[18..34], "bones.txt")?);
    }
    let nb = parents.len();
    // Vertices.
    let vtext = read(&model_dir.join("vertices.txt"))?;
    let (mut positions, mut weights) = (vec![], vec![]);
    for line in vtext.lines().filter(|l| !l.trim().is_empty()) {
        let f = colon_fields(line);
        if f.len() < 9 {
            return Err("vertices.txt: a line has too few fields".to_string());
        }
        let mut pos = Vec::with_capacity(4);
        for s in &f[0..3] {
            pos.push(num(s, "vertices.txt")?);
        }
        pos.push(1.0);
        let k = int(f[8], "vertices.txt")?;
        if k < 0 || f.len() < 9 + 2 * k as usize {
            return Err("vertices.txt: a line has too few bone weights".to_string());
        }
        let mut w = vec![0.0; nb];
        for i in 0..k as usize {
            let bone = int(f[9 + 2 * i], "vertices.txt")?;
            if bone < 0 || bone as usize >= nb {
                return Err(format!("vertices.txt: bone {bone} is out of range"));
            }
            w[bone as usize] += num(f[10 + 2 * i], "vertices.txt")?;
        }
        positions.push(pos);
        weights.push(w);
    }
    // Triangles.
    let ttext = read(&model_dir.join("triangles.txt"))?;
    let mut triangles = vec![];
    for line in ttext.lines().filter(|l| !l.trim().is_empty()) {
        let f = colon_fields(line);
        let tri: Result<Vec<i64>, String> =
            f.iter().take(3).map(|s| int(s, "triangles.txt")).collect();
        let tri = tri?;
        if tri.len() != 3 {
            return Err("triangles.txt: a line has fewer than 3 indices".to_string());
        }
        triangles.push(tri);
    }
    // The observations.
    let text = read(path)?;
    let mut t = Tokens::new(&text, &path.display().to_string());
    let npts = t.size(1 << 24)?;
    let ntheta = t.size(1 << 10)?;
    let total = text.split_ascii_whitespace().count();
    let complicated = total == 2 + 4 * npts + 2 * npts + ntheta;
    if !complicated && total != 2 + 4 * npts + ntheta {
        return Err(format!(
            "{}: {total} values fit neither the simple nor the complicated layout",
            path.display()
        ));
    }
    let (mut corr, mut points) = (vec![], vec![]);
    for _ in 0..npts {
        corr.push(t.i64()?);
        points.push(t.f64s(3)?);
    }
    let us = if complicated {
        t.rows(npts, 2)?
    } else {
        vec![]
    };
    let theta = t.f64s(ntheta)?;
    Ok(once(json!({
        "theta": theta,
        "data": {
            "model": {
                "bone_count": nb, "bone_names": names, "parents": parents,
                "base_relatives": rel, "inverse_base_absolutes": inv,
                "base_positions": positions, "weights": weights,
                "triangles": triangles, "is_mirrored": false,
            },
            "correspondences": corr,
            "points": points,
        },
        "us": us,
    })))
}

/// The eval input of an ADBench file of kind `kind` (`gmm`, `lstm`, `ba`,
/// `hand`), and the eval's name.
pub fn input(kind: &str, path: &Path) -> Result<(&'static str, Json), String> {
    match kind {
        "gmm" => Ok(("gmm", gmm_input(path)?)),
        "lstm" => Ok(("lstm", lstm_input(path)?)),
        "ba" => Ok(("ba", ba_input(path)?)),
        "hand" | "ht" => Ok(("ht", hand_input(path)?)),
        _ => Err(format!(
            "unknown ADBench problem {kind:?} (gmm, lstm, ba, hand)"
        )),
    }
}

/// Runs objective and jacobian of an ADBench file: a JSON object with
/// `objective`, `jacobian` (in the GradBench output layouts) and the run
/// times in nanoseconds.
pub fn run(kind: &str, path: &Path) -> Result<Json, String> {
    let (module, input) = input(kind, path)?;
    let mut session = super::Session::new();
    session.define(module)?;
    let obj = session.evaluate(module, "objective", &input)?;
    let jac = session.evaluate(module, "jacobian", &input)?;
    Ok(json!({
        "eval": module,
        "objective": obj.output,
        "jacobian": jac.output,
        "objective_ns": obj.timings.first().copied().unwrap_or(0) as u64,
        "jacobian_ns": jac.timings.first().copied().unwrap_or(0) as u64,
    }))
}
