"""Throwaway storage servers on loopback for distributed Optuna runs: a PostgreSQL cluster and
Optuna's gRPC storage proxy, started and stopped by the harness (``uvp-bench stress``) and by
the tests.

* :class:`PostgresServer` - ``initdb`` + ``pg_ctl`` (PostgreSQL's own server binaries, e.g.
  Debian's ``postgresql-15`` in ``/usr/lib/postgresql/15/bin``) in a new temporary directory, on
  a free port of ``127.0.0.1`` only (no Unix socket), password authentication, run as an
  unprivileged user: the current one, or - when running as root, which PostgreSQL refuses -
  ``$UVP_PG_USER``, else ``postgres``, else ``nobody``. :meth:`~PostgresServer.create_database`
  gives each run a fresh database.
* :class:`GrpcProxyServer` - :func:`optuna.storages.run_grpc_proxy_server` in a child process
  (``python -m uvp_plugins.bench.servers``, configured by environment variables; not a command
  for users) in front of a storage URL, on a free
  loopback port; :meth:`~GrpcProxyServer.client` returns a
  :class:`~optuna.storages.GrpcStorageProxy`.

Both wait until the server answers and always stop it (context managers; the PostgreSQL
directory is deleted). They are test infrastructure: ``fsync`` is off in the cluster by default
(``durable=False``), which changes nothing that other clients see, only what survives a power
cut.

Example::

    from uvp_plugins.bench.servers import GrpcProxyServer, PostgresServer

    with PostgresServer() as pg:
        url = pg.create_database("demo")       # postgresql+psycopg2://...@127.0.0.1:PORT/demo
        with GrpcProxyServer(url) as proxy:
            storage = proxy.client()            # optuna.storages.GrpcStorageProxy
"""

from __future__ import annotations

import abc
import contextlib
import os
import pwd
import secrets
import shutil
import signal
import socket
import stat
import subprocess
import sys
import tempfile
import time
import warnings
from collections.abc import Sequence
from pathlib import Path
from types import TracebackType
from typing import Any, TypeVar

__all__ = ["PostgresServer", "GrpcProxyServer", "free_port", "find_postgres_bin"]

LOOPBACK = "127.0.0.1"
_PG_SUPERUSER = "uvp"
#: the proxy child's storage URL and port (set by GrpcProxyServer.start; the URL goes through the
#: environment, not the command line, because it holds a password)
_STORAGE_ENV = "UVP_GRPC_PROXY_STORAGE"
_PORT_ENV = "UVP_GRPC_PROXY_PORT"


def free_port() -> int:
    """A TCP port of ``127.0.0.1`` that is free now (the caller retries if it is taken later)."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind((LOOPBACK, 0))
        return int(s.getsockname()[1])


def find_postgres_bin(bin_dir: str | os.PathLike[str] | None = None) -> Path:
    """The directory holding ``initdb`` and ``pg_ctl``: ``bin_dir``, ``$UVP_PG_BIN``, the newest
    ``/usr/lib/postgresql/*/bin``, or the ``PATH``.

    Raises:
        FileNotFoundError: naming where it looked and how to install the server.
    """
    tried: list[str] = []
    candidates: list[Path] = []
    for given in (bin_dir, os.environ.get("UVP_PG_BIN")):
        if given:
            candidates.append(Path(given))
    debian = sorted(
        Path("/usr/lib/postgresql").glob("*/bin"),
        key=lambda p: int(p.parent.name) if p.parent.name.isdigit() else -1,
        reverse=True,
    )
    candidates += debian
    on_path = shutil.which("pg_ctl")
    if on_path:
        candidates.append(Path(on_path).parent)
    for c in candidates:
        tried.append(str(c))
        if (c / "initdb").is_file() and (c / "pg_ctl").is_file():
            return c
    raise FileNotFoundError(
        "PostgreSQL server binaries (initdb, pg_ctl) not found in "
        f"{tried or ['/usr/lib/postgresql/*/bin', 'PATH']}; install them (Debian/Ubuntu: "
        "apt-get install postgresql-15) or set UVP_PG_BIN"
    )


