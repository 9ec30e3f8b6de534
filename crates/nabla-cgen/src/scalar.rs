//! Scalars in C: type names, constants, and the scalar operators as C
//! expressions over the runtime's helper functions (which mirror
//! `nabla_prim`'s evaluation: wrapping integers, Futhark's division
//! rounding, shifts, conversions).

use crate::CgenError;
use nabla_ir::{BinOp, CmpOp, ConvOp, PrimType, PrimValue, TernOp, UnOp};

/// The C type of a variable of primitive type `t` (`f16` is the runtime's
/// `nb_f16`: `_Float16` or, where the C compiler lacks it, `__fp16`).
pub fn c_type(t: PrimType) -> Result<&'static str, CgenError> {
    Ok(match t {
        PrimType::I8 => "int8_t",
        PrimType::I16 => "int16_t",
        PrimType::I32 => "int32_t",
        PrimType::I64 => "int64_t",
        PrimType::U8 => "uint8_t",
        PrimType::U16 => "uint16_t",
        PrimType::U32 => "uint32_t",
        PrimType::U64 => "uint64_t",
        PrimType::F32 => "float",
        PrimType::F64 => "double",
        PrimType::Bool => "bool",
        PrimType::F16 => "nb_f16",
    })
}

/// The runtime's type code (`NB_I8` …) of a primitive type.
pub fn type_code(t: PrimType) -> &'static str {
    match t {
        PrimType::I8 => "NB_I8",
        PrimType::I16 => "NB_I16",
        PrimType::I32 => "NB_I32",
        PrimType::I64 => "NB_I64",
        PrimType::U8 => "NB_U8",
        PrimType::U16 => "NB_U16",
        PrimType::U32 => "NB_U32",
        PrimType::U64 => "NB_U64",
        PrimType::F16 => "NB_F16",
        PrimType::F32 => "NB_F32",
        PrimType::F64 => "NB_F64",
        PrimType::Bool => "NB_BOOL",
    }
}

/// A C expression denoting the constant exactly.
pub fn c_const(v: PrimValue) -> Result<String, CgenError> {
    Ok(match v {
        PrimValue::I8(x) => format!("((int8_t){x})"),
        PrimValue::I16(x) => format!("((int16_t){x})"),
        PrimValue::I32(x) => format!("((int32_t){x})"),
        PrimValue::I64(x) if x == i64::MIN => "INT64_MIN".to_string(),
        PrimValue::I64(x) => format!("((int64_t){x}LL)"),
        PrimValue::U8(x) => format!("((uint8_t){x}U)"),
        PrimValue::U16(x) => format!("((uint16_t){x}U)"),
        PrimValue::U32(x) => format!("((uint32_t){x}U)"),
        PrimValue::U64(x) => format!("((uint64_t){x}ULL)"),
        PrimValue::F32(x) if x.is_finite() => format!("({x:e}f)"),
        PrimValue::F32(x) => format!("nb_f32_from_bits({}U)", x.to_bits()),
        PrimValue::F64(x) if x.is_finite() => format!("({x:e})"),
        PrimValue::F64(x) => format!("nb_f64_from_bits({}ULL)", x.to_bits()),
        PrimValue::Bool(b) => (if b { "true" } else { "false" }).to_string(),
        PrimValue::F16(x) => format!("nb_f16_from_bits({}U)", x.to_bits()),
    })
}

/// The suffix of the runtime's per-type helpers (`nb_add_i32`).
fn suffix(t: PrimType) -> &'static str {
    t.name()
}

