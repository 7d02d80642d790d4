"""Signatures in the OpenSSF Model Signing format (PyPI ``model-signing``), fully offline.

A skill directory is signed as a whole: a detached ``skill.oms.sig`` inside it covers every
other file (model-signing's own rules: links are refused, VCS paths ignored), so a file
added, changed or removed after signing fails verification, and the failure names it. A
bundle (any single file) is signed with a detached ``<bundle>.oms.sig`` beside it.

Two offline modes: a key pair (an elliptic-curve private key signs, its public key verifies)
and certificates (a private key with its signing certificate and chain signs; the trusted
chain verifies). Sigstore keyless signing needs the network (an OIDC identity, Fulcio and
Rekor) and is not offered here; model-signing's own command line does it.

The library is an optional extra (``agent-skillcheck[sign]``), imported only here, inside
the calls that need it.
"""

from __future__ import annotations

import os
import tempfile
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from skillcheck.errors import RefusedContent, UsageError
from skillcheck.package.bundle import _write_new_file
from skillcheck.package.catalog import SKILL_FILE, show
from skillcheck.source.lazy import LazyPattern

SIGNATURE_NAME = "skill.oms.sig"
BUNDLE_SUFFIX = ".oms.sig"


class SignatureError(RefusedContent):
    """A signature that is missing or does not verify: one line naming the files, exit 1."""


@dataclass(frozen=True)
class Signer:
    """A private key, and for certificate mode its certificate and chain."""

    key: Path
    certificate: Path | None = None
    chain: Sequence[Path] = ()


@dataclass(frozen=True)
class Trust:
    """What verifies: a public key, or a certificate chain (certificate mode)."""

    public_key: Path | None = None
    chain: Sequence[Path] = ()


def need_library() -> None:
    import importlib.util

    if importlib.util.find_spec("model_signing") is None:
        raise UsageError("signing needs its extra: pip install 'agent-skillcheck[sign]'")


def signature_path(target: Path) -> Path:
    """Where ``target``'s signature lives."""
    if target.is_dir():
        return target / SIGNATURE_NAME
    return target.with_name(target.name + BUNDLE_SUFFIX)


def _hashing(target: Path):  # type: ignore[no-untyped-def]
    from model_signing import hashing

    config = hashing.Config()
    if target.is_dir():  # the signature never signs itself
        config.set_ignored_paths(paths=[SIGNATURE_NAME])
    return config


def sign(target: Path, signer: Signer) -> Path:
    """Sign a skill directory or a bundle file; returns the signature written. The signature
    is written beside the content, replacing an earlier one."""
    need_library()
    from model_signing import signing

    _check_target(target)
    config = signing.Config().set_hashing_config(_hashing(target))
    try:
        if signer.certificate is not None:
            config.use_certificate_signer(
                private_key=signer.key,
                signing_certificate=signer.certificate,
                certificate_chain=list(signer.chain),
            )
        else:
            config.use_elliptic_key_signer(private_key=signer.key)
    except (OSError, ValueError, TypeError) as exc:
        raise UsageError(f"{signer.key}: cannot load the signing key: {_one_line(exc)}") from None
    out = signature_path(target)
    try:
        config.sign(target, out)
    except (OSError, ValueError) as exc:
        raise UsageError(f"{target}: cannot sign: {_one_line(exc)}") from None
    return out


