//! Per-eval input and output conversion: a GradBench `evaluate` message's
//! `input` becomes the arguments of an entry point of `gradbench/<eval>.fut`,
//! and the entry's results become the reference output layout
//! (`shared/data/README.md` §3.4).

use super::json::{
    bool_of, f64_array, f64_flat, f64_of, f64_value, f64s, field, i64_array, i64_of, i64_value,
    i64s, to_json,
};
use nabla_values::{ArrayValue, Value};
use serde_json::{json, Value as Json};

/// The evals, in GradBench's names (also the program file stems).
pub const EVALS: &[&str] = &[
    "hello", "llsq", "lse", "det", "ode", "gmm", "kmeans", "lstm", "ba", "ht", "particle", "saddle",
];

/// The functions each eval asks for.
pub fn functions(module: &str) -> &'static [&'static str] {
    match module {
        "hello" => &["square", "double"],
        "llsq" | "lse" | "det" | "ode" => &["primal", "gradient"],
        "gmm" | "lstm" | "ba" | "ht" => &["objective", "jacobian"],
        "kmeans" => &["cost", "dir"],
        "particle" | "saddle" => &["ff", "fr", "rf", "rr"],
        _ => &[],
    }
}

/// Converts an entry point's results to the reference output.
pub type OutputFn = Box<dyn Fn(&[Value]) -> Result<Json, String>>;

/// One prepared call: the entry point, its arguments and how to turn its
/// results into the reference output layout.
pub struct Call {
    /// The entry point of `gradbench/<module>.fut`.
    pub entry: String,
    /// Its flat arguments.
    pub args: Vec<Value>,
    /// Results → JSON output.
    pub output: OutputFn,
}

fn result(rs: &[Value], i: usize) -> Result<&Value, String> {
    rs.get(i)
        .ok_or_else(|| format!("the program returned {} values, expected more", rs.len()))
}

/// The first result as JSON, unchanged.
fn plain() -> OutputFn {
    Box::new(|rs| to_json(result(rs, 0)?))
}

fn f64_field(input: &Json, name: &str) -> Result<Value, String> {
    Ok(f64_value(f64_of(field(input, name)?, name)?))
}

fn i64_field(input: &Json, name: &str) -> Result<Value, String> {
    Ok(i64_value(i64_of(field(input, name)?, name)?))
}

fn array_field(input: &Json, name: &str, rank: usize) -> Result<Value, String> {
    f64_array(field(input, name)?, rank, name)
}

/// Prepares `module`'s `function` on `input` (the `evaluate` message's
/// `input` field). Errors: unknown module or function, or an input that
/// lacks a field or has the wrong shape.
pub fn prepare(module: &str, function: &str, input: &Json) -> Result<Call, String> {
    if !EVALS.contains(&module) {
        return Err(format!("unknown module {module:?}"));
    }
    if !functions(module).contains(&function) {
        return Err(format!(
            "module {module} has no function {function:?} (it has {})",
            functions(module).join(", ")
        ));
    }
    let call = |args: Vec<Value>, output: OutputFn| {
        Ok(Call {
            entry: function.to_string(),
            args,
            output,
        })
    };
    match module {
        "hello" => call(vec![f64_value(f64_of(input, "the input")?)], plain()),
        "llsq" => call(
            vec![array_field(input, "x", 1)?, i64_field(input, "n")?],
            plain(),
        ),
        "lse" => call(vec![array_field(input, "x", 1)?], plain()),
        "det" => {
            let a = array_field(input, "A", 1)?;
            let ell = i64_of(field(input, "ell")?, "ell")?;
            if !(0..=12).contains(&ell) || a.num_elems() as i64 != ell * ell {
                return Err(format!(
                    "A must have ell² elements and ell must be at most 12 (ell = {ell}, {} elements)",
                    a.num_elems()
                ));
            }
            call(vec![a, i64_value(ell)], plain())
        }
        "ode" => {
            let s = i64_of(field(input, "s")?, "s")?;
            if s <= 0 {
                return Err(format!("s must be positive, got {s}"));
            }
            call(vec![array_field(input, "x", 1)?, i64_value(s)], plain())
        }
        "gmm" => {
            let args = vec![
                array_field(input, "x", 2)?,
                f64_field(input, "gamma")?,
                i64_field(input, "m")?,
                array_field(input, "alpha", 1)?,
                array_field(input, "mu", 2)?,
                array_field(input, "q", 2)?,
                array_field(input, "l", 2)?,
            ];
            let output: OutputFn = if function == "objective" {
                plain()
            } else {
                Box::new(|rs| {
                    Ok(json!({
                        "alpha": to_json(result(rs, 0)?)?,
                        "mu": to_json(result(rs, 1)?)?,
                        "q": to_json(result(rs, 2)?)?,
                        "l": to_json(result(rs, 3)?)?,
                    }))
                })
            };
            call(args, output)
        }
        "kmeans" => call(
            vec![
                array_field(input, "points", 2)?,
                array_field(input, "centroids", 2)?,
            ],
            plain(),
        ),
        "lstm" => {
            let args = vec![
                array_field(input, "main_params", 2)?,
                array_field(input, "extra_params", 2)?,
                array_field(input, "state", 2)?,
                array_field(input, "sequence", 2)?,
            ];
            let output: OutputFn = if function == "objective" {
                plain()
            } else {
                // The gradient of main_params row by row, then extra_params.
                Box::new(|rs| {
                    let mut all = f64s(result(rs, 0)?)?;
                    all.extend(f64s(result(rs, 1)?)?);
                    to_json(&Value::Array(ArrayValue::from_vec(
                        &[all.len() as i64],
                        all,
                    )))
                })
            };
            call(args, output)
        }
        "ba" => prepare_ba(function, input),
        "ht" => prepare_ht(function, input),
        "particle" => call(vec![f64_field(input, "w")?], plain()),
        "saddle" => call(vec![array_field(input, "start", 1)?], plain()),
        _ => Err(format!("unknown module {module:?}")),
    }
}

