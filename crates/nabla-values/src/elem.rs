//! The [`Elem`] trait: the Rust element types a [`Buffer`] can hold, with the
//! glue between them, [`PrimValue`] and the binary data format.

use crate::Buffer;
use nabla_prim::{f16, PrimType, PrimValue};
use std::rc::Rc;

/// A Rust type that is the element type of one [`Buffer`] variant: `i8`…`i64`,
/// `u8`…`u64`, [`f16`], `f32`, `f64` and `bool`.
///
/// Generic code over buffers (`ArrayValue::as_slice::<f64>()`,
/// `ArrayValue::from_vec`) goes through this trait, so no element is ever boxed
/// into a [`PrimValue`] on the fast paths.
pub trait Elem: Copy + PartialEq + std::fmt::Debug + 'static {
    /// The primitive type of this element type.
    const TYPE: PrimType;
    /// Size in bytes in Futhark's binary data format (`bool` is one byte).
    const SIZE: usize;
    /// The zero value (`false` for `bool`).
    fn zero() -> Self;
    /// Boxes the element as a [`PrimValue`].
    fn to_prim(self) -> PrimValue;
    /// Unboxes a [`PrimValue`] of exactly this type; `None` on a type mismatch.
    fn from_prim(p: PrimValue) -> Option<Self>;
    /// Wraps a vector as the matching [`Buffer`] variant.
    fn into_buffer(v: Vec<Self>) -> Buffer {
        Self::rc_into_buffer(Rc::new(v))
    }
    /// Wraps a shared vector as the matching [`Buffer`] variant.
    fn rc_into_buffer(v: Rc<Vec<Self>>) -> Buffer;
    /// The vector inside `b` if `b` is this type's variant.
    fn buffer_vec(b: &Buffer) -> Option<&Rc<Vec<Self>>>;
    /// The vector inside `b` (mutably) if `b` is this type's variant.
    fn buffer_vec_mut(b: &mut Buffer) -> Option<&mut Rc<Vec<Self>>>;
    /// Appends the little-endian encoding (binary data format) to `out`.
    fn write_le(self, out: &mut Vec<u8>);
    /// Decodes from exactly [`Elem::SIZE`] little-endian bytes; `None` for a
    /// `bool` byte other than 0 or 1.
    fn read_le(b: &[u8]) -> Option<Self>;
}

macro_rules! impl_num_elem {
    ($t:ty, $var:ident, $size:expr, $zero:expr) => {
        impl Elem for $t {
            const TYPE: PrimType = PrimType::$var;
            const SIZE: usize = $size;
            #[inline]
            fn zero() -> Self {
                $zero
            }
            #[inline]
            fn to_prim(self) -> PrimValue {
                PrimValue::$var(self)
            }
            #[inline]
            fn from_prim(p: PrimValue) -> Option<Self> {
                match p {
                    PrimValue::$var(x) => Some(x),
                    _ => None,
                }
            }
            #[inline]
            fn rc_into_buffer(v: Rc<Vec<Self>>) -> Buffer {
                Buffer::$var(v)
            }
            #[inline]
            fn buffer_vec(b: &Buffer) -> Option<&Rc<Vec<Self>>> {
                match b {
                    Buffer::$var(v) => Some(v),
                    _ => None,
                }
            }
            #[inline]
            fn buffer_vec_mut(b: &mut Buffer) -> Option<&mut Rc<Vec<Self>>> {
                match b {
                    Buffer::$var(v) => Some(v),
                    _ => None,
                }
            }
            #[inline]
            fn write_le(self, out: &mut Vec<u8>) {
                out.extend_from_slice(&self.to_le_bytes());
            }
            #[inline]
            fn read_le(b: &[u8]) -> Option<Self> {
                let mut a = [0u8; $size];
                a.copy_from_slice(&b[..$size]);
                Some(<$t>::from_le_bytes(a))
            }
        }
    };
}

