-- A function in a functor's body may not return a top-level array (its
-- result may alias only its parameters), whatever module the functor is
-- applied to.
-- ==
-- error: Function result aliases the free variable "table"

def table : []i32 = [1, 2, 3]

module lookup (P: {val scale : i32}) = {
  def entries (k: i32) : []i32 = if k == P.scale then table else []
}

module L = lookup {def scale : i32 = 2}

entry main (k: i32) : i64 = length (L.entries k)
