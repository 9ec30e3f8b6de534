-- Sum types under AD: a tangent or adjoint of a sum-typed value has the
-- constructor of its primal value (the tag is not differentiated), and
-- the payload of that constructor carries the derivative.  Constructors
-- are numbered in sorted order (#none = 0, #some = 1; #circle = 0,
-- #rect = 1), so a tag that were differentiated like an integer (giving 0)
-- would show up as #none / #circle below.  Values by hand.

type opt = #none | #some f64
type shape = #circle f64 | #rect f64 f64

def unopt (o: opt) : f64 = match o case #some a -> a case #none -> -1

def sq (o: opt) : f64 = match o case #some a -> a * a case #none -> 0

def sqrt_pos (x: f64) : opt = if x > 0 then #some (x * x) else #none

def area (s: shape) : f64 =
  match s
  case #circle r -> 3 * r * r
  case #rect w h -> w * h

def dims (s: shape) : (f64, f64) =
  match s
  case #circle r -> (r, -1)
  case #rect w h -> (w, h)

-- vjp: the adjoint of an #some argument is #some (d/da a*a = 2a); of a
-- two-payload constructor, that constructor (d(w*h) = (h, w)).
-- ==
-- entry: vjp_scalar
-- input { 3.0 } output { 6.0 5.0 2.0 }

entry vjp_scalar (x: f64) =
  let g = vjp sq (#some x) 1
  let (dw, dh) = dims (vjp area (#rect 2 5) x)
  in (unopt g, dw / x, dh / x)

-- jvp: the tangent of a sum-typed result has the result's constructor:
-- d/dx x*x = 2x under #some; #none when the primal is #none.
-- ==
-- entry: jvp_result
-- input { 3.0 } output { 6.0 -1.0 9.0 6.0 }

entry jvp_result (x: f64) =
  let t = jvp sqrt_pos x 1
  let n = jvp sqrt_pos (-x) 1
  let (p, q) = jvp2 sqrt_pos x 1
  in (unopt t, unopt n, unopt p, unopt q)

-- jvp with a sum-typed argument: the tangent #some 1 (whatever its
-- constructor) is read under the primal's constructor.
-- ==
-- entry: jvp_arg
-- input { 3.0 } output { 6.0 2.0 }

entry jvp_arg (x: f64) =
  ( jvp sq (#some x) (#some 1)
  , jvp area (#rect x 2) (#rect 1 0) )

-- Arrays of sums and sums inside tuples: each element's adjoint has that
-- element's constructor (#none elements get #none: -1 below).
-- vjp2 also returns the primal result, s * a = x * 2x.
-- ==
-- entry: vjp_structured
-- input { 3.0 } output { [6.0, -1.0, 4.0] 18.0 6.0 3.0 }

entry vjp_structured (x: f64) =
  let os : [3]opt = [#some x, #none, #some 2]
  let g = vjp (\(v: [3]opt) -> f64.sum (map sq v)) os 1
  let (p, (ds, dopt)) = vjp2 (\(s: f64, o: opt) -> match o case #some a -> s * a case #none -> s)
                             (x, #some (2 * x)) 1
  in (map unopt g, p, ds, unopt dopt)

-- The tangent of a (f64, opt) result: the first component is d(x*x),
-- the second has the constructor of the primal (#some, payload 3).
-- ==
-- entry: jvp_tuple
-- input { 3.0 } output { 6.0 3.0 }

entry jvp_tuple (x: f64) =
  let (a, o) = jvp (\y -> (y * y, (#some (3 * y) : opt))) x 1
  in (a, unopt o)