def _server_user() -> pwd.struct_passwd | None:
    """The unprivileged account to run PostgreSQL as (``None``: the current user, not root)."""
    if os.geteuid() != 0:
        return None
    names = [os.environ.get("UVP_PG_USER") or "", "postgres", "nobody"]
    for name in filter(None, names):
        with contextlib.suppress(KeyError):
            entry = pwd.getpwnam(name)
            if entry.pw_uid != 0:
                return entry
    raise RuntimeError(
        "running as root, and no unprivileged account to run PostgreSQL as: create one "
        "(useradd uvp-pg) and set UVP_PG_USER"
    )


def _traversable_base(user: pwd.struct_passwd | None) -> Path:
    """A temporary directory the server's user can reach (every parent searchable by others)."""
    base = Path(tempfile.gettempdir())
    if user is None:
        return base
    for d in (base, *base.parents):
        if not os.stat(d).st_mode & stat.S_IXOTH:
            return Path("/tmp")
    return base


_S = TypeVar("_S", bound="_Server")


class _Server(abc.ABC):
    """A server started by :meth:`start` and always stopped by :meth:`stop`; a context manager.
    Subclasses: :class:`PostgresServer`, :class:`GrpcProxyServer`."""

    @abc.abstractmethod
    def start(self: _S) -> _S:
        """Start the server and wait until it accepts connections; returns ``self``."""

    @abc.abstractmethod
    def stop(self) -> None:
        """Stop the server (idempotent) and remove what it wrote."""

    def __enter__(self: _S) -> _S:
        return self.start()

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.stop()


