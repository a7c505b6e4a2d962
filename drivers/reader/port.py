"""The reader board's serial port: pyserial, waiting with `poll` instead of `select.select`."""

from __future__ import annotations

import errno
import os
import select

import serial

_RETRY = (errno.EAGAIN, errno.EALREADY, errno.EWOULDBLOCK, errno.EINPROGRESS, errno.EINTR)


class PollSerial(serial.Serial):
    """pyserial's POSIX port with its `read` and `write` waiting in `poll(2)`.

    pyserial waits for its descriptor with `select.select`, which cannot take one numbered
    1024 or more; a process holding many tables (`tablectl sim --tables N`) passes that.
    Same semantics as pyserial's: `read(size)` returns what came within the timeout (at
    least one byte when any came), `write` writes everything (waiting for the port while
    its buffer is full), either one stops on `cancel_read` / `cancel_write`.
    """

    def _fd(self) -> int:
        fd = self.fd
        if fd is None:
            raise serial.PortNotOpenError()
        return int(fd)

    def read(self, size: int = 1) -> bytes:
        if not self.is_open:
            raise serial.PortNotOpenError()
        fd = self._fd()
        out = bytearray()
        timeout = serial.Timeout(self.timeout)  # type: ignore[arg-type]  # None: no limit
        poller = select.poll()
        poller.register(fd, select.POLLIN)
        abort = self.pipe_abort_read_r
        if abort is not None:
            poller.register(abort, select.POLLIN)
        while len(out) < size:
            left = timeout.time_left()
            ready = poller.poll(None if left is None else max(0.0, left) * 1000.0)
            fds = {fd for fd, _mask in ready}
            if abort is not None and abort in fds:
                os.read(abort, 1000)
                break
            if not ready:
                break  # the timeout
            try:
                chunk = os.read(fd, size - len(out))
            except OSError as exc:
                if exc.errno not in _RETRY:
                    raise serial.SerialException(f"read failed: {exc}") from exc
            else:
                if not chunk:  # ready but nothing: the device went away
                    raise serial.SerialException(
                        "device reports readiness to read but returned no data "
                        "(device disconnected or multiple access on port?)"
                    )
                out.extend(chunk)
            if timeout.expired():
                break
        return bytes(out)

    def write(self, data: bytes | bytearray | memoryview) -> int | None:  # type: ignore[override]
        if not self.is_open:
            raise serial.PortNotOpenError()
        fd = self._fd()
        left = memoryview(bytes(data))
        total = len(left)
        timeout = serial.Timeout(self.write_timeout)  # type: ignore[arg-type]
        poller = select.poll()
        poller.register(fd, select.POLLOUT)
        abort = self.pipe_abort_write_r
        if abort is not None:
            poller.register(abort, select.POLLIN)
        while len(left):
            try:
                n = os.write(fd, left)
            except OSError as exc:
                if exc.errno not in _RETRY:
                    raise serial.SerialException(f"write failed: {exc}") from exc
                n = 0
            if timeout.is_non_blocking:
                return n
            left = left[n:]
            if not len(left):
                break
            wait = timeout.time_left()
            if wait is not None and wait <= 0:
                raise serial.SerialTimeoutException("Write timeout")
            ready = poller.poll(None if wait is None else wait * 1000.0)
            fds = {fd for fd, _mask in ready}
            if abort is not None and abort in fds:
                os.read(abort, 1000)
                break
            if not ready:
                raise serial.SerialTimeoutException("Write timeout")
        return total - len(left)