def verify(target: Path, trust: Trust, label: str | None = None) -> None:
    """Raise SignatureError unless ``target`` (a skill directory or a bundle) carries a
    signature that ``trust`` verifies and that covers exactly its files. ``label`` names
    ``target`` in messages (a staged copy's path means nothing to the user)."""
    need_library()
    from model_signing import verifying

    _check_target(target)
    who = label or str(target)
    sig = signature_path(target)
    if not sig.is_file():
        raise SignatureError(f"{who}: not signed (no {sig.name})")
    config = verifying.Config().set_hashing_config(_hashing(target))
    try:
        if trust.public_key is not None:
            config.use_elliptic_key_verifier(public_key=trust.public_key)
        else:
            config.use_certificate_verifier(certificate_chain=list(trust.chain))
    except (OSError, ValueError, TypeError) as exc:
        raise UsageError(f"cannot load the verification key: {_one_line(exc)}") from None
    try:
        config.verify(target, sig)
    except ValueError as exc:
        raise SignatureError(f"{who}: {_explain(str(exc), target.name)}") from None
    except Exception as exc:  # a malformed signature file: protobuf, JSON or crypto errors
        raise SignatureError(f"{who}: {sig.name} does not verify: {_one_line(exc)}") from None


def _check_target(target: Path) -> None:
    if target.is_dir():
        if not (target / SKILL_FILE).is_file():
            raise UsageError(f"{target}: not a skill directory (no {SKILL_FILE})")
    elif not target.is_file():
        raise UsageError(f"{target}: no such skill directory or bundle")


def skills_under(path: Path) -> list[Path]:
    """A skill directory, or the skill directories directly inside ``path``."""
    if (path / SKILL_FILE).is_file() or not path.is_dir():
        return [path]
    found = sorted(p for p in path.iterdir() if p.is_dir() and (p / SKILL_FILE).is_file())
    if not found:
        raise UsageError(f"{path}: no skill directory (a directory with a {SKILL_FILE})")
    return found


_HASH = LazyPattern(r"^Hash mismatch for '(.*?)': ")
_FILES = LazyPattern(r"^(Extra|Missing) files (?:found )?in model '.*?': (.*)$")


def _explain(message: str, own_name: str) -> str:
    """model-signing's mismatch message (``Signature mismatch: [...]``, a list of lines)
    as one line naming the files added, changed and removed, without digests. Any other
    failure (the key or certificate does not match) is said as it is."""
    import ast

    head = "Signature mismatch: "
    try:
        items = ast.literal_eval(message[len(head) :]) if message.startswith(head) else None
    except (ValueError, SyntaxError):
        items = None
    if not isinstance(items, list):
        return f"signature does not verify: {_one_line(Exception(message))}"
    found: dict[str, list[str]] = {"added": [], "changed": [], "removed": []}
    for item in items:
        text = str(item)
        if (files := _FILES.match(text)) is not None:
            label = "added" if files.group(1) == "Extra" else "removed"
            found[label] += files.group(2).split(", ")
        elif (hit := _HASH.match(text)) is not None:
            found["changed"].append(hit.group(1))
    # a single file's own entry is named '.'
    show_name = lambda name: show(own_name if name == "." else name)  # noqa: E731
    parts = [f"{k} {', '.join(show_name(n) for n in names)}" for k, names in found.items() if names]
    return "signature does not match: " + ("; ".join(parts) or "content differs")


def _one_line(exc: BaseException) -> str:
    text = " ".join(str(exc).split())
    return text[:300] or type(exc).__name__


def signature_check(trust: Trust) -> Callable[[Path], str | None]:
    """For installers: given a staged skill directory, why its signature does not verify
    (one line, without the staging path), or None."""

    def check(staged: Path) -> str | None:
        try:
            verify(staged, trust)
        except SignatureError as exc:
            return str(exc).removeprefix(f"{staged}: ")
        return None

    return check


def artifact_signature_check(trust: Trust) -> Callable[[Any], str | None]:
    """For the discovery-RFC installer: a verified artifact's files, staged in a private
    directory, must carry a signature ``trust`` verifies."""
    check = signature_check(trust)

    def check_artifact(artifact: Any) -> str | None:
        with tempfile.TemporaryDirectory(prefix="skillcheck-sig-") as tmp:
            staged = Path(tmp) / "skill"
            os.mkdir(staged)
            for rel, (data, executable) in artifact.files.items():
                _write_new_file(staged, rel, data, executable)
            return check(staged)

    return check_artifact
