-- GradBench `ba` (ADBench bundle adjustment): the residuals and the sparse
-- Jacobian, built from reverse-mode AD of the per-observation residual
-- (a 2 x 15 block per observation) and of the weight residual.
--
-- Camera parameters: r (0..2, Rodrigues rotation vector), C (3..5, camera
-- centre), f (6), u0 v0 (7, 8), k1 k2 (9, 10).  Observation i pairs camera
-- obs[i][0] with point obs[i][1].

def dot (a: [3]f64) (b: [3]f64) : f64 = a[0] * b[0] + a[1] * b[1] + a[2] * b[2]

def cross (a: [3]f64) (b: [3]f64) : [3]f64 =
  [a[1] * b[2] - a[2] * b[1], a[2] * b[0] - a[0] * b[2], a[0] * b[1] - a[1] * b[0]]

-- Rotates y by the axis-angle vector r (Rodrigues' formula; its first-order
-- form when the angle is 0).
def rodrigues (r: [3]f64) (y: [3]f64) : [3]f64 =
  let sqtheta = dot r r
  in if sqtheta != 0.0 then
       let theta = f64.sqrt sqtheta
       let c = f64.cos theta
       let s = f64.sin theta
       let w = map (/ theta) r
       let wxy = cross w y
       let k = dot w y * (1.0 - c)
       in map3 (\yi ci wi -> yi * c + ci * s + wi * k) y wxy w
     else map2 (+) y (cross r y)

def project (cam: [11]f64) (x: [3]f64) : [2]f64 =
  let y = map2 (-) x [cam[3], cam[4], cam[5]]
  let z = rodrigues [cam[0], cam[1], cam[2]] y
  let p0 = z[0] / z[2]
  let p1 = z[1] / z[2]
  let rsq = p0 * p0 + p1 * p1
  let distortion = 1.0 + cam[9] * rsq + cam[10] * rsq * rsq
  in [cam[6] * p0 * distortion + cam[7], cam[6] * p1 * distortion + cam[8]]

def reproj_error (cam: [11]f64) (x: [3]f64) (w: f64) (feat: [2]f64) : [2]f64 =
  map2 (\pi fi -> w * (pi - fi)) (project cam x) feat

def weight_error (w: f64) : f64 = 1.0 - w * w

entry objective [n] [m] [p]
                (cams: [n][11]f64) (pts: [m][3]f64) (ws: [p]f64)
                (feats: [p][2]f64) (obs: [p][2]i64) : ([p][2]f64, [p]f64) =
  let reproj = map3 (\o w f -> reproj_error cams[o[0]] pts[o[1]] w f) obs ws feats
  in (reproj, map weight_error ws)

-- The Jacobian of all residuals (2p reprojection rows, then p weight rows)
-- with respect to (cameras, points, weights), in compressed sparse row form:
-- row pointers, column indices and values.  A reprojection row has 15
-- non-zeros (camera, point, weight), a weight row one.
entry jacobian [n] [m] [p]
               (cams: [n][11]f64) (pts: [m][3]f64) (ws: [p]f64)
               (feats: [p][2]f64) (obs: [p][2]i64) : ([]i64, []i64, []f64) =
  let block (o: [2]i64) (w: f64) (f: [2]f64) : [30]f64 =
    let r (cam, x, w') = reproj_error cam x w' f
    let row (seed: [2]f64) : [15]f64 =
      let (dcam, dx, dw) = vjp r (cams[o[0]], pts[o[1]], w) seed
      in sized 15 (dcam ++ dx ++ [dw])
    in sized 30 (row [1.0, 0.0] ++ row [0.0, 1.0])
  let reproj_vals = flatten (map3 block obs ws feats)
  let weight_vals = map (\w -> vjp weight_error w 1.0) ws
  let row_cols (i: i64) : [15]i64 =
    let c = obs[i][0]
    let j = obs[i][1]
    in sized 15 (map (\k -> 11 * c + k) (iota 11)
                 ++ map (\k -> 11 * n + 3 * j + k) (iota 3)
                 ++ [11 * n + 3 * m + i])
  let reproj_cols = flatten (map (\i -> let cs = row_cols i in sized 30 (cs ++ cs)) (iota p))
  let weight_cols = map (\i -> 11 * n + 3 * m + i) (iota p)
  let rows = map (\r -> if r <= 2 * p then 15 * r else 30 * p + (r - 2 * p)) (iota (3 * p + 1))
  in (rows, reproj_cols ++ weight_cols, reproj_vals ++ weight_vals)
