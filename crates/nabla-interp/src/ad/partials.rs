//! Partial derivatives of float scalar operations computed natively on
//! `f32`/`f64`, with exactly the formulas of nabla-ir's derivative table
//! (`nabla_ir::derivatives`), and the generic rules as the fallback.
//!
//! Used by the scalar fast path (`fast.rs`), the bulk `map`/`reduce` rules
//! (`bulk_records.rs`) and the generic scalar path ([`super::AdState::prim`]);
//! it depends on no evaluator code, so the AD state and the tape can use
//! it from below the evaluator (see `lib.rs` on the module layering).

use super::rules::{self, AdOp};
use nabla_ir::derivatives::Derivative;
use nabla_prim::{BinOp, PrimValue, UnOp};

/// Native float arithmetic for [`float_partials`].
pub(crate) trait Fl:
    Copy
    + std::ops::Add<Output = Self>
    + std::ops::Sub<Output = Self>
    + std::ops::Mul<Output = Self>
    + std::ops::Div<Output = Self>
    + std::ops::Neg<Output = Self>
{
    const ZERO: Self;
    const ONE: Self;
    const TWO: Self;
    fn sin(self) -> Self;
    fn cos(self) -> Self;
    fn of(p: PrimValue) -> Option<Self>;
    fn to_f64(self) -> f64;
    fn from_f64(x: f64) -> Self;
    fn wrap(self) -> PrimValue;
}

/// `Fl` for a native float type `$t` boxed as `PrimValue::$k`.
macro_rules! impl_fl {
    ($t:ty, $k:ident) => {
        impl Fl for $t {
            const ZERO: $t = 0.0;
            const ONE: $t = 1.0;
            const TWO: $t = 2.0;
            #[inline(always)]
            fn sin(self) -> $t {
                <$t>::sin(self)
            }
            #[inline(always)]
            fn cos(self) -> $t {
                <$t>::cos(self)
            }
            #[inline(always)]
            fn of(p: PrimValue) -> Option<$t> {
                match p {
                    PrimValue::$k(x) => Some(x),
                    _ => None,
                }
            }
            #[inline(always)]
            fn to_f64(self) -> f64 {
                self as f64
            }
            #[inline(always)]
            fn from_f64(x: f64) -> $t {
                x as $t
            }
            #[inline(always)]
            fn wrap(self) -> PrimValue {
                PrimValue::$k(self)
            }
        }
    };
}

impl_fl!(f64, F64);
impl_fl!(f32, F32);

/// The partial derivatives of a unary or binary float operation at operands
/// `x` with primal result `r`, for the commonest operators (`None`: use the
/// generic rules). The formulas are those of nabla-ir's derivative table
/// (`nabla_ir::derivatives`), step by step, so the results are
/// bit-identical (tested below).
#[inline(always)]
pub(crate) fn float_partials<F: Fl>(op: AdOp, x: &[F], r: F) -> Option<[F; 2]> {
    let zero = F::ZERO;
    Some(match (op, x) {
        (AdOp::Bin(o), &[a, b]) => match o {
            BinOp::Add => [F::ONE, F::ONE],
            BinOp::Sub => [F::ONE, -F::ONE],
            BinOp::Mul => [b, a],
            BinOp::Div => [F::ONE / b, -(a / (b * b))],
            _ => return None,
        },
        (AdOp::Un(o), &[a]) => [
            match o {
                UnOp::Neg => -F::ONE,
                UnOp::Sin => a.cos(),
                UnOp::Cos => -a.sin(),
                UnOp::Exp => r,
                UnOp::Log => F::ONE / a,
                UnOp::Log1p => F::ONE / (F::ONE + a),
                UnOp::Sqrt => F::ONE / (F::TWO * r),
                UnOp::Tanh => F::ONE - r * r,
                _ => return None,
            },
            zero,
        ],
        _ => return None,
    })
}

/// Partial derivatives as `f64` (exact for `f32`); `has[k]` is false where
/// the rule gives no dependence (the generic path skips those operands).
#[derive(Clone, Copy)]
pub(crate) struct Ds {
    /// The partial derivative by each operand.
    pub d: [f64; 2],
    /// Whether the operation depends on each operand.
    pub has: [bool; 2],
}

