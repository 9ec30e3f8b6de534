-- The benchmark program of Jensen 2024, §4.2 (Not-Quite-Supersonic AD):
-- mode 0 is the primal, 1 forward mode, 2 reverse mode, 3 a constant.
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

entry main (d: i32) (x: f32) =
  if d == 0      then f x
  else if d == 1 then jvp f x 1
  else if d == 2 then vjp f x 1
  else 0
