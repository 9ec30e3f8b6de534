-- A top-level `local` declaration of an imported file is not visible to
-- the importer.
-- ==
-- error: Unknown name "twice"

import "../programs/modules/lib/github.com/example/linalg/linalg"

def main (x: f64) : f64 = twice f64.sqrt x
