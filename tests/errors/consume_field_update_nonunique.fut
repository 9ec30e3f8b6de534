-- Updating an array in a field of a record in place consumes the record,
-- which must therefore be consumable.
-- ==
-- error: Consuming variable "r", which is not consumable: it is a parameter whose type is not declared unique

def bump (r: {xs: []i64, n: i64}) : {xs: []i64, n: i64} =
  r with xs[0] = r.n
