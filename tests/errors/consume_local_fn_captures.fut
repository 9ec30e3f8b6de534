-- A local function aliases the arrays it refers to.
-- ==
-- error: Using "total", which aliases variable "weights", but this was consumed

def main (weights: *[]f64) : f64 =
  let total (k: f64) = k * f64.sum weights
  let weights[0] = 1
  in total 2 + weights[0]
