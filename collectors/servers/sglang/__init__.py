"""SGLang: everything spectop knows about it, in one package.

`collector` (detection, poll and derive), `pages` (/server_info, /v1/loads), `accept` (what its
acceptance gauge means per release), `snapshot` (its snapshot's extra fields); the rest follows
the contract every dialect implements (collectors/servers/base.py).
"""
