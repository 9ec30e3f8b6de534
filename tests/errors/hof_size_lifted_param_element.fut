-- A size-lifted type parameter (`'~a`) cannot become an array element:
-- its values may have different sizes.
-- ==
-- error: Type `a` is lifted.*array element

def table '~a (f: i64 -> a) : i64 = length (tabulate 3 f)

def main (n: i64) : i64 = table (\i -> i + n)
