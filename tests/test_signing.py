"""`skillcheck sign` and `verify --signature` (OpenSSF Model Signing): keys and certificates
are made in the test, nothing touches the network."""

from __future__ import annotations

import datetime
import shutil
import subprocess
from pathlib import Path

import pytest
from conftest import FIXTURES, run_skillcheck, skillcheck_command

pytest.importorskip("model_signing")

from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import ExtendedKeyUsageOID, NameOID

from skillcheck.package.signing import SignatureError, Trust, verify

GUARD = 120.0


def _key_pair(where: Path, stem: str) -> tuple[Path, Path]:
    key = ec.generate_private_key(ec.SECP256R1())
    private, public = where / f"{stem}.key", where / f"{stem}.pub"
    private.write_bytes(
        key.private_bytes(
            serialization.Encoding.PEM,
            serialization.PrivateFormat.PKCS8,
            serialization.NoEncryption(),
        )
    )
    public.write_bytes(
        key.public_key().public_bytes(
            serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo
        )
    )
    return private, public


@pytest.fixture
def keys(tmp_path: Path) -> tuple[Path, Path]:
    return _key_pair(tmp_path, "signer")


@pytest.fixture
def skill(tmp_path: Path) -> Path:
    target = tmp_path / "skills" / "pdf-tools"
    shutil.copytree(FIXTURES / "valid" / "pdf-tools", target)
    return target


def _sign(path: Path, key: Path, *more: str) -> subprocess.CompletedProcess:
    return run_skillcheck("sign", str(path), "--key", str(key), *more)


def _verify(path: Path, *options: str) -> subprocess.CompletedProcess:
    return run_skillcheck("verify", *options, str(path))


def test_a_signed_skill_verifies_and_ships_its_signature(tmp_path, keys, skill) -> None:
    private, public = keys
    assert _sign(skill, private).returncode == 0
    assert (skill / "skill.oms.sig").is_file()
    result = _verify(skill, "--signature", str(public))
    assert result.returncode == 0, result.stderr
    # packed, the signature is one more file of the skill; unpacked, it still verifies
    bundle = tmp_path / "b.tar.gz"
    assert run_skillcheck("pack", "--isolated", str(skill), "-o", str(bundle)).returncode == 0
    assert run_skillcheck("unpack", str(bundle), str(tmp_path / "out")).returncode == 0
    assert _verify(tmp_path / "out" / "pdf-tools", "--signature", str(public)).returncode == 0


@pytest.mark.parametrize(
    ("change", "named"),
    [
        (lambda s: (s / "SKILL.md").write_bytes((s / "SKILL.md").read_bytes() + b" "), "changed"),
        (lambda s: (s / "references" / "NEW.md").write_text("x"), "added"),
        (lambda s: (s / "references" / "REFERENCE.md").unlink(), "removed"),
    ],
    ids=["changed byte", "added file", "removed file"],
)
def test_a_change_after_signing_fails_naming_the_file(keys, skill, change, named) -> None:
    private, public = keys
    assert _sign(skill, private).returncode == 0
    change(skill)
    result = _verify(skill, "--signature", str(public))
    assert result.returncode == 1
    (line,) = result.stderr.decode().splitlines()
    assert f"signature does not match: {named} '" in line
    file = {"changed": "SKILL.md", "added": "references/NEW.md", "removed": "references/"}[named]
    assert file in line


def test_unsigned_and_wrongly_signed_skills_are_refused(tmp_path, keys, skill) -> None:
    private, _ = keys
    _, other_public = _key_pair(tmp_path, "other")
    unsigned = _verify(skill, "--signature", str(other_public))
    assert unsigned.returncode == 1 and b"not signed (no skill.oms.sig)" in unsigned.stderr
    assert _sign(skill, private).returncode == 0
    wrong = _verify(skill, "--signature", str(other_public))
    assert wrong.returncode == 1 and b"does not verify" in wrong.stderr


def test_a_signed_bundle_verifies_and_one_changed_byte_fails(tmp_path, keys, skill) -> None:
    private, public = keys
    bundle = tmp_path / "skills.tar.gz"
    assert run_skillcheck("pack", "--isolated", str(skill), "-o", str(bundle)).returncode == 0
    assert _sign(bundle, private).returncode == 0
    assert (tmp_path / "skills.tar.gz.oms.sig").is_file()
    result = _verify(bundle, "--signature", str(public))
    assert result.returncode == 0, result.stderr
    assert b"Signature of" in result.stdout
    data = bytearray(bundle.read_bytes())
    data[-1] ^= 1  # the gzip trailer: the archive may still read, the signature cannot match
    bundle.write_bytes(bytes(data))
    with pytest.raises(SignatureError, match=r"changed 'skills\.tar\.gz'"):
        verify(bundle, Trust(public))
    assert _verify(bundle, "--signature", str(public)).returncode == 1


