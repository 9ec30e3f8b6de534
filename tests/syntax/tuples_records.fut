-- Tuples and tuple projection (.0), records: construction, field
-- access, nested access, `with` update (also nested), and punning.
-- ==
-- input { 3 -4 } output { -1 7 96 56 6 }
-- input { 0 0 } output { 0 0 100 56 1 }

type point = {x: i32, y: i32}

def norm1 (p: point) : i32 = i32.abs p.x + i32.abs p.y

def main (a: i32) (b: i32) : (i32, i32, i32, i32, i32) =
  let t = (a, b, a + b)
  let r : point = {x = a, y = b}
  let r2 = r with x = 100
  let x = 7
  let y = 8
  let punned : point = {x, y}
  let nested = {inner = {v = a * 2}, w = t.2}
  let nested2 = nested with inner.v = 1
  in ( t.0 + t.1
     , norm1 r
     , r2.x + r2.y
     , punned.x * punned.y
     , nested.inner.v + nested.w + nested2.inner.v
     )

-- Tuples are records with numeric field names.
-- ==
-- entry: tuple_as_record
-- input { 4 } output { 5 true }

entry tuple_as_record (a: i32) : (i32, bool) =
  let r : {0: i32, 1: bool} = (a + 1, a > 0)
  in (r.0, r.1)
