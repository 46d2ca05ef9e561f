"""TLS, as the installer's self-signed certificate gives it: the API over HTTPS, a Secure
cookie, the origin check on https://, and a certificate that does not load named at start."""

from __future__ import annotations

import http.client
import shutil
import ssl
import subprocess
from pathlib import Path

import pytest
from webunit import WAIT, WebUnit

from launcher.web.server import WebError

pytestmark = pytest.mark.skipif(shutil.which("openssl") is None,
                                reason="needs the openssl command to make a certificate")


def certificate(folder: Path) -> tuple[Path, Path]:
    cert, key = folder / "web.crt", folder / "web.key"
    subprocess.run(["openssl", "req", "-x509", "-newkey", "ec", "-pkeyopt",
                    "ec_paramgen_curve:prime256v1", "-nodes", "-keyout", str(key), "-out",
                    str(cert), "-days", "2", "-subj", "/CN=127.0.0.1", "-addext",
                    "subjectAltName=IP:127.0.0.1"], check=True, capture_output=True,
                   timeout=60)
    return cert, key


def test_the_api_over_https(tmp_path: Path) -> None:
    cert, key = certificate(tmp_path)
    unit = WebUnit(tmp_path, tls=(cert, key))
    try:
        assert unit.server.url == f"https://127.0.0.1:{unit.port}/"
        ctx = ssl.create_default_context(cafile=str(cert))

        def ask(method: str, path: str, headers: dict[str, str]) -> http.client.HTTPResponse:
            c = http.client.HTTPSConnection("127.0.0.1", unit.port, timeout=WAIT, context=ctx)
            c.request(method, path, headers=headers)
            r = c.getresponse()
            r.read()
            c.close()
            return r

        auth = {"Authorization": f"Bearer {unit.token}"}
        assert ask("GET", "/api/status", auth).status == 200
        assert ask("GET", "/api/status", {}).status == 401
        https = f"https://127.0.0.1:{unit.port}"
        assert ask("POST", "/api/press", auth | {"Origin": https}).status == 200
        plain = f"http://127.0.0.1:{unit.port}"
        assert ask("POST", "/api/press", auth | {"Origin": plain}).status == 403
        opened = ask("POST", "/api/pair", {"Origin": https})
        assert opened.status == 201
        pid = next(iter(unit.pairing.states))
        unit.on_reactor(lambda: unit.pairing.confirm(pid))
        got = ask("GET", f"/api/pair/{pid}", {})
        assert got.status == 200 and "Secure" in got.headers["Set-Cookie"]
        # Plain HTTP on the TLS port is not answered as the API.
        with pytest.raises((ConnectionError, http.client.HTTPException)):
            c = http.client.HTTPConnection("127.0.0.1", unit.port, timeout=WAIT)
            c.request("GET", "/api/status", headers=auth)
            c.getresponse().read()
    finally:
        unit.close()


def test_a_certificate_that_does_not_load_is_named(tmp_path: Path) -> None:
    cert, key = certificate(tmp_path)
    missing = tmp_path / "none.crt"
    with pytest.raises(WebError, match=f"cannot listen on 127.0.0.1:0 with {missing}"):
        WebUnit(tmp_path, tls=(missing, key))
    cert.write_text("not a certificate")
    with pytest.raises(WebError, match="cannot listen"):
        WebUnit(tmp_path, tls=(cert, key))
