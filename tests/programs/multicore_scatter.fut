-- Scatters, which multicore C runs in parallel (issue 31): each thread
-- writes the cells of its own part of the destination, reading every
-- index in the order of the rows, so a cell written more than once gets
-- its last write, as sequentially. Repeated and out-of-range indices, a
-- scatter of rows and a two-dimensional one. Expected values by hand;
-- the corpus runs them with every level parallel from 2 rows on, on 1, 2
-- and 3 threads.
-- ==
-- entry: last_write_wins
-- input { [0i64, 0i64, 0i64, 0i64, 0i64]
--         [4i64, 1i64, 4i64, -1i64, 5i64, 1i64, 0i64, 4i64]
--         [10i64, 20i64, 30i64, 40i64, 50i64, 60i64, 70i64, 80i64] }
-- output { [70i64, 60i64, 0i64, 0i64, 80i64] }

-- ==
-- entry: rows
-- input { [[1i64, 1i64], [2i64, 2i64], [3i64, 3i64]]
--         [2i64, 0i64, 2i64, 3i64]
--         [[5i64, 6i64], [7i64, 8i64], [9i64, 10i64], [11i64, 12i64]] }
-- output { [[7i64, 8i64], [2i64, 2i64], [9i64, 10i64]] }

-- ==
-- entry: grid
-- input { [[0.0, 0.0, 0.0], [0.0, 0.0, 0.0]]
--         [1i64, 0i64, 1i64, 2i64, 0i64]
--         [2i64, 1i64, 2i64, 0i64, -1i64]
--         [1.5, 2.5, 3.5, 4.5, 5.5] }
-- output { [[0.0, 2.5, 0.0], [0.0, 0.0, 3.5]] }

entry last_write_wins [n] [k] (xs: *[n]i64) (is: [k]i64) (vs: [k]i64) : [n]i64 =
  scatter xs is vs

entry rows [n] [k] (xss: *[n][2]i64) (is: [k]i64) (vss: [k][2]i64) : [n][2]i64 =
  scatter xss is vss

entry grid [n] [m] [k] (g: *[n][m]f64) (is: [k]i64) (js: [k]i64) (vs: [k]f64) : [n][m]f64 =
  scatter_2d g (zip is js) vs
