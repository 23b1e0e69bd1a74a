"""llama-server: everything spectop knows about it, in one package.

`collector` (detection, poll and derive), `slots` (/slots), `log` (its log lines); the request
bodies, stream events, speculative flags and setting lines follow the same contract as every
dialect (collectors/servers/base.py), listed in collectors/servers/registry.py.
"""