/// The partials of a unary or binary float operation, natively or from the
/// generic rules. `Ok(None)`: the result is a constant; `None`: not a float
/// operation of this kind (the caller takes the generic path).
#[inline(always)]
pub(crate) fn partials_as<F: Fl>(
    op: AdOp,
    ps: &[PrimValue],
    r: PrimValue,
) -> Option<Result<Option<Ds>, String>> {
    let mut x = [F::ONE; 2];
    for (q, p) in x.iter_mut().zip(ps) {
        *q = F::of(*p)?;
    }
    let r_plain = r;
    let r = F::of(r)?;
    if let Some(d) = float_partials(op, &x[..ps.len()], r) {
        return Some(Ok(Some(Ds {
            d: [d[0].to_f64(), d[1].to_f64()],
            has: [true, ps.len() > 1],
        })));
    }
    Some(match rules::deriv_plain(op, ps, Some(&r_plain)) {
        Ok(Derivative::Constant) => Ok(None),
        Ok(Derivative::Partials(ds)) => {
            let g = |d: &Option<PrimValue>| d.and_then(F::of).map(F::to_f64);
            let (a, b) = (g(&ds[0]), g(&ds[1]));
            Ok(Some(Ds {
                d: [a.unwrap_or(0.0), b.unwrap_or(0.0)],
                has: [a.is_some(), b.is_some() && ps.len() > 1],
            }))
        }
        Ok(Derivative::Conversion { .. }) => return None,
        Err(e) => Err(e),
    })
}

/// [`partials_as`] for other modules: `(partials, present)`.
#[inline(always)]
#[allow(clippy::type_complexity)]
pub(crate) fn partials_of<F: Fl>(
    op: AdOp,
    ps: &[PrimValue],
    r: PrimValue,
) -> Option<Result<Option<([f64; 2], [bool; 2])>, String>> {
    partials_as::<F>(op, ps, r).map(|r| r.map(|o| o.map(|d| (d.d, d.has))))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The native partials agree bit for bit with nabla-ir's table
    /// evaluated on plain scalars, for every operator they cover.
    #[test]
    fn native_partials_are_the_tables() {
        let ops = [
            AdOp::Bin(BinOp::Add),
            AdOp::Bin(BinOp::Sub),
            AdOp::Bin(BinOp::Mul),
            AdOp::Bin(BinOp::Div),
            AdOp::Un(UnOp::Neg),
            AdOp::Un(UnOp::Sin),
            AdOp::Un(UnOp::Cos),
            AdOp::Un(UnOp::Exp),
            AdOp::Un(UnOp::Log),
            AdOp::Un(UnOp::Log1p),
            AdOp::Un(UnOp::Sqrt),
            AdOp::Un(UnOp::Tanh),
        ];
        let points = [(0.3, 1.7), (-2.5, 0.25), (0.0, 3.0), (7.0, -0.0)];
        for op in ops {
            for (a, b) in points {
                let native64 = |x: &[f64]| {
                    let ps: Vec<PrimValue> = x.iter().map(|&v| PrimValue::F64(v)).collect();
                    let r = rules::apply_plain(op, &ps).unwrap();
                    let d = float_partials::<f64>(op, x, r.as_f64()).unwrap();
                    let Ok(Derivative::Partials(t)) = rules::deriv_plain(op, &ps, None) else {
                        panic!("{op:?} has no partials");
                    };
                    for (k, t) in t.iter().enumerate().take(x.len()) {
                        let t = t.map_or(0.0, |t| t.as_f64());
                        assert_eq!(d[k].to_bits(), t.to_bits(), "{op:?} at {x:?}, operand {k}");
                    }
                };
                let native32 = |x: &[f32]| {
                    let ps: Vec<PrimValue> = x.iter().map(|&v| PrimValue::F32(v)).collect();
                    let r = rules::apply_plain(op, &ps).unwrap();
                    let PrimValue::F32(r) = r else { panic!() };
                    let d = float_partials::<f32>(op, x, r).unwrap();
                    let Ok(Derivative::Partials(t)) = rules::deriv_plain(op, &ps, None) else {
                        panic!("{op:?} has no partials");
                    };
                    for (k, t) in t.iter().enumerate().take(x.len()) {
                        let t = t.map_or(0.0, |t| t.as_f64()) as f32;
                        assert_eq!(d[k].to_bits(), t.to_bits(), "{op:?} at {x:?}, operand {k}");
                    }
                };
                let n = op.arity();
                native64(&[a, b][..n]);
                native32(&[a as f32, b as f32][..n]);
            }
        }
    }
}
