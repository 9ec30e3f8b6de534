-- A refinement must have the parameters of the type it refines.
-- ==
-- error: Cannot refine a type having no type parameters with a type having type parameters 'a

module type container = { type box 'a }
module type ints = container with box = []i32

def main (x: i32) = x
