"""A minimal LSP client over a subprocess's stdin/stdout (JSON-RPC with Content-Length headers), for the tests
and ``benchmarks/server_latency.py``. It needs nothing beyond the standard library."""
from __future__ import annotations

import json
import queue
import subprocess
import sys
import threading
import time
from typing import Any, Callable, Dict, List, Optional, Sequence


class ServerError(Exception):
    pass


class Client:
    def __init__(self, command: Optional[Sequence[str]] = None, cwd: Optional[str] = None, env=None):
        self.process = subprocess.Popen(list(command or [sys.executable, "-m", "ms_lint", "server"]), cwd=cwd,
                                        env=env, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                        stderr=subprocess.PIPE)
        self._next_id = 0
        self._messages: "queue.Queue[Optional[Dict[str, Any]]]" = queue.Queue()
        self.notifications: List[Dict[str, Any]] = []  # every notification received, in order
        self.requests: List[Dict[str, Any]] = []  # every request the server sent (answered with a null result)
        self._reader = threading.Thread(target=self._read, daemon=True)
        self._reader.start()

    # -- wire ---------------------------------------------------------------------------------------
    def _read(self) -> None:
        stream = self.process.stdout
        assert stream is not None
        while True:
            length = None
            while True:
                line = stream.readline()
                if not line:
                    self._messages.put(None)
                    return
                line = line.strip()
                if not line:
                    break
                name, _, value = line.decode("ascii").partition(":")
                if name.lower() == "content-length":
                    length = int(value)
            if length is None:
                continue
            self._messages.put(json.loads(stream.read(length).decode("utf-8")))

    def _send(self, message: Dict[str, Any]) -> None:
        body = json.dumps({"jsonrpc": "2.0", **message}).encode("utf-8")
        stdin = self.process.stdin
        assert stdin is not None
        stdin.write(b"Content-Length: %d\r\n\r\n" % len(body) + body)
        stdin.flush()

    def _next(self, timeout: float) -> Dict[str, Any]:
        try:
            message = self._messages.get(timeout=timeout)
        except queue.Empty:
            raise TimeoutError("no message from the server") from None
        if message is None:
            stderr = self.process.stderr.read().decode("utf-8", "replace") if self.process.stderr else ""
            raise ServerError(f"the server closed its output:\n{stderr}")
        if "id" in message and "method" in message:  # a request from the server (registerCapability...)
            self.requests.append(message)
            self._send({"id": message["id"], "result": None})
        elif "method" in message:
            self.notifications.append(message)
        return message

    # -- requests -----------------------------------------------------------------------------------
    def request(self, method: str, params: Any = None, timeout: float = 120.0) -> Any:
        self._next_id += 1
        ident = self._next_id
        self._send({"id": ident, "method": method, "params": params})
        deadline = time.monotonic() + timeout
        while True:
            message = self._next(max(deadline - time.monotonic(), 0.01))
            if message.get("id") == ident and "method" not in message:
                if "error" in message:
                    raise ServerError(f"{method}: {message['error']}")
                return message.get("result")

    def notify(self, method: str, params: Any = None) -> None:
        self._send({"method": method, "params": params})

    def wait_for(self, method: str, where: Callable[[Dict[str, Any]], bool] = lambda params: True,
                 timeout: float = 120.0) -> Dict[str, Any]:
        """The params of the next notification ``method`` that ``where`` accepts."""
        deadline = time.monotonic() + timeout
        while True:
            message = self._next(max(deadline - time.monotonic(), 0.01))
            if message.get("method") == method and where(message.get("params") or {}):
                return message["params"]

    def diagnostics(self, uri: str, version: Optional[int] = None, timeout: float = 120.0) -> List[Dict[str, Any]]:
        """The next diagnostics published for ``uri`` (for ``version``, when given)."""
        params = self.wait_for("textDocument/publishDiagnostics",
                               lambda p: p.get("uri") == uri and (version is None or p.get("version") == version),
                               timeout)
        return params["diagnostics"]

    # -- session ------------------------------------------------------------------------------------
    def initialize(self, root_uri: Optional[str] = None, encodings: Sequence[str] = ("utf-16",),
                   watch_files: bool = False) -> Dict[str, Any]:
        """``watch_files``: say the client registers file watchers dynamically (the server then asks for them)."""
        capabilities: Dict[str, Any] = {"general": {"positionEncodings": list(encodings)},
                                        "textDocument": {"publishDiagnostics": {"versionSupport": True}}}
        if watch_files:
            capabilities["workspace"] = {"didChangeWatchedFiles": {"dynamicRegistration": True}}
        result = self.request("initialize", {"processId": None, "rootUri": root_uri, "capabilities": capabilities})
        self.notify("initialized", {})
        return result

    def shutdown(self, timeout: float = 30.0) -> int:
        """shutdown, exit; the server's exit status."""
        self.request("shutdown", None, timeout=timeout)
        self.notify("exit", None)
        try:
            return self.process.wait(timeout)
        finally:
            self.close()

    def close(self) -> None:
        if self.process.poll() is None:
            self.process.kill()
            self.process.wait()
        for stream in (self.process.stdin, self.process.stdout, self.process.stderr):
            if stream is not None:
                stream.close()
