"""Jobs that keep a Home: capture, archive, scheduling and the generated views (seed 000 §8-§13).

- :mod:`.inbox` — ``inbox.md``: the minimum line format, :func:`~.inbox.capture` with
  date-ordinal ids, a parser that reports malformed lines by number and never drops one, and
  the date policy (local days in the Home's time zone).
- :mod:`.archive` — ``archive-inbox``: append-only ``archive/YYYY-MM-DD.md``, roll-forward of
  an interrupted run, anchor lookup for distill; :mod:`.ledger` — the per-segment digests the
  log keeps and the check that finds an edited archive file.
- :mod:`.distill` — autodream (seed 000 §14): archived lines → pending proposals anchored
  into the archive; :mod:`.distill_rules` (the deterministic extractor), :mod:`.distill_llm`
  (an OpenAI-compatible endpoint), :mod:`.maintenance` (the ``memory.maintenance`` service).
- :mod:`.schedule` — what to install for cron, systemd or launchd; whether the job is due.
- :mod:`.views` and :mod:`.pages` — ``MEMORY.md``, ``index.md`` and ``topics/*.md``:
  deterministic, sealed with a digest footer, never silently overwritten after a hand edit.
- :mod:`.files` — the byte-level reads, appends and atomic replaces they share.

Every job runs under the Home's writer lock and takes an injectable clock. This package
imports nothing at import time, so the command line stays quick to start.
"""
