"""``skillcheck lsp``: a Language Server over stdio for SKILL.md and a skill's Markdown files.

``analysis`` checks an editor buffer with the same rules, configuration and fixes as the
command line and turns the results into plain positions and edits; ``server`` wires it to
pygls (installed by the ``lsp`` extra, imported only by ``skillcheck lsp``).
"""
