-- A loop parameter declared with a non-unique type may not be updated in
-- place (declare it `*[]i64`).
-- ==
-- error: Consuming variable "acc", which is not consumable: it is a loop parameter whose declared type is not unique

def main (n: i64) : []i64 =
  loop (acc: []i64) = iota n for i < n do
    acc with [i] = i * i
