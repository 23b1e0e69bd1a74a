"""Helpers the tests share: fakes of servers, meters and libraries, the real captures, simulator
clients, dashboard fakes and synthetic data.

Test modules import helpers from here only, never from another test module or a conftest
(tests/test_support_imports.py checks it); pytest fixtures stay in conftest.py files.
"""