/// `x op y` on operands of type `t`; `loc` is the C string literal of the
/// statement's location (for division by zero).
pub fn binop(op: BinOp, t: PrimType, x: &str, y: &str, loc: &str) -> Result<String, CgenError> {
    let bad = || {
        Err(CgenError::unsupported(&format!(
            "the operator {op:?} on {}",
            t.name()
        )))
    };
    if t == PrimType::Bool {
        return match op {
            BinOp::LogAnd | BinOp::BitAnd | BinOp::Min => Ok(format!("({x} && {y})")),
            BinOp::LogOr | BinOp::BitOr | BinOp::Max => Ok(format!("({x} || {y})")),
            BinOp::BitXor => Ok(format!("({x} != {y})")),
            _ => bad(),
        };
    }
    if t == PrimType::F16 {
        // As nabla-prim: computed in f32, rounded to f16.
        let e = binop(
            op,
            PrimType::F32,
            &format!("((float){x})"),
            &format!("((float){y})"),
            loc,
        )?;
        return Ok(format!("((nb_f16){e})"));
    }
    if t.is_float() {
        c_type(t)?;
        let f = if t == PrimType::F32 { "f" } else { "" };
        return Ok(match op {
            BinOp::Add => format!("({x} + {y})"),
            BinOp::Sub => format!("({x} - {y})"),
            BinOp::Mul => format!("({x} * {y})"),
            BinOp::Div => format!("({x} / {y})"),
            BinOp::Mod => format!("fmod{f}({x}, {y})"),
            BinOp::Pow => format!("pow{f}({x}, {y})"),
            BinOp::Min => format!("nb_fmin{}({x}, {y})", t.bits()),
            BinOp::Max => format!("nb_fmax{}({x}, {y})", t.bits()),
            BinOp::Atan2 => format!("atan2{f}({x}, {y})"),
            BinOp::Hypot => format!("hypot{f}({x}, {y})"),
            _ => return bad(),
        });
    }
    let s = suffix(t);
    Ok(match op {
        BinOp::Add => format!("nb_add_{s}({x}, {y})"),
        BinOp::Sub => format!("nb_sub_{s}({x}, {y})"),
        BinOp::Mul => format!("nb_mul_{s}({x}, {y})"),
        BinOp::Div => format!("nb_div_{s}({x}, {y}, {loc})"),
        BinOp::Mod => format!("nb_mod_{s}({x}, {y}, {loc})"),
        BinOp::IntDiv | BinOp::Quot => format!("nb_quot_{s}({x}, {y}, {loc})"),
        BinOp::IntMod | BinOp::Rem => format!("nb_rem_{s}({x}, {y}, {loc})"),
        BinOp::Pow => format!("nb_pow_{s}({x}, {y})"),
        BinOp::BitAnd => format!("({x} & {y})"),
        BinOp::BitOr => format!("({x} | {y})"),
        BinOp::BitXor => format!("({x} ^ {y})"),
        BinOp::Shl => format!("nb_shl_{s}({x}, {y})"),
        BinOp::Shr => format!("nb_ashr_{s}({x}, {y})"),
        BinOp::LShr => format!("nb_lshr_{s}({x}, {y})"),
        BinOp::Min => format!("nb_min_{s}({x}, {y})"),
        BinOp::Max => format!("nb_max_{s}({x}, {y})"),
        BinOp::LogAnd | BinOp::LogOr | BinOp::Atan2 | BinOp::Hypot => return bad(),
    })
}

/// `x op y` (a `bool`): C's comparisons are Futhark's for every type.
pub fn cmpop(op: CmpOp, x: &str, y: &str) -> String {
    let o = match op {
        CmpOp::Eq => "==",
        CmpOp::Neq => "!=",
        CmpOp::Lt => "<",
        CmpOp::Le => "<=",
        CmpOp::Gt => ">",
        CmpOp::Ge => ">=",
    };
    format!("({x} {o} {y})")
}

