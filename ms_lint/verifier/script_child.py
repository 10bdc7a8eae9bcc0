"""Run a user's script as ``python SCRIPT ARGS`` would, timing the script apart from ``import mindspore``.

Invoked by file path (``python .../script_child.py RESULT.json SCRIPT ARGS...``), so nothing of ms-lint is on
``sys.path``: ``sys.argv`` and ``sys.path[0]`` are set to what a direct run gives *before* MindSpore is imported
(MindSpore's compile cache takes the entry script from ``sys.argv[0]`` at import), then the script runs under
``__main__``. The import takes seconds and varies with machine load; the script's own time is what the compile
cache changes. Only the standard library is imported here.
"""

import json
import os
import sys
import time
import traceback


def main():
    result_path, script, args = sys.argv[1], os.path.abspath(sys.argv[2]), sys.argv[3:]
    sys.argv = [script] + args
    sys.path[0] = os.path.dirname(script)
    record = {}
    start = time.perf_counter()
    code = 0
    try:
        import mindspore  # noqa: F401 - timed apart from the script

        record["import_s"] = time.perf_counter() - start
        import runpy

        begin = time.perf_counter()
        try:
            runpy.run_path(script, run_name="__main__")
        finally:
            record["script_s"] = time.perf_counter() - begin
    except SystemExit as exc:
        if exc.code is None:
            code = 0
        elif isinstance(exc.code, int):
            code = exc.code
        else:
            print(exc.code, file=sys.stderr)
            code = 1
    except BaseException:  # noqa: BLE001 - report as python does, exit status 1
        traceback.print_exc()
        code = 1
    sys.stdout.flush()
    sys.stderr.flush()
    with open(result_path, "w") as handle:
        json.dump(record, handle)
    os._exit(code)  # MindSpore's atexit handlers can hang on teardown


if __name__ == "__main__":
    main()
