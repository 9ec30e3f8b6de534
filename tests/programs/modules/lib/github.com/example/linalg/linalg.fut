-- A library file (no test block) importing its sibling relative to
-- itself and building on the functor defined there.

import "vector"
import "../util/scalar"

-- Local to this file: importers cannot name it, but the functor's
-- instances (made in the importing files) still use it.
local def twice 'a (f: a -> a) (x: a) : a = f (f x)

module mk_linalg (R: real) = {
  module V = mk_vector R
  module S = mk_scalar R
  def norm [n] (xs: [n]R.t) : R.t = R.sqrt (R.sum (map S.square xs))
  def quad [n] (xs: [n]R.t) : [n]R.t = twice (map (R.* R.i32 2)) xs
  def matvec [n][m] (a: [n][m]R.t) (x: [m]R.t) : [n]R.t = map (\row -> V.dot row x) a
}

-- A module bound to an import, used from importers as `Vectors.mk_vector`.
module Vectors = import "vector"

-- Local to this file: importers cannot name it, but the functor's
-- instances (made in the importing files) still use it.
local def twice 'a (f: a -> a) (x: a) : a = f (f x)
