"""The review page: a local web app to see, search and decide on one memory (issue 22).

``agent-memory ui`` serves one Home (or a database) on 127.0.0.1 to the person who started
it: browse and search with recall's own ranking, a record's page with its sources, versions
and withdrawals, the review queue, and what the agent sees. Every action goes through the
:class:`~agent_memory.memory.Memory` porcelain the CLI uses. Modules: :mod:`.server` (start
and stop), :mod:`.app` (routes and templates), :mod:`.auth` (token, session, CSRF, headers),
:mod:`.opened` (the one open Memory), :mod:`.browse`, :mod:`.queue`, :mod:`.agent_view`
(what each page reads) and :mod:`.actions` (what each button does).
"""