/// `op x` on an operand of type `t`.
pub fn unop(op: UnOp, t: PrimType, x: &str) -> Result<String, CgenError> {
    let bad = || {
        Err(CgenError::unsupported(&format!(
            "the operator {op:?} on {}",
            t.name()
        )))
    };
    if t == PrimType::Bool {
        return match op {
            UnOp::Not | UnOp::Neg => Ok(format!("(!{x})")),
            _ => bad(),
        };
    }
    if t.is_int() {
        let s = suffix(t);
        return Ok(match op {
            UnOp::Neg => format!("nb_neg_{s}({x})"),
            UnOp::Not => format!("(({})~{x})", c_type(t)?),
            UnOp::Abs => format!("nb_abs_{s}({x})"),
            UnOp::Sgn => format!("nb_sgn_{s}({x})"),
            UnOp::Clz => format!("nb_clz_{s}({x})"),
            UnOp::Ctz => format!("nb_ctz_{s}({x})"),
            UnOp::Popc => format!("nb_popc_{s}({x})"),
            _ => return bad(),
        });
    }
    if t == PrimType::F16 {
        // As nabla-prim: the f32 operation, rounded to f16.
        let e = unop(op, PrimType::F32, &format!("((float){x})"))?;
        return Ok(match op {
            UnOp::IsNan | UnOp::IsInf => e,
            _ => format!("((nb_f16){e})"),
        });
    }
    c_type(t)?;
    let f32 = t == PrimType::F32;
    let f = if f32 { "f" } else { "" };
    let call = |name: &str| format!("{name}{f}({x})");
    // Functions evaluated in f64 and rounded, as nabla-prim does for f32.
    let via_f64 = |e: String| {
        if f32 {
            format!("((float){e})")
        } else {
            e
        }
    };
    let xd = format!("((double){x})");
    Ok(match op {
        UnOp::Neg => format!("(-{x})"),
        UnOp::Abs => call("fabs"),
        UnOp::Sgn => format!("nb_sgn_{}({x})", suffix(t)),
        UnOp::Sqrt => call("sqrt"),
        UnOp::Cbrt => call("cbrt"),
        UnOp::Exp => call("exp"),
        UnOp::Exp2 => call("exp2"),
        UnOp::Expm1 => call("expm1"),
        UnOp::Log => call("log"),
        UnOp::Log2 => call("log2"),
        UnOp::Log10 => call("log10"),
        UnOp::Log1p => call("log1p"),
        UnOp::Sin => call("sin"),
        UnOp::Cos => call("cos"),
        UnOp::Tan => call("tan"),
        UnOp::Asin => call("asin"),
        UnOp::Acos => call("acos"),
        UnOp::Atan => call("atan"),
        UnOp::Sinh => call("sinh"),
        UnOp::Cosh => call("cosh"),
        UnOp::Tanh => call("tanh"),
        UnOp::Asinh => call("asinh"),
        UnOp::Acosh => call("acosh"),
        UnOp::Atanh => call("atanh"),
        UnOp::Lgamma => via_f64(format!("lgamma({xd})")),
        UnOp::Gamma => via_f64(format!("tgamma({xd})")),
        UnOp::Erf => via_f64(format!("erf({xd})")),
        UnOp::Erfc => via_f64(format!("erfc({xd})")),
        UnOp::Digamma => via_f64(format!("nb_polygamma(0, {xd})")),
        UnOp::Trigamma => via_f64(format!("nb_polygamma(1, {xd})")),
        UnOp::Floor => call("floor"),
        UnOp::Ceil => call("ceil"),
        UnOp::Round => call("nearbyint"),
        UnOp::Trunc => call("trunc"),
        UnOp::IsNan => format!("(isnan({x}) != 0)"),
        UnOp::IsInf => format!("(isinf({x}) != 0)"),
        UnOp::Not | UnOp::Clz | UnOp::Ctz | UnOp::Popc => return bad(),
    })
}