/// The memory an evaluation may use in all: three quarters of the physical
/// memory (as the generated runtime's default limit), and at most the
/// process's address-space limit (`ulimit -v`); `u64::MAX` where neither
/// is known.
pub fn memory_budget() -> u64 {
    let mut budget = u64::MAX;
    #[cfg(unix)]
    {
        // SAFETY: sysconf only reads system configuration.
        let (pages, page) = unsafe {
            (
                libc::sysconf(libc::_SC_PHYS_PAGES),
                libc::sysconf(libc::_SC_PAGESIZE),
            )
        };
        if pages > 0 && page > 0 {
            budget = ((pages as u128 * page as u128) / 4 * 3).min(u64::MAX as u128) as u64;
        }
        let mut rl = libc::rlimit {
            rlim_cur: 0,
            rlim_max: 0,
        };
        // SAFETY: getrlimit writes the limit into `rl`.
        if unsafe { libc::getrlimit(libc::RLIMIT_AS, &mut rl) } == 0
            && rl.rlim_cur != libc::RLIM_INFINITY
        {
            budget = budget.min(rl.rlim_cur);
        }
    }
    budget
}

/// `k` copies of `v`, allocated fallibly: an input too large for memory is
/// the error `out of memory: N bytes for WHAT`, never an abort.
fn repeated<T: Copy>(v: &[T], k: usize, what: &str) -> Result<Vec<T>, String> {
    let n = v.len().saturating_mul(k);
    let bytes = (n as u128) * std::mem::size_of::<T>() as u128;
    let mut out = Vec::new();
    out.try_reserve_exact(n)
        .map_err(|_| format!("out of memory: {bytes} bytes for {what}"))?;
    for _ in 0..k {
        out.extend_from_slice(v);
    }
    Ok(out)
}

/// `ba`: the compressed input (one camera, point, weight and feature) is
/// expanded to n cameras, m points and p observations (observation i pairs
/// camera i mod n with point i mod m), as ADBench's reader does.
fn prepare_ba(function: &str, input: &Json) -> Result<Call, String> {
    let n = i64_of(field(input, "n")?, "n")?;
    let m = i64_of(field(input, "m")?, "m")?;
    let p = i64_of(field(input, "p")?, "p")?;
    let limit = 50_000_000;
    if n <= 0 || m <= 0 || p <= 0 || n > limit || m > limit || p > limit {
        return Err(format!("n, m, p must be in 1..{limit} (got {n}, {m}, {p})"));
    }
    let (_, cam) = f64_flat(field(input, "cam")?, 1, "cam")?;
    let (_, x) = f64_flat(field(input, "x")?, 1, "x")?;
    let w = f64_of(field(input, "w")?, "w")?;
    let (_, feat) = f64_flat(field(input, "feat")?, 1, "feat")?;
    if cam.len() != 11 || x.len() != 3 || feat.len() != 2 {
        return Err("cam must have 11 values, x 3 and feat 2".to_string());
    }
    // The expanded input (f64 cameras, points, weights, features and i64
    // observations) is held about four times at once: as values and in
    // the binary format by the tool, and as the input and its arrays by
    // the executable. Refused at once when that is more than the memory
    // budget, instead of filling memory first.
    let input_bytes = 8 * (11 * n as u128 + 3 * m as u128 + 5 * p as u128);
    let budget = memory_budget();
    if 4 * input_bytes > budget as u128 {
        return Err(format!(
            "out of memory: {input_bytes} bytes for the ba input (n = {n}, m = {m}, p = {p}), held about 4 times, is more than the memory budget of {budget} bytes (3/4 of the physical memory, at most the address-space limit)"
        ));
    }
    let (nu, mu, pu) = (n as usize, m as usize, p as usize);
    let cams = ArrayValue::from_vec(&[n, 11], repeated(&cam, nu, "the cameras")?);
    let pts = ArrayValue::from_vec(&[m, 3], repeated(&x, mu, "the points")?);
    let ws = ArrayValue::from_vec(&[p], repeated(&[w], pu, "the weights")?);
    let feats = ArrayValue::from_vec(&[p, 2], repeated(&feat, pu, "the features")?);
    let mut obs: Vec<i64> = repeated(&[0, 0], pu, "the observations")?;
    for (i, pair) in obs.chunks_exact_mut(2).enumerate() {
        let i = i as i64;
        pair.copy_from_slice(&[i % n, i % m]);
    }
    let obs = ArrayValue::from_vec(&[p, 2], obs);
    let args: Vec<Value> = [cams, pts, ws, feats, obs]
        .into_iter()
        .map(Value::Array)
        .collect();
    let output: OutputFn = if function == "objective" {
        Box::new(move |rs| {
            let reproj = f64s(result(rs, 0)?)?;
            let werr = f64s(result(rs, 1)?)?;
            if reproj.len() < 2 || werr.is_empty() {
                return Err("the program returned too few residuals".to_string());
            }
            Ok(json!({
                "reproj_error": {"elements": [num(reproj[0])?, num(reproj[1])?], "repeated": p},
                "w_err": {"element": num(werr[0])?, "repeated": p},
            }))
        })
    } else {
        // The reference keeps the first 30 entries of each CSR array and
        // the last one.
        Box::new(|rs| {
            let rows = i64s(result(rs, 0)?)?;
            let cols = i64s(result(rs, 1)?)?;
            let vals = f64s(result(rs, 2)?)?;
            let cut_i = |v: &[i64]| -> Result<Json, String> {
                if v.len() < 31 {
                    return Err("the Jacobian is too small".to_string());
                }
                let mut out: Vec<i64> = v[..30].to_vec();
                out.push(v[v.len() - 1]);
                Ok(json!(out))
            };
            if vals.len() < 31 {
                return Err("the Jacobian is too small".to_string());
            }
            let mut vs = Vec::with_capacity(31);
            for &x in vals[..30]
                .iter()
                .chain(std::iter::once(&vals[vals.len() - 1]))
            {
                vs.push(num(x)?);
            }
            Ok(json!({"rows": cut_i(&rows)?, "cols": cut_i(&cols)?, "vals": vs}))
        })
    };
    Ok(Call {
        entry: function.to_string(),
        args,
        output,
    })
}

