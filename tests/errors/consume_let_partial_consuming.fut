-- Binding a partial application of a consuming function consumes its
-- argument when the binding is evaluated; the function could then be
-- applied twice, so Futhark forbids the binding.
-- ==
-- error: Let-bound expression of higher-order type contains consumption, which is not allowed: evaluating it consumes variable "buf"

def put (dst: *[]i64) (i: i64) (v: i64) : *[]i64 = dst with [i] = v

def main (buf: *[]i64) : []i64 =
  let set_at = put buf
  in set_at 0 42
