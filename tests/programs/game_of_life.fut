-- Conway's game of life on a bounded grid (cells outside are dead).
-- ==
-- input { [[0, 0, 0, 0, 0], [0, 0, 1, 0, 0], [0, 0, 1, 0, 0], [0, 0, 1, 0, 0], [0, 0, 0, 0, 0]] 1 }
-- output { [[0, 0, 0, 0, 0], [0, 0, 0, 0, 0], [0, 1, 1, 1, 0], [0, 0, 0, 0, 0], [0, 0, 0, 0, 0]] }
-- input { [[0, 0, 0, 0, 0], [0, 0, 1, 0, 0], [0, 0, 1, 0, 0], [0, 0, 1, 0, 0], [0, 0, 0, 0, 0]] 2 }
-- output { [[0, 0, 0, 0, 0], [0, 0, 1, 0, 0], [0, 0, 1, 0, 0], [0, 0, 1, 0, 0], [0, 0, 0, 0, 0]] }
-- input { [[0, 1, 0, 0, 0, 0], [0, 0, 1, 0, 0, 0], [1, 1, 1, 0, 0, 0], [0, 0, 0, 0, 0, 0], [0, 0, 0, 0, 0, 0], [0, 0, 0, 0, 0, 0]] 4 }
-- output { [[0, 0, 0, 0, 0, 0], [0, 0, 1, 0, 0, 0], [0, 0, 0, 1, 0, 0], [0, 1, 1, 1, 0, 0], [0, 0, 0, 0, 0, 0], [0, 0, 0, 0, 0, 0]] }
-- input { [[1, 1, 0], [1, 1, 0], [0, 0, 0]] 3 } output { [[1, 1, 0], [1, 1, 0], [0, 0, 0]] }

def step [n] [m] (g: [n][m]i32) : [n][m]i32 =
  tabulate_2d n m (\i j ->
    let cell (di: i64) (dj: i64) : i32 =
      let y = i + di
      let x = j + dj
      in if y >= 0 && y < n && x >= 0 && x < m then g[y, x] else 0
    let neighbours =
      cell (-1) (-1) + cell (-1) 0 + cell (-1) 1
      + cell 0 (-1) + cell 0 1
      + cell 1 (-1) + cell 1 0 + cell 1 1
    let alive = g[i, j] == 1
    in if neighbours == 3 || (alive && neighbours == 2) then 1 else 0)

def main [n] [m] (g: [n][m]i32) (steps: i32) : [n][m]i32 =
  loop g for _i < steps do step g
