-- The field of a record from the enclosing function cannot take the type
-- parameter of a local function: it is bound in a deeper scope.
-- ==
-- error: "t".*scope-violation

def pick x =
  let choose 't (a: t) = if true then a else x.1
  let (_: f32, _: bool) = x
  in choose
