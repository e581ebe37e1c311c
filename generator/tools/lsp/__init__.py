"""``bcfg lsp``: the language server (server.py on pygls; the rest on the compiler's stages)."""
