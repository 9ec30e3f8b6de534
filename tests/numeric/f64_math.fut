-- f64 elementary functions (results to about 10 significant digits).
-- ==
-- entry: roots_logs
-- input { 2.0 } output { 1.414213562 1.25992105 7.389056099 0.6931471806 1.0 0.3010299957 1.098612289 }
-- input { 8.0 } output { 2.828427125 2.0 2980.957987 2.079441542 3.0 0.903089987 2.197224577 }

entry roots_logs (x: f64) : (f64, f64, f64, f64, f64, f64, f64) =
  (f64.sqrt x, f64.cbrt x, f64.exp x, f64.log x, f64.log2 x, f64.log10 x, f64.log1p x)

-- ==
-- entry: trig
-- input { 0.5 } output { 0.4794255386 0.8775825619 0.5463024898 0.5235987756 1.047197551 0.463647609 }
-- input { 0.0 } output { 0.0 1.0 0.0 0.0 1.570796327 0.0 }

entry trig (x: f64) : (f64, f64, f64, f64, f64, f64) =
  (f64.sin x, f64.cos x, f64.tan x, f64.asin x, f64.acos x, f64.atan x)

-- ==
-- entry: hyper
-- input { 0.5 } output { 0.5210953055 1.127625965 0.4621171573 0.4812118251 0.5493061443 }
-- input { 0.0 } output { 0.0 1.0 0.0 0.0 0.0 }

entry hyper (x: f64) : (f64, f64, f64, f64, f64) =
  (f64.sinh x, f64.cosh x, f64.tanh x, f64.asinh x, f64.atanh x)

-- ==
-- entry: acosh
-- input { 2.0 } output { 1.316957897 }
-- input { 1.0 } output { 0.0 }

entry acosh (x: f64) : f64 = f64.acosh x

-- ==
-- entry: binary
-- input { 1.0 -1.0 } output { 2.35619449 1.414213562 1.0 }
-- input { 3.0 4.0 } output { 0.6435011088 5.0 81.0 }

entry binary (y: f64) (x: f64) : (f64, f64, f64) = (f64.atan2 y x, f64.hypot y x, y ** x)

-- ==
-- entry: special_fns
-- input { 5.0 } output { 24.0 3.17805383 1.0 1.537459794e-12 }
-- input { 0.5 } output { 1.772453851 0.5723649429 0.5204998778 0.4795001222 }
-- input { 1.5 } output { 0.8862269255 -0.1207822376 0.9661051465 0.03389485352 }
-- input { -0.5 } output { -3.544907702 1.265512123 -0.5204998778 1.520499878 }

entry special_fns (x: f64) : (f64, f64, f64, f64) =
  (f64.gamma x, f64.lgamma x, f64.erf x, f64.erfc x)

-- ==
-- entry: fused
-- input { 2.0 3.0 4.0 } output { 10.0 10.0 2.25 }
-- input { -1.5 2.0 0.5 } output { -2.5 -2.5 -0.625 }

entry fused (a: f64) (b: f64) (c: f64) : (f64, f64, f64) =
  (f64.fma a b c, f64.mad a b c, f64.lerp a b 0.25)

-- ==
-- entry: bits
-- input { 1.0 4611686018427387904u64 } output { 4607182418800017408u64 2.0 13826050856027422720u64 }

entry bits (x: f64) (b: u64) : (u64, f64, u64) = (f64.to_bits x, f64.from_bits b, f64.to_bits (-0.5))
