-- GradBench `lstm` (ADBench's "diagonal" LSTM): the objective, and its
-- gradient with respect to the main and extra parameters by reverse-mode
-- AD.
--
-- main_params has two rows per layer (weights, biases), each four blocks
-- of b values in gate order forget, input, output, cell candidate.

def sigmoid (x: f64) : f64 = 1.0 / (1.0 + f64.exp (-x))

-- Block g (0..3) of a row of 4b parameters.
def block [b4] (b: i64) (row: [b4]f64) (g: i64) : [b]f64 =
  map (\j -> row[g * b + j]) (iota b)

-- One layer's cell: input v, previous hidden state h and cell state c.
def cell [b] [b4] (weights: [b4]f64) (biases: [b4]f64)
                  (v: [b]f64) (h: [b]f64) (c: [b]f64) : (*[b]f64, *[b]f64) =
  let w = block b weights
  let bs = block b biases
  let forget = map3 (\vi wi bi -> sigmoid (vi * wi + bi)) v (w 0) (bs 0)
  let ingate = map3 (\hi wi bi -> sigmoid (hi * wi + bi)) h (w 1) (bs 1)
  let outgate = map3 (\vi wi bi -> sigmoid (vi * wi + bi)) v (w 2) (bs 2)
  let change = map3 (\hi wi bi -> f64.tanh (hi * wi + bi)) h (w 3) (bs 3)
  let c' = map4 (\ci fi gi zi -> ci * fi + gi * zi) c forget ingate change
  let h' = map2 (\oi ci -> oi * f64.tanh ci) outgate c'
  in (h', c')

def lstm_objective [l2] [b4] [b] [c]
                   (main_params: [l2][b4]f64) (extra_params: [3][b]f64)
                   (state: [l2][b]f64) (sequence: [c][b]f64) : f64 =
  let layers = l2 / 2
  let w_in = extra_params[0]
  let w_out = extra_params[1]
  let b_out = extra_params[2]
  let hs0 = map (\i -> state[2 * i]) (iota layers)
  let cs0 = map (\i -> state[2 * i + 1]) (iota layers)
  let (_, _, total) =
    loop (hs, cs, total) = (hs0, cs0, 0.0) for t < c - 1 do
      let v0 = map2 (*) sequence[t] w_in
      let (hs', cs', v) =
        loop (hs, cs, v) = (hs, cs, v0) for i < layers do
          let (h, c') = cell main_params[2 * i] main_params[2 * i + 1] v hs[i] cs[i]
          in (hs with [i] = h, cs with [i] = c', h)
      let y = map3 (\vi wi bi -> vi * wi + bi) v w_out b_out
      let lse = f64.log (f64.sum (map f64.exp y) + 2.0)
      let ll = f64.sum (map2 (\target yi -> target * (yi - lse)) sequence[t + 1] y)
      in (hs', cs', total + ll)
  in -total / f64.i64 ((c - 1) * b)

entry objective [l2] [b4] [b] [c]
                (main_params: [l2][b4]f64) (extra_params: [3][b]f64)
                (state: [l2][b]f64) (sequence: [c][b]f64) : f64 =
  lstm_objective main_params extra_params state sequence

entry jacobian [l2] [b4] [b] [c]
               (main_params: [l2][b4]f64) (extra_params: [3][b]f64)
               (state: [l2][b]f64) (sequence: [c][b]f64) : ([l2][b4]f64, [3][b]f64) =
  vjp (\(mp, ep) -> lstm_objective mp ep state sequence) (main_params, extra_params) 1.0
