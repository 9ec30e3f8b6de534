-- Integer division and remainder by zero are run-time errors.
-- ==
-- input { 7 2 } output { 3 1 3 1 }
-- input { 1 0 } error: [Dd]ivision by zero|[Dd]ivide by zero|[Zz]ero
-- input { 0 0 } error: [Dd]ivision by zero|[Dd]ivide by zero|[Zz]ero

def main (a: i32) (b: i32) : (i32, i32, i32, i32) = (a / b, a % b, a // b, a %% b)

-- ==
-- entry: rem_only
-- input { 5i64 0i64 } error: [Dd]ivision by zero|[Dd]ivide by zero|[Zz]ero

entry rem_only (a: i64) (b: i64) : i64 = a % b

-- ==
-- entry: unsigned
-- input { 5u8 0u8 } error: [Dd]ivision by zero|[Dd]ivide by zero|[Zz]ero

entry unsigned (a: u8) (b: u8) : u8 = a / b

-- Float division by zero is not an error.
-- ==
-- entry: float_ok
-- input { 1.0 0.0 } output { true }

entry float_ok (a: f64) (b: f64) : bool = f64.isinf (a / b)
