-- A parametric module's members can only be used after applying it.
-- ==
-- error: parametric module

module mk (X: { val v: i32 }) = { def w = X.v }

def main (a: i32) : i32 = a + mk.w
