#!/usr/bin/env python3
"""tornado_runner.py OUT.json [TEST_NAME...] - Tornado's own test suite
(tornado.test.runtests, from Debian's python3-tornado), run exactly as its
runtests.main() runs it (same warning filters, same "fail if anything is
logged" rule), with every test's outcome recorded in OUT.json:
{"tests": {ID: "ok"|"fail"|"error"|"skip"|"xfail"|"xpass"}, "status": N}.
With TEST_NAMEs, only those (for re-running a few).  Exit status as
runtests: 0 when all passed and nothing was logged.
"""
import json
import sys
import unittest

import tornado.test.runtests as rt

out_path = sys.argv[1]
names = sys.argv[2:]
outcomes = {}


class RecordingResult(unittest.TextTestResult):
    def _set(self, test, what):
        outcomes[test.id()] = what

    def addSuccess(self, test):
        super().addSuccess(test)
        self._set(test, "ok")

    def addFailure(self, test, err):
        super().addFailure(test, err)
        self._set(test, "fail")

    def addError(self, test, err):
        super().addError(test, err)
        self._set(test, "error")

    def addSkip(self, test, reason):
        super().addSkip(test, reason)
        self._set(test, "skip")

    def addExpectedFailure(self, test, err):
        super().addExpectedFailure(test, err)
        self._set(test, "xfail")

    def addUnexpectedSuccess(self, test):
        super().addUnexpectedSuccess(test)
        self._set(test, "xpass")


orig_factory = rt.test_runner_factory


def factory(stderr):
    base = orig_factory(stderr)

    class Runner(base):
        def __init__(self, *a, **kw):
            kw["resultclass"] = RecordingResult
            super().__init__(*a, **kw)

    return Runner


def save(status):
    with open(out_path, "w") as fh:
        json.dump({"tests": outcomes, "status": status}, fh, sort_keys=True)


rt.test_runner_factory = factory
# unittest.main(module=None) loads the names given on its command line
sys.argv = [sys.argv[0]] + (names or ["tornado.test.runtests.all"])
try:
    rt.main()
    status = 0
except SystemExit as e:
    # unittest exits with a bool; runtests with 1 when something was logged
    if e.code is None or e.code is False or e.code == 0:
        status = 0
    elif isinstance(e.code, int) and not isinstance(e.code, bool):
        status = e.code
    else:
        status = 1
save(status)
sys.exit(status)
