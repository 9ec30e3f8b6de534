-- GradBench `ht` (ADBench hand tracking): residuals between observed
-- points and the points of a skinned, posed hand mesh, and the dense
-- Jacobian by forward-mode AD (one jvp per column).
--
-- simple: residual i = points[i] - vertex[correspondences[i]].
-- complicated: the model point is a barycentric combination (us[i]) of the
-- vertices of triangle correspondences[i]; the Jacobian has two extra
-- leading columns, the derivatives with respect to the residual's own
-- point's barycentric coordinates.

type mat4 = [4][4]f64
type mat3 = [3][3]f64

def matmul [a] [b] [c] (x: [a][b]f64) (y: [b][c]f64) : *[a][c]f64 =
  map (\row -> map (\col -> f64.sum (map2 (*) row col)) (transpose y)) x

-- The 3 x 25 pose matrix, stored as 25 columns: global rotation, scale,
-- translation, then one column per bone (bone b uses column b + 3).
def pose_column (theta: [26]f64) (col: i64) : [3]f64 =
  if col == 0 then [theta[0], theta[1], theta[2]]
  else if col == 1 then [1.0, 1.0, 1.0]
  else if col == 2 then [theta[3], theta[4], theta[5]]
  else if col >= 5 && col < 25 then
    let finger = (col - 5) / 4
    let k = (col - 5) % 4
    let t = 6 + 4 * finger
    in if k == 0 then [theta[t], theta[t + 1], 0.0]
       else if k == 1 then [theta[t + 2], 0.0, 0.0]
       else if k == 2 then [theta[t + 3], 0.0, 0.0]
       else [0.0, 0.0, 0.0]
  else [0.0, 0.0, 0.0]

-- Rz(a[1]) * Ry(a[2]) * Rx(a[0]): the column is read as (x, z, y) angles.
def euler_xzy (a: [3]f64) : mat3 =
  let (cx, sx) = (f64.cos a[0], f64.sin a[0])
  let (cy, sy) = (f64.cos a[2], f64.sin a[2])
  let (cz, sz) = (f64.cos a[1], f64.sin a[1])
  let rx = [[1.0, 0.0, 0.0], [0.0, cx, -sx], [0.0, sx, cx]]
  let ry = [[cy, 0.0, sy], [0.0, 1.0, 0.0], [-sy, 0.0, cy]]
  let rz = [[cz, -sz, 0.0], [sz, cz, 0.0], [0.0, 0.0, 1.0]]
  in matmul rz (matmul ry rx)

-- [[r, 0], [0, 1]].
def homogeneous (r: mat3) : mat4 =
  [[r[0][0], r[0][1], r[0][2], 0.0],
   [r[1][0], r[1][1], r[1][2], 0.0],
   [r[2][0], r[2][1], r[2][2], 0.0],
   [0.0, 0.0, 0.0, 1.0]]

-- Rotation matrix of an axis-angle vector (identity for tiny angles).
def rodrigues_matrix (aa: [3]f64) : mat3 =
  let angle = f64.sqrt (aa[0] * aa[0] + aa[1] * aa[1] + aa[2] * aa[2])
  in if angle < 1e-4 then [[1.0, 0.0, 0.0], [0.0, 1.0, 0.0], [0.0, 0.0, 1.0]]
     else
       let (x, y, z) = (aa[0] / angle, aa[1] / angle, aa[2] / angle)
       let s = f64.sin angle
       let c = f64.cos angle
       in [[x * x + (1.0 - x * x) * c, x * y * (1.0 - c) - z * s, x * z * (1.0 - c) + y * s],
           [x * y * (1.0 - c) + z * s, y * y + (1.0 - y * y) * c, y * z * (1.0 - c) - x * s],
           [x * z * (1.0 - c) - y * s, z * y * (1.0 - c) + x * s, z * z + (1.0 - z * z) * c]]

-- Every vertex of the posed, skinned mesh.
def skinned_vertices [nb] [nv]
                     (parents: [nb]i64) (base_relatives: [nb]mat4)
                     (inverse_base_absolutes: [nb]mat4) (base_positions: [nv][4]f64)
                     (weights: [nv][nb]f64) (is_mirrored: bool)
                     (theta: [26]f64) : [nv][3]f64 =
  let relatives =
    map2 (\b base -> matmul base (homogeneous (euler_xzy (pose_column theta (b + 3)))))
         (iota nb) base_relatives
  let absolutes =
    loop absolutes = copy relatives for b < nb do
      let parent = parents[b]
      in if parent < 0 then absolutes
         else absolutes with [b] = matmul absolutes[parent] relatives[b]
  let transforms = map2 matmul absolutes inverse_base_absolutes
  let skinned =
    map2 (\pos ws ->
            let blended = map (\r -> map (\c -> f64.sum (map2 (\w t -> w * t[r][c]) ws transforms))
                                         (iota 4))
                              (iota 3)
            let v = map (\row -> f64.sum (map2 (*) row pos)) blended
            in if is_mirrored then [-v[0], v[1], v[2]] else v)
         base_positions weights
  let g = rodrigues_matrix [theta[0], theta[1], theta[2]]
  let scale = pose_column theta 1
  let g = map (\row -> map2 (*) row scale) g
  let translation = [theta[3], theta[4], theta[5]]
  in map (\v -> map2 (\row t -> f64.sum (map2 (*) row v) + t) g translation) skinned