/// A three-operand float built-in.
pub fn ternop(op: TernOp, t: PrimType, a: &str, b: &str, c: &str) -> Result<String, CgenError> {
    if !t.is_float() {
        return Err(CgenError::unsupported(&format!(
            "the operator {op:?} on {}",
            t.name()
        )));
    }
    if t == PrimType::F16 {
        let (a, b, c) = (
            format!("((float){a})"),
            format!("((float){b})"),
            format!("((float){c})"),
        );
        let r16 = |e: String| format!("((float)(nb_f16)({e}))");
        return Ok(match op {
            TernOp::Fma => {
                format!("nb_f16_of_f64(fma((double){a}, (double){b}, (double){c}))")
            }
            TernOp::Mad => format!("((nb_f16)({} + {c}))", r16(format!("{a} * {b}"))),
            TernOp::Lerp => {
                let d = r16(format!("{b} - {a}"));
                let m = r16(format!("{d} * {c}"));
                format!("((nb_f16)({a} + {m}))")
            }
        });
    }
    c_type(t)?;
    let f = if t == PrimType::F32 { "f" } else { "" };
    Ok(match op {
        TernOp::Fma => format!("fma{f}({a}, {b}, {c})"),
        TernOp::Mad => format!("({a} * {b} + {c})"),
        TernOp::Lerp => format!("({a} + ({b} - {a}) * {c})"),
    })
}

/// The unsigned integer type of the same width as `t`.
pub(crate) fn unsigned_of(t: PrimType) -> &'static str {
    match t.bits() {
        8 => "uint8_t",
        16 => "uint16_t",
        32 => "uint32_t",
        _ => "uint64_t",
    }
}

/// A conversion (nabla-prim's `convert` and bit casts).
pub fn conv(op: ConvOp, x: &str) -> Result<String, CgenError> {
    match op {
        ConvOp::Convert(from, to) => {
            let tt = c_type(to)?;
            c_type(from)?;
            if from == PrimType::Bool {
                return Ok(format!("(({tt})({x} ? 1 : 0))"));
            }
            if to == PrimType::Bool {
                return Ok(format!("({x} != 0)"));
            }
            if from.is_float() {
                if to == PrimType::F16 && from == PrimType::F64 {
                    return Ok(format!("nb_f16_of_f64({x})"));
                }
                if to.is_float() {
                    return Ok(format!("(({tt}){x})"));
                }
                return Ok(format!("(({tt})nb_f64_to_u64_wrapping((double){x}))"));
            }
            // Integer source.
            if to == PrimType::F16 {
                // As nabla-prim: through the nearest f64.
                return Ok(format!("nb_f16_of_f64((double){x})"));
            }
            if to.is_float() {
                return Ok(format!("(({tt}){x})"));
            }
            if from.is_signed_int() && to.is_signed_int() {
                Ok(format!("(({tt}){x})"))
            } else {
                // Zero extension (or truncation) of the source's bits.
                Ok(format!("(({tt})({})({x}))", unsigned_of(from)))
            }
        }
        ConvOp::BitCast(from, to) => {
            let tt = c_type(to)?;
            c_type(from)?;
            if from.bits() != to.bits() || from == PrimType::Bool || to == PrimType::Bool {
                return Err(CgenError::unsupported(&format!(
                    "a bit cast from {} to {}",
                    from.name(),
                    to.name()
                )));
            }
            Ok(match (from.is_float(), to.is_float()) {
                (true, false) if from == PrimType::F16 => format!("(({tt})nb_f16_to_bits({x}))"),
                (false, true) if to == PrimType::F16 => {
                    format!("nb_f16_from_bits((uint16_t){x})")
                }
                (false, false) => format!("(({tt})({})({x}))", unsigned_of(from)),
                (true, false) if from == PrimType::F64 => format!("(({tt})nb_f64_to_bits({x}))"),
                (true, false) => format!("(({tt})nb_f32_to_bits({x}))"),
                (false, true) if to == PrimType::F64 => {
                    format!("nb_f64_from_bits((uint64_t){x})")
                }
                (false, true) => format!("nb_f32_from_bits((uint32_t){x})"),
                (true, true) => format!("({x})"),
            })
        }
    }
}
