-- Reverse mode through sequential code inside a map's lambda that reads
-- arrays bound outside the map: a `for` or `while` loop, a branch inside
-- such a loop, and slices. The adjoints of those free arrays go to
-- accumulators (Schenck et al., SC22, §5.4), which the reversed loop threads through
-- its iterations and which a slice's adjoint updates row by row. The
-- expected gradients were checked against central finite differences.

-- A matrix-vector product written as a loop per row.
def matvec_loop [n][m] (a: [n][m]f64) (x: [m]f64) : [n]f64 =
  map (\i -> loop acc = 0 for j < m do acc + a[i, j] * f64.sin x[j]) (iota n)

-- ==
-- entry: grad_matvec
-- input { [[1.0, 2.0, 3.0, 4.0], [0.5, -1.0, 2.0, 0.3], [3.0, 1.0, -2.0, 0.7]]
--         [0.5, 1.5, -0.3, 2.0] }
-- output { [[5.010039642338743, 10.423911584831568, -3.0882125194998307, 9.502239218078525],
--           [-1.0317557871731133, -2.146675848977975, 0.6359792270080761, -1.9568688082833663],
--           [3.512578533849261, 7.308287096612632, -2.1651702937216424, 6.662095289398207]]
--          [27.515703533766036, 2.1489173592997974, 11.839344796032991, -19.260684274010796] }
entry grad_matvec (a: [3][4]f64) (x: [4]f64) =
  vjp (\(a, x) -> f64.sum (map (\y -> y * y) (matvec_loop a x))) (a, x) 1

-- The loop's body branches on the free array.
def branchy [m] (x: [m]f64) : f64 =
  f64.sum (map (\i -> loop acc = 1 for j < m do
                        if x[j] > x[i] then acc * x[j] else acc + x[(i + j) % m])
               (iota m))

-- ==
-- entry: grad_branchy
-- input { [0.5, 1.5, -0.3, 2.0, 0.7] }
-- output { [6.2, 11.2, 4.4, 14.63, 12.2] }
entry grad_branchy (x: [5]f64) = vjp branchy x 1

-- Slices of the free array, inside a loop and directly.
def windows [m] (x: [m]f64) : f64 =
  f64.sum (map (\i -> loop acc = 0 for j < 2 do
                        acc + f64.sum (map (\v -> v * v) x[i + j:i + j + 2]))
               (iota (m - 3)))

-- ==
-- entry: grad_windows
-- input { [0.5, 1.5, -0.3, 2.0, 0.7, 1.1] }
-- output { [1.0, 9.0, -2.4, 12.0, 1.4, 0.0] }
entry grad_windows (x: [6]f64) = vjp windows x 1

-- Slices of rows and of one row of a free matrix.
def block_sums [n][m] (a: [n][m]f64) : f64 =
  f64.sum (map (\i -> f64.sum (map f64.sum a[i:i + 2]) * f64.sum a[i, 1:3]) (iota (n - 1)))

-- ==
-- entry: grad_block_sums
-- input { [[1.0, 2.0, 3.0, 4.0], [0.5, -1.0, 2.0, 0.3], [3.0, 1.0, -2.0, 0.7]] }
-- output { [[5.0, 16.8, 16.8, 5.0], [6.0, 10.5, 10.5, 6.0], [1.0, 1.0, 1.0, 1.0]] }
entry grad_block_sums (a: [3][4]f64) = vjp block_sums a 1

-- A while loop whose trip count depends on the map's element.
def triangle [m] (x: [m]f64) : f64 =
  f64.sum (map (\i -> let (_, acc) = loop (j, acc) = (0, 0) while j < i do
                                       (j + 1, acc + x[j] * x[i])
                      in acc)
               (iota m))

-- ==
-- entry: grad_triangle
-- input { [0.5, 1.5, -0.3, 2.0, 0.7] }
-- output { [3.9, 2.9, 4.7, 2.4, 3.7] }
entry grad_triangle (x: [5]f64) = vjp triangle x 1

-- Forward mode agrees with reverse mode: the tangent along all ones is
-- the sum of the gradient's entries.
-- ==
-- entry: tangent_branchy
-- input { [0.5, 1.5, -0.3, 2.0, 0.7] }
-- output { 48.63 }
entry tangent_branchy (x: [5]f64) = jvp branchy x (replicate 5 1)

-- ==
-- entry: tangent_triangle
-- input { [0.5, 1.5, -0.3, 2.0, 0.7] }
-- output { 17.6 }
entry tangent_triangle (x: [5]f64) = jvp triangle x (replicate 5 1)

-- A slice of a free array in a dimension other than its last, the
-- dimensions after it indexed (every second plane, column j, component
-- 1): its adjoint goes to the accumulator element by element. The
-- gradient is 3x² at the elements read, zero elsewhere.
def cubes_of_columns (xss: [4][3][2]f64) : f64 =
  f64.sum (map (\j -> f64.sum (map (\x -> x * x * x) xss[1:4:2, j, 1])) (iota 3))

-- ==
-- entry: grad_cubes_of_columns
-- input { [[[-1.05, 0.18], [-0.52, 0.42], [0.5, -1.74]], [[-1.95, 1.35], [-0.96, -1.06], [1.98, -0.12]],
--          [[1.35, -0.09], [0.56, -1.4], [0.54, 1.47]], [[0.09, 0.97], [0.69, -1.74], [1.03, 0.36]]] }
-- output { [[[0.0, 0.0], [0.0, 0.0], [0.0, 0.0]], [[0.0, 5.4675], [0.0, 3.3708], [0.0, 0.0432]],
--           [[0.0, 0.0], [0.0, 0.0], [0.0, 0.0]], [[0.0, 2.8227], [0.0, 9.0828], [0.0, 0.3888]]] }
entry grad_cubes_of_columns (xss: [4][3][2]f64) = vjp cubes_of_columns xss 1