def simple_residuals [nb] [nv] [npts]
                     (parents: [nb]i64) (base_relatives: [nb]mat4)
                     (inverse_base_absolutes: [nb]mat4) (base_positions: [nv][4]f64)
                     (weights: [nv][nb]f64) (is_mirrored: bool)
                     (correspondences: [npts]i64) (points: [npts][3]f64)
                     (theta: [26]f64) : [npts * 3]f64 =
  let vs = skinned_vertices parents base_relatives inverse_base_absolutes base_positions
                            weights is_mirrored theta
  in flatten (map2 (\c p -> map2 (-) p vs[c]) correspondences points)

def complicated_residuals [nb] [nv] [nt] [npts]
                          (parents: [nb]i64) (base_relatives: [nb]mat4)
                          (inverse_base_absolutes: [nb]mat4) (base_positions: [nv][4]f64)
                          (weights: [nv][nb]f64) (is_mirrored: bool) (triangles: [nt][3]i64)
                          (correspondences: [npts]i64) (points: [npts][3]f64)
                          (theta: [26]f64) (us: [npts][2]f64) : [npts * 3]f64 =
  let vs = skinned_vertices parents base_relatives inverse_base_absolutes base_positions
                            weights is_mirrored theta
  in flatten (map3 (\c p u ->
                      let tri = triangles[c]
                      let w2 = 1.0 - u[0] - u[1]
                      in map4 (\pi a b c' -> pi - (u[0] * a + u[1] * b + w2 * c'))
                              p vs[tri[0]] vs[tri[1]] vs[tri[2]])
                   correspondences points us)

def unit (i: i64) : [26]f64 = map (\j -> if i == j then 1.0 else 0.0) (iota 26)

entry objective_simple [nb] [nv] [npts]
                       (parents: [nb]i64) (base_relatives: [nb]mat4)
                       (inverse_base_absolutes: [nb]mat4) (base_positions: [nv][4]f64)
                       (weights: [nv][nb]f64) (is_mirrored: bool)
                       (correspondences: [npts]i64) (points: [npts][3]f64)
                       (theta: [26]f64) : [npts * 3]f64 =
  simple_residuals parents base_relatives inverse_base_absolutes base_positions weights
                   is_mirrored correspondences points theta

entry jacobian_simple [nb] [nv] [npts]
                      (parents: [nb]i64) (base_relatives: [nb]mat4)
                      (inverse_base_absolutes: [nb]mat4) (base_positions: [nv][4]f64)
                      (weights: [nv][nb]f64) (is_mirrored: bool)
                      (correspondences: [npts]i64) (points: [npts][3]f64)
                      (theta: [26]f64) : [npts * 3][26]f64 =
  let f = simple_residuals parents base_relatives inverse_base_absolutes base_positions
                           weights is_mirrored correspondences points
  in transpose (map (\t -> jvp f theta (unit t)) (iota 26))

entry objective_complicated [nb] [nv] [nt] [npts]
                            (parents: [nb]i64) (base_relatives: [nb]mat4)
                            (inverse_base_absolutes: [nb]mat4) (base_positions: [nv][4]f64)
                            (weights: [nv][nb]f64) (is_mirrored: bool) (triangles: [nt][3]i64)
                            (correspondences: [npts]i64) (points: [npts][3]f64)
                            (theta: [26]f64) (us: [npts][2]f64) : [npts * 3]f64 =
  complicated_residuals parents base_relatives inverse_base_absolutes base_positions weights
                        is_mirrored triangles correspondences points theta us

entry jacobian_complicated [nb] [nv] [nt] [npts]
                           (parents: [nb]i64) (base_relatives: [nb]mat4)
                           (inverse_base_absolutes: [nb]mat4) (base_positions: [nv][4]f64)
                           (weights: [nv][nb]f64) (is_mirrored: bool) (triangles: [nt][3]i64)
                           (correspondences: [npts]i64) (points: [npts][3]f64)
                           (theta: [26]f64) (us: [npts][2]f64) : [npts * 3][28]f64 =
  let f (th, u) = complicated_residuals parents base_relatives inverse_base_absolutes
                                        base_positions weights is_mirrored triangles
                                        correspondences points th u
  let zero_theta = replicate 26 0.0
  let zero_us = map (\_ -> [0.0, 0.0]) us
  -- Each residual depends only on its own point's (u0, u1), so the
  -- all-u0 and all-u1 directions give the two compressed columns.
  let du0 = jvp f (theta, us) (zero_theta, map (\_ -> [1.0, 0.0]) us)
  let du1 = jvp f (theta, us) (zero_theta, map (\_ -> [0.0, 1.0]) us)
  let dtheta = map (\t -> jvp f (theta, us) (unit t, zero_us)) (iota 26)
  in transpose ([du0, du1] ++ dtheta :> [28][npts * 3]f64)