class PostgresServer(_Server):
    """A PostgreSQL cluster in a temporary directory on a free loopback port.

    Args:
        bin_dir: directory of ``initdb``/``pg_ctl`` (default: :func:`find_postgres_bin`).
        durable: keep ``fsync`` on (default off: a throwaway test server).
        start_timeout: seconds to wait for the server to accept connections.

    Attributes:
        port: the TCP port on ``127.0.0.1`` (after :meth:`start`).
    """

    def __init__(
        self,
        bin_dir: str | os.PathLike[str] | None = None,
        *,
        durable: bool = False,
        start_timeout: float = 60.0,
    ) -> None:
        self.bin_dir = find_postgres_bin(bin_dir)
        self.durable = durable
        self.start_timeout = float(start_timeout)
        self.port: int | None = None
        self.password = secrets.token_hex(16)
        self._user = _server_user()
        self._root: Path | None = None

    # ------------------------------------------------------------------ process plumbing
    def _run(self, args: Sequence[str], timeout: float) -> subprocess.CompletedProcess[str]:
        kwargs: dict[str, Any] = {}
        env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "LC_ALL": "C", "LANG": "C"}
        if self._user is not None:
            kwargs = {"user": self._user.pw_uid, "group": self._user.pw_gid, "extra_groups": []}
            env["HOME"] = str(self._root)
        return subprocess.run(
            list(args), capture_output=True, text=True, timeout=timeout, env=env,
            cwd=self._root, check=False, **kwargs,
        )

    def _chown(self, path: Path) -> None:
        if self._user is not None:
            os.chown(path, self._user.pw_uid, self._user.pw_gid)

    @property
    def data_dir(self) -> Path:
        assert self._root is not None, "server not started"
        return self._root / "data"

    # ------------------------------------------------------------------------ lifecycle
    def start(self) -> PostgresServer:
        """``initdb`` and start the server (three tries on a port taken meanwhile)."""
        if self._root is not None:
            return self
        self._root = Path(tempfile.mkdtemp(prefix="uvp-pg-", dir=_traversable_base(self._user)))
        try:
            self._chown(self._root)
            pwfile = self._root / "pw"
            pwfile.write_text(self.password + "\n")
            self._chown(pwfile)
            init = self._run(
                [str(self.bin_dir / "initdb"), "-D", str(self.data_dir), "-U", _PG_SUPERUSER,
                 "--pwfile", str(pwfile), "--auth=scram-sha-256", "--encoding=UTF8",
                 "--locale=C", "--no-sync"],
                timeout=120,
            )
            pwfile.unlink()
            if init.returncode != 0:
                raise RuntimeError(f"initdb failed:\n{init.stdout}\n{init.stderr}")
            settings = {
                "listen_addresses": f"'{LOOPBACK}'",
                "unix_socket_directories": "''",
                "max_connections": "200",
                "fsync": "on" if self.durable else "off",
                "synchronous_commit": "on" if self.durable else "off",
                "full_page_writes": "on" if self.durable else "off",
            }
            with open(self.data_dir / "postgresql.conf", "a") as conf:
                conf.write("\n# uvp_plugins.bench.servers\n")
                conf.writelines(f"{k} = {v}\n" for k, v in settings.items())
            last = ""
            for _ in range(3):
                port = free_port()
                res = self._run(
                    [str(self.bin_dir / "pg_ctl"), "-D", str(self.data_dir), "-l",
                     str(self._root / "server.log"), "-o", f"-p {port}", "-w",
                     "-t", str(int(self.start_timeout)), "start"],
                    timeout=self.start_timeout + 30,
                )
                if res.returncode == 0:
                    self.port = port
                    self._wait_ready()
                    return self
                last = f"{res.stdout}\n{res.stderr}\n{self.log_tail()}"
            raise RuntimeError(f"pg_ctl start failed three times:\n{last}")
        except BaseException:
            self.stop()
            raise

    def _wait_ready(self) -> None:
        import psycopg2

        deadline = time.monotonic() + self.start_timeout
        while True:
            try:
                psycopg2.connect(self.dsn("postgres"), connect_timeout=5).close()
                return
            except psycopg2.OperationalError:
                if time.monotonic() > deadline:
                    raise
                time.sleep(0.1)

    def log_tail(self, n: int = 30) -> str:
        """The last ``n`` lines of the server log (for error messages)."""
        log = self._root / "server.log" if self._root is not None else None
        if log is None or not log.is_file():
            return ""
        return "\n".join(log.read_text(errors="replace").splitlines()[-n:])

    def stop(self) -> None:
        """Stop the server (fast shutdown; killed if it does not stop) and delete its files."""
        root = self._root
        if root is None:
            return
        try:
            if (self.data_dir / "postmaster.pid").is_file():
                res = self._run(
                    [str(self.bin_dir / "pg_ctl"), "-D", str(self.data_dir), "-m", "fast",
                     "-w", "-t", "30", "stop"],
                    timeout=60,
                )
                if res.returncode != 0:
                    self._kill_postmaster()
        finally:
            self._root = None
            self.port = None
            shutil.rmtree(root, ignore_errors=True)

    def _kill_postmaster(self) -> None:
        with contextlib.suppress(OSError, ValueError, IndexError):
            pid = int((self.data_dir / "postmaster.pid").read_text().splitlines()[0])
            os.kill(pid, signal.SIGKILL)

    # --------------------------------------------------------------------------- clients
    def dsn(self, database: str) -> str:
        """A libpq connection string (psycopg2)."""
        assert self.port is not None, "server not started"
        return (
            f"host={LOOPBACK} port={self.port} user={_PG_SUPERUSER} "
            f"password={self.password} dbname={database}"
        )

    def url(self, database: str) -> str:
        """An SQLAlchemy URL for :class:`optuna.storages.RDBStorage` (driver psycopg2)."""
        assert self.port is not None, "server not started"
        return (
            f"postgresql+psycopg2://{_PG_SUPERUSER}:{self.password}@{LOOPBACK}:{self.port}/"
            f"{database}"
        )

    def create_database(self, name: str) -> str:
        """Create an empty database ``name`` (letters, digits, ``_``); its :meth:`url`."""
        import psycopg2

        if not name or not all(ch.isalnum() or ch == "_" for ch in name) or name[0].isdigit():
            raise ValueError(
                f"database name must be letters, digits and '_' (not leading digit), got {name!r}"
            )
        conn = psycopg2.connect(self.dsn("postgres"), connect_timeout=10)
        try:
            conn.autocommit = True
            with conn.cursor() as cur:
                cur.execute(f"CREATE DATABASE {name}")
        finally:
            conn.close()
        return self.url(name)


