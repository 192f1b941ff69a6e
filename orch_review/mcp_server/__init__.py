"""``orch-review mcp``: orch-review as a Model Context Protocol server over stdio.

:mod:`.service` is what each tool does, in plain Python over :mod:`orch_review.core`;
:mod:`.arguments` validates what a calling agent sends; :mod:`.server` binds both to the MCP
SDK. Stdout carries only protocol messages: everything else goes to stderr.
"""
