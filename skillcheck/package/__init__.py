"""Manifest, archive writers and strict readers, verify, unpack, publish, install, loader."""
