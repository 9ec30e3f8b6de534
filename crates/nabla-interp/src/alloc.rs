//! Fallible allocation of the interpreter's arrays.
//!
//! Every array whose size comes from the program or its input (`replicate`,
//! `iota`, concatenation, SOAC results, copies, AD tapes) is allocated
//! through this module: a size whose byte count overflows or exceeds
//! [`MAX_ARRAY_BYTES`] is refused before allocating, and an allocation the
//! system refuses (`try_reserve`) is the run-time error
//! `out of memory: N bytes for …` — never Rust's abort on allocation
//! failure.

/// The largest single array the interpreter attempts to allocate (1 TiB);
/// beyond it the allocation is refused without asking the system.
pub const MAX_ARRAY_BYTES: u128 = 1 << 40;

/// Bytes per element of type `t` in the interpreter's buffers.
pub(crate) fn elem_bytes(t: nabla_prim::PrimType) -> usize {
    use nabla_prim::PrimType::*;
    match t {
        I8 | U8 | Bool => 1,
        I16 | U16 | F16 => 2,
        I32 | U32 | F32 => 4,
        I64 | U64 | F64 => 8,
    }
}

/// The message for an allocation of `bytes` bytes for `what` that failed.
pub(crate) fn out_of_memory(bytes: u128, what: &str) -> String {
    if bytes > MAX_ARRAY_BYTES {
        format!(
            "out of memory: {bytes} bytes for {what} (more than the limit of {MAX_ARRAY_BYTES} bytes per array)"
        )
    } else {
        format!("out of memory: {bytes} bytes for {what}")
    }
}

/// Reserves room for `additional` more elements in `v` (exactly), or the
/// out-of-memory message.
pub(crate) fn try_reserve<T>(v: &mut Vec<T>, additional: usize, what: &str) -> Result<(), String> {
    let elem = std::mem::size_of::<T>().max(1) as u128;
    let bytes = (v.len() as u128 + additional as u128) * elem;
    if bytes > MAX_ARRAY_BYTES {
        return Err(out_of_memory(bytes, what));
    }
    v.try_reserve_exact(additional)
        .map_err(|_| out_of_memory(bytes, what))
}

/// An empty vector with room for `n` elements, or the out-of-memory message.
pub(crate) fn try_with_capacity<T>(n: usize, what: &str) -> Result<Vec<T>, String> {
    let mut v = Vec::new();
    try_reserve(&mut v, n, what)?;
    Ok(v)
}

/// The number of elements of an array of `shape` with `elem_bytes`-byte
/// elements, or the out-of-memory message when it overflows or exceeds
/// [`MAX_ARRAY_BYTES`] (checked before anything is allocated).
pub(crate) fn checked_elems(shape: &[i64], elem_bytes: usize, what: &str) -> Result<usize, String> {
    let mut n: u128 = 1;
    for &d in shape {
        n = n.saturating_mul(d.max(0) as u128);
    }
    let bytes = n.saturating_mul(elem_bytes.max(1) as u128);
    if bytes > MAX_ARRAY_BYTES || n > usize::MAX as u128 {
        return Err(out_of_memory(bytes, what));
    }
    Ok(n as usize)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn huge_sizes_are_refused_before_allocating() {
        let e = try_with_capacity::<f64>(1 << 50, "a test").unwrap_err();
        assert!(e.starts_with("out of memory: 9007199254740992 bytes for a test"));
        assert!(checked_elems(&[i64::MAX, i64::MAX], 8, "x").is_err());
        assert_eq!(checked_elems(&[3, 4], 8, "x"), Ok(12));
        assert_eq!(checked_elems(&[i64::MAX, 0], 8, "x"), Ok(0));
    }

    #[test]
    fn small_sizes_are_allocated() {
        let v = try_with_capacity::<u8>(100, "a test").unwrap();
        assert!(v.capacity() >= 100);
    }
}
