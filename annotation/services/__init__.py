"""Writes. Every state change of the app goes through a function here, named
``<entity>_<action>(*, ...)``, that does the whole change inside ``transaction.atomic``."""