def _certificates(where: Path) -> tuple[Path, Path, Path]:
    """A root CA and a code-signing certificate it issued, with the leaf's key."""
    now = datetime.datetime.now(datetime.UTC)

    def name(text: str) -> x509.Name:
        return x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, text)])

    def usage(sign_certs: bool) -> x509.KeyUsage:
        return x509.KeyUsage(
            digital_signature=not sign_certs,
            content_commitment=False,
            key_encipherment=False,
            data_encipherment=False,
            key_agreement=False,
            key_cert_sign=sign_certs,
            crl_sign=sign_certs,
            encipher_only=False,
            decipher_only=False,
        )

    ca_key = ec.generate_private_key(ec.SECP256R1())
    ca = (
        x509.CertificateBuilder()
        .subject_name(name("test root"))
        .issuer_name(name("test root"))
        .public_key(ca_key.public_key())
        .serial_number(1)
        .not_valid_before(now - datetime.timedelta(days=1))
        .not_valid_after(now + datetime.timedelta(days=1))
        .add_extension(x509.BasicConstraints(ca=True, path_length=None), critical=True)
        .add_extension(usage(True), critical=True)
        .sign(ca_key, hashes.SHA256())
    )
    leaf_key = ec.generate_private_key(ec.SECP256R1())
    leaf = (
        x509.CertificateBuilder()
        .subject_name(name("skill signer"))
        .issuer_name(name("test root"))
        .public_key(leaf_key.public_key())
        .serial_number(2)
        .not_valid_before(now - datetime.timedelta(days=1))
        .not_valid_after(now + datetime.timedelta(days=1))
        .add_extension(x509.BasicConstraints(ca=False, path_length=None), critical=True)
        .add_extension(usage(False), critical=True)
        .add_extension(x509.ExtendedKeyUsage([ExtendedKeyUsageOID.CODE_SIGNING]), critical=False)
        .sign(ca_key, hashes.SHA256())
    )
    paths = where / "ca.pem", where / "leaf.pem", where / "leaf.key"
    paths[0].write_bytes(ca.public_bytes(serialization.Encoding.PEM))
    paths[1].write_bytes(leaf.public_bytes(serialization.Encoding.PEM))
    paths[2].write_bytes(
        leaf_key.private_bytes(
            serialization.Encoding.PEM,
            serialization.PrivateFormat.PKCS8,
            serialization.NoEncryption(),
        )
    )
    return paths


def test_certificate_mode_verifies_against_the_trusted_root_only(tmp_path, skill) -> None:
    ca, leaf, leaf_key = _certificates(tmp_path)
    signed = _sign(skill, leaf_key, "--certificate", str(leaf), "--chain", str(ca))
    assert signed.returncode == 0, signed.stderr
    assert _verify(skill, "--trust-chain", str(ca)).returncode == 0
    (tmp_path / "other").mkdir()
    other_ca, _, _ = _certificates(tmp_path / "other")
    refused = _verify(skill, "--trust-chain", str(other_ca))
    assert refused.returncode == 1 and b"does not verify" in refused.stderr


def test_signing_needs_no_network(tmp_path, keys, skill) -> None:
    if (
        not shutil.which("unshare")
        or subprocess.run(["unshare", "-n", "true"], capture_output=True).returncode
    ):
        pytest.skip("no network namespace can be made here")
    private, public = keys
    argv = ["unshare", "-n", *skillcheck_command()]
    signed = subprocess.run([*argv, "sign", str(skill), "--key", str(private)], timeout=GUARD)
    assert signed.returncode == 0
    checked = subprocess.run(
        [*argv, "verify", "--signature", str(public), str(skill)], timeout=GUARD
    )
    assert checked.returncode == 0


def test_install_require_signature_from_mcp(tmp_path, keys) -> None:
    pytest.importorskip("mcp")
    private, public = keys
    skills = tmp_path / "skills"
    for name in ("pdf-tools", "csv-insights", "git-commit-messages"):
        shutil.copytree(FIXTURES / "valid" / name, skills / name)
    assert _sign(skills / "pdf-tools", private).returncode == 0
    assert _sign(skills / "csv-insights", private).returncode == 0
    (skills / "csv-insights" / "SKILL.md").write_bytes(
        (skills / "csv-insights" / "SKILL.md").read_bytes() + b"\n"
    )  # tampered after signing; git-commit-messages is not signed at all
    server = subprocess.list2cmdline([*skillcheck_command(), "serve", "--isolated", str(skills)])
    dest = tmp_path / "dest"
    result = run_skillcheck(
        "install", "--require-signature", str(public), "mcp:" + server, str(dest), timeout=GUARD
    )
    assert result.returncode == 1
    assert sorted(p.name for p in dest.iterdir()) == ["pdf-tools"]
    errors = result.stderr.decode()
    assert "'csv-insights': not installed: signature does not match: changed 'SKILL.md'" in errors
    assert "'git-commit-messages': not installed: not signed" in errors
    assert _verify(dest / "pdf-tools", "--signature", str(public)).returncode == 0


def test_install_require_signature_from_a_well_known_publication(tmp_path, keys) -> None:
    private, public = keys
    skills = tmp_path / "skills"
    for name in ("pdf-tools", "csv-insights", "git-commit-messages"):
        shutil.copytree(FIXTURES / "valid" / name, skills / name)
    assert _sign(skills / "pdf-tools", private).returncode == 0
    assert _sign(skills / "csv-insights", private).returncode == 0
    script = skills / "csv-insights" / "scripts" / "profile.py"
    script.write_bytes(script.read_bytes() + b"# changed after signing\n")
    site = tmp_path / "site"
    packed = run_skillcheck("pack", "--isolated", str(skills), "--well-known", str(site))
    assert packed.returncode == 0, packed.stderr
    dest = tmp_path / "dest"
    result = run_skillcheck("install", "--require-signature", str(public), str(site), str(dest))
    assert result.returncode == 1
    assert sorted(p.name for p in dest.iterdir() if not p.name.startswith(".")) == ["pdf-tools"]
    errors = result.stderr.decode()
    assert "changed 'scripts/profile.py'" in errors
    assert "git-commit-messages: not installed: not signed" in errors
