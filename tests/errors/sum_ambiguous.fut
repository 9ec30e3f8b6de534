-- A sum type known only from the constructors used is ambiguous (it could
-- have more constructors): a type annotation must give the whole type.
-- ==
-- error: Type is ambiguous: a sum type with the constructors #some

def wrap (x: bool) = #some x

def main (x: bool) : bool =
  match wrap x
  case #some y -> y
