-- GradBench `hello`: the square function and its derivative.
--
-- `square x = x * x`; `double x` is d(square)/dx at x, obtained by
-- reverse-mode AD (`vjp`), which is `2 * x`.

def sq (x: f64) : f64 = x * x

entry square (x: f64) : f64 = sq x

entry double (x: f64) : f64 = vjp sq x 1.0
