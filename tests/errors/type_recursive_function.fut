-- Futhark has no recursion: a function is not in scope in its own body,
-- and the message says why.
-- ==
-- error: cannot be recursive

def fact (n: i64) : i64 = if n <= 1 then 1 else n * fact (n - 1)

def main (n: i64) = fact n
