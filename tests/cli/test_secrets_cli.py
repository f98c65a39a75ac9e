"""The CLI refuses to remember a credential, naming its kind but never echoing it (seed 000 §3)."""

from __future__ import annotations

import random
import string

from installed import Cli


def test_remember_refuses_a_fake_token_with_one_line_and_stores_nothing(cli: Cli) -> None:
    home = cli.home()
    rng = random.Random(7)  # noqa: S311 - a fake secret, seeded to be reproducible
    token = "gh" + "p_" + "".join(rng.choice(string.ascii_letters + string.digits) for _ in range(36))
    result = cli("remember", f"CI pushes with {token}", "--source", "session-1", "--home", str(home))
    assert result.returncode != 0 and result.stdout == ""
    assert "github-token" in result.stderr and token not in result.stderr
    assert all(token.encode() not in p.read_bytes() for p in home.rglob("*") if p.is_file())
