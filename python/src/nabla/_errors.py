"""The exceptions of the nabla package."""


class Error(RuntimeError):
    """A run-time error of a compiled program (an index out of bounds, a
    size that does not match, a failed assertion, running out of memory).
    The message is the program's, with the source location (``at
    FILE:LINE:COL``)."""


class OutOfMemoryError(Error, MemoryError):
    """The program ran out of memory: an allocation past the module's
    memory limit (see :func:`nabla.compile`'s ``memory_limit``) or one the
    system refused. Both an :class:`Error` and a :class:`MemoryError`; the
    message is ``out of memory: N bytes for …`` with the source location."""


class SizeError(Error, ValueError):
    """The argument arrays' sizes do not fit the entry point's size
    parameters (``[n]f64 -> [n]f64 -> …`` called with two lengths). Both an
    :class:`Error` and a :class:`ValueError`."""


class CompileError(Error):
    """The program did not compile (the message is the compiler's), or the
    C compiler failed, or the nabla compiler could not be found."""
