-- A function whose second parameter's size is its first parameter
-- cannot be passed where a function of an `i64` and an array of one
-- fixed size is expected (`use_pair`'s body makes that size 1): the name
-- `len` means nothing outside the function type.
-- ==
-- error: Sizes "1" and "len" do not match

def use_pair (f: i64 -> []f64 -> f64) (x: f64) : f64 =
  f 1 [x]

def last (len: i64) (xs: [len]f64) : f64 = xs[len - 1]

def main (x: f64) = use_pair last x
