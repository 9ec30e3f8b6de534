-- Helper library imported by ../import.fut.  It has no test block, so it
-- is not a test program itself.

def square (x: i32) : i32 = x * x

def twice 'a (f: a -> a) (x: a) : a = f (f x)

type pair 'a = (a, a)

def swap_pair 'a (p: pair a) : pair a = (p.1, p.0)
