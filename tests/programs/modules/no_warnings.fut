-- A program with modules and module types that warrants no warning.
-- ==
-- warning: ^$
-- input { 2i32 } output { 5i32 }

module type shift = { val by : i32 }

module Three : shift = { def by = 3i32 }

entry main (x: i32) : i32 = x + Three.by
