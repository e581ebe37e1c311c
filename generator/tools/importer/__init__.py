"""bcfg import: a live ``BackendConfig`` to an idiomatic spec (``bcfg import``).

``import_target("pkg.mod:get_config")`` imports the module, calls the function
and turns the ``BackendConfig`` it returns into spec text, in three steps, one
module each (``reader``, ``naming``, ``fold``; ``builder`` assembles them):

1. *Read* every ``BackendPatternConfig`` into plain values: objects become
   public dotted paths (``symtable``), ``_sequential_wrapper2(cls)`` fusers
   become ``sequential(cls)``, getters that only pick elements of the pattern
   (found by calling them on a pattern of sentinels) become ``pattern[i][j]``.
2. *Name* what is shared: constraints become ``constraint`` declarations and
   dtype configs used more than once become ``dtypes`` declarations, both named
   by content (``quint8_quint8_qint8_float``); long module paths used more than
   once get an ``alias``.
3. *Fold* repetition: runs of consecutive patterns, or of blocks of patterns,
   that differ only in some values become ``for`` loops, with ``${n}`` holes
   where the difference is part of a name (``nn.Conv${n}d``).

The text is printed by ``fmt``, so it is already canonical. Anything the
language cannot say is a one-line ``ImportFailure``.
"""
