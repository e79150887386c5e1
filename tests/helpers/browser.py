"""A headless Chromium driven over the DevTools protocol on a pipe (standard library only).

Chromium's ``--remote-debugging-pipe`` reads protocol commands from file descriptor 3 and writes
replies and events to descriptor 4, each a JSON message ended by a NUL byte. :class:`Browser`
opens one page at a given window size, collects every JavaScript error (uncaught exceptions,
``console.error``, error log entries), evaluates expressions and takes screenshots.
"""

from __future__ import annotations

import base64
import fcntl
import json
import os
import select
import shutil
import subprocess
import tempfile
import time
from pathlib import Path

#: How to get the browser where it is missing (Debian's package).
INSTALL = "apt-get install chromium"


def chromium() -> str | None:
    """Path of a Chromium (or Chrome) executable, None where there is none."""
    for name in ("chromium", "chromium-browser", "google-chrome"):
        found = shutil.which(name)
        if found:
            return found
    return None


def _above_four(fd: int) -> int:
    """``fd`` moved to a number above 4 (close-on-exec), so that the child's dup2 onto 3 and 4
    never meets one of the pipe ends already there."""
    moved = fcntl.fcntl(fd, fcntl.F_DUPFD_CLOEXEC, 10)
    os.close(fd)
    return moved


class Browser:
    """One headless page of ``width`` × ``height`` CSS pixels; use as a context manager."""

    def __init__(self, width: int = 1366, height: int = 768, timeout: float = 60.0) -> None:
        executable = chromium()
        if executable is None:
            raise RuntimeError(f"no Chromium: {INSTALL}")
        self.timeout = timeout
        self.errors: list[str] = []
        self._profile = tempfile.TemporaryDirectory(prefix="chromium-")
        commands_read, self._commands = (_above_four(fd) for fd in os.pipe())
        self._replies, replies_write = (_above_four(fd) for fd in os.pipe())

        def descriptors() -> None:  # in the child: the pipe ends become fds 3 and 4
            os.dup2(commands_read, 3)  # a copy made by dup2 is inherited by the exec
            os.dup2(replies_write, 4)

        self._process = subprocess.Popen(
            [executable, "--headless", "--no-sandbox", "--disable-gpu", "--no-first-run",
             "--remote-debugging-pipe", f"--user-data-dir={self._profile.name}",
             f"--window-size={width},{height}", "about:blank"],
            preexec_fn=descriptors, close_fds=False, stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        os.close(commands_read)
        os.close(replies_write)
        self._buffer = b""
        self._next_id = 0
        self._events: list[dict] = []
        try:
            target = self.call("Target.createTarget", {"url": "about:blank"})["targetId"]
            self._session = self.call("Target.attachToTarget",
                                      {"targetId": target, "flatten": True})["sessionId"]
            for domain in ("Runtime", "Page", "Log"):
                self.call(f"{domain}.enable")
            self.call("Emulation.setDeviceMetricsOverride",
                      {"width": width, "height": height, "deviceScaleFactor": 1,
                       "mobile": False})
        except BaseException:
            self.close()  # no browser or profile folder left behind
            raise

    def __enter__(self) -> Browser:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        try:
            os.close(self._commands)
        except OSError:
            pass
        self._process.terminate()
        try:
            self._process.wait(10)
        except subprocess.TimeoutExpired:
            self._process.kill()
        os.close(self._replies)
        self._profile.cleanup()

    # ------------------------------------------------------------------ the protocol

    def _read_message(self, deadline: float) -> dict:
        while b"\0" not in self._buffer:
            left = deadline - time.monotonic()
            if left <= 0 or not select.select([self._replies], [], [], left)[0]:
                raise TimeoutError("Chromium did not answer in time")
            chunk = os.read(self._replies, 1 << 20)
            if not chunk:
                raise RuntimeError("Chromium closed the pipe")
            self._buffer += chunk
        message, self._buffer = self._buffer.split(b"\0", 1)
        return json.loads(message)

    def _note(self, event: dict) -> None:
        method, params = event.get("method"), event.get("params", {})
        if method == "Runtime.exceptionThrown":
            details = params["exceptionDetails"]
            text = details.get("exception", {}).get("description") or details.get("text")
            self.errors.append(f"uncaught: {text}")
        elif method == "Runtime.consoleAPICalled" and params.get("type") == "error":
            self.errors.append("console.error: " + " ".join(
                str(a.get("value", a.get("description", ""))) for a in params.get("args", [])))
        elif method == "Log.entryAdded" and params["entry"].get("level") == "error":
            self.errors.append(f"log: {params['entry'].get('text')}")
        self._events.append(event)

    def call(self, method: str, params: dict | None = None) -> dict:
        """Send one command (to the page once attached) and return its result."""
        self._next_id += 1
        message = {"id": self._next_id, "method": method, "params": params or {}}
        if getattr(self, "_session", None):
            message["sessionId"] = self._session
        os.write(self._commands, json.dumps(message).encode() + b"\0")
        deadline = time.monotonic() + self.timeout
        while True:
            reply = self._read_message(deadline)
            if reply.get("id") == self._next_id:
                if "error" in reply:
                    raise RuntimeError(f"{method}: {reply['error']}")
                return reply.get("result", {})
            self._note(reply)

    def wait_for(self, method: str) -> dict:
        """The next event ``method`` (one already received counts)."""
        for i, event in enumerate(self._events):
            if event.get("method") == method:
                return self._events.pop(i)
        deadline = time.monotonic() + self.timeout
        while True:
            event = self._read_message(deadline)
            self._note(event)
            if event.get("method") == method:
                self._events.remove(event)
                return event

    # ------------------------------------------------------------------ what a test does

    def open(self, path: Path) -> None:
        """Load a local file and wait for its load event."""
        self.call("Page.navigate", {"url": Path(path).resolve().as_uri()})
        self.wait_for("Page.loadEventFired")

    def evaluate(self, expression: str) -> object:
        """The value of a JavaScript expression (promises awaited)."""
        result = self.call("Runtime.evaluate", {"expression": expression, "awaitPromise": True,
                                                "returnByValue": True})
        if "exceptionDetails" in result:
            raise RuntimeError(f"{expression!r}: {result['exceptionDetails']}")
        return result["result"].get("value")

    def settle(self, seconds: float = 0.5) -> None:
        """Let the page's script run (and its events arrive) for a while."""
        self.evaluate(f"new Promise(r => setTimeout(r, {int(seconds * 1000)}))")

    def screenshot(self, path: Path) -> None:
        """The visible window as a PNG."""
        data = self.call("Page.captureScreenshot", {"format": "png"})["data"]
        Path(path).write_bytes(base64.b64decode(data))
