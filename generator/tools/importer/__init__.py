"""bcfg import: live ``BackendConfig``s to idiomatic specs (``bcfg import``).

``command`` is the CLI side; the work runs in a child process (``worker``,
through ``infra.isolate``) because it runs the user's code. ``flow`` holds the
steps: read (``reader``, closures proven by ``prove``), a stable order for
configs built from sets (``setorder``), ``use`` of known groups and groups
discovered across backends (``groups``), names and loops (``builder``,
``naming``, ``fold``), files (``assemble``), and verification (``verify``).
ARCHITECTURE.md, "The importer", walks through them.
"""
