"""Governance: who may decide what, and the one gate that keeps withdrawn memory out of sight.

- :mod:`.actors` — the ``[actors]`` table of ``memory.toml``: the owner and the grants
  (``approve``, ``erase``, ``promote``, ``withdraw``) of every other actor (DESIGN.md §9 "Actors").
- :mod:`.controls` — ``withdrawal-control-v1`` records and how their causal chains resolve
  (seed 000 §12.2).
- :mod:`.gate` — :class:`~agent_memory.governance.gate.Gate`, the single exposure check every
  reader applies before showing a record (recall, export, import, review; views,
  distillation and consolidation call it too once they exist).
- :mod:`.transfer` — withdrawal controls carried through MemoryFiles.
- :mod:`.queue` — the review queue: quarantined and pending records with their review state.
- :mod:`.secrets` — the secret screen every write path calls before storing text: refuse or
  redact credentials (seed 000 §3; ``[secrets] on_detect`` in ``memory.toml``).

This package imports nothing at import time, so ``settings`` can use :mod:`.actors` without
pulling in stores or the log.
"""
