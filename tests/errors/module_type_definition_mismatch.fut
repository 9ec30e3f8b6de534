-- A type that a module type defines (here by a refinement of a nested
-- module's type) must be defined so by the module; the error names the
-- type by its path in the module type.
-- ==
-- error: Module defines\s+type inner.t = i32\s+but module type requires\s+type inner.t = bool

module type has_t = { type t }
module type outer = { module inner: has_t }

module M : outer with inner.t = bool = {
  module inner = { type t = i32 }
}

def main (x: i32) = x
