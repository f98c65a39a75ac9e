"""Store adapters behind the `RecordStore` port (see :mod:`agent_memory.stores.base`)."""
