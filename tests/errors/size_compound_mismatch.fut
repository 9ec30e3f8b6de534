-- Sizes in types may be expressions (`[n + 1]`), compared as Futhark does:
-- syntactically. `iota n` has size `n`, which is not `n + 1`.
-- ==
-- error: Sizes "n \+ 1" and "n" do not match

def main (n: i64) : [n + 1]i64 = iota n
