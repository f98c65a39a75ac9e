"""Search indexes and embedders behind the `SearchIndex` and `Embedder` ports (see :mod:`.base`)."""