impl_num_elem!(i8, I8, 1, 0);
impl_num_elem!(i16, I16, 2, 0);
impl_num_elem!(i32, I32, 4, 0);
impl_num_elem!(i64, I64, 8, 0);
impl_num_elem!(u8, U8, 1, 0);
impl_num_elem!(u16, U16, 2, 0);
impl_num_elem!(u32, U32, 4, 0);
impl_num_elem!(u64, U64, 8, 0);
impl_num_elem!(f16, F16, 2, f16::from_f32(0.0));
impl_num_elem!(f32, F32, 4, 0.0);
impl_num_elem!(f64, F64, 8, 0.0);

impl Elem for bool {
    const TYPE: PrimType = PrimType::Bool;
    const SIZE: usize = 1;
    #[inline]
    fn zero() -> Self {
        false
    }
    #[inline]
    fn to_prim(self) -> PrimValue {
        PrimValue::Bool(self)
    }
    #[inline]
    fn from_prim(p: PrimValue) -> Option<Self> {
        match p {
            PrimValue::Bool(x) => Some(x),
            _ => None,
        }
    }
    #[inline]
    fn rc_into_buffer(v: Rc<Vec<Self>>) -> Buffer {
        Buffer::Bool(v)
    }
    #[inline]
    fn buffer_vec(b: &Buffer) -> Option<&Rc<Vec<Self>>> {
        match b {
            Buffer::Bool(v) => Some(v),
            _ => None,
        }
    }
    #[inline]
    fn buffer_vec_mut(b: &mut Buffer) -> Option<&mut Rc<Vec<Self>>> {
        match b {
            Buffer::Bool(v) => Some(v),
            _ => None,
        }
    }
    #[inline]
    fn write_le(self, out: &mut Vec<u8>) {
        out.push(self as u8);
    }
    #[inline]
    fn read_le(b: &[u8]) -> Option<Self> {
        match b[0] {
            0 => Some(false),
            1 => Some(true),
            _ => None,
        }
    }
}

/// Runs `$body` with `$v` bound to the `Rc<Vec<T>>` inside a buffer (by
/// whatever reference `$buf` is), whatever the element type `T` is.
macro_rules! on_buffer {
    ($buf:expr, $v:ident => $body:expr) => {
        match $buf {
            $crate::Buffer::I8($v) => $body,
            $crate::Buffer::I16($v) => $body,
            $crate::Buffer::I32($v) => $body,
            $crate::Buffer::I64($v) => $body,
            $crate::Buffer::U8($v) => $body,
            $crate::Buffer::U16($v) => $body,
            $crate::Buffer::U32($v) => $body,
            $crate::Buffer::U64($v) => $body,
            $crate::Buffer::F16($v) => $body,
            $crate::Buffer::F32($v) => $body,
            $crate::Buffer::F64($v) => $body,
            $crate::Buffer::Bool($v) => $body,
        }
    };
}
pub(crate) use on_buffer;

/// Runs `$body` with the type alias `$T` naming the Rust element type of the
/// primitive type `$t`.
macro_rules! with_elem_type {
    ($t:expr, $T:ident => $body:expr) => {
        match $t {
            nabla_prim::PrimType::I8 => {
                type $T = i8;
                $body
            }
            nabla_prim::PrimType::I16 => {
                type $T = i16;
                $body
            }
            nabla_prim::PrimType::I32 => {
                type $T = i32;
                $body
            }
            nabla_prim::PrimType::I64 => {
                type $T = i64;
                $body
            }
            nabla_prim::PrimType::U8 => {
                type $T = u8;
                $body
            }
            nabla_prim::PrimType::U16 => {
                type $T = u16;
                $body
            }
            nabla_prim::PrimType::U32 => {
                type $T = u32;
                $body
            }
            nabla_prim::PrimType::U64 => {
                type $T = u64;
                $body
            }
            nabla_prim::PrimType::F16 => {
                type $T = nabla_prim::f16;
                $body
            }
            nabla_prim::PrimType::F32 => {
                type $T = f32;
                $body
            }
            nabla_prim::PrimType::F64 => {
                type $T = f64;
                $body
            }
            nabla_prim::PrimType::Bool => {
                type $T = bool;
                $body
            }
        }
    };
}
pub(crate) use with_elem_type;
