"""``ms-lint server``: a language server (pygls) that checks open documents as ``ms-lint check`` does.

``documents`` checks one buffer's text (config, index, noqa as for a file on disk), ``convert`` turns findings
and fixed texts into LSP diagnostics and edits, ``server`` wires both to pygls. Only ``server`` imports pygls.
"""
