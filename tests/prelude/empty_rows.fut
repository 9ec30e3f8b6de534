-- A SOAC over an array with no rows still has the rows' shape: the row
-- sizes come from the input's type, not from a first row.
-- ==
-- entry: inc_rows
-- input { empty([0][3]f64) } output { empty([0][3]f64) }
-- input { [[1.0, 2.0], [3.0, 4.0]] } output { [[2.0, 3.0], [4.0, 5.0]] }

entry inc_rows (xss: [][]f64) = map (map (+ 1)) xss

-- ==
-- entry: pairs
-- input { empty([0][2][4]i32) } output { empty([0][2][4]i32) empty([0][4]i32) }

entry pairs (xsss: [][][]i32) =
  (map (map (map (* 2))) xsss, map (\xss -> map2 (+) xss[0] xss[1]) xsss)
