-- An entry point whose parameter type is only partly known is polymorphic.
-- ==
-- error: Entry point functions may not be polymorphic: the type of the entry point `first`

entry first xs = xs[0]
