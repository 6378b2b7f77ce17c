"""Tools to measure the server as players meet it: a delaying proxy and scripted clients.

Used by ``bench/fairness.py`` and ``bench/load.py`` and by their smoke tests; they only ever
talk to addresses on this machine's loopback.
"""
