-- The benchmark loop of Jensen 2024 (§4.2, "Not-Quite-Supersonic AD"),
-- without the jvp/vjp branches of its main (d = 0 runs f, anything else
-- gives 0).  The iteration is sensitive to rounding: the expected
-- results assume correctly rounded f32 sin/cos/exp/log1p/pow (which
-- glibc gives here), and reduce folding left from the (non-neutral)
-- start value: ((x*2)*x)*5.
-- ==
-- input { 0 3.0f32 } output { 61.2079391f32 }
-- input { 0 1.0f32 } output { 51.2079391f32 }
-- input { 0 0.5f32 } output { 51.6264381f32 }
-- input { 0 7.25f32 } output { 101.626434f32 }
-- input { 0 42.0f32 } output { 31.6264381f32 }
-- input { 3 3.0f32 } output { 0.0f32 }

def f (x: f32) =
  loop x = x for i < 100000 do
    let s = (i32.f32 (x * 10)) %% 4 in
    if x > 100 then
      if s == 0 then 1 + f32.sin x   else
      if s == 1 then 1 + f32.cos x   else
      if s == 2 then f32.log1p x     else
      if s == 3 then f32.sqrt x      else
      x / 13
    else
      if s == 0 then x + 10          else
      if s == 1 then x ** 3          else
      if s == 2 then f32.exp (x / 10) else
      if s == 3 then reduce (*) x [2, x, 5] else
      x * 1.3

def main (d: i32) (x: f32) =
  if d == 0 then f x
  else 0
