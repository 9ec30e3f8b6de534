-- Type abbreviations: plain, with a type parameter, with a size
-- parameter, and nested uses.
-- ==
-- input { 1 2 [1.0, 2.0, 3.0] } output { 2 1 14.0 3i64 }
-- input { -5 0 [0.5] } output { 0 -5 0.25 1i64 }

type pair 'a = (a, a)
type vec [n] = [n]f64
type intpair = pair i32
type len = i64

def swap 'a (p: pair a) : pair a = (p.1, p.0)

def dot [n] (a: vec [n]) (b: vec [n]) : f64 = reduce (+) 0 (map2 (*) a b)

def size [n] (_: vec [n]) : len = n

def main (x: i32) (y: i32) (a: []f64) : (i32, i32, f64, i64) =
  let q : intpair = swap (x, y)
  in (q.0, q.1, dot a a, size a)
