-- Declared results with existential sizes the body gives consistently,
-- also through type abbreviations with existential sizes of their own.
-- ==
-- input { 3i64 } output { 52i64 3i64 4i64 }

type grid [n] 'a = [n][n]a
type~ tagged [n] = {cells: [n][n]i64, tags: []bool}
type~ any_tagged = tagged []

def square (k: i64) : grid [] i64 = replicate (k + 1) (replicate (k + 1) k)

def tag (k: i64) : any_tagged = {cells = square k, tags = replicate k true}

def main (k: i64) =
  let g = square k
  let t = tag k
  in (i64.sum (flatten g) + 4, length t.tags, length t.cells)