class GrpcProxyServer(_Server):
    """Optuna's gRPC storage proxy in front of ``storage_url``, in a child process.

    Args:
        storage_url: an RDB URL (Optuna's proxy does not support journal storages).
        start_timeout: seconds to wait until the proxy answers.
    """

    def __init__(self, storage_url: str, *, start_timeout: float = 60.0) -> None:
        self.storage_url = storage_url
        self.start_timeout = float(start_timeout)
        self.host = LOOPBACK
        self.port: int | None = None
        self._proc: subprocess.Popen[bytes] | None = None

    def start(self) -> GrpcProxyServer:
        if self._proc is not None:
            return self
        last = ""
        for _ in range(3):
            port = free_port()
            self._proc = subprocess.Popen(
                [sys.executable, "-m", "uvp_plugins.bench.servers"],
                stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                env={**os.environ, _STORAGE_ENV: self.storage_url, _PORT_ENV: str(port)},
            )
            self.port = port
            try:
                self._wait_ready()
                return self
            except RuntimeError as exc:
                last = str(exc)
                self.stop()
        raise RuntimeError(f"the gRPC proxy did not start:\n{last}")

    def _wait_ready(self) -> None:
        deadline = time.monotonic() + self.start_timeout
        while True:
            assert self._proc is not None
            if self._proc.poll() is not None:
                err = self._proc.stderr.read().decode(errors="replace") if self._proc.stderr else ""
                raise RuntimeError(f"proxy exited with code {self._proc.returncode}:\n{err}")
            try:
                self.client().get_all_studies()
                return
            except Exception as exc:  # grpc.RpcError while the server starts
                if time.monotonic() > deadline:
                    raise RuntimeError(f"proxy not ready after {self.start_timeout} s: {exc}") from exc
                time.sleep(0.2)

    def client(self) -> Any:
        """A new :class:`optuna.storages.GrpcStorageProxy` connected to the proxy."""
        import optuna
        from optuna.storages import GrpcStorageProxy

        assert self.port is not None, "proxy not started"
        with warnings.catch_warnings():  # "experimental": known, and said in the module doc
            warnings.simplefilter("ignore", optuna.exceptions.ExperimentalWarning)
            return GrpcStorageProxy(host=self.host, port=self.port)

    def stop(self) -> None:
        proc, self._proc = self._proc, None
        if proc is None:
            return
        if proc.poll() is None:
            proc.terminate()
            try:
                proc.wait(10)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait(10)
        if proc.stderr is not None:
            proc.stderr.close()


def _serve_grpc_proxy(storage_url: str, host: str, port: int) -> None:
    import optuna
    from optuna.storages import get_storage, run_grpc_proxy_server

    optuna.logging.set_verbosity(optuna.logging.WARNING)
    # get_storage: the cached RDB storage, as Optuna's documentation of the proxy advises
    run_grpc_proxy_server(get_storage(storage_url), host=host, port=port)


def _proxy_child() -> int:
    """The proxy child process (``python -m uvp_plugins.bench.servers``, started by
    :meth:`GrpcProxyServer.start`): serves ``$UVP_GRPC_PROXY_STORAGE`` on
    ``127.0.0.1:$UVP_GRPC_PROXY_PORT`` until SIGTERM."""
    url, port = os.environ.get(_STORAGE_ENV), os.environ.get(_PORT_ENV, "")
    if not url or not port.isdigit():
        print(f"set {_STORAGE_ENV} (an RDB URL) and {_PORT_ENV} (a port)", file=sys.stderr)
        return 2
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(0))
    _serve_grpc_proxy(url, LOOPBACK, int(port))
    return 0


if __name__ == "__main__":
    raise SystemExit(_proxy_child())