fn num(x: f64) -> Result<Json, String> {
    super::json::prim_to_json(nabla_prim::PrimValue::F64(x))
}

/// `ht`: the model and the observations; an empty `us` selects the simple
/// variant (entries `*_simple`), otherwise the complicated one.
fn prepare_ht(function: &str, input: &Json) -> Result<Call, String> {
    let theta = array_field(input, "theta", 1)?;
    if theta.num_elems() != 26 {
        return Err(format!(
            "theta must have 26 values, got {}",
            theta.num_elems()
        ));
    }
    let data = field(input, "data")?;
    let model = field(data, "model")?;
    let parents = i64_array(field(model, "parents")?, 1, "parents")?;
    let nb = parents.num_elems();
    let base_relatives = array_field(model, "base_relatives", 3)?;
    let inverse_base_absolutes = array_field(model, "inverse_base_absolutes", 3)?;
    let base_positions = array_field(model, "base_positions", 2)?;
    let weights = array_field(model, "weights", 2)?;
    let triangles = i64_array(field(model, "triangles")?, 2, "triangles")?;
    let is_mirrored = bool_of(field(model, "is_mirrored")?, "is_mirrored")?;
    let correspondences = i64_array(field(data, "correspondences")?, 1, "correspondences")?;
    let points = array_field(data, "points", 2)?;
    let us = field(input, "us")?;
    let simple = matches!(us, Json::Array(a) if a.is_empty());
    let nv = base_positions.shape().first().copied().unwrap_or(0);
    let nt = triangles.shape().first().copied().unwrap_or(0);
    // Indices are checked here so that a bad input gives a clear message.
    for c in i64s(&correspondences)? {
        let bound = if simple { nv } else { nt };
        if c < 0 || c >= bound {
            return Err(format!("correspondence {c} is out of range 0..{bound}"));
        }
    }
    if !simple {
        for t in i64s(&triangles)? {
            if t < 0 || t >= nv {
                return Err(format!("triangle vertex {t} is out of range 0..{nv}"));
            }
        }
    }
    for (b, q) in i64s(&parents)?.into_iter().enumerate() {
        if q >= b as i64 {
            return Err(format!(
                "bone {b} has parent {q}, which does not come before it"
            ));
        }
    }
    let _ = nb;
    let mut args = vec![
        parents,
        base_relatives,
        inverse_base_absolutes,
        base_positions,
        weights,
        Value::Prim(nabla_prim::PrimValue::Bool(is_mirrored)),
    ];
    if !simple {
        args.push(triangles);
    }
    args.push(correspondences);
    args.push(points);
    args.push(theta);
    if !simple {
        args.push(f64_array(us, 2, "us")?);
    }
    let entry = format!(
        "{function}_{}",
        if simple { "simple" } else { "complicated" }
    );
    Ok(Call {
        entry,
        args,
        output: plain(),
    })
}
