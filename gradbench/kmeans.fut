-- GradBench `kmeans`: the k-means cost and the Newton direction
-- J / diag(H), with the gradient J by reverse-mode AD and the Hessian
-- diagonal by forward-over-reverse AD.
--
-- The Hessian of the cost is diagonal, so its diagonal is the
-- Hessian-vector product with the all-ones vector: the `jvp` of the
-- gradient function in direction 1.

def sqdist [d] (a: [d]f64) (b: [d]f64) : f64 =
  f64.sum (map2 (\x y -> (x - y) * (x - y)) a b)

def kmeans_cost [n] [k] [d] (points: [n][d]f64) (centroids: [k][d]f64) : f64 =
  f64.sum (map (\p -> f64.minimum (map (sqdist p) centroids)) points)

entry cost [n] [k] [d] (points: [n][d]f64) (centroids: [k][d]f64) : f64 =
  kmeans_cost points centroids

entry dir [n] [k] [d] (points: [n][d]f64) (centroids: [k][d]f64) : [k][d]f64 =
  let grad (c: [k][d]f64) : [k][d]f64 = vjp (kmeans_cost points) c 1.0
  let ones = replicate k (replicate d 1.0)
  let (j, h) = jvp2 grad centroids ones
  in map2 (map2 (/)) j h
