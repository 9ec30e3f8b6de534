-- One leapfrog-style step of an n-body simulation with softening, using
-- records for 3-vectors.
-- ==
-- input { [0.0, 1.0, 0.0] [0.0, 0.0, 2.0] [0.0, 0.0, 0.0]
--         [0.0, 0.0, 0.5] [0.0, 1.0, 0.0] [0.0, 0.0, 0.0]
--         [10.0, 1.0, 2.0] 0.1 0.01 }
-- output { [0.009998500187, 0.8982261974, 0.05089440036]
--          [0.004999812506, 0.1035776014, 1.973212137]
--          [0.0, 0.0, 0.0]
--          [0.09998500187, -1.017738026, 0.5089440036]
--          [0.04999812506, 1.035776014, -0.2678786325]
--          [0.0, 0.0, 0.0] }

type v3 = {x: f64, y: f64, z: f64}

def vadd (a: v3) (b: v3) : v3 = {x = a.x + b.x, y = a.y + b.y, z = a.z + b.z}
def vsub (a: v3) (b: v3) : v3 = {x = a.x - b.x, y = a.y - b.y, z = a.z - b.z}
def vscale (s: f64) (a: v3) : v3 = {x = s * a.x, y = s * a.y, z = s * a.z}
def vdot (a: v3) (b: v3) : f64 = a.x * b.x + a.y * b.y + a.z * b.z
def zero : v3 = {x = 0.0, y = 0.0, z = 0.0}

def accel (eps: f64) (pi: v3) (pj: v3) (mj: f64) : v3 =
  let r = vsub pj pi
  let d2 = vdot r r + eps * eps
  let inv = 1.0 / (d2 * f64.sqrt d2)
  in vscale (mj * inv) r

def step [n] (dt: f64) (eps: f64) (ps: [n]v3) (vs: [n]v3) (ms: [n]f64) : ([n]v3, [n]v3) =
  let acc = map (\p -> reduce vadd zero (map2 (accel eps p) ps ms)) ps
  let vs' = map2 (\v a -> vadd v (vscale dt a)) vs acc
  let ps' = map2 (\p v -> vadd p (vscale dt v)) ps vs'
  in (ps', vs')

def main [n] (xs: [n]f64) (ys: [n]f64) (zs: [n]f64)
             (vx: [n]f64) (vy: [n]f64) (vz: [n]f64)
             (ms: [n]f64) (dt: f64) (eps: f64)
           : ([n]f64, [n]f64, [n]f64, [n]f64, [n]f64, [n]f64) =
  let ps = map3 (\x y z -> {x, y, z}) xs ys zs
  let vs = map3 (\x y z -> {x, y, z}) vx vy vz
  let (ps', vs') = step dt eps ps vs ms
  in ( map (.x) ps', map (.y) ps', map (.z) ps'
     , map (.x) vs', map (.y) vs', map (.z) vs' )
