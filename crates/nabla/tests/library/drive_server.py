"""Drives a nabla `--server` executable (argv[1]) for tests/library/prog.fut
through futhark_server.Server; prints "ok" when every check holds."""
import sys

import numpy as np
from futhark_server import Failure, Server

with Server(sys.argv[1]) as s:
    s.put_value("xs", np.array([1.0, 2.0, 3.5]))
    s.cmd_call("sum", "total", "xs")
    total = s.get_value("total")
    assert total == 6.5, total

    s.put_value("n", np.int64(3))
    s.cmd_call("count_up", "t", "n")
    s.cmd_project("t0", "t", "0")
    s.cmd_project("t1", "t", "1")
    assert s.get_value("t0") == 4
    assert list(s.get_value("t1")) == [0, 1, 2], s.get_value("t1")
    whole = s.get_value("t")  # a stored tuple reads back as a Python tuple
    assert whole[0] == 4 and list(whole[1]) == [0, 1, 2], whole

    s.put_value("k", np.float64(2.0))
    s.cmd_call("scale", "ys", "k", "xs")
    assert list(s.get_value("ys")) == [2.0, 4.0, 7.0]

    s.put_value("is", np.array([5, 6], dtype=np.int32))
    s.put_value("i", np.int64(1))
    s.cmd_call("get", "g", "is", "i")
    assert s.get_value("g") == 6
    s.put_value("j", np.int64(9))
    try:
        s.cmd_call("get", "g2", "is", "j")
        raise AssertionError("expected a Failure")
    except Failure as e:
        msg = str(e.msg if hasattr(e, "msg") else e)
        assert "out of bounds" in msg, msg
    assert s.cmd_inputs("scale") == ["f64", "*[]f64"], s.cmd_inputs("scale")
    s.cmd_free("g")
print("ok")
